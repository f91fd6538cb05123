//===- PropertyTest.cpp - Properties of paged attention on random steps --===//
//
// Random steps mixing decode, prefill and chunked prefill over a shared
// prefix, checked against an independent dense attention and against
// themselves: one request at a time, the other layout, a key set split in
// two and merged, other thread counts.
//
//===----------------------------------------------------------------------===//
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/testing/Random.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

namespace attn {
namespace {

Problem randomStep(DType dtype, KvLayout layout, uint64_t seed) {
  ProblemShape shape;
  shape.numHeads = 8;
  shape.numKvHeads = 2;
  shape.headSize = 16;
  shape.blockSize = 4;
  shape.dtype = dtype;
  shape.layout = layout;
  ProblemOptions options;
  options.seed = seed;
  options.numReqs = 7;
  options.minContextLen = 0;
  options.maxContextLen = 40;
  options.decodeFraction = 0.4;
  options.maxPrefillQueryLen = 12;
  options.sharedPrefixBlocks = 2;
  Result<Problem> p = generateProblem(shape, options);
  EXPECT_TRUE(p.isOk()) << p.message();
  Problem step = std::move(p).value();
  Status written = reshapeAndCache(step.key, step.value, step.kvCache,
                                   step.slotMapping, layout);
  EXPECT_TRUE(written.isOk()) << written.message();
  return step;
}

/// The step as dense requests: cached positions read out of the pages
/// (before this step's writes), new positions straight from key and value.
test::DenseBatch toDense(const Problem &p, KvLayout layout) {
  test::DenseBatch b;
  b.numHeads = p.query.dim(1);
  b.numKvHeads = p.key.dim(1);
  b.headSize = p.key.dim(2);
  const int64_t g = b.numKvHeads, d = b.headSize, h = b.numHeads;
  const int64_t blockSize =
      layout == KvLayout::NHD ? p.kvCache.dim(2) : p.kvCache.dim(3);
  for (int64_t r = 0; r < p.seqLens.dim(0); ++r) {
    test::DenseRequest req;
    const int64_t first = p.queryStartLoc.getInt(r);
    req.queryLen = p.queryStartLoc.getInt(r + 1) - first;
    req.seqLen = p.seqLens.getInt(r);
    const int64_t context = req.seqLen - req.queryLen;
    for (int64_t j = 0; j < req.seqLen; ++j) {
      const int64_t block =
          p.blockTable.getInt(p.blockTable.offset({r, j / blockSize}));
      for (int64_t kv = 0; kv < g; ++kv)
        for (int64_t e = 0; e < d; ++e) {
          if (j >= context) {
            const int64_t t = first + j - context;
            req.keys.push_back(p.key.getFloat(p.key.offset({t, kv, e})));
            req.values.push_back(p.value.getFloat(p.value.offset({t, kv, e})));
            continue;
          }
          const int64_t off = j % blockSize;
          auto at = [&](int64_t part) {
            return p.kvCache.getFloat(
                layout == KvLayout::NHD
                    ? p.kvCache.offset({block, part, off, kv, e})
                    : p.kvCache.offset({block, part, kv, off, e}));
          };
          req.keys.push_back(at(0));
          req.values.push_back(at(1));
        }
    }
    for (int64_t i = 0; i < req.queryLen * h * d; ++i)
      req.queries.push_back(p.query.getFloat(first * h * d + i));
    b.requests.push_back(std::move(req));
  }
  return b;
}

struct Variant {
  const char *name;
  PagedAttentionParams params;
  bool alibi = false;
  bool sinks = false;
};

std::vector<Variant> variants(double scale) {
  std::vector<Variant> v;
  PagedAttentionParams p;
  p.scale = scale;
  v.push_back({"causal", p});
  p.windowLeft = 5;
  v.push_back({"window_left", p});
  p.causal = false;
  p.windowLeft = -1;
  p.windowRight = 3;
  v.push_back({"non-causal window_right", p});
  p.windowRight = -1;
  v.push_back({"non-causal", p});
  p.causal = true;
  p.softCap = 0.5;
  v.push_back({"soft cap + alibi", p, true});
  p.softCap = 0;
  p.windowLeft = 2;
  v.push_back({"sinks + window_left", p, false, true});
  return v;
}

Result<AttentionOutput> run(const Problem &p, const Tensor &kvCache,
                            const Variant &v) {
  return pagedAttention(p.query, kvCache, p.blockTable, p.seqLens,
                        p.queryStartLoc, v.alibi ? &p.alibiSlopes : nullptr,
                        v.sinks ? &p.sinks : nullptr, v.params);
}

TEST(PagedAttentionProperty, ReshapeThenAttentionMatchesDense) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
      const Problem p = randomStep(dtype, layout, 5);
      const test::DenseBatch dense = toDense(p, layout);
      const std::vector<double> slopes = test::toDoubles(p.alibiSlopes);
      const std::vector<double> sinks = test::toDoubles(p.sinks);
      // One rounding of the output: half an ulp of its dtype, and at least
      // half its smallest subnormal (f16's is 2^-24: an output near 1e-5,
      // which ALiBi's steeper scores make, rounds with more relative error).
      const double rtol =
          dtype == DType::F32 ? 0x1p-23 : dtype == DType::F16 ? 0x1p-10 : 0x1p-7;
      const double outAtol = dtype == DType::F16 ? 0x1p-25 : 1e-30;
      for (Variant &v : variants(p.scale)) {
        v.params.layout = layout;
        SCOPED_TRACE(std::string(toString(dtype)) + " " +
                     std::string(toString(layout)) + " " + v.name);
        Result<AttentionOutput> r = run(p, p.kvCache, v);
        ASSERT_TRUE(r.isOk()) << r.message();
        const test::DenseResult want =
            test::denseAttention(dense, v.params, v.alibi ? &slopes : nullptr,
                                 v.sinks ? &sinks : nullptr);
        EXPECT_LE(test::toleranceRatio(test::toDoubles(r->out), want.out,
                                       outAtol, rtol),
                  1.0);
        EXPECT_LE(test::toleranceRatio(test::toDoubles(r->lse), want.lse,
                                       1e-30, 0x1p-23),
                  1.0);
      }
    }
}

