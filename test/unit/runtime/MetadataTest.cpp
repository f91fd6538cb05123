//===- MetadataTest.cpp - CommonAttentionMetadata and its construction ----===//

#include "runtime/host/Metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// Three requests: a 3-token chunk after 2 cached, a decode after 9, a
/// 5-token prefill. Two KV cache groups, two block-table columns.
StepInputs threeRequests() {
  StepInputs step;
  step.queryStartLoc = {0, 3, 4, 9};
  step.seqLens = {5, 10, 5};
  step.slotMapping = {{0, 1, 2, 3, 4, 5, 6, 7, 8},
                      {10, 11, 12, 13, 14, 15, 16, 17, 18}};
  return step;
}

const std::vector<int32_t> kBlockTable = {0, 1, 2, 3, 4, 5};

TEST(CommonAttentionMetadata, MakeDerivesFields) {
  Result<CommonAttentionMetadata> cam = makeCommonAttentionMetadata(
      threeRequests(), kBlockTable, 2, /*causal=*/false, /*group=*/1);
  ASSERT_TRUE(cam) << cam.message();
  EXPECT_EQ(cam->numReqs, 3);
  EXPECT_EQ(cam->numActualTokens, 9);
  EXPECT_EQ(cam->maxQueryLen, 5);
  EXPECT_EQ(cam->maxSeqLen, 10);
  EXPECT_THAT(cam->numComputedTokens, ElementsAre(2, 9, 0));
  EXPECT_THAT(cam->queryLens, ElementsAre(3, 1, 5));
  EXPECT_THAT(cam->queryStartLoc, ElementsAre(0, 3, 4, 9));
  EXPECT_TRUE(cam->hasBlockTable);
  EXPECT_EQ(cam->blockTable, kBlockTable);
  EXPECT_EQ(cam->blockTableCols, 2);
  EXPECT_EQ(cam->slotMapping.front(), 10) << "group 1's slots";
  EXPECT_FALSE(cam->causal);
  EXPECT_FALSE(cam->logitsIndicesPadded.has_value());
  EXPECT_FALSE(cam->encoderSeqLens.has_value());
  EXPECT_FALSE(cam->dcpLocalSeqLens.has_value());
}

TEST(CommonAttentionMetadata, MakeSelectsGroupZeroByDefault) {
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(threeRequests(), kBlockTable, 2);
  ASSERT_TRUE(cam) << cam.message();
  EXPECT_EQ(cam->slotMapping.front(), 0);
  EXPECT_TRUE(cam->causal);
}

TEST(CommonAttentionMetadata, MakeRejectsEmptyBatch) {
  StepInputs step;
  step.queryStartLoc = {0};
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(step, {}, 0);
  ASSERT_FALSE(cam);
  EXPECT_THAT(cam.message(), HasSubstr("empty batch"));
}

TEST(CommonAttentionMetadata, MakeRejectsMissingGroup) {
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(threeRequests(), kBlockTable, 2, true, 2);
  ASSERT_FALSE(cam);
  EXPECT_THAT(cam.message(), HasSubstr("kv cache group 2 has no slot mapping"));
}

TEST(CommonAttentionMetadata, MakeWithoutSlotMappingsHasNone) {
  StepInputs step = threeRequests();
  step.slotMapping.clear();
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(step, kBlockTable, 2, true, 5);
  ASSERT_TRUE(cam) << cam.message();
  EXPECT_TRUE(cam->slotMapping.empty());
}

TEST(CommonAttentionMetadata, MakeRejectsInvalidInputs) {
  struct Case {
    std::vector<int32_t> qsl, seqLens, blockTable;
    int32_t cols;
    const char *message;
  };
  const Case cases[] = {
      {{1, 3}, {5}, {0}, 1, "query_start_loc[0] = 1, expected 0"},
      {{0, 3, 2}, {5, 5}, {0, 1}, 1, "query_start_loc is decreasing: query_start_loc[2] = 2"},
      {{0, 3}, {2}, {0}, 1, "seq_lens[0] = 2 is less than the query length 3"},
      {{0, 3}, {5}, {0, 1}, 1, "block table has 2 entries"},
      {{0, 3, 4}, {5}, {0}, 1, "query_start_loc has 3 entries"},
  };
  for (const Case &c : cases) {
    StepInputs step;
    step.queryStartLoc = c.qsl;
    step.seqLens = c.seqLens;
    Result<CommonAttentionMetadata> cam =
        makeCommonAttentionMetadata(step, c.blockTable, c.cols);
    ASSERT_FALSE(cam) << c.message;
    EXPECT_THAT(cam.message(), HasSubstr(c.message));
  }
}

TEST(CommonAttentionMetadata, MakeRejectsShortSlotMapping) {
  StepInputs step = threeRequests();
  step.slotMapping = {{0, 1, 2}};
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(step, kBlockTable, 2);
  ASSERT_FALSE(cam);
  EXPECT_THAT(cam.message(), HasSubstr("slot_mapping has 3 entries"));
}

