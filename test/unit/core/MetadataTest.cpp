//===- MetadataTest.cpp - Metadata construction and every validation error -===//
#include "core/Metadata.h"

#include "test/unit/reference/TestUtil.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

using test::ints;

Tensor i32(std::vector<int64_t> values) {
  const int64_t n = values.size();
  return ints(DType::I32, {n}, values);
}

TEST(Metadata, DerivesTheSeedsFields) {
  // A decode (context 4), a prefill (context 0), a chunked prefill (1 + 2).
  const Tensor qsl = i32({0, 1, 4, 6});
  const Tensor seqLens = i32({5, 3, 3});
  const Tensor table = ints(DType::I32, {3, 2}, {0, 1, 2, -1, 3, -1});
  const Tensor slots = ints(DType::I64, {6}, {20, 32, 33, 34, -1, 49});
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(qsl, seqLens, &table, &slots, false);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->numReqs, 3);
  EXPECT_EQ(m->numActualTokens, 6);
  EXPECT_EQ(m->maxQueryLen, 3);
  EXPECT_EQ(m->maxSeqLen, 5);
  EXPECT_EQ(m->queryLens, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(m->numComputedTokens, (std::vector<int32_t>{4, 0, 1}));
  EXPECT_FALSE(m->causal);
  EXPECT_EQ(m->block(2, 0), 3);
  EXPECT_TRUE(checkNumTokens(*m, 6).isOk());
  // Request 1 uses one block of 16, so its -1 in column 1 is never read.
  Status bounds = checkCacheBounds(*m, 4, 16);
  EXPECT_TRUE(bounds.isOk()) << bounds.message();
}

TEST(Metadata, Unpadded) {
  const Tensor qsl = i32({0, 1, 2, 3});
  const Tensor seqLens = i32({7, 9, 1});
  const Tensor table = ints(DType::I32, {3, 1}, {0, 1, 2});
  const Tensor slots = ints(DType::I64, {3}, {6, 24, 32});
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(qsl, seqLens, &table, &slots);
  ASSERT_TRUE(m.isOk());
  Result<CommonAttentionMetadata> u = m->unpadded(2, 2);
  ASSERT_TRUE(u.isOk()) << u.message();
  EXPECT_EQ(u->numReqs, 2);
  EXPECT_EQ(u->numActualTokens, 2);
  EXPECT_EQ(u->queryStartLoc, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(u->seqLens, (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(u->blockTable, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(u->slotMapping, (std::vector<int64_t>{6, 24}));
  EXPECT_EQ(u->maxSeqLen, 9); // an upper bound, as in vLLM
  EXPECT_ERROR(m->unpadded(2, 0), "num_actual_reqs = 0 is outside [1, num_reqs = 3]");
  EXPECT_ERROR(m->unpadded(4, 3), "num_actual_tokens = 4 is outside [0, 3]");
}

TEST(MetadataErrors, EmptyBatch) {
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0}), Tensor(DType::I32, {0})),
               "empty batch");
}

TEST(MetadataErrors, QueryStartLocNotStartingAtZero) {
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({2, 3}), i32({4})),
               "query_start_loc[0] = 2, expected 0");
}

TEST(MetadataErrors, QueryStartLocDecreasing) {
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 3, 2}), i32({4, 4})),
               "query_start_loc is decreasing: query_start_loc[2] = 2 < "
               "query_start_loc[1] = 3");
}

TEST(MetadataErrors, SeqLenShorterThanQuery) {
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 1, 4}), i32({4, 2})),
               "seq_lens[1] = 2 is less than the query length 3 of request 1");
}

TEST(Metadata, NonCausalAllowsFewerKeysThanQueries) {
  // Cross-attention: 81 decoder queries over 17 encoder keys (FlashInfer's
  // soft-cap shape), and 3 queries over no key at all.
  Result<CommonAttentionMetadata> m = makeCommonAttentionMetadata(
      i32({0, 81, 84}), i32({17, 0}), nullptr, nullptr, /*causal=*/false);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->numComputedTokens, (std::vector<int32_t>{-64, -3}));
  EXPECT_EQ(m->maxSeqLen, 17);
  EXPECT_TRUE(m->validate().isOk());
  // The same batch causal, and validate() of a causal copy, reject it.
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 81, 84}), i32({17, 0})),
               "seq_lens[0] = 17 is less than the query length 81");
  CommonAttentionMetadata causal = *m;
  causal.causal = true;
  EXPECT_ERROR(causal.validate(), "only non-causal (cross) attention");
}

