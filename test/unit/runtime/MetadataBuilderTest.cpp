//===- MetadataBuilderTest.cpp - Builders, thresholds, batch splitting ----===//

#include "runtime/host/MetadataBuilder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int32_t> values(const Tensor &t) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(static_cast<int32_t>(t.getInt(i)));
  return v;
}

/// A batch with the given query and sequence lengths, `cols` block-table
/// columns numbered in order, and slots 0..T-1.
CommonAttentionMetadata batch(const std::vector<int32_t> &queryLens,
                              const std::vector<int32_t> &seqLens,
                              int32_t cols = 4) {
  StepInputs step;
  step.queryStartLoc = {0};
  for (int32_t len : queryLens)
    step.queryStartLoc.push_back(step.queryStartLoc.back() + len);
  step.seqLens = seqLens;
  step.slotMapping.emplace_back();
  for (int32_t t = 0; t < step.queryStartLoc.back(); ++t)
    step.slotMapping[0].push_back(t);
  std::vector<int32_t> table;
  for (size_t i = 0; i < seqLens.size() * cols; ++i)
    table.push_back(static_cast<int32_t>(i));
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(step, table, cols);
  EXPECT_TRUE(cam) << cam.message();
  return *cam;
}

BuilderConfig withSpec(std::optional<int32_t> tokens, int32_t dcp = 1) {
  BuilderConfig config;
  config.speculativeConfig = SpeculativeConfig{tokens};
  config.decodeContextParallelSize = dcp;
  return config;
}

KvCacheSpec spec16() {
  KvCacheSpec spec;
  spec.blockSize = 16;
  spec.numKvHeads = 2;
  spec.headSize = 64;
  return spec;
}

//===----------------------------------------------------------------------===//
// reorder_batch_threshold
//===----------------------------------------------------------------------===//

TEST(ReorderBatchThreshold, DefaultIsTheGivenThreshold) {
  EXPECT_EQ(computeReorderBatchThreshold({}, 1, false, false), 1);
  EXPECT_EQ(computeReorderBatchThreshold({}, 1, true, false), 1);
  EXPECT_EQ(computeReorderBatchThreshold({}, std::nullopt, true, false),
            std::nullopt);
}

TEST(ReorderBatchThreshold, SpeculationRaisesItForSpecAsDecode) {
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(3), 1, true, false), 4);
  // max(threshold, 1 + tokens)
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(3), 8, true, false), 8);
}

TEST(ReorderBatchThreshold, SpeculationIgnoredWithoutSpecAsDecode) {
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(3), 1, false, false), 1);
}

TEST(ReorderBatchThreshold, SpeculationIgnoredWithoutThreshold) {
  EXPECT_EQ(
      computeReorderBatchThreshold(withSpec(3), std::nullopt, true, false),
      std::nullopt);
}

TEST(ReorderBatchThreshold, SpeculationWithoutTokenCountIsIgnored) {
  EXPECT_EQ(
      computeReorderBatchThreshold(withSpec(std::nullopt), 1, true, false), 1);
}

TEST(ReorderBatchThreshold, DcpWithoutVarlenForcesOne) {
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(3, 2), 1, true, false), 1);
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(std::nullopt, 2),
                                         std::nullopt, false, false),
            1);
  EXPECT_EQ(
      computeReorderBatchThreshold(withSpec(std::nullopt, 2), 8, false, false),
      1);
}

TEST(ReorderBatchThreshold, DcpWithVarlenKeepsIt) {
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(3, 2), 1, true, true), 4);
  EXPECT_EQ(computeReorderBatchThreshold(withSpec(std::nullopt, 2),
                                         std::nullopt, false, true),
            std::nullopt);
}

