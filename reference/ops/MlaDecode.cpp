//===- MlaDecode.cpp - Reference MLA decode (split-KV) --------------------===//
//
// Each request's keys are cut into num_kv_splits chunks, as the split-KV
// kernels do; every chunk gives a partial attention state and the states are
// merged with the math of merge_states. Partial states stay in f64, so the
// split count changes the result only by f64 rounding.
//
//===----------------------------------------------------------------------===//
#include "reference/ops/Ops.h"

#include "reference/ops/AttentionState.h"
#include "core/Metadata.h"
#include "reference/ops/ParallelFor.h"
#include "core/TensorCheck.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace attn {

Result<AttentionOutput> mlaDecode(const Tensor &q, const Tensor &cache,
                                  const Tensor &blockTable,
                                  const Tensor &seqLens,
                                  const MlaDecodeParams &params,
                                  const Tensor *scale) {
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(q, "q", 3, {DType::F32, DType::F16, DType::BF16}));
  ATTN_RETURN_IF_ERROR(checkRankAndDType(
      cache, "kv_cache", 3,
      {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}));
  ATTN_RETURN_IF_ERROR(checkCacheDType(cache, "kv_cache", q, "q"));
  Result<std::vector<double>> cacheScale =
      perHeadScales(scale, "k_scale", cache.dtype(), 1);
  if (!cacheScale)
    return cacheScale.status();
  const int64_t numReqs = q.dim(0);
  const int64_t numHeads = q.dim(1);
  const int64_t rowSize = q.dim(2); // L + P
  ATTN_RETURN_IF_ERROR(
      checkDim(cache, "kv_cache", 2, rowSize, "kv_lora_rank + rope dim, q dim 2"));
  const int64_t latentSize = params.kvLoraRank;
  if (latentSize <= 0 || latentSize > rowSize)
    return errorf("kv_lora_rank = ", latentSize, " must be in [1, ", rowSize,
                  "] (q dim 2 = kv_lora_rank + rope dim)");
  if (!(params.scale > 0.0) || std::isinf(params.scale))
    return errorf("mla_decode scale must be finite and > 0, got ",
                  params.scale);
  if (params.numKvSplits < 1)
    return errorf("num_kv_splits must be >= 1, got ", params.numKvSplits);
  if (cache.dim(1) == 0)
    return errorf("kv_cache has block size 0 (", cache.describe(), ")");

  const int64_t blockSize = cache.dim(1);
  Result<CommonAttentionMetadata> built =
      checkDecodeBatch(seqLens, blockTable, numReqs, cache.dim(0), blockSize);
  if (!built)
    return built.status();
  const CommonAttentionMetadata &metadata = *built;

  AttentionOutput result{Tensor(q.dtype(), {numReqs, numHeads, latentSize}),
                         Tensor(DType::F32, {numReqs, numHeads})};

  parallelFor(numReqs * numHeads, [&](int64_t item) {
    const int64_t req = item / numHeads;
    const int64_t head = item % numHeads;
    const int64_t seqLen = metadata.seqLens[req];

    // Dense copy of the request's latent rows: key = the whole row, value =
    // its first L elements.
    std::vector<double> rows(seqLen * rowSize);
    for (int64_t j = 0; j < seqLen; ++j) {
      const int64_t block = metadata.block(req, j / blockSize);
      cache.getFloats(cache.offset({block, j % blockSize, 0}), rowSize,
                      &rows[j * rowSize]);
    }
    if (isFp8(cache.dtype()))
      dequantize(rows.data(), seqLen * rowSize, (*cacheScale)[0],
                 params.naiveDevicePrecision ? std::optional(q.dtype())
                                             : std::nullopt);
    std::vector<double> query(rowSize);
    q.getFloats(q.offset({req, head, 0}), rowSize, query.data());

    if (params.naiveDevicePrecision) {
      // One pass over the keys, f32 dot products, scores rounded to q's
      // dtype after each step, then the naive softmax.
      const DType precision = q.dtype();
      std::vector<double> scores;
      std::vector<const double *> values;
      for (int64_t j = 0; j < seqLen; ++j) {
        const double *row = &rows[j * rowSize];
        float dot = 0.0f;
        for (int64_t d = 0; d < rowSize; ++d)
          dot += static_cast<float>(query[d]) * static_cast<float>(row[d]);
        scores.push_back(roundToDType(
            params.scale * roundToDType(dot, precision), precision));
        values.push_back(row);
      }
      const AttentionState state =
          attendNaive(scores, values, latentSize, precision);
      for (int64_t d = 0; d < latentSize; ++d)
        result.out.setFloat(result.out.offset({req, head, d}), state.out[d]);
      result.lse.setFloat(result.lse.offset({req, head}), state.lse);
      return;
    }

    // Split s takes keys [s * chunk, (s + 1) * chunk). Splits past the last
    // key are empty and merge as the identity, so only the others are
    // visited: num_kv_splits may be any count >= 1 (2^62 once looped for
    // ever, and overflowed computing the chunk).
    const int64_t chunk =
        seqLen == 0 ? 1 : (seqLen - 1) / params.numKvSplits + 1;
    AttentionState merged;
    merged.out.assign(latentSize, 0.0);
    for (int64_t begin = 0; begin < seqLen; begin += chunk) {
      const int64_t end = std::min(seqLen, begin + chunk);
      std::vector<double> scores;
      std::vector<const double *> values;
      for (int64_t j = begin; j < end; ++j) {
        const double *row = &rows[j * rowSize];
        double dot = 0.0;
        for (int64_t d = 0; d < rowSize; ++d)
          dot += query[d] * row[d];
        scores.push_back(params.scale * dot);
        values.push_back(row);
      }
      merged = mergeAttentionStates(merged, attend(scores, values, latentSize));
    }
    for (int64_t d = 0; d < latentSize; ++d)
      result.out.setFloat(result.out.offset({req, head, d}), merged.out[d]);
    result.lse.setFloat(result.lse.offset({req, head}), merged.lse);
  });
  return result;
}

} // namespace attn