TEST(MetadataErrors, NegativeSeqLen) {
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 0}), i32({-3})),
               "seq_lens[0] = -3 is negative");
}

TEST(MetadataErrors, NegativeSeqLenAgainstTheCache) {
  // The cache check alone (an executor's, on tensors) refuses it too: the
  // negative count needs no block, so nothing else would stop it, and a
  // kernel takes it as its loop bound.
  const Tensor table = ints(DType::I32, {2, 1}, {0, 1});
  const std::vector<int32_t> seqLens = {16, -5}, blocks = {0, 1};
  EXPECT_ERROR(checkBlockTable(seqLens, blocks, 1, 4, 16),
               "seq_lens[1] = -5 is negative");
  EXPECT_ERROR(checkCacheBounds(i32({16, -5}), table, nullptr, 4, 16),
               "seq_lens[1] = -5 is negative");
}

TEST(MetadataErrors, PagedBatchChecksEveryRule) {
  const Tensor table = ints(DType::I32, {2, 2}, {0, 1, 2, 3});
  const Tensor qsl = i32({0, 1, 3});
  Result<CommonAttentionMetadata> m =
      checkPagedBatch(qsl, i32({20, 17}), table, true, 3, 4, 16);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->numActualTokens, 3);
  EXPECT_ERROR(checkPagedBatch(qsl, i32({20, -1}), table, true, 3, 4, 16),
               "seq_lens[1] = -1 is negative");
  EXPECT_ERROR(
      checkPagedBatch(i32({0, 2, 1}), i32({20, 17}), table, true, 3, 4, 16),
      "query_start_loc is decreasing: query_start_loc[2] = 1 < "
      "query_start_loc[1] = 2");
  EXPECT_ERROR(checkPagedBatch(qsl, i32({20, 1}), table, true, 3, 4, 16),
               "seq_lens[1] = 1 is less than the query length 2 of request 1");
  EXPECT_ERROR(checkPagedBatch(qsl, i32({20, 17}), table, true, 2, 4, 16),
               "query_start_loc[2] = 3 exceeds the query's 2 tokens");
  EXPECT_ERROR(checkPagedBatch(qsl, i32({20, 17}), table, true, 3, 3, 16),
               "block_table[1][1] = 3 is outside [0, num_blocks = 3)");
}

