//===- MlaDecodeTest.cpp - MLA decode, split-KV independence, operands ---===//
#include "reference/ops/Ops.h"
#include "reference/testing/Random.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn {
namespace {

using test::floats;
using test::ints;

TEST(MlaDecode, HandComputed) {
  // L = 1, P = 1, one block of 4 holding three rows; the value of a row is
  // its first element.
  const Tensor q = floats(DType::F32, {1, 1, 2}, {1, 1});
  const Tensor cache =
      floats(DType::F32, {1, 4, 2}, {1, 0, 0, 2, 1, 1, NAN, NAN});
  const Tensor table = ints(DType::I32, {1, 1}, {0});
  const Tensor seqLens = ints(DType::I32, {1}, {3});
  for (int64_t splits : {1, 2, 3, 5}) {
    Result<AttentionOutput> r =
        mlaDecode(q, cache, table, seqLens, {0.5, 1, splits});
    ASSERT_TRUE(r.isOk()) << r.message();
    ASSERT_EQ(r->out.shape(), (std::vector<int64_t>{1, 1, 1}));
    const double e05 = std::exp(0.5), e1 = std::exp(1.0);
    EXPECT_FLOAT_EQ(r->out.getFloat(0), (e05 + e1) / (e05 + 2 * e1));
    EXPECT_FLOAT_EQ(r->lse.getFloat(0), std::log(e05 + 2 * e1));
  }
}

Problem mlaProblem(DType dtype) {
  ProblemShape shape;
  shape.numHeads = 4;
  shape.kvLoraRank = 32;
  shape.ropeDim = 8;
  shape.dtype = dtype;
  ProblemOptions options;
  options.seed = 11;
  options.numReqs = 6;
  options.minContextLen = 1;
  options.maxContextLen = 90;
  Result<Problem> p = generateProblem(shape, options);
  EXPECT_TRUE(p.isOk()) << p.message();
  return std::move(p).value();
}

/// Attention of each request's query over its latent rows, in long double.
std::vector<long double> denseMla(const Problem &p, int64_t latent) {
  const int64_t numReqs = p.query.dim(0), numHeads = p.query.dim(1);
  const int64_t row = p.query.dim(2), blockSize = p.kvCache.dim(1);
  std::vector<long double> out;
  for (int64_t r = 0; r < numReqs; ++r) {
    const int64_t seqLen = p.seqLens.getInt(r);
    for (int64_t h = 0; h < numHeads; ++h) {
      std::vector<long double> scores;
      for (int64_t j = 0; j < seqLen; ++j) {
        const int64_t block =
            p.blockTable.getInt(p.blockTable.offset({r, j / blockSize}));
        long double dot = 0;
        for (int64_t e = 0; e < row; ++e)
          dot += static_cast<long double>(
                     p.query.getFloat(p.query.offset({r, h, e}))) *
                 p.kvCache.getFloat(p.kvCache.offset({block, j % blockSize, e}));
        scores.push_back(dot * p.scale);
      }
      long double sum = 0;
      std::vector<long double> acc(latent, 0);
      for (int64_t j = 0; j < seqLen; ++j) {
        const long double w = std::exp(scores[j]);
        sum += w;
        const int64_t block =
            p.blockTable.getInt(p.blockTable.offset({r, j / blockSize}));
        for (int64_t e = 0; e < latent; ++e)
          acc[e] += w * p.kvCache.getFloat(
                            p.kvCache.offset({block, j % blockSize, e}));
      }
      for (long double a : acc)
        out.push_back(a / sum);
    }
  }
  return out;
}

TEST(MlaDecode, MatchesDenseAttention) {
  const Problem p = mlaProblem(DType::F32);
  Result<AttentionOutput> r =
      mlaDecode(p.query, p.kvCache, p.blockTable, p.seqLens, {p.scale, 32, 4});
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_LE(test::toleranceRatio(test::toDoubles(r->out), denseMla(p, 32),
                                 1e-6, 1e-6),
            1.0);
}

TEST(MlaDecode, SplitCountChangesOnlyRounding) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Problem p = mlaProblem(dtype);
    Result<AttentionOutput> one =
        mlaDecode(p.query, p.kvCache, p.blockTable, p.seqLens, {p.scale, 32, 1});
    ASSERT_TRUE(one.isOk()) << one.message();
    const std::vector<double> out1 = test::toDoubles(one->out);
    const std::vector<double> lse1 = test::toDoubles(one->lse);
    // One output ulp: 2^-23 relative for f32, 2^-7 for bf16.
    const double ulp = dtype == DType::F32 ? 0x1p-23 : 0x1p-7;
    for (int64_t splits : {2, 4, 8, 200}) {
      SCOPED_TRACE(std::string(toString(dtype)) + " splits " +
                   std::to_string(splits));
      Result<AttentionOutput> many = mlaDecode(
          p.query, p.kvCache, p.blockTable, p.seqLens, {p.scale, 32, splits});
      ASSERT_TRUE(many.isOk()) << many.message();
      const std::vector<double> out = test::toDoubles(many->out);
      const std::vector<double> lse = test::toDoubles(many->lse);
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_LE(std::fabs(out[i] - out1[i]), ulp * std::fabs(out1[i]) + 1e-30)
            << i;
      for (size_t i = 0; i < lse.size(); ++i)
        ASSERT_LE(std::fabs(lse[i] - lse1[i]), 0x1p-23 * std::fabs(lse1[i]))
            << i;
    }
  }
}