/// A builder whose kernel runs spec-decode queries as decodes.
class SpecAsDecodeBuilder final : public AttentionMetadataBuilder {
public:
  SpecAsDecodeBuilder(BuilderConfig config, bool dcpVarlen)
      : AttentionMetadataBuilder(spec16(), {"layer.0"}, std::move(config)) {
    initReorderBatchThreshold(1, /*supportsSpecAsDecode=*/true, dcpVarlen);
  }
  Result<std::unique_ptr<AttentionMetadata>>
  build(int32_t, const CommonAttentionMetadata &, bool) override {
    ++builds;
    return Status::error("unused");
  }
  int builds = 0;

protected:
  std::string_view backendName() const override { return "SPEC"; }
};

TEST(ReorderBatchThreshold, BuilderInitialisesFromConfig) {
  EXPECT_EQ(SpecAsDecodeBuilder({}, false).reorderBatchThreshold(), 1);
  EXPECT_EQ(SpecAsDecodeBuilder(withSpec(2), false).reorderBatchThreshold(), 3);
  EXPECT_EQ(SpecAsDecodeBuilder(withSpec(2, 4), false).reorderBatchThreshold(),
            1);
  EXPECT_EQ(SpecAsDecodeBuilder(withSpec(2, 4), true).reorderBatchThreshold(),
            3);
}

TEST(ReorderBatchThreshold, FlashAttentionDoesNotReorder) {
  EXPECT_EQ(FlashAttentionMetadataBuilder(spec16(), {}, withSpec(3))
                .reorderBatchThreshold(),
            std::nullopt);
  EXPECT_EQ(FlashAttentionMetadataBuilder(spec16(), {}, withSpec(3, 2))
                .reorderBatchThreshold(),
            1);
}

TEST(ReorderBatchThreshold, MlaDecodesOneTokenPerRequest) {
  EXPECT_EQ(MlaMetadataBuilder(spec16(), {}, {}).reorderBatchThreshold(), 1);
  EXPECT_EQ(
      MlaMetadataBuilder(spec16(), {}, withSpec(3)).reorderBatchThreshold(), 1);
}

//===----------------------------------------------------------------------===//
// Builder defaults
//===----------------------------------------------------------------------===//

TEST(AttentionCGSupport, ValuesAndNames) {
  EXPECT_EQ(static_cast<int>(AttentionCGSupport::ALWAYS), 3);
  EXPECT_EQ(static_cast<int>(AttentionCGSupport::UNIFORM_BATCH), 2);
  EXPECT_EQ(static_cast<int>(AttentionCGSupport::UNIFORM_SINGLE_TOKEN_DECODE),
            1);
  EXPECT_EQ(static_cast<int>(AttentionCGSupport::NEVER), 0);
  EXPECT_EQ(toString(AttentionCGSupport::UNIFORM_BATCH), "UNIFORM_BATCH");
}

TEST(AttentionMetadataBuilder, Defaults) {
  SpecAsDecodeBuilder base({}, false);
  EXPECT_EQ(base.getCudagraphSupport(), AttentionCGSupport::NEVER);
  EXPECT_FALSE(base.supportsUpdateBlockTable());
  CascadeAttentionQuery q;
  q.commonPrefixLen = 4096;
  q.queryLens.assign(64, 7);
  EXPECT_FALSE(base.useCascadeAttention(q));
  EXPECT_THAT(base.layerNames(), ElementsAre("layer.0"));

  // Graph support is the backend's on a device that records steps, and
  // NEVER on one that does not (the CPU, CUDA and Metal today).
  BuilderConfig records;
  records.deviceRecords = true;
  FlashAttentionMetadataBuilder fa(spec16(), {}, records);
  EXPECT_EQ(fa.getCudagraphSupport(), AttentionCGSupport::UNIFORM_BATCH);
  EXPECT_EQ(FlashAttentionMetadataBuilder(spec16(), {}, {})
                .getCudagraphSupport(),
            AttentionCGSupport::NEVER);
  EXPECT_TRUE(fa.supportsUpdateBlockTable());
  MlaMetadataBuilder mla(spec16(), {}, records);
  EXPECT_EQ(mla.getCudagraphSupport(),
            AttentionCGSupport::UNIFORM_SINGLE_TOKEN_DECODE);
  EXPECT_EQ(MlaMetadataBuilder(spec16(), {}, {}).getCudagraphSupport(),
            AttentionCGSupport::NEVER);
  EXPECT_FALSE(mla.supportsUpdateBlockTable());
  EXPECT_FALSE(mla.useCascadeAttention(q));
}