TEST(MetadataErrors, DecodeBatchHasOneQueryPerRequest) {
  const Tensor table = ints(DType::I32, {2, 1}, {0, 1});
  Result<CommonAttentionMetadata> m =
      checkDecodeBatch(i32({16, 1}), table, 2, 4, 16);
  ASSERT_TRUE(m.isOk()) << m.message();
  EXPECT_EQ(m->queryStartLoc, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_ERROR(checkDecodeBatch(i32({16, -5}), table, 2, 4, 16),
               "seq_lens[1] = -5 is negative");
  EXPECT_ERROR(checkDecodeBatch(i32({16}), table, 2, 4, 16),
               "seq_lens dim 0 is 1, expected 2 (num_reqs, q dim 0)");
  EXPECT_ERROR(checkDecodeBatch(i32({16, 17}), table, 2, 4, 16),
               "block_table has 1 columns, but request 1 with seq_lens[1] = "
               "17 needs 2 blocks");
}

TEST(MetadataErrors, TokenCountMismatch) {
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(i32({0, 2, 3}), i32({2, 5}));
  ASSERT_TRUE(m.isOk());
  // Rows past query_start_loc[R] are padding; fewer rows than tokens are
  // an error.
  EXPECT_TRUE(checkNumTokens(*m, 4).isOk());
  EXPECT_ERROR(checkNumTokens(*m, 2),
               "query_start_loc[2] = 3 exceeds the query's 2 tokens");
}

TEST(MetadataErrors, BlockOutsideTheCacheWhereUsed) {
  const Tensor table = ints(DType::I32, {2, 2}, {0, 1, 2, 9});
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(i32({0, 1, 2}), i32({20, 17}), &table);
  ASSERT_TRUE(m.isOk());
  EXPECT_ERROR(checkCacheBounds(*m, 4, 16),
               "block_table[1][1] = 9 is outside [0, num_blocks = 4)");
  const Tensor negative = ints(DType::I32, {1, 1}, {-1});
  m = makeCommonAttentionMetadata(i32({0, 1}), i32({1}), &negative);
  ASSERT_TRUE(m.isOk());
  EXPECT_ERROR(checkCacheBounds(*m, 4, 16),
               "block_table[0][0] = -1 is outside [0, num_blocks = 4)");
}

TEST(MetadataErrors, BlockTableTooNarrow) {
  const Tensor table = ints(DType::I32, {1, 2}, {0, 1});
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(i32({0, 1}), i32({33}), &table);
  ASSERT_TRUE(m.isOk());
  EXPECT_ERROR(checkCacheBounds(*m, 4, 16),
               "block_table has 2 columns, but request 0 with seq_lens[0] = "
               "33 needs 3 blocks");
}

TEST(MetadataErrors, SlotOutsideTheCache) {
  const Tensor slots = ints(DType::I64, {2}, {-1, 64});
  Result<CommonAttentionMetadata> m =
      makeCommonAttentionMetadata(i32({0, 2}), i32({2}), nullptr, &slots);
  ASSERT_TRUE(m.isOk());
  EXPECT_ERROR(checkCacheBounds(*m, 4, 16),
               "slot_mapping[1] = 64 is outside the cache (num_blocks * "
               "block_size = 4 * 16 = 64)");
  EXPECT_ERROR(checkSlotMapping(slots, 2, 4, 16), "slot_mapping[1] = 64");
  EXPECT_ERROR(checkSlotMapping(slots, 3, 4, 16),
               "slot_mapping dim 0 is 2, expected 3");
}

TEST(MetadataErrors, SlotWrittenTwice) {
  // Padding (-1) may repeat; a real slot may not.
  EXPECT_TRUE(
      checkSlotMapping(ints(DType::I64, {3}, {-1, 5, -1}), 3, 4, 16).isOk());
  EXPECT_ERROR(checkSlotMapping(ints(DType::I64, {3}, {5, -1, 5}), 3, 4, 16),
               "slot_mapping[0] and slot_mapping[2] are both 5: two tokens "
               "of one step write the same cache slot");
}

TEST(MetadataErrors, ShapeAndDTypeMismatches) {
  EXPECT_ERROR(
      makeCommonAttentionMetadata(i32({0, 1}), ints(DType::I64, {1}, {1})),
      "seq_lens must be a rank-1 tensor of i32, got [1] i64");
  EXPECT_ERROR(
      makeCommonAttentionMetadata(ints(DType::I32, {1, 2}, {0, 1}), i32({1})),
      "query_start_loc must be a rank-1 tensor of i32");
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 1, 2}), i32({1})),
               "query_start_loc dim 0 is 3, expected 2 (num_reqs + 1)");
  const Tensor table = ints(DType::I32, {2, 1}, {0, 1});
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 1}), i32({1}), &table),
               "block_table dim 0 is 2, expected 1 (num_reqs)");
  const Tensor floatTable(DType::F32, {1, 1});
  EXPECT_ERROR(makeCommonAttentionMetadata(i32({0, 1}), i32({1}), &floatTable),
               "block_table must be a rank-2 tensor of i32");
  const Tensor slots32 = ints(DType::I32, {1}, {0});
  EXPECT_ERROR(
      makeCommonAttentionMetadata(i32({0, 1}), i32({1}), nullptr, &slots32),
      "slot_mapping must be a rank-1 tensor of i64");
  const Tensor slots = ints(DType::I64, {2}, {0, 1});
  EXPECT_ERROR(
      makeCommonAttentionMetadata(i32({0, 1}), i32({1}), nullptr, &slots),
      "slot_mapping dim 0 is 2, expected 1");
}

} // namespace
} // namespace attn
