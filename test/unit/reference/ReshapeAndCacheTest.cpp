//===- ReshapeAndCacheTest.cpp - Writing new tokens into the cache -------===//
#include "reference/ops/Ops.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

using test::ints;

/// key[t][g][d] = 100 t + 10 g + d, value = -key.
void fillNewTokens(Tensor &key, Tensor &value) {
  for (int64_t t = 0; t < key.dim(0); ++t)
    for (int64_t g = 0; g < key.dim(1); ++g)
      for (int64_t d = 0; d < key.dim(2); ++d) {
        key.setFloat(key.offset({t, g, d}), 100 * t + 10 * g + d);
        value.setFloat(value.offset({t, g, d}), -(100 * t + 10 * g + d));
      }
}

class ReshapeAndCacheLayouts : public ::testing::TestWithParam<KvLayout> {};

TEST_P(ReshapeAndCacheLayouts, WritesSlotsAndSkipsPadding) {
  const KvLayout layout = GetParam();
  const int64_t numBlocks = 3, blockSize = 4, g = 2, d = 3;
  Tensor cache = layout == KvLayout::NHD
                     ? Tensor(DType::F16, {numBlocks, 2, blockSize, g, d})
                     : Tensor(DType::F16, {numBlocks, 2, g, blockSize, d});
  for (int64_t i = 0; i < cache.numElements(); ++i)
    cache.setFloat(i, 7.0);
  Tensor key(DType::F16, {4, g, d}), value(DType::F16, {4, g, d});
  fillNewTokens(key, value);
  // Token 2's slot is negative with the low 32 bits of slot 7: padding too.
  const Tensor slots =
      ints(DType::I64, {4}, {-1, 5, -(int64_t{1} << 32) + 7, 11});

  ASSERT_TRUE(reshapeAndCache(key, value, cache, slots, layout).isOk());
  auto at = [&](int64_t kv, int64_t block, int64_t off, int64_t head,
                int64_t e) {
    return cache.getFloat(layout == KvLayout::NHD
                              ? cache.offset({block, kv, off, head, e})
                              : cache.offset({block, kv, head, off, e}));
  };
  int64_t written = 0;
  for (int64_t block = 0; block < numBlocks; ++block)
    for (int64_t off = 0; off < blockSize; ++off)
      for (int64_t head = 0; head < g; ++head)
        for (int64_t e = 0; e < d; ++e) {
          const int64_t slot = block * blockSize + off;
          const int64_t token = slot == 5 ? 1 : slot == 11 ? 3 : -1;
          if (token < 0) {
            EXPECT_EQ(at(0, block, off, head, e), 7.0);
            EXPECT_EQ(at(1, block, off, head, e), 7.0);
            continue;
          }
          ++written;
          EXPECT_EQ(at(0, block, off, head, e), 100 * token + 10 * head + e);
          EXPECT_EQ(at(1, block, off, head, e), -(100 * token + 10 * head + e));
        }
  EXPECT_EQ(written, 2 * g * d);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ReshapeAndCacheLayouts,
                         ::testing::Values(KvLayout::NHD, KvLayout::HND));

TEST(ReshapeAndCacheErrors, BadSlotWritesNothing) {
  Tensor cache(DType::F32, {2, 2, 4, 1, 2});
  Tensor key(DType::F32, {3, 1, 2}), value(DType::F32, {3, 1, 2});
  fillNewTokens(key, value);
  const Tensor before = cache;
  // Token 0 is valid, token 2 is not: token 0 must not be written either.
  const Tensor slots = ints(DType::I64, {3}, {0, -1, 8});
  EXPECT_ERROR(reshapeAndCache(key, value, cache, slots, KvLayout::NHD),
               "slot_mapping[2] = 8 is outside the cache (num_blocks * "
               "block_size = 2 * 4 = 8)");
  EXPECT_TRUE(cache == before);
}

TEST(ReshapeAndCacheErrors, Operands) {
  Tensor cache(DType::F32, {2, 2, 4, 1, 2});
  const Tensor key(DType::F32, {3, 1, 2}), value(DType::F32, {3, 1, 2});
  const Tensor slots = ints(DType::I64, {3}, {0, 1, 2});
  EXPECT_TRUE(reshapeAndCache(key, value, cache, slots, KvLayout::NHD).isOk());
  EXPECT_ERROR(reshapeAndCache(key, Tensor(DType::F32, {3, 1, 3}), cache, slots,
                               KvLayout::NHD),
               "value is [3, 1, 3] f32, expected the shape of key [3, 1, 2] f32");
  EXPECT_ERROR(reshapeAndCache(Tensor(DType::BF16, {3, 1, 2}), value, cache,
                               slots, KvLayout::NHD),
               "key has dtype bf16, expected f32 (the dtype of kv_cache)");
  EXPECT_ERROR(reshapeAndCache(Tensor(DType::F32, {3, 2, 2}),
                               Tensor(DType::F32, {3, 2, 2}), cache, slots,
                               KvLayout::NHD),
               "key dim 1 is 2, expected 1 (kv_cache num_kv_heads)");
  // Read as HND the same cache has 4 kv heads of block size 1.
  EXPECT_ERROR(reshapeAndCache(key, value, cache, slots, KvLayout::HND),
               "key dim 1 is 1, expected 4");
  EXPECT_ERROR(reshapeAndCache(key, value, cache,
                               ints(DType::I64, {2}, {0, 1}), KvLayout::NHD),
               "slot_mapping dim 0 is 2, expected 3 (the number of tokens)");
  EXPECT_ERROR(reshapeAndCache(key, value, cache,
                               ints(DType::I32, {3}, {0, 1, 2}), KvLayout::NHD),
               "slot_mapping must be a rank-1 tensor of i64");
}

