//===- PolynomialExp2.cpp - f32 exp2 as arithmetic for the CPU ------------===//
//
// attn-cpu-polynomial-exp2 (see lowering/Passes.td): math.exp2 on f32 as a
// polynomial, so that LLVM vectorizes the softmax instead of calling the C
// library's exp2f once per element.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCPUPOLYNOMIALEXP2
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// 2^x for f32 x, element-wise. See the pass description for the specials.
struct Exp2ToPolynomial : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type i32 = getElementTypeOrSelf(type) == type
                   ? Type(b.getI32Type())
                   : Type(cast<VectorType>(type).clone(b.getI32Type()));
    auto f = [&](double v) -> Value {
      return arith::ConstantOp::create(
          b, type,
          isa<VectorType>(type)
              ? TypedAttr(DenseElementsAttr::get(cast<ShapedType>(type),
                                                 b.getF32FloatAttr(v)))
              : TypedAttr(b.getF32FloatAttr(v)));
    };
    auto i = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          b, i32,
          isa<VectorType>(i32)
              ? TypedAttr(DenseElementsAttr::get(cast<ShapedType>(i32),
                                                 b.getI32IntegerAttr(v)))
              : TypedAttr(b.getI32IntegerAttr(v)));
    };
    Value x = op.getOperand();
    // NaN takes the finite path as 0 and is put back at the end, so that no
    // conversion below sees a NaN (fptosi of NaN is poison).
    Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, x, x);
    Value clamped = arith::MinimumFOp::create(
        b, arith::MaximumFOp::create(b, x, f(-127.0)), f(128.0));
    clamped = arith::SelectOp::create(b, isNan, f(0.0), clamped);
    Value n = math::RoundEvenOp::create(b, clamped);
    Value r = arith::SubFOp::create(b, clamped, n);
    // 2^r = e^(r ln 2): Taylor terms to the 7th, |r ln 2| <= 0.35, so the
    // first dropped term is below 3e-9 relative.
    const double ln2 = std::log(2.0);
    Value p = f(std::pow(ln2, 7) / 5040.0);
    double factorial = 720.0;
    for (int k = 6; k >= 0; --k) {
      p = math::FmaOp::create(b, p, r, f(std::pow(ln2, k) / factorial));
      factorial /= k > 0 ? k : 1;
    }
    // 2^n from its exponent field: n = -127 gives the bits of +0, n = 128
    // those of +inf.
    Value bits = arith::ShLIOp::create(
        b, arith::AddIOp::create(b, arith::FPToSIOp::create(b, i32, n), i(127)),
        i(23));
    Value scale = arith::BitcastOp::create(b, type, bits);
    Value result = arith::MulFOp::create(b, p, scale);
    rewriter.replaceOp(op, arith::SelectOp::create(b, isNan, x, result));
    return success();
  }
};

struct AttnCPUPolynomialExp2
    : attn::impl::AttnCPUPolynomialExp2Base<AttnCPUPolynomialExp2> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Exp2ToPolynomial>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
