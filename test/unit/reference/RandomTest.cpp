//===- RandomTest.cpp - Seeded draws and generated problems --------------===//
#include "reference/testing/Random.h"

#include "core/Metadata.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

namespace attn {
namespace {

TEST(Random, IsTheStandardMersenneTwister) {
  // The C++ standard fixes the 10000th draw of a default-seeded mt19937_64.
  Random random(5489);
  uint64_t x = 0;
  for (int i = 0; i < 10000; ++i)
    x = random.next();
  EXPECT_EQ(x, 9981545732273789042ull);
}

TEST(Random, UniformIsTheTop53Bits) {
  Random a(42), b(42);
  for (int i = 0; i < 100; ++i) {
    const double u = a.uniform();
    EXPECT_EQ(u, static_cast<double>(b.next() >> 11) * 0x1p-53);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(Random, UniformIntCoversItsRangeOnly) {
  Random random(3);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = random.uniformInt(-2, 4);
    EXPECT_GE(v, -2);
    EXPECT_LE(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(random.uniformInt(5, 5), 5);
}

ProblemOptions mixedOptions(uint64_t seed) {
  ProblemOptions o;
  o.seed = seed;
  o.numReqs = 24;
  o.minContextLen = 1;
  o.maxContextLen = 70;
  o.decodeFraction = 0.4;
  o.maxPrefillQueryLen = 20;
  o.sharedPrefixBlocks = 2;
  o.extraFreeBlocks = 3;
  return o;
}

TEST(GenerateProblem, ConsistentMetadataAndBlocks) {
  ProblemShape shape;
  shape.numHeads = 4;
  shape.numKvHeads = 2;
  shape.headSize = 8;
  shape.blockSize = 4;
  const ProblemOptions options = mixedOptions(1);
  Result<Problem> p = generateProblem(shape, options);
  ASSERT_TRUE(p.isOk()) << p.message();

  Result<CommonAttentionMetadata> m = makeCommonAttentionMetadata(
      p->queryStartLoc, p->seqLens, &p->blockTable, &p->slotMapping);
  ASSERT_TRUE(m.isOk()) << m.message();
  const int64_t numBlocks = p->kvCache.dim(0);
  ASSERT_TRUE(checkNumTokens(*m, p->query.dim(0)).isOk());
  ASSERT_TRUE(checkCacheBounds(*m, numBlocks, 4).isOk());
  EXPECT_EQ(p->kvCache.shape(),
            (std::vector<int64_t>{numBlocks, 2, 4, 2, 8}));
  EXPECT_EQ(p->key.shape(), (std::vector<int64_t>{m->numActualTokens, 2, 8}));

  int decodes = 0, prefills = 0, chunked = 0;
  std::set<int32_t> usedBlocks;
  int64_t token = 0;
  for (int64_t r = 0; r < m->numReqs; ++r) {
    const int64_t context = m->numComputedTokens[r];
    const int64_t queryLen = m->queryLens[r];
    EXPECT_GE(context, 8) << "the shared prefix is cached";
    if (queryLen == 1)
      ++decodes;
    else if (context == 8)
      ++prefills;
    else
      ++chunked;
    // Shared prefix blocks are common; every other block is used once.
    for (int64_t i = 0; i < (m->seqLens[r] + 3) / 4; ++i) {
      if (i < 2)
        EXPECT_EQ(m->block(r, i), m->block(0, i));
      else
        EXPECT_TRUE(usedBlocks.insert(m->block(r, i)).second)
            << "block " << m->block(r, i) << " reused";
    }
    // The new tokens' slots follow their positions.
    for (int64_t i = 0; i < queryLen; ++i, ++token) {
      const int64_t position = context + i;
      EXPECT_EQ(m->slotMapping[token],
                m->block(r, position / 4) * 4 + position % 4);
    }
  }
  EXPECT_GT(decodes, 0);
  EXPECT_GT(prefills, 0);
  EXPECT_GT(chunked, 0);
  EXPECT_EQ(numBlocks, 2 + static_cast<int64_t>(usedBlocks.size()) + 3);
  EXPECT_FLOAT_EQ(p->alibiSlopes.getFloat(0), 0.25); // 2^(-8/4)
  EXPECT_FLOAT_EQ(p->alibiSlopes.getFloat(3), 0x1p-8);
}

TEST(GenerateProblem, SameSeedSameProblem) {
  ProblemShape shape;
  shape.numHeads = 2;
  shape.numKvHeads = 1;
  shape.headSize = 4;
  Result<Problem> a = generateProblem(shape, mixedOptions(9));
  Result<Problem> b = generateProblem(shape, mixedOptions(9));
  Result<Problem> c = generateProblem(shape, mixedOptions(10));
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_TRUE(a->kvCache == b->kvCache);
  EXPECT_TRUE(a->query == b->query);
  EXPECT_TRUE(a->blockTable == b->blockTable);
  EXPECT_TRUE(a->sinks == b->sinks);
  EXPECT_FALSE(a->query == c->query);
}

TEST(GenerateProblem, Mla) {
  ProblemShape shape;
  shape.numHeads = 3;
  shape.kvLoraRank = 16;
  shape.ropeDim = 4;
  ProblemOptions options = mixedOptions(2);
  Result<Problem> p = generateProblem(shape, options);
  ASSERT_TRUE(p.isOk()) << p.message();
  EXPECT_EQ(p->query.shape(), (std::vector<int64_t>{24, 3, 20}));
  EXPECT_EQ(p->kvCache.rank(), 3);
  EXPECT_EQ(p->kvCache.dim(2), 20);
  EXPECT_EQ(p->key.shape(), (std::vector<int64_t>{24, 16}));
  EXPECT_EQ(p->value.shape(), (std::vector<int64_t>{24, 4}));
}

/// Two heads over one kv head of 4 dims, blocks of 4 slots, HND f32: slot o
/// of block b, part `part`, is kvCache[b, part, 0, o, :].
ProblemShape tinyHndShape() {
  ProblemShape shape;
  shape.numHeads = 2;
  shape.numKvHeads = 1;
  shape.headSize = 4;
  shape.blockSize = 4;
  shape.dtype = DType::F32;
  shape.layout = KvLayout::HND;
  return shape;
}

TEST(GenerateProblem, UnreadFill) {
  const ProblemShape shape = tinyHndShape();
  ProblemOptions options = mixedOptions(3);
  options.sharedPrefixBlocks = 0;
  ProblemOptions filled = options;
  filled.unreadFill = std::numeric_limits<double>::quiet_NaN();
  Result<Problem> plain = generateProblem(shape, options);
  Result<Problem> p = generateProblem(shape, filled);
  ASSERT_TRUE(plain.isOk()) << plain.message();
  ASSERT_TRUE(p.isOk()) << p.message();
  const int64_t numBlocks = p->kvCache.dim(0), maxBlocks = p->blockTable.dim(1);

  // Which slots some request reads, and the blocks requests own.
  std::set<int64_t> readSlots, owned;
  for (int64_t r = 0; r < p->seqLens.dim(0); ++r) {
    const int64_t seqLen = p->seqLens.getInt(r);
    for (int64_t j = 0; j < seqLen; ++j) {
      const int64_t block = p->blockTable.getInt(p->blockTable.offset({r, j / 4}));
      readSlots.insert(block * 4 + j % 4);
      owned.insert(block);
    }
    // Entries past the request's blocks name unused blocks, not block 0.
    for (int64_t i = (seqLen + 3) / 4; i < maxBlocks; ++i) {
      const int64_t block = p->blockTable.getInt(p->blockTable.offset({r, i}));
      EXPECT_GE(block, 0);
      EXPECT_LT(block, numBlocks);
      EXPECT_EQ(owned.count(block), 0u) << "request " << r << " entry " << i;
    }
  }
  int64_t unread = 0;
  for (int64_t b = 0; b < numBlocks; ++b)
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t part = 0; part < 2; ++part)
        for (int64_t e = 0; e < 4; ++e) {
          const int64_t at = p->kvCache.offset({b, part, 0, o, e});
          if (readSlots.count(b * 4 + o)) {
            EXPECT_EQ(p->kvCache.getFloat(at), plain->kvCache.getFloat(at));
          } else {
            EXPECT_TRUE(std::isnan(p->kvCache.getFloat(at)));
            ++unread;
          }
        }
  EXPECT_GT(unread, 0);
  // Nothing else changes.
  EXPECT_EQ(p->seqLens.getInt(0), plain->seqLens.getInt(0));
  EXPECT_EQ(p->query.getFloat(5), plain->query.getFloat(5));
}

TEST(GenerateProblem, UnreadFillBeforeTheWindow) {
  // vLLM's sliding-window manager points the blocks before every query's
  // window at its null block: with a window, the slots before the first
  // query token's window are unread, and hold the fill.
  const ProblemShape shape = tinyHndShape();
  ProblemOptions options = mixedOptions(5);
  options.sharedPrefixBlocks = 0;
  options.unreadFill = std::numeric_limits<double>::infinity();
  ProblemShape windowed = shape;
  windowed.windowLeft = 6;
  Result<Problem> plain = generateProblem(shape, options);
  Result<Problem> p = generateProblem(windowed, options);
  ASSERT_TRUE(plain.isOk()) << plain.message();
  ASSERT_TRUE(p.isOk()) << p.message();
  int64_t beforeWindow = 0;
  for (int64_t r = 0; r < p->seqLens.dim(0); ++r) {
    const int64_t seqLen = p->seqLens.getInt(r);
    EXPECT_EQ(seqLen, plain->seqLens.getInt(r));
    const int64_t context =
        seqLen - (p->queryStartLoc.getInt(r + 1) - p->queryStartLoc.getInt(r));
    for (int64_t j = 0; j < seqLen; ++j) {
      const int64_t block =
          p->blockTable.getInt(p->blockTable.offset({r, j / 4}));
      EXPECT_EQ(block,
                plain->blockTable.getInt(plain->blockTable.offset({r, j / 4})));
      const int64_t at = p->kvCache.offset({block, 1, 0, j % 4, 3});
      if (j < context - 6) {
        EXPECT_TRUE(std::isinf(p->kvCache.getFloat(at))) << r << ", " << j;
        ++beforeWindow;
      } else {
        EXPECT_EQ(p->kvCache.getFloat(at), plain->kvCache.getFloat(at));
      }
    }
  }
  EXPECT_GT(beforeWindow, 0);
}

TEST(GenerateProblemErrors, Options) {
  ProblemShape shape;
  shape.numHeads = 6;
  shape.numKvHeads = 4;
  EXPECT_ERROR(generateProblem(shape, {}),
               "numHeads = 6 must be a multiple of numKvHeads = 4");
  ProblemOptions options;
  options.sharedPrefixBlocks = 20;
  EXPECT_ERROR(generateProblem(ProblemShape{}, options),
               "no context length fits");
  options = {};
  options.numReqs = 0;
  EXPECT_ERROR(generateProblem(ProblemShape{}, options),
               "numReqs must be in [1, 65536]");
  options.numReqs = 65537;
  EXPECT_ERROR(generateProblem(ProblemShape{}, options),
               "numReqs must be in [1, 65536]");
  options = {};
  options.numReqs = 65536;
  options.minContextLen = options.maxContextLen = int64_t{1} << 20;
  EXPECT_ERROR(generateProblem(ProblemShape{}, options),
               "a generated step has at most 16777216 of each");
  options = {};
  options.maxPrefillQueryLen = 1;
  EXPECT_ERROR(generateProblem(ProblemShape{}, options),
               "maxPrefillQueryLen must be >= 2");
  shape = {};
  shape.dtype = DType::I32;
  EXPECT_ERROR(generateProblem(shape, {}), "dtype must be f32, f16 or bf16");
}

} // namespace
} // namespace attn
