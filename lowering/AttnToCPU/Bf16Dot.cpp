//===- Bf16Dot.cpp - bf16 dot products as AVX-512 BF16 instructions -------===//
//
// attn-cpu-bf16-dot (see lowering/Passes.td): the dot products of bf16 rows
// that convert-attn-to-gpu writes as widen, multiply and sum become
// x86vector.avx512.dot (VDPBF16PS), for ISA levels with AVX-512 BF16.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCPUBF16DOT
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// `value` widened from a vector of bf16 by arith.extf: that vector, or
/// null.
Value widenedBf16(Value value) {
  auto extf = value.getDefiningOp<arith::ExtFOp>();
  if (!extf)
    return Value();
  auto type = dyn_cast<VectorType>(extf.getIn().getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isBF16())
    return Value();
  return extf.getIn();
}

/// The bf16 elements one VDPBF16PS takes for a row of `n`: a whole 512-,
/// 256- or 128-bit register, the widest that divides the row; 0 where none
/// does.
int64_t dotWidth(int64_t n) {
  for (int64_t width : {32, 16, 8})
    if (n % width == 0)
      return width;
  return 0;
}

/// reduction<add>(mulf(extf(a), extf(b))) on rows of bf16, with the sum
/// free to reassociate: the pairs of each register's worth of a and b go
/// through VDPBF16PS into f32 accumulators (two, alternating, so that
/// consecutive instructions do not wait on each other), then one sum of
/// their lanes.
struct ReductionToBf16Dot : OpRewritePattern<vector::ReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ReductionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getKind() != vector::CombiningKind::ADD || !op.getType().isF32())
      return rewriter.notifyMatchFailure(op, "not a sum in f32");
    if (!bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::reassoc))
      return rewriter.notifyMatchFailure(op, "the sum may not reassociate");
    auto mul = op.getVector().getDefiningOp<arith::MulFOp>();
    if (!mul)
      return rewriter.notifyMatchFailure(op, "not a sum of products");
    Value a = widenedBf16(mul.getLhs()), b = widenedBf16(mul.getRhs());
    if (!a || !b)
      return rewriter.notifyMatchFailure(op, "not products of bf16 rows");
    int64_t n = cast<VectorType>(a.getType()).getNumElements();
    int64_t width = dotWidth(n);
    if (width == 0)
      return rewriter.notifyMatchFailure(op, "no whole register of pairs");

    ImplicitLocOpBuilder builder(op.getLoc(), rewriter);
    auto accType = VectorType::get({width / 2}, builder.getF32Type());
    Value zero = arith::ConstantOp::create(
        builder, accType,
        DenseElementsAttr::get(accType, builder.getF32FloatAttr(0.0)));
    SmallVector<Value, 2> acc(std::clamp<int64_t>(n / width, 1, 2), zero);
    for (int64_t first = 0; first < n; first += width) {
      auto slice = [&](Value row) {
        return vector::ExtractStridedSliceOp::create(
            builder, row, ArrayRef<int64_t>{first}, ArrayRef<int64_t>{width},
            ArrayRef<int64_t>{1});
      };
      Value aPart = slice(a);
      Value bPart = slice(b);
      Value &into = acc[(first / width) % acc.size()];
      into = x86vector::DotBF16Op::create(builder, into, aPart, bPart);
    }
    Value lanes = acc.front();
    if (acc.size() == 2)
      lanes = arith::AddFOp::create(builder, acc[0], acc[1], op.getFastmath());
    rewriter.replaceOpWithNewOp<vector::ReductionOp>(
        op, vector::CombiningKind::ADD, lanes, op.getAcc(), op.getFastmath());
    return success();
  }
};

struct AttnCPUBf16Dot : attn::impl::AttnCPUBf16DotBase<AttnCPUBf16Dot> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReductionToBf16Dot>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
