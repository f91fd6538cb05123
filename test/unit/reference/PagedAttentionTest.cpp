//===- PagedAttentionTest.cpp - Hand-computed cases and operand checks ---===//
//
// Each knob on a batch small enough to write the visible keys down by hand.
// Caches come from test::toPaged: scrambled blocks, NaN wherever no token
// lives, so a read past seq_len shows up as NaN.
//
//===----------------------------------------------------------------------===//
#include "reference/ops/Ops.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace attn {
namespace {

using test::DenseBatch;
using test::DenseRequest;
using test::logSumExp;
using test::softmaxAverage;

constexpr double inf = std::numeric_limits<double>::infinity();

struct Outputs {
  std::vector<double> out;
  std::vector<double> lse;
};

/// Runs pagedAttention on `batch` paged into 2-token f32 blocks.
Outputs run(const DenseBatch &batch, const PagedAttentionParams &params,
            const std::vector<double> *alibi = nullptr,
            const std::vector<double> *sinks = nullptr) {
  const test::PagedBatch p =
      test::toPaged(batch, DType::F32, params.layout, /*blockSize=*/2);
  const int64_t h = batch.numHeads;
  const Tensor alibiTensor =
      alibi ? test::floats(DType::F32, {h}, *alibi) : Tensor();
  const Tensor sinkTensor =
      sinks ? test::floats(DType::F32, {h}, *sinks) : Tensor();
  Result<AttentionOutput> r = pagedAttention(
      p.query, p.kvCache, p.blockTable, p.seqLens, p.queryStartLoc,
      alibi ? &alibiTensor : nullptr, sinks ? &sinkTensor : nullptr, params);
  EXPECT_TRUE(r.isOk()) << r.message();
  if (!r.isOk())
    return {};
  return {test::toDoubles(r->out), test::toDoubles(r->lse)};
}

/// f32 rounding of the output: a relative 2^-23 plus a hair.
void expectClose(double got, double want) {
  EXPECT_NEAR(got, want, 1e-6 * std::fabs(want) + 1e-7);
}

/// The one-dim batch used by the mask tests: keys 1..4, values 10..40.
DenseRequest scalarRequest(std::vector<double> queries, int64_t seqLen) {
  DenseRequest r;
  r.queryLen = queries.size();
  r.seqLen = seqLen;
  r.queries = std::move(queries);
  for (int64_t j = 0; j < seqLen; ++j) {
    r.keys.push_back(j + 1);
    r.values.push_back(10.0 * (j + 1));
  }
  return r;
}

DenseBatch oneRequest(DenseRequest r) {
  DenseBatch b;
  b.requests.push_back(std::move(r));
  return b;
}

/// Expects token t (H = D = 1) to attend to `visible` with scores q * k.
void expectAttends(const Outputs &o, int64_t t, double q,
                   const std::vector<int64_t> &visible) {
  std::vector<double> scores, values;
  for (int64_t j : visible) {
    scores.push_back(q * (j + 1));
    values.push_back(10.0 * (j + 1));
  }
  SCOPED_TRACE("token " + std::to_string(t));
  expectClose(o.out[t], softmaxAverage(scores, values));
  expectClose(o.lse[t], logSumExp(scores));
}

TEST(PagedAttention, PinnedNumbers) {
  DenseBatch b;
  b.headSize = 2;
  b.requests.push_back({1, 2, {1, 0}, {1, 0, 0, 1}, {1, 0, 0, 1}});
  const Outputs o = run(b, {});
  expectClose(o.out[0], 0.7310585786300049); // e / (1 + e)
  expectClose(o.out[1], 0.2689414213699951);
  expectClose(o.lse[0], 1.3132616875182228); // log(1 + e)
}

TEST(PagedAttention, Causal) {
  // Context 2, two new tokens at positions 2 and 3.
  const Outputs o = run(oneRequest(scalarRequest({0.5, 0.25}, 4)), {});
  expectAttends(o, 0, 0.5, {0, 1, 2});
  expectAttends(o, 1, 0.25, {0, 1, 2, 3});
}

TEST(PagedAttention, NonCausalSeesLaterKeys) {
  PagedAttentionParams params;
  params.causal = false;
  const Outputs o = run(oneRequest(scalarRequest({0.5, 0.25}, 4)), params);
  expectAttends(o, 0, 0.5, {0, 1, 2, 3});
  expectAttends(o, 1, 0.25, {0, 1, 2, 3});
}

TEST(PagedAttention, WindowLeft) {
  PagedAttentionParams params;
  params.windowLeft = 1;
  const Outputs o = run(oneRequest(scalarRequest({0.5, 0.25}, 4)), params);
  expectAttends(o, 0, 0.5, {1, 2});
  expectAttends(o, 1, 0.25, {2, 3});
}

TEST(PagedAttention, WindowRightNonCausal) {
  // A prefill with no context: positions 0..3.
  const std::vector<double> q = {0.5, 0.25, -0.5, 1};
  PagedAttentionParams params;
  params.causal = false;
  params.windowRight = 1;
  Outputs o = run(oneRequest(scalarRequest(q, 4)), params);
  expectAttends(o, 0, q[0], {0, 1});
  expectAttends(o, 1, q[1], {0, 1, 2});
  expectAttends(o, 2, q[2], {0, 1, 2, 3});
  expectAttends(o, 3, q[3], {0, 1, 2, 3});

  params.windowLeft = 0;
  o = run(oneRequest(scalarRequest(q, 4)), params);
  expectAttends(o, 0, q[0], {0, 1});
  expectAttends(o, 1, q[1], {1, 2});
  expectAttends(o, 2, q[2], {2, 3});
  expectAttends(o, 3, q[3], {3});
}

TEST(PagedAttention, WindowRightIgnoredWhenCausal) {
  PagedAttentionParams params;
  params.windowRight = 0;
  const Outputs o = run(oneRequest(scalarRequest({0.5, 0.25, -1}, 3)), params);
  expectAttends(o, 0, 0.5, {0});
  expectAttends(o, 1, 0.25, {0, 1});
  expectAttends(o, 2, -1, {0, 1, 2});
}

TEST(PagedAttention, EmptyContextPrefillAndEmptyQuery) {
  DenseBatch b;
  b.requests.push_back(scalarRequest({0.5, 0.25, 2}, 3)); // prefill
  b.requests.push_back(scalarRequest({}, 2));             // nothing this step
  b.requests.push_back(scalarRequest({-0.5}, 3));         // decode
  const Outputs o = run(b, {});
  ASSERT_EQ(o.out.size(), 4u);
  EXPECT_EQ(o.out[0], 10.0); // position 0 sees only key 0
  EXPECT_EQ(o.lse[0], 0.5);
  expectAttends(o, 1, 0.25, {0, 1});
  expectAttends(o, 2, 2, {0, 1, 2});
  expectAttends(o, 3, -0.5, {0, 1, 2});
}

TEST(PagedAttention, ScaleMultipliesTheDotProduct) {
  PagedAttentionParams params;
  params.scale = 0.5;
  const Outputs o = run(oneRequest(scalarRequest({1.0}, 3)), params);
  expectAttends(o, 0, 0.5, {0, 1, 2});
}

TEST(PagedAttention, SoftCap) {
  PagedAttentionParams params;
  params.softCap = 1.0;
  const Outputs o = run(oneRequest(scalarRequest({2.0}, 3)), params);
  const std::vector<double> s = {std::tanh(2.0), std::tanh(4.0), std::tanh(6.0)};
  expectClose(o.out[0], softmaxAverage(s, {10, 20, 30}));
  expectClose(o.lse[0], logSumExp(s));
}

TEST(PagedAttention, Alibi) {
  const std::vector<double> slopes = {0.5};
  const Outputs o =
      run(oneRequest(scalarRequest({1.0}, 3)), {}, &slopes, nullptr);
  // Position 2: s_j = k_j - 0.5 * |j - 2|.
  const std::vector<double> s = {1 - 1.0, 2 - 0.5, 3};
  expectClose(o.out[0], softmaxAverage(s, {10, 20, 30}));
  expectClose(o.lse[0], logSumExp(s));
}

TEST(PagedAttention, AlibiNonCausalPenalisesLaterKeysToo) {
  const std::vector<double> slopes = {0.5};
  PagedAttentionParams params;
  params.causal = false;
  const Outputs o =
      run(oneRequest(scalarRequest({1.0, 1.0}, 4)), params, &slopes, nullptr);
  // Token 0 at position 2 sees key 3 as well, one position away.
  const std::vector<double> s = {1 - 1.0, 2 - 0.5, 3, 4 - 0.5};
  expectClose(o.out[0], softmaxAverage(s, {10, 20, 30, 40}));
  expectClose(o.lse[0], logSumExp(s));
}

TEST(PagedAttention, SoftCapBeforeAlibi) {
  // FlashAttention-2's order: cap the score, then add the bias.
  const std::vector<double> slopes = {0.5};
  PagedAttentionParams params;
  params.softCap = 2.0;
  const Outputs o =
      run(oneRequest(scalarRequest({1.0}, 3)), params, &slopes, nullptr);
  std::vector<double> s;
  for (auto [raw, bias] : {std::pair{1.0, 1.0}, {2.0, 0.5}, {3.0, 0.0}})
    s.push_back(2.0 * std::tanh(raw / 2.0) - bias);
  expectClose(o.out[0], softmaxAverage(s, {10, 20, 30}));
  expectClose(o.lse[0], logSumExp(s));
}

TEST(PagedAttention, SinksJoinTheDenominatorOnly) {
  const std::vector<double> sinks = {0.75};
  const Outputs o =
      run(oneRequest(scalarRequest({0.5}, 2)), {}, nullptr, &sinks);
  const std::vector<double> s = {0.5, 1.0};
  expectClose(o.out[0], softmaxAverage(s, {10, 20}, 0.75));
  expectClose(o.lse[0], logSumExp(s, 0.75));
  // Without the sink the weights would sum to one.
  EXPECT_LT(o.out[0], softmaxAverage(s, {10, 20}));
}

TEST(PagedAttention, GroupedQueryHeadsShareKvHeads) {
  // H = 4, G = 2, D = 1: heads 0, 1 read kv head 0; heads 2, 3 kv head 1.
  DenseBatch b;
  b.numHeads = 4;
  b.numKvHeads = 2;
  // keys/values [seq 2, G 2, D 1]
  b.requests.push_back({1, 2, {0.5, 1, -1, 0.25}, {1, -1, 2, 3}, {10, -5, 20, 7}});
  const Outputs o = run(b, {});
  const std::vector<double> k0 = {1, 2}, v0 = {10, 20};
  const std::vector<double> k1 = {-1, 3}, v1 = {-5, 7};
  const double q[] = {0.5, 1, -1, 0.25};
  for (int h = 0; h < 4; ++h) {
    const auto &k = h < 2 ? k0 : k1;
    const auto &v = h < 2 ? v0 : v1;
    const std::vector<double> s = {q[h] * k[0], q[h] * k[1]};
    SCOPED_TRACE("head " + std::to_string(h));
    expectClose(o.out[h], softmaxAverage(s, v));
    expectClose(o.lse[h], logSumExp(s));
  }
}

TEST(PagedAttention, MultiQueryOneKvHead) {
  DenseBatch b;
  b.numHeads = 3;
  b.requests.push_back({1, 3, {0.5, -2, 1}, {1, 2, 3}, {10, 20, 30}});
  const Outputs o = run(b, {});
  for (int h = 0; h < 3; ++h) {
    const double q = b.requests[0].queries[h];
    const std::vector<double> s = {q, 2 * q, 3 * q};
    expectClose(o.out[h], softmaxAverage(s, {10, 20, 30}));
    expectClose(o.lse[h], logSumExp(s));
  }
}

TEST(PagedAttention, EveryKeyMaskedGivesZeroAndMinusInfinity) {
  // Key p is always inside the window, so the one way to mask every key is
  // a score of -inf on all of them.
  const DenseBatch b = oneRequest(scalarRequest({-inf}, 3));
  Outputs o = run(b, {});
  EXPECT_EQ(o.out[0], 0.0);
  EXPECT_EQ(o.lse[0], -inf);

  const std::vector<double> sinks = {0.75};
  o = run(b, {}, nullptr, &sinks);
  EXPECT_EQ(o.out[0], 0.0);
  EXPECT_EQ(o.lse[0], static_cast<double>(0.75f));
}

// NaN propagates: a NaN in the query or in a visible key makes the row's out
// and lse NaN (std::max once skipped it: out 0, lse -inf, as if the row had
// no keys); a NaN in a visible value makes that output element NaN. A NaN
// in a key the row does not see changes nothing.
TEST(PagedAttention, NaNPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Outputs o = run(oneRequest(scalarRequest({nan, 0.5}, 4)), {});
  EXPECT_TRUE(std::isnan(o.out[0]));
  EXPECT_TRUE(std::isnan(o.lse[0]));
  expectAttends(o, 1, 0.5, {0, 1, 2, 3});

  // Key 3 (position 3) is visible to token 1 only.
  DenseRequest r = scalarRequest({0.5, 0.25}, 4);
  r.keys[3] = nan;
  o = run(oneRequest(r), {});
  expectAttends(o, 0, 0.5, {0, 1, 2});
  EXPECT_TRUE(std::isnan(o.out[1]));
  EXPECT_TRUE(std::isnan(o.lse[1]));

  r = scalarRequest({0.5}, 4);
  r.values[1] = nan;
  o = run(oneRequest(r), {});
  EXPECT_TRUE(std::isnan(o.out[0]));
  expectClose(o.lse[0], logSumExp({0.5, 1.0, 1.5, 2.0}));
}

TEST(PagedAttention, OutputHasTheQueryDTypeAndRoundsOnce) {
  DenseBatch b;
  b.headSize = 2;
  b.requests.push_back({1, 2, {1, 0}, {1, 0, 0, 1}, {1, 0, 0, 1}});
  const test::PagedBatch p = test::toPaged(b, DType::BF16, KvLayout::NHD, 16);
  Result<AttentionOutput> r = pagedAttention(p.query, p.kvCache, p.blockTable,
                                             p.seqLens, p.queryStartLoc,
                                             nullptr, nullptr, {});
  ASSERT_TRUE(r.isOk()) << r.message();
  EXPECT_EQ(r->out.dtype(), DType::BF16);
  EXPECT_EQ(r->lse.dtype(), DType::F32);
  const double e = std::exp(1.0);
  EXPECT_EQ(r->out.getFloat(0), bf16BitsToFloat(doubleToBF16Bits(e / (1 + e))));
  EXPECT_EQ(r->lse.getFloat(0), static_cast<double>(
                                    static_cast<float>(std::log1p(e))));
}

/// A valid decode batch the error tests break one operand of.
struct ValidOperands {
  ValidOperands() {
    DenseBatch b;
    b.numHeads = 4;
    b.numKvHeads = 2;
    b.headSize = 2;
    DenseRequest r;
    r.queryLen = 1;
    r.seqLen = 3;
    r.queries.assign(8, 0.5);
    r.keys.assign(12, 0.25);
    r.values.assign(12, 1.0);
    b.requests.push_back(r);
    p = test::toPaged(b, DType::F32, KvLayout::NHD, 2);
  }
  Result<AttentionOutput> run(const PagedAttentionParams &params = {},
                              const Tensor *alibi = nullptr,
                              const Tensor *sinks = nullptr) const {
    return pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                          p.queryStartLoc, alibi, sinks, params);
  }
  test::PagedBatch p;
};