TEST(CommonAttentionMetadata, ValidateRejectsDerivedFieldsThatDisagree) {
  CommonAttentionMetadata cam =
      *makeCommonAttentionMetadata(threeRequests(), kBlockTable, 2);
  cam.queryLens[2] = 4;
  EXPECT_THAT(cam.validate().message(),
              HasSubstr("query_lens[2] = 4, expected query_start_loc[3] - "
                        "query_start_loc[2] = 5"));
  cam = *makeCommonAttentionMetadata(threeRequests(), kBlockTable, 2);
  cam.numComputedTokens[0] = 3;
  EXPECT_THAT(cam.validate().message(),
              HasSubstr("num_computed_tokens[0] = 3, expected seq_lens - "
                        "q_len = 2"));
  cam = *makeCommonAttentionMetadata(threeRequests(), kBlockTable, 2);
  cam.maxSeqLen = 9;
  EXPECT_THAT(cam.validate().message(),
              HasSubstr("max_seq_len = 9 is below seq_lens[1] = 10"));
}

/// The three requests padded to four (an empty request) and 12 tokens, as a
/// graph-captured batch is.
CommonAttentionMetadata paddedBatch() {
  StepInputs step;
  step.queryStartLoc = {0, 3, 4, 9, 9};
  step.seqLens = {5, 10, 5, 0};
  step.slotMapping = {{0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1}};
  CommonAttentionMetadata cam =
      *makeCommonAttentionMetadata(step, {0, 1, 2, 3, 4, 5, 6, 7}, 2);
  cam.numActualTokens = 12;
  cam.logitsIndicesPadded = std::vector<int32_t>{2, 3, 8, 0};
  cam.numLogitsIndices = 3;
  cam.encoderSeqLens = std::vector<int32_t>{7, 7, 7, 0};
  cam.dcpLocalSeqLens = std::vector<int32_t>{3, 5, 3, 0};
  return cam;
}

TEST(CommonAttentionMetadata, UnpaddedSlicesRequestsAndTokens) {
  CommonAttentionMetadata padded = paddedBatch();
  padded.maxSeqLen = 64; // an upper bound, as after an earlier unpadded()
  ASSERT_TRUE(padded.validate()) << padded.validate().message();
  Result<CommonAttentionMetadata> cam = padded.unpadded(9, 3);
  ASSERT_TRUE(cam) << cam.message();
  EXPECT_EQ(cam->numReqs, 3);
  EXPECT_EQ(cam->numActualTokens, 9);
  EXPECT_THAT(cam->queryStartLoc, ElementsAre(0, 3, 4, 9));
  EXPECT_THAT(cam->seqLens, ElementsAre(5, 10, 5));
  EXPECT_THAT(cam->queryLens, ElementsAre(3, 1, 5));
  EXPECT_THAT(cam->numComputedTokens, ElementsAre(2, 9, 0));
  EXPECT_THAT(cam->blockTable, ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(cam->blockTableCols, 2);
  EXPECT_EQ(cam->slotMapping.size(), 9u);
  // Max lengths are kept, not recomputed.
  EXPECT_EQ(cam->maxQueryLen, 5);
  EXPECT_EQ(cam->maxSeqLen, 64);
  // Logits indices are kept whole; per-request optionals are sliced.
  EXPECT_THAT(*cam->logitsIndicesPadded, ElementsAre(2, 3, 8, 0));
  EXPECT_EQ(cam->numLogitsIndices, 3);
  EXPECT_THAT(*cam->encoderSeqLens, ElementsAre(7, 7, 7));
  EXPECT_THAT(*cam->dcpLocalSeqLens, ElementsAre(3, 5, 3));
  EXPECT_TRUE(cam->causal);
  EXPECT_TRUE(cam->validate()) << cam->validate().message();
}

TEST(CommonAttentionMetadata, UnpaddedRejectsCountsPastTheEnd) {
  // vLLM would take the counts as given and leave num_reqs disagreeing with
  // the vectors; here that is an error.
  CommonAttentionMetadata padded = paddedBatch();
  Result<CommonAttentionMetadata> reqs = padded.unpadded(9, 10);
  ASSERT_FALSE(reqs);
  EXPECT_THAT(reqs.message(),
              HasSubstr("num_actual_reqs = 10 is outside [1, num_reqs = 4]"));
  Result<CommonAttentionMetadata> tokens = padded.unpadded(100, 3);
  ASSERT_FALSE(tokens);
  EXPECT_THAT(tokens.message(),
              HasSubstr("num_actual_tokens = 100 is outside [0, 12]"));
}

TEST(CommonAttentionMetadata, ValidateChecksOptionalLengths) {
  CommonAttentionMetadata cam = paddedBatch();
  cam.dcpLocalSeqLens = std::vector<int32_t>{1};
  Status s = cam.validate();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("dcp_local_seq_lens has 1 entries"));
}

TEST(ToTensor, CopiesWithShape) {
  Result<Tensor> t = toTensor(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  ASSERT_TRUE(t) << t.message();
  EXPECT_EQ(t->dtype(), DType::I32);
  EXPECT_THAT(t->shape(), ElementsAre(2, 3));
  EXPECT_EQ(t->getInt(t->offset({1, 2})), 6);

  Tensor slots = toTensor(std::vector<int64_t>{-1, 1LL << 40});
  EXPECT_EQ(slots.dtype(), DType::I64);
  EXPECT_THAT(slots.shape(), ElementsAre(2));
  EXPECT_EQ(slots.getInt(1), 1LL << 40);

  Tensor empty = toTensor(std::vector<int32_t>{});
  EXPECT_THAT(empty.shape(), ElementsAre(0));
}

TEST(ToTensor, RejectsShapeMismatch) {
  Result<Tensor> t = toTensor(std::vector<int32_t>{1, 2, 3}, {2, 2});
  ASSERT_FALSE(t);
  EXPECT_THAT(t.message(), HasSubstr("shape holds 4 elements"));
}

} // namespace
} // namespace attn::runtime
