//===- CompareTest.cpp - What compareTensors says about a difference ------===//
//
// attn-diff's per-element verdict: which elements it names. The largest
// error and the element worst against its own tolerance differ when the
// reference holds values near zero (atol dominates there), and attn-diff
// reports both.
//
//===----------------------------------------------------------------------===//

#include "reference/testing/Compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace attn {
namespace {

Tensor floats(const std::vector<double> &values, std::vector<int64_t> shape) {
  Tensor t(DType::F32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    t.setFloat(static_cast<int64_t>(i), values[i]);
  return t;
}

TEST(CompareTest, NamesTheLargestErrorAndTheNearestToFailing) {
  // Tolerance 1e-3 + 1e-2 |want|: element [0, 1] errs by 4e-3 at 10 (40% of
  // its 1.01e-1), element [1, 0] by 8e-4 at 0 (80% of its 1e-3).
  Tensor want = floats({1, 10, 0, 0.5}, {2, 2});
  Tensor got = floats({1, 10.004, 0.0008, 0.5}, {2, 2});
  Result<TensorDiff> diff = compareTensors(got, want, {1e-3, 1e-2});
  ASSERT_TRUE(diff) << diff.message();
  EXPECT_TRUE(diff->passed());
  EXPECT_EQ(diff->largestIndex, (std::vector<int64_t>{0, 1}));
  EXPECT_NEAR(diff->maxAbsError, 4e-3, 1e-6);
  EXPECT_FLOAT_EQ(diff->largestWant, 10);
  EXPECT_EQ(diff->worstIndex, (std::vector<int64_t>{1, 0}));
  EXPECT_FLOAT_EQ(diff->worstGot, 0.0008f);
}

TEST(CompareTest, FailingElementsRankByHowFarBeyondTheirTolerance) {
  // [0, 0] is 0.5 beyond at 100 (tolerance 1.001), [1, 1] 0.01 beyond at
  // 0 (tolerance 1e-3): the second is ten times its tolerance, the first
  // about 1.5 times.
  Tensor want = floats({100, 0, 0, 0}, {2, 2});
  Tensor got = floats({101.5, 0, 0, 0.011}, {2, 2});
  Result<TensorDiff> diff = compareTensors(got, want, {1e-3, 1e-2});
  ASSERT_TRUE(diff) << diff.message();
  EXPECT_EQ(diff->numMismatches, 2);
  EXPECT_EQ(diff->largestIndex, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(diff->worstIndex, (std::vector<int64_t>{1, 1}));
}

TEST(CompareTest, ANanMismatchIsBothTheLargestAndTheWorst) {
  Tensor want = floats({1, 2, 3}, {3});
  Tensor got = floats({1.5, NAN, 3}, {3});
  Result<TensorDiff> diff = compareTensors(got, want, {1e-3, 1e-2});
  ASSERT_TRUE(diff) << diff.message();
  EXPECT_TRUE(std::isnan(diff->maxAbsError));
  EXPECT_EQ(diff->largestIndex, std::vector<int64_t>{1});
  EXPECT_EQ(diff->worstIndex, std::vector<int64_t>{1});
  EXPECT_EQ(diff->numNanMismatches, 1);
}

TEST(CompareTest, CountsMismatchesPerRowAndPerHead) {
  // [2 tokens, 3 heads, 2 dims]: head 1 wrong everywhere, one element of
  // head 2 in token 1.
  Tensor want = floats(std::vector<double>(12, 1.0), {2, 3, 2});
  Tensor got = want;
  for (int64_t i : {2, 3, 8, 9, 11})
    got.setFloat(i, 2.0);
  Result<TensorDiff> diff = compareTensors(got, want, {1e-3, 0});
  ASSERT_TRUE(diff) << diff.message();
  EXPECT_EQ(diff->rowMismatches, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(diff->headMismatches, (std::vector<int64_t>{0, 4, 1}));
}

TEST(CompareTest, WorstRatioPerRowAndHead) {
  // [2 tokens, 2 heads, 2 dims], tolerance 1e-3 + 0.1 |want| = 0.101 at 1:
  // token 0 head 1 off by 0.202 (2x), token 1 head 0 by 0.0505 (0.5x), a
  // NaN at token 1 head 1. attn-diff --report's heat map reads these.
  Tensor want = floats(std::vector<double>(8, 1.0), {2, 2, 2});
  Tensor got = want;
  got.setFloat(3, 1.202);
  got.setFloat(4, 1.0505);
  got.setFloat(7, NAN);
  Result<TensorDiff> diff = compareTensors(got, want, {1e-3, 0.1});
  ASSERT_TRUE(diff) << diff.message();
  ASSERT_EQ(diff->rowHeadWorst.size(), 4u);
  EXPECT_EQ(diff->rowHeadWorst[0], 0.0);
  EXPECT_NEAR(diff->rowHeadWorst[1], 2.0, 1e-5);
  EXPECT_NEAR(diff->rowHeadWorst[2], 0.5, 1e-5);
  EXPECT_TRUE(std::isinf(diff->rowHeadWorst[3]));
  // Below rank 2, one column per row; an error under a zero tolerance is
  // infinitely far beyond it.
  Result<TensorDiff> exact =
      compareTensors(floats({1, 2.5}, {2}), floats({1, 2}, {2}), {0, 0});
  ASSERT_TRUE(exact) << exact.message();
  EXPECT_EQ(exact->rowHeadWorst[0], 0.0);
  EXPECT_TRUE(std::isinf(exact->rowHeadWorst[1]));
}

} // namespace
} // namespace attn