/// kv_c[t][l] = 100 t + l, k_pe[t][p] = -(100 t + p + 1).
void fillLatentTokens(Tensor &kvC, Tensor &kPe) {
  for (int64_t t = 0; t < kvC.dim(0); ++t) {
    for (int64_t l = 0; l < kvC.dim(1); ++l)
      kvC.setFloat(kvC.offset({t, l}), 100 * t + l);
    for (int64_t p = 0; p < kPe.dim(1); ++p)
      kPe.setFloat(kPe.offset({t, p}), -(100 * t + p + 1));
  }
}

TEST(ConcatAndCacheMla, WritesConcatenatedRowsAndSkipsPadding) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    const int64_t numBlocks = 3, blockSize = 4, l = 5, p = 2;
    Tensor cache(dtype, {numBlocks, blockSize, l + p});
    for (int64_t i = 0; i < cache.numElements(); ++i)
      cache.setFloat(i, 7.0);
    Tensor kvC(dtype, {4, l}), kPe(dtype, {4, p});
    fillLatentTokens(kvC, kPe);
    const Tensor slots = ints(DType::I64, {4}, {-1, 5, -1, 11});

    ASSERT_TRUE(concatAndCacheMla(kvC, kPe, cache, slots).isOk());
    // Exact copies: the cache row's bits are the sources' bits.
    for (int64_t block = 0; block < numBlocks; ++block)
      for (int64_t off = 0; off < blockSize; ++off)
        for (int64_t e = 0; e < l + p; ++e) {
          const int64_t slot = block * blockSize + off;
          const int64_t token = slot == 5 ? 1 : slot == 11 ? 3 : -1;
          const double got = cache.getFloat(cache.offset({block, off, e}));
          if (token < 0)
            EXPECT_EQ(got, 7.0);
          else if (e < l)
            EXPECT_EQ(got, kvC.getFloat(kvC.offset({token, e})));
          else
            EXPECT_EQ(got, kPe.getFloat(kPe.offset({token, e - l})));
        }
  }
}

// Found by test/fuzz (metadata): rows of zero width once took the offset
// of element 0 of an empty axis (Tensor::offset's assert). They write
// nothing and touch no other part of the row.
TEST(ConcatAndCacheMla, ZeroWidthPartsWriteNothing) {
  Tensor cache(DType::F32, {2, 4, 2});
  Tensor kvC(DType::F32, {2, 0}), kPe(DType::F32, {2, 2});
  fillLatentTokens(kvC, kPe);
  const Tensor slots = ints(DType::I64, {2}, {1, 6});
  ASSERT_TRUE(concatAndCacheMla(kvC, kPe, cache, slots).isOk());
  EXPECT_EQ(cache.getFloat(cache.offset({1, 2, 1})),
            kPe.getFloat(kPe.offset({1, 1})));
  Tensor empty(DType::F32, {2, 4, 0});
  EXPECT_TRUE(concatAndCacheMla(Tensor(DType::F32, {2, 0}),
                                Tensor(DType::F32, {2, 0}), empty, slots)
                  .isOk());
}

TEST(ReshapeAndCache, HeadSizeZeroWritesNothing) {
  Tensor cache(DType::F16, {2, 2, 4, 1, 0});
  const Tensor key(DType::F16, {2, 1, 0}), value(DType::F16, {2, 1, 0});
  EXPECT_TRUE(reshapeAndCache(key, value, cache,
                              ints(DType::I64, {2}, {0, 7}), KvLayout::NHD)
                  .isOk());
}

TEST(ConcatAndCacheMlaErrors, BadSlotWritesNothing) {
  Tensor cache(DType::BF16, {2, 4, 6});
  Tensor kvC(DType::BF16, {3, 4}), kPe(DType::BF16, {3, 2});
  fillLatentTokens(kvC, kPe);
  const Tensor before = cache;
  const Tensor slots = ints(DType::I64, {3}, {0, -1, 8});
  EXPECT_ERROR(concatAndCacheMla(kvC, kPe, cache, slots),
               "slot_mapping[2] = 8 is outside the cache (num_blocks * "
               "block_size = 2 * 4 = 8)");
  EXPECT_TRUE(cache == before);
}

TEST(ConcatAndCacheMlaErrors, Operands) {
  Tensor cache(DType::F32, {2, 4, 6});
  const Tensor kvC(DType::F32, {3, 4}), kPe(DType::F32, {3, 2});
  const Tensor slots = ints(DType::I64, {3}, {0, 1, 2});
  EXPECT_TRUE(concatAndCacheMla(kvC, kPe, cache, slots).isOk());
  EXPECT_ERROR(concatAndCacheMla(kvC, Tensor(DType::F32, {3, 3}), cache, slots),
               "kv_cache dim 2 is 6, expected 7 (kv_lora_rank + rope dim)");
  EXPECT_ERROR(concatAndCacheMla(kvC, Tensor(DType::F32, {2, 2}), cache, slots),
               "k_pe dim 0 is 2, expected 3 (the number of tokens)");
  EXPECT_ERROR(concatAndCacheMla(kvC, Tensor(DType::BF16, {3, 2}), cache, slots),
               "k_pe has dtype bf16, expected f32 (the dtype of kv_cache)");
  EXPECT_ERROR(concatAndCacheMla(Tensor(DType::F32, {3, 1, 4}), kPe, cache,
                                 slots),
               "kv_c must be a rank-2 tensor");
  EXPECT_ERROR(concatAndCacheMla(kvC, kPe, cache,
                                 ints(DType::I64, {2}, {0, 1})),
               "slot_mapping dim 0 is 2, expected 3 (the number of tokens)");
}

} // namespace
} // namespace attn
