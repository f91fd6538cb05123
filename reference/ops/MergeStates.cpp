//===- MergeStates.cpp - Reference merge of two attention states ----------===//
#include "reference/ops/Ops.h"

#include "reference/ops/AttentionState.h"
#include "reference/ops/ParallelFor.h"
#include "core/TensorCheck.h"

namespace attn {

Result<AttentionOutput> mergeStates(const Tensor &outA, const Tensor &lseA,
                                    const Tensor &outB, const Tensor &lseB,
                                    bool naiveDevicePrecision) {
  ATTN_RETURN_IF_ERROR(checkRankAndDType(
      outA, "out_a", 3, {DType::F32, DType::F16, DType::BF16}));
  ATTN_RETURN_IF_ERROR(checkSameDType(outB, "out_b", outA, "out_a"));
  if (outB.shape() != outA.shape())
    return errorf("out_b is ", outB.describe(), ", expected the shape of out_a ",
                  outA.describe());
  const int64_t numTokens = outA.dim(0);
  const int64_t numHeads = outA.dim(1);
  const int64_t headSize = outA.dim(2);
  for (auto [lse, name] : {std::pair{&lseA, "lse_a"}, {&lseB, "lse_b"}}) {
    ATTN_RETURN_IF_ERROR(checkRankAndDType(*lse, name, 2, {DType::F32}));
    ATTN_RETURN_IF_ERROR(checkDim(*lse, name, 0, numTokens, "out_a dim 0"));
    ATTN_RETURN_IF_ERROR(checkDim(*lse, name, 1, numHeads, "out_a dim 1"));
  }

  AttentionOutput result{Tensor(outA.dtype(), outA.shape()),
                         Tensor(DType::F32, {numTokens, numHeads})};
  parallelFor(numTokens * numHeads, [&](int64_t item) {
    const int64_t token = item / numHeads;
    const int64_t head = item % numHeads;
    AttentionState a, b;
    a.lse = lseA.getFloat(item);
    b.lse = lseB.getFloat(item);
    for (int64_t d = 0; d < headSize; ++d) {
      a.out.push_back(outA.getFloat(outA.offset({token, head, d})));
      b.out.push_back(outB.getFloat(outB.offset({token, head, d})));
    }
    const AttentionState merged =
        naiveDevicePrecision
            ? mergeAttentionStatesNaive(a, b, outA.dtype())
            : mergeAttentionStates(a, b);
    for (int64_t d = 0; d < headSize; ++d)
      result.out.setFloat(result.out.offset({token, head, d}), merged.out[d]);
    result.lse.setFloat(item, merged.lse);
  });
  return result;
}

} // namespace attn