TEST(AttentionMetadataBuilder, UpdateBlockTableUnsupportedIsAnError) {
  MlaMetadataBuilder mla(spec16(), {}, {});
  auto md = mla.build(0, batch({1, 1}, {5, 6}));
  ASSERT_TRUE(md) << md.message();
  auto updated =
      mla.updateBlockTable(**md, {0, 1, 2, 3, 4, 5, 6, 7}, 4, {0, 1});
  ASSERT_FALSE(updated);
  EXPECT_THAT(updated.message(), HasSubstr("TRITON_MLA"));
  EXPECT_THAT(updated.message(), HasSubstr("supports_update_block_table"));
}

//===----------------------------------------------------------------------===//
// FLASH_ATTN build
//===----------------------------------------------------------------------===//

TEST(FlashAttentionMetadataBuilder, BuildCopiesTheBatch) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CommonAttentionMetadata cam = batch({3, 1, 5}, {5, 10, 5}, 2);
  cam.causal = false;
  auto built = builder.build(0, cam);
  ASSERT_TRUE(built) << built.message();
  const auto *md = dynCastMetadata<FlashAttentionMetadata>(built->get());
  ASSERT_NE(md, nullptr);
  EXPECT_EQ(dynCastMetadata<MlaMetadata>(built->get()), nullptr);
  EXPECT_EQ(md->numReqs, 3);
  EXPECT_EQ(md->numActualTokens, 9);
  EXPECT_EQ(md->maxQueryLen, 5);
  EXPECT_EQ(md->maxSeqLen, 10);
  EXPECT_THAT(values(md->queryStartLoc), ElementsAre(0, 3, 4, 9));
  EXPECT_THAT(values(md->seqLens), ElementsAre(5, 10, 5));
  EXPECT_THAT(md->blockTable.shape(), ElementsAre(3, 2));
  EXPECT_EQ(md->slotMapping.dtype(), DType::I64);
  EXPECT_EQ(md->slotMapping.dim(0), 9);
  EXPECT_FALSE(md->causal);
  EXPECT_FALSE(md->useCascade);
  EXPECT_FALSE(md->cuPrefixQueryLens.has_value());
  EXPECT_EQ(md->maxNumSplits, 0);
}

TEST(FlashAttentionMetadataBuilder,
     CudagraphCaptureAndDraftingBuildWithoutPrefix) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CommonAttentionMetadata cam = batch({1, 1}, {40, 40});
  auto capture = builder.buildForCudagraphCapture(cam);
  ASSERT_TRUE(capture) << capture.message();
  EXPECT_FALSE(
      dynCastMetadata<FlashAttentionMetadata>(capture->get())->useCascade);
  auto draft = builder.buildForDrafting(cam, 2);
  ASSERT_TRUE(draft) << draft.message();
  EXPECT_FALSE(
      dynCastMetadata<FlashAttentionMetadata>(draft->get())->useCascade);
}

TEST(FlashAttentionMetadataBuilder, CommonPrefixMakesCascadeMetadata) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CommonAttentionMetadata cam = batch({2, 1, 3}, {40, 33, 35});
  auto built = builder.build(32, cam);
  ASSERT_TRUE(built) << built.message();
  const auto *md = dynCastMetadata<FlashAttentionMetadata>(built->get());
  EXPECT_TRUE(md->useCascade);
  EXPECT_EQ(md->commonPrefixLen, 32);
  EXPECT_THAT(values(*md->cuPrefixQueryLens), ElementsAre(0, 6));
  EXPECT_THAT(values(*md->prefixKvLens), ElementsAre(32));
  EXPECT_THAT(values(*md->suffixKvLens), ElementsAre(8, 1, 3));
}