/// Request `r` of `p` alone: its tokens, seq_len and block table row.
Problem slice(const Problem &p, int64_t r) {
  const int64_t first = p.queryStartLoc.getInt(r);
  const int64_t count = p.queryStartLoc.getInt(r + 1) - first;
  const int64_t h = p.query.dim(1), d = p.query.dim(2);
  const int64_t cols = p.blockTable.dim(1);
  Problem one;
  one.query = Tensor(p.query.dtype(), {count, h, d});
  for (int64_t i = 0; i < count * h * d; ++i)
    one.query.setFloat(i, p.query.getFloat(first * h * d + i));
  one.seqLens = test::ints(DType::I32, {1}, {p.seqLens.getInt(r)});
  one.queryStartLoc = test::ints(DType::I32, {2}, {0, count});
  one.blockTable = Tensor(DType::I32, {1, cols});
  for (int64_t i = 0; i < cols; ++i)
    one.blockTable.setInt(i, p.blockTable.getInt(r * cols + i));
  one.alibiSlopes = p.alibiSlopes;
  one.sinks = p.sinks;
  return one;
}

TEST(PagedAttentionProperty, BatchEqualsRequestsOneByOne) {
  const Problem p = randomStep(DType::BF16, KvLayout::NHD, 6);
  for (const Variant &v : variants(p.scale)) {
    SCOPED_TRACE(v.name);
    Result<AttentionOutput> batch = run(p, p.kvCache, v);
    ASSERT_TRUE(batch.isOk()) << batch.message();
    const int64_t rowBytes = batch->out.numBytes() / batch->out.dim(0);
    const int64_t lseRowBytes = batch->lse.numBytes() / batch->lse.dim(0);
    for (int64_t r = 0; r < p.seqLens.dim(0); ++r) {
      const Problem one = slice(p, r);
      Result<AttentionOutput> alone = run(one, p.kvCache, v);
      ASSERT_TRUE(alone.isOk()) << alone.message();
      const int64_t first = p.queryStartLoc.getInt(r);
      EXPECT_EQ(0, std::memcmp(alone->out.data(),
                               batch->out.data() + first * rowBytes,
                               alone->out.numBytes()))
          << "request " << r;
      EXPECT_EQ(0, std::memcmp(alone->lse.data(),
                               batch->lse.data() + first * lseRowBytes,
                               alone->lse.numBytes()))
          << "request " << r;
    }
  }
}

