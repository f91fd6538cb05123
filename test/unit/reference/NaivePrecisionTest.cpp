//===- NaivePrecisionTest.cpp - The naive yardstick of the second verdict -===//
//
// PagedAttentionParams::naiveDevicePrecision computes what a straightforward
// kernel in the output dtype would. It is not the definition, so the tests
// pin what matters for attn-diff's second verdict: it is deterministic, it
// errs (a little) where the precision is low, and it stays close to the
// definition.
//
//===----------------------------------------------------------------------===//

#include "reference/ops/Compare.h"
#include "reference/ops/Ops.h"
#include "reference/ops/Random.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

struct Outputs {
  AttentionOutput exact, naive;
};

Outputs run(DType dtype) {
  ProblemShape shape;
  shape.numHeads = 8;
  shape.numKvHeads = 2;
  shape.headSize = 64;
  shape.dtype = dtype;
  ProblemOptions options;
  options.seed = 21;
  options.maxContextLen = 300;
  Result<Problem> p = generateProblem(shape, options);
  EXPECT_TRUE(p) << p.message();
  PagedAttentionParams params;
  params.scale = p->scale;
  params.softCap = 30.0;
  auto attend = [&](bool naive) {
    params.naiveDevicePrecision = naive;
    Result<AttentionOutput> out =
        pagedAttention(p->query, p->kvCache, p->blockTable, p->seqLens,
                       p->queryStartLoc, nullptr, &p->sinks, params);
    EXPECT_TRUE(out) << out.message();
    return std::move(*out);
  };
  return {attend(false), attend(true)};
}

double maxAbs(const Tensor &a, const Tensor &b) {
  Result<TensorDiff> d = compareTensors(a, b, {});
  EXPECT_TRUE(d) << d.message();
  return d->maxAbsError;
}

TEST(NaivePrecision, ErrsMoreInLowerPrecision) {
  Outputs f32 = run(DType::F32);
  Outputs bf16 = run(DType::BF16);
  double f32Error = maxAbs(f32.naive.out, f32.exact.out);
  double bf16Error = maxAbs(bf16.naive.out, bf16.exact.out);
  EXPECT_GT(bf16Error, 0.0) << "bf16 rounding of scores and P must show";
  EXPECT_GT(bf16Error, 10 * f32Error);
  // Close to the definition all the same.
  EXPECT_LT(f32Error, 1e-5);
  EXPECT_LT(bf16Error, 0.05);
  EXPECT_LT(maxAbs(bf16.naive.lse, bf16.exact.lse), 0.05);
}

TEST(NaivePrecision, IsDeterministic) {
  Outputs a = run(DType::F16);
  Outputs b = run(DType::F16);
  EXPECT_EQ(a.naive.out, b.naive.out);
  EXPECT_EQ(a.naive.lse, b.naive.lse);
}

} // namespace
} // namespace attn