TEST(PagedAttentionErrors, Operands) {
  ValidOperands v;
  ASSERT_TRUE(v.run().isOk());

  ValidOperands wrongRank = v;
  wrongRank.p.query = Tensor(DType::F32, {1, 8});
  EXPECT_ERROR(wrongRank.run(),
               "query must be a rank-3 tensor of f32, f16 or bf16, got [1, 8] f32");

  ValidOperands wrongDType = v;
  wrongDType.p.query = Tensor(DType::F16, {1, 4, 2});
  EXPECT_ERROR(wrongDType.run(),
               "kv_cache has dtype f32, expected f16 (the dtype of query)");

  ValidOperands heads = v;
  heads.p.query = Tensor(DType::F32, {1, 3, 2});
  EXPECT_ERROR(heads.run(),
               "num_heads = 3 is not a multiple of num_kv_heads = 2");

  ValidOperands headSize = v;
  headSize.p.query = Tensor(DType::F32, {1, 4, 4});
  EXPECT_ERROR(headSize.run(),
               "kv_cache head size 2 does not match the query head size 4");

  // Found by test/fuzz (metadata): a query without heads, or with heads of
  // no element, once read row 0 of an empty axis (Tensor::offset's assert).
  ValidOperands noHeads = v;
  noHeads.p.query = Tensor(DType::F32, {1, 0, 2});
  EXPECT_ERROR(noHeads.run(),
               "num_heads and the head size must be at least 1, got a query "
               "of [1, 0, 2] f32");
  ValidOperands emptyHeads = v;
  emptyHeads.p.query = Tensor(DType::F32, {1, 4, 0});
  emptyHeads.p.kvCache = Tensor(DType::F32, {4, 2, 2, 2, 0});
  EXPECT_ERROR(emptyHeads.run(), "num_heads and the head size must be at "
                                 "least 1");

  ValidOperands cacheRank = v;
  cacheRank.p.kvCache = Tensor(DType::F32, {4, 2, 2, 2});
  EXPECT_ERROR(cacheRank.run(), "kv_cache must be a rank-5 tensor");

  ValidOperands notKv = v;
  notKv.p.kvCache = Tensor(DType::F32, {4, 3, 2, 2, 2});
  EXPECT_ERROR(notKv.run(), "kv_cache dim 1 is 3, expected 2 (key and value)");

  const Tensor shortAlibi(DType::F32, {2});
  EXPECT_ERROR(v.run({}, &shortAlibi),
               "alibi_slopes dim 0 is 2, expected 4 (num_heads, query dim 1)");
  const Tensor halfSinks(DType::F16, {4});
  EXPECT_ERROR(v.run({}, nullptr, &halfSinks),
               "sinks must be a rank-1 tensor of f32, got [4] f16");

  PagedAttentionParams negativeCap;
  negativeCap.softCap = -1;
  EXPECT_ERROR(v.run(negativeCap), "soft_cap must be finite and >= 0");
  PagedAttentionParams nanScale;
  nanScale.scale = std::nan("");
  EXPECT_ERROR(v.run(nanScale), "scale must be finite");
}