TEST(FlashAttentionMetadataBuilder, RejectsBadCommonPrefix) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CommonAttentionMetadata cam = batch({2, 1, 3}, {40, 33, 35});
  auto negative = builder.build(-16, cam);
  ASSERT_FALSE(negative);
  EXPECT_THAT(negative.message(), HasSubstr("is negative"));
  auto unaligned = builder.build(20, cam);
  ASSERT_FALSE(unaligned);
  EXPECT_THAT(unaligned.message(),
              HasSubstr("not a multiple of the block size 16"));
  // Request 0 has only 38 tokens cached.
  auto tooLong = builder.build(48, cam);
  ASSERT_FALSE(tooLong);
  EXPECT_THAT(tooLong.message(), HasSubstr("exceeds the 38 tokens request 0"));
}

TEST(FlashAttentionMetadataBuilder, RejectsInvalidCommonMetadata) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CommonAttentionMetadata cam = batch({2, 1}, {4, 4});
  cam.seqLens[1] = 0;
  auto built = builder.build(0, cam);
  ASSERT_FALSE(built);
  EXPECT_THAT(built.message(), HasSubstr("seq_lens[1] = 0"));
}

TEST(FlashAttentionMetadataBuilder, UpdateBlockTableSwapsTableAndSlots) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  auto built = builder.build(0, batch({2, 1}, {4, 4}, 1));
  ASSERT_TRUE(built) << built.message();
  auto updated =
      builder.updateBlockTable(**built, {7, 8, 9, 10}, 2, {20, 21, 22});
  ASSERT_TRUE(updated) << updated.message();
  const auto *md = dynCastMetadata<FlashAttentionMetadata>(updated->get());
  EXPECT_THAT(md->blockTable.shape(), ElementsAre(2, 2));
  EXPECT_THAT(values(md->blockTable), ElementsAre(7, 8, 9, 10));
  EXPECT_EQ(md->slotMapping.getInt(2), 22);
  EXPECT_THAT(values(md->seqLens), ElementsAre(4, 4));
  // The original is untouched.
  const auto *orig = dynCastMetadata<FlashAttentionMetadata>(built->get());
  EXPECT_THAT(values(orig->blockTable), ElementsAre(0, 1));

  auto badTable = builder.updateBlockTable(**built, {7, 8, 9}, 2, {0, 1, 2});
  ASSERT_FALSE(badTable);
  EXPECT_THAT(badTable.message(), HasSubstr("block table"));
  auto badSlots = builder.updateBlockTable(**built, {7, 8}, 1, {0});
  ASSERT_FALSE(badSlots);
  EXPECT_THAT(badSlots.message(), HasSubstr("slot mapping has 1 entries"));
}

TEST(FlashAttentionMetadataBuilder, UpdateBlockTableRejectsOtherMetadata) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  MlaMetadata mla;
  auto updated = builder.updateBlockTable(mla, {}, 0, {});
  ASSERT_FALSE(updated);
  EXPECT_THAT(updated.message(), HasSubstr("got MlaMetadata"));
}

//===----------------------------------------------------------------------===//
// Cascade heuristic
//===----------------------------------------------------------------------===//

CascadeAttentionQuery cascadeQuery() {
  CascadeAttentionQuery q;
  q.commonPrefixLen = 1024;
  q.queryLens.assign(8, 1);
  q.numQueryHeads = 32;
  q.numKvHeads = 8;
  q.numSms = 132;
  return q;
}

TEST(FlashAttentionUseCascade, RefusesUnsupportedOrSmallCases) {
  FlashAttentionMetadataBuilder builder(spec16(), {}, {});
  CascadeAttentionQuery q = cascadeQuery();
  q.numSms = 1; // cascade would win on the model
  EXPECT_TRUE(builder.useCascadeAttention(q));

  CascadeAttentionQuery shortPrefix = q;
  shortPrefix.commonPrefixLen = 255;
  EXPECT_FALSE(builder.useCascadeAttention(shortPrefix));
  CascadeAttentionQuery alibi = q;
  alibi.useAlibi = true;
  EXPECT_FALSE(builder.useCascadeAttention(alibi));
  CascadeAttentionQuery window = q;
  window.useSlidingWindow = true;
  EXPECT_FALSE(builder.useCascadeAttention(window));
  CascadeAttentionQuery local = q;
  local.useLocalAttention = true;
  EXPECT_FALSE(builder.useCascadeAttention(local));
  CascadeAttentionQuery fewRequests = q;
  fewRequests.queryLens.assign(7, 1);
  EXPECT_FALSE(builder.useCascadeAttention(fewRequests));
  CascadeAttentionQuery dcp = q;
  dcp.dcpWorldSize = 2;
  EXPECT_FALSE(builder.useCascadeAttention(dcp));
}

