//===- MergeStatesTest.cpp - Merging attention over two key sets ---------===//
#include "reference/ops/Ops.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace attn {
namespace {

using test::floats;

constexpr double inf = std::numeric_limits<double>::infinity();

TEST(MergeStates, HandComputed) {
  // Side a: out 1 with lse log 1; side b: out 3 with lse log 3. The union
  // weighs them 1 : 3.
  const Tensor outA = floats(DType::F32, {1, 1, 2}, {1, -1});
  const Tensor outB = floats(DType::F32, {1, 1, 2}, {3, 5});
  const Tensor lseA = floats(DType::F32, {1, 1}, {0.0});
  const Tensor lseB = floats(DType::F32, {1, 1}, {std::log(3.0f)});
  Result<AttentionOutput> r = mergeStates(outA, lseA, outB, lseB);
  ASSERT_TRUE(r.isOk()) << r.message();
  const double wb = std::exp(static_cast<double>(std::log(3.0f)));
  EXPECT_FLOAT_EQ(r->out.getFloat(0), (1 + wb * 3) / (1 + wb));
  EXPECT_FLOAT_EQ(r->out.getFloat(1), (-1 + wb * 5) / (1 + wb));
  EXPECT_FLOAT_EQ(r->lse.getFloat(0), std::log(4.0));
}

TEST(MergeStates, EmptySides) {
  // Token 0: b empty; token 1: a empty; token 2: both empty. An empty side's
  // out is ignored even if it holds garbage.
  const Tensor outA = floats(DType::BF16, {3, 1, 1}, {2, NAN, NAN});
  const Tensor outB = floats(DType::BF16, {3, 1, 1}, {NAN, 4, NAN});
  const Tensor lseA = floats(DType::F32, {3, 1}, {0.5, -inf, -inf});
  const Tensor lseB = floats(DType::F32, {3, 1}, {-inf, 1.5, -inf});
  Result<AttentionOutput> r = mergeStates(outA, lseA, outB, lseB);
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->out.dtype(), DType::BF16);
  EXPECT_EQ(r->out.getFloat(0), 2.0);
  EXPECT_EQ(r->lse.getFloat(0), 0.5);
  EXPECT_EQ(r->out.getFloat(1), 4.0);
  EXPECT_EQ(r->lse.getFloat(1), 1.5);
  EXPECT_EQ(r->out.getFloat(2), 0.0);
  EXPECT_EQ(r->lse.getFloat(2), -inf);
}

// A NaN lse on either side makes the merged row NaN (std::max once took the
// other side and dropped it).
TEST(MergeStates, NaNPropagates) {
  const Tensor out = floats(DType::F32, {2, 1, 1}, {1, 2});
  const Tensor lseA = floats(DType::F32, {2, 1}, {NAN, 0.0});
  const Tensor lseB = floats(DType::F32, {2, 1}, {0.0, NAN});
  Result<AttentionOutput> r = mergeStates(out, lseA, out, lseB);
  ASSERT_TRUE(r.isOk()) << r.message();
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_TRUE(std::isnan(r->out.getFloat(t))) << t;
    EXPECT_TRUE(std::isnan(r->lse.getFloat(t))) << t;
  }
}

TEST(MergeStatesErrors, Operands) {
  const Tensor out(DType::F32, {2, 3, 4});
  const Tensor lse(DType::F32, {2, 3});
  EXPECT_TRUE(mergeStates(out, lse, out, lse).isOk());
  EXPECT_ERROR(mergeStates(out, lse, Tensor(DType::F32, {2, 3, 5}), lse),
               "out_b is [2, 3, 5] f32, expected the shape of out_a");
  EXPECT_ERROR(mergeStates(out, lse, Tensor(DType::F16, {2, 3, 4}), lse),
               "out_b has dtype f16, expected f32");
  EXPECT_ERROR(mergeStates(out, Tensor(DType::F16, {2, 3}), out, lse),
               "lse_a must be a rank-2 tensor of f32");
  EXPECT_ERROR(mergeStates(out, lse, out, Tensor(DType::F32, {2, 4})),
               "lse_b dim 1 is 4, expected 3 (out_a dim 1)");
  EXPECT_ERROR(mergeStates(Tensor(DType::I32, {2, 3, 4}), lse, out, lse),
               "out_a must be a rank-3 tensor of f32, f16 or bf16");
}

} // namespace
} // namespace attn