TEST(PagedAttentionProperty, NhdEqualsHnd) {
  const Problem p = randomStep(DType::F16, KvLayout::NHD, 7);
  const int64_t nb = p.kvCache.dim(0), b = p.kvCache.dim(2),
                g = p.kvCache.dim(3), d = p.kvCache.dim(4);
  Tensor hnd(p.kvCache.dtype(), {nb, 2, g, b, d});
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t part = 0; part < 2; ++part)
      for (int64_t off = 0; off < b; ++off)
        for (int64_t kv = 0; kv < g; ++kv)
          for (int64_t e = 0; e < d; ++e)
            hnd.setFloat(hnd.offset({n, part, kv, off, e}),
                         p.kvCache.getFloat(
                             p.kvCache.offset({n, part, off, kv, e})));
  for (const Variant &v : variants(p.scale)) {
    SCOPED_TRACE(v.name);
    Variant asHnd = v;
    asHnd.params.layout = KvLayout::HND;
    Result<AttentionOutput> a = run(p, p.kvCache, v);
    Result<AttentionOutput> c = run(p, hnd, asHnd);
    ASSERT_TRUE(a.isOk() && c.isOk());
    EXPECT_TRUE(a->out == c->out);
    EXPECT_TRUE(a->lse == c->lse);
  }
}

TEST(PagedAttentionProperty, MergeOfDisjointKeySetsEqualsTheUnion) {
  // Decode requests, non-causal so that only the key set matters; the keys
  // of each request are split in two at a random point.
  Random random(8);
  test::DenseBatch full, left, right;
  for (test::DenseBatch *b : {&full, &left, &right}) {
    b->numHeads = 4;
    b->numKvHeads = 2;
    b->headSize = 8;
  }
  for (int r = 0; r < 5; ++r) {
    test::DenseRequest req;
    req.queryLen = 1;
    req.seqLen = random.uniformInt(2, 30);
    for (int i = 0; i < 4 * 8; ++i)
      req.queries.push_back(random.uniform(-2, 2));
    for (int i = 0; i < req.seqLen * 2 * 8; ++i) {
      req.keys.push_back(random.uniform(-1, 1));
      req.values.push_back(random.uniform(-1, 1));
    }
    const int64_t cut = random.uniformInt(1, req.seqLen - 1);
    test::DenseRequest a = req, b = req;
    a.seqLen = cut;
    a.keys.resize(cut * 16);
    a.values.resize(cut * 16);
    b.seqLen = req.seqLen - cut;
    b.keys.erase(b.keys.begin(), b.keys.begin() + cut * 16);
    b.values.erase(b.values.begin(), b.values.begin() + cut * 16);
    full.requests.push_back(req);
    left.requests.push_back(a);
    right.requests.push_back(b);
  }
  PagedAttentionParams params;
  params.causal = false;
  params.scale = 0.35;
  auto attendTo = [&](const test::DenseBatch &b) {
    const test::PagedBatch p = test::toPaged(b, DType::F32, KvLayout::NHD, 4);
    Result<AttentionOutput> r =
        pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                       p.queryStartLoc, nullptr, nullptr, params);
    EXPECT_TRUE(r.isOk()) << r.message();
    return std::move(r).value();
  };
  const AttentionOutput whole = attendTo(full);
  const AttentionOutput a = attendTo(left);
  const AttentionOutput b = attendTo(right);
  Result<AttentionOutput> merged = mergeStates(a.out, a.lse, b.out, b.lse);
  ASSERT_TRUE(merged.isOk()) << merged.message();
  std::vector<long double> wantOut, wantLse;
  for (double x : test::toDoubles(whole.out))
    wantOut.push_back(x);
  for (double x : test::toDoubles(whole.lse))
    wantLse.push_back(x);
  // Both sides went through f32 once more than the whole: a few ulps.
  EXPECT_LE(test::toleranceRatio(test::toDoubles(merged->out), wantOut, 1e-7,
                                 4e-7),
            1.0);
  EXPECT_LE(test::toleranceRatio(test::toDoubles(merged->lse), wantLse, 1e-7,
                                 4e-7),
            1.0);
}

TEST(PagedAttentionProperty, ThreadCountDoesNotChangeTheResult) {
  const Problem p = randomStep(DType::F32, KvLayout::HND, 9);
  Variant v = variants(p.scale)[4];
  v.params.layout = KvLayout::HND;
  setReferenceThreadCount(1);
  Result<AttentionOutput> serial = run(p, p.kvCache, v);
  setReferenceThreadCount(3);
  Result<AttentionOutput> threaded = run(p, p.kvCache, v);
  setReferenceThreadCount(0);
  ASSERT_TRUE(serial.isOk() && threaded.isOk());
  EXPECT_TRUE(serial->out == threaded->out);
  EXPECT_TRUE(serial->lse == threaded->lse);
}

} // namespace
} // namespace attn