TEST(FlashAttentionUseCascade, WithoutFlashDecodingCascadeWins) {
  CascadeAttentionQuery prefill = cascadeQuery();
  prefill.queryLens[3] = 5;
  EXPECT_TRUE(flashAttentionUseCascade(prefill));
  CascadeAttentionQuery mha = cascadeQuery();
  mha.numKvHeads = 32; // no GQA: no FlashDecoding
  EXPECT_TRUE(flashAttentionUseCascade(mha));
}

TEST(FlashAttentionUseCascade, PerformanceModelDecidesUnderFlashDecoding) {
  // 8 GQA decodes, prefix of 8 tiles on 132 SMs: cascade 1 wave * 8 tiles =
  // 8, FlashDecoding ceil(8 * 8 * 1 * 8 / 132) = 4, so no cascade.
  EXPECT_FALSE(flashAttentionUseCascade(cascadeQuery()));
  // On one SM: cascade 32 * 8 = 256 against FlashDecoding 512.
  CascadeAttentionQuery oneSm = cascadeQuery();
  oneSm.numSms = 1;
  EXPECT_TRUE(flashAttentionUseCascade(oneSm));
}

//===----------------------------------------------------------------------===//
// split_decodes_and_prefills
//===----------------------------------------------------------------------===//

TEST(SplitDecodesAndPrefills, AllDecodes) {
  Result<DecodePrefillSplit> s =
      splitDecodesAndPrefills(batch({1, 1, 1}, {4, 5, 6}), 1);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->numDecodes, 3);
  EXPECT_EQ(s->numPrefills, 0);
  EXPECT_EQ(s->numDecodeTokens, 3);
  EXPECT_EQ(s->numPrefillTokens, 0);
}

TEST(SplitDecodesAndPrefills, LeadingPrefillMakesAllPrefills) {
  Result<DecodePrefillSplit> s =
      splitDecodesAndPrefills(batch({4, 1, 1}, {4, 5, 6}), 1);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->numDecodes, 0);
  EXPECT_EQ(s->numPrefills, 3);
  EXPECT_EQ(s->numDecodeTokens, 0);
  EXPECT_EQ(s->numPrefillTokens, 6);
}

TEST(SplitDecodesAndPrefills, MixedReorderedBatch) {
  Result<DecodePrefillSplit> s =
      splitDecodesAndPrefills(batch({1, 1, 5, 3}, {4, 5, 6, 7}), 1);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->numDecodes, 2);
  EXPECT_EQ(s->numPrefills, 2);
  EXPECT_EQ(s->numDecodeTokens, 2);
  EXPECT_EQ(s->numPrefillTokens, 8);
}

TEST(SplitDecodesAndPrefills, ThresholdCountsSpecDecodesAsDecodes) {
  Result<DecodePrefillSplit> s =
      splitDecodesAndPrefills(batch({3, 2, 7}, {4, 5, 9}), 4);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->numDecodes, 2);
  EXPECT_EQ(s->numPrefills, 1);
  EXPECT_EQ(s->numDecodeTokens, 5);
  EXPECT_EQ(s->numPrefillTokens, 7);
}

TEST(SplitDecodesAndPrefills, RejectsUnreorderedBatch) {
  Result<DecodePrefillSplit> s =
      splitDecodesAndPrefills(batch({1, 5, 1}, {4, 5, 6}), 1);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("batch is not reordered"));
  EXPECT_THAT(s.message(), HasSubstr("request 2"));
}