// Found by test/fuzz (metadata, a timeout): every split was visited, so
// num_kv_splits = 2^62 looped for ever. Splits beyond the keys are empty;
// any count past seq_len computes what seq_len splits do, bit for bit.
TEST(MlaDecode, HugeSplitCountsCostNoMoreThanOneSplitPerKey) {
  const Problem p = mlaProblem(DType::F32);
  int64_t maxSeqLen = 0;
  for (int64_t r = 0; r < p.seqLens.numElements(); ++r)
    maxSeqLen = std::max(maxSeqLen, p.seqLens.getInt(r));
  Result<AttentionOutput> perKey = mlaDecode(
      p.query, p.kvCache, p.blockTable, p.seqLens, {p.scale, 32, maxSeqLen});
  ASSERT_TRUE(perKey.isOk()) << perKey.message();
  for (int64_t splits : {int64_t{1} << 62, INT64_MAX}) {
    Result<AttentionOutput> huge = mlaDecode(
        p.query, p.kvCache, p.blockTable, p.seqLens, {p.scale, 32, splits});
    ASSERT_TRUE(huge.isOk()) << huge.message();
    EXPECT_TRUE(huge->out == perKey->out);
    EXPECT_TRUE(huge->lse == perKey->lse);
  }
}

TEST(MlaDecodeErrors, Operands) {
  const Tensor q(DType::F32, {2, 4, 6});
  const Tensor cache(DType::F32, {3, 16, 6});
  const Tensor table = ints(DType::I32, {2, 1}, {0, 2});
  const Tensor seqLens = ints(DType::I32, {2}, {5, 16});
  const MlaDecodeParams ok{0.5, 4, 2};
  ASSERT_TRUE(mlaDecode(q, cache, table, seqLens, ok).isOk());

  EXPECT_ERROR(mlaDecode(q, cache, table, seqLens, {0.0, 4, 2}),
               "mla_decode scale must be finite and > 0, got 0");
  EXPECT_ERROR(mlaDecode(q, cache, table, seqLens, {0.5, 7, 2}),
               "kv_lora_rank = 7 must be in [1, 6]");
  EXPECT_ERROR(mlaDecode(q, cache, table, seqLens, {0.5, 4, 0}),
               "num_kv_splits must be >= 1, got 0");
  EXPECT_ERROR(mlaDecode(q, Tensor(DType::F32, {3, 16, 5}), table, seqLens, ok),
               "kv_cache dim 2 is 5, expected 6");
  EXPECT_ERROR(mlaDecode(q, Tensor(DType::F32, {3, 2, 16, 6}), table, seqLens, ok),
               "kv_cache must be a rank-3 tensor");
  EXPECT_ERROR(mlaDecode(q, Tensor(DType::BF16, {3, 16, 6}), table, seqLens, ok),
               "kv_cache has dtype bf16, expected f32 (the dtype of q)");
  EXPECT_ERROR(mlaDecode(q, cache, table, ints(DType::I32, {3}, {1, 1, 1}), ok),
               "seq_lens dim 0 is 3, expected 2 (num_reqs, q dim 0)");
  EXPECT_ERROR(mlaDecode(q, cache, table, ints(DType::I32, {2}, {5, 0}), ok),
               "seq_lens[1] = 0 is less than the query length 1");
  EXPECT_ERROR(mlaDecode(q, cache, ints(DType::I32, {2, 1}, {0, 3}), seqLens, ok),
               "block_table[1][0] = 3 is outside [0, num_blocks = 3)");
  EXPECT_ERROR(mlaDecode(q, cache, table, ints(DType::I32, {2}, {5, 17}), ok),
               "block_table has 1 columns, but request 1 with seq_lens[1] = 17 "
               "needs 2 blocks");
}

} // namespace
} // namespace attn