// Rows past query_start_loc[R] are padding: never read (NaN there reaches
// nothing), never written (out and lse stay zero).
TEST(PagedAttention, PaddingRowsAreNeitherReadNorWritten) {
  ValidOperands v;
  Result<AttentionOutput> unpadded = v.run();
  ASSERT_TRUE(unpadded.isOk());
  ValidOperands padded = v;
  padded.p.query = Tensor(DType::F32, {3, 4, 2});
  for (int64_t i = 0; i < padded.p.query.numElements(); ++i)
    padded.p.query.setFloat(i, i < 8 ? v.p.query.getFloat(i) : std::nan(""));
  Result<AttentionOutput> out = padded.run();
  ASSERT_TRUE(out.isOk()) << out.message();
  ASSERT_EQ(out->out.dim(0), 3);
  for (int64_t i = 0; i < out->out.numElements(); ++i)
    EXPECT_EQ(out->out.getFloat(i),
              i < 8 ? unpadded->out.getFloat(i) : 0.0) << i;
  for (int64_t i = 0; i < out->lse.numElements(); ++i)
    EXPECT_EQ(out->lse.getFloat(i), i < 4 ? unpadded->lse.getFloat(i) : 0.0)
        << i;
}

TEST(PagedAttentionErrors, Metadata) {
  ValidOperands v;
  ValidOperands tokens = v;
  tokens.p.query = Tensor(DType::F32, {0, 4, 2});
  EXPECT_ERROR(tokens.run(),
               "query_start_loc[1] = 1 exceeds the query's 0 tokens");

  ValidOperands block = v;
  block.p.blockTable.setInt(1, 99);
  EXPECT_ERROR(block.run(),
               "block_table[0][1] = 99 is outside [0, num_blocks = 3)");

  ValidOperands seq = v;
  seq.p.seqLens.setInt(0, 0);
  EXPECT_ERROR(seq.run(), "seq_lens[0] = 0 is less than the query length 1");

  ValidOperands narrow = v;
  narrow.p.seqLens.setInt(0, 7);
  EXPECT_ERROR(narrow.run(), "block_table has 3 columns, but request 0 with "
                             "seq_lens[0] = 7 needs 4 blocks");

  ValidOperands empty = v;
  empty.p.seqLens = Tensor(DType::I32, {0});
  EXPECT_ERROR(empty.run(), "empty batch");
}

} // namespace
} // namespace attn