//===----------------------------------------------------------------------===//
// TRITON_MLA build
//===----------------------------------------------------------------------===//

TEST(MlaMetadataBuilder, BuildSplitsTheBatch) {
  MlaMetadataBuilder builder(spec16(), {}, {});
  auto built = builder.build(0, batch({1, 1, 4}, {9, 17, 4}));
  ASSERT_TRUE(built) << built.message();
  const auto *md = dynCastMetadata<MlaMetadata>(built->get());
  ASSERT_NE(md, nullptr);
  EXPECT_EQ(md->numReqs, 3);
  EXPECT_EQ(md->numDecodes, 2);
  EXPECT_EQ(md->numDecodeTokens, 2);
  EXPECT_EQ(md->numPrefills, 1);
  EXPECT_EQ(md->numPrefillTokens, 4);
  EXPECT_EQ(md->numKvSplits, MlaMetadataBuilder::kDefaultNumKvSplits);
  EXPECT_THAT(values(md->seqLens), ElementsAre(9, 17, 4));
}

TEST(MlaMetadataBuilder, RejectsUnreorderedBatchAndCascade) {
  MlaMetadataBuilder builder(spec16(), {}, {});
  auto unordered = builder.build(0, batch({1, 4, 1}, {4, 9, 9}));
  ASSERT_FALSE(unordered);
  EXPECT_THAT(unordered.message(), HasSubstr("TRITON_MLA: batch is not"));
  auto cascade = builder.build(16, batch({1, 1}, {40, 40}));
  ASSERT_FALSE(cascade);
  EXPECT_THAT(cascade.message(),
              HasSubstr("cascade attention is not supported"));
}

//===----------------------------------------------------------------------===//
// Cross-attention
//===----------------------------------------------------------------------===//

TEST(CrossAttentionBuilder, UsesEncoderSeqLensNonCausally) {
  // Decoder request 0 at its first step (3 queries over 20 encoder keys),
  // request 1 later (1 query, 5 computed tokens, over 2 encoder keys).
  CommonAttentionMetadata cam = batch({3, 1}, {3, 6}, /*cols=*/2);
  cam.encoderSeqLens = std::vector<int32_t>{20, 2};
  CrossAttentionMetadataBuilder builder(
      std::make_unique<FlashAttentionMetadataBuilder>(
          spec16(), std::vector<std::string>{}, BuilderConfig{}));
  EXPECT_EQ(builder.reorderBatchThreshold(), std::nullopt);
  Result<std::unique_ptr<AttentionMetadata>> md = builder.build(0, cam);
  ASSERT_TRUE(md) << md.message();
  const auto *fa = dynCastMetadata<FlashAttentionMetadata>(md->get());
  ASSERT_NE(fa, nullptr);
  EXPECT_FALSE(fa->causal);
  EXPECT_THAT(values(fa->seqLens), ElementsAre(20, 2));
  EXPECT_EQ(fa->maxSeqLen, 20);
  // Request 0's 20 encoder tokens in its blocks 0 and 1; request 1 wrote
  // its encoder's keys at its first step.
  ASSERT_EQ(fa->slotMapping.numElements(), 20);
  EXPECT_EQ(fa->slotMapping.getInt(0), 0);
  EXPECT_EQ(fa->slotMapping.getInt(19), 16 + 3);

  // More decoder queries than encoder keys.
  cam = batch({9}, {9}, /*cols=*/1);
  cam.encoderSeqLens = std::vector<int32_t>{4};
  md = builder.build(0, cam);
  ASSERT_TRUE(md) << md.message();
  EXPECT_THAT(values(static_cast<const BatchMetadata &>(**md).seqLens),
              ElementsAre(4));

  cam.encoderSeqLens.reset();
  md = builder.build(0, cam);
  ASSERT_FALSE(md);
  EXPECT_THAT(md.message(), HasSubstr("no encoder_seq_lens"));
}

} // namespace
} // namespace attn::runtime
