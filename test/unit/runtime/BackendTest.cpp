//===- BackendTest.cpp - Backends, layer parameters and forward -----------===//

#include "runtime/host/Backend.h"

#include "runtime/host/FlashAttention.h"
#include "runtime/host/TritonMla.h"

#include "FakeExecutor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using test::FakeExecutor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int32_t> values(const Tensor &t) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(static_cast<int32_t>(t.getInt(i)));
  return v;
}

//===----------------------------------------------------------------------===//
// KV cache shapes
//===----------------------------------------------------------------------===//

TEST(FlashAttentionBackend, KvCacheShapeIsNhd) {
  FlashAttentionBackend backend;
  EXPECT_EQ(backend.name(), "FLASH_ATTN");
  auto shape = backend.getKvCacheShape(100, 16, 8, 128);
  ASSERT_TRUE(shape) << shape.message();
  EXPECT_THAT(*shape, ElementsAre(100, 2, 16, 8, 128));
}

TEST(FlashAttentionBackend, KvCacheShapeRejectsBlockSize) {
  FlashAttentionBackend backend;
  auto shape = backend.getKvCacheShape(100, 8, 8, 128);
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.message(), "Block size must be a multiple of 16.");
}

TEST(FlashAttentionBackend, KvCacheShapeRejectsDtypeAndEmptyDims) {
  FlashAttentionBackend backend;
  // fp8 caches have the model dtype's shape (one byte per element).
  for (const char *fp8 : {"fp8", "fp8_e4m3", "fp8_e5m2"}) {
    auto shape = backend.getKvCacheShape(100, 16, 8, 128, fp8);
    ASSERT_TRUE(shape) << shape.message();
    EXPECT_EQ(*shape, (std::vector<int64_t>{100, 2, 16, 8, 128}));
  }
  auto int8 = backend.getKvCacheShape(100, 16, 8, 128, "int8");
  ASSERT_FALSE(int8);
  EXPECT_THAT(int8.message(),
              HasSubstr("kv cache dtype 'int8' is not supported (supported: "
                        "auto, fp8, fp8_e4m3, fp8_e5m2)"));
  auto mla = TritonMlaBackend().getKvCacheShape(10, 16, 1, 576, "fp8_e5m2");
  ASSERT_TRUE(mla) << mla.message();
  EXPECT_EQ(*mla, (std::vector<int64_t>{10, 16, 576}));
  auto empty = backend.getKvCacheShape(0, 16, 8, 128);
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.message(), HasSubstr("num_blocks = 0"));
  auto zeroBlock = backend.getKvCacheShape(4, 0, 8, 128);
  ASSERT_FALSE(zeroBlock);
  EXPECT_THAT(zeroBlock.message(), HasSubstr("block_size = 0"));
}

// Sizes whose product overflows int64 (or passes any host) are an error, not
// a shape that wraps around or a later std::bad_alloc.
TEST(FlashAttentionBackend, KvCacheShapeRejectsHugeCaches) {
  for (const AttentionBackend *backend :
       std::initializer_list<const AttentionBackend *>{
           new FlashAttentionBackend(), new TritonMlaBackend()}) {
    std::unique_ptr<const AttentionBackend> owned(backend);
    int64_t heads = backend->isMla() ? 1 : 8;
    int64_t size = backend->isMla() ? 576 : 128;
    auto huge = backend->getKvCacheShape(int64_t{1} << 60, 16, heads, size);
    ASSERT_FALSE(huge);
    EXPECT_THAT(huge.message(), HasSubstr("kv cache too large"));
    auto wraps =
        backend->getKvCacheShape(int64_t{1} << 62, 1 << 16, heads, size);
    ASSERT_FALSE(wraps);
    EXPECT_THAT(wraps.message(), HasSubstr("would exceed the limit of "));
  }
}

TEST(Tensor, CreateRejectsShapesBeyondTheLimit) {
  Result<Tensor> big = Tensor::create(DType::F32, {int64_t{1} << 40, 4});
  ASSERT_FALSE(big);
  EXPECT_THAT(big.message(),
              HasSubstr("would exceed the limit of 1099511627776 bytes"));
  Result<Tensor> negative = Tensor::create(DType::F32, {4, -1});
  ASSERT_FALSE(negative);
  EXPECT_THAT(negative.message(), HasSubstr("dimension is negative"));
  Result<Tensor> empty = Tensor::create(DType::F32, {0, int64_t{1} << 62});
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_EQ(empty->numElements(), 0);
}

TEST(TritonMlaBackend, KvCacheShapeHasNoKvAxis) {
  TritonMlaBackend backend;
  EXPECT_EQ(backend.name(), "TRITON_MLA");
  auto shape = backend.getKvCacheShape(64, 32, 1, 576);
  ASSERT_TRUE(shape) << shape.message();
  EXPECT_THAT(*shape, ElementsAre(64, 32, 576));
}

TEST(TritonMlaBackend, KvCacheShapeRejectsBlockSizeAndKvHeads) {
  TritonMlaBackend backend;
  auto block = backend.getKvCacheShape(64, 24, 1, 576);
  ASSERT_FALSE(block);
  EXPECT_EQ(block.message(), "Block size must be a multiple of 16.");
  auto heads = backend.getKvCacheShape(64, 32, 2, 576);
  ASSERT_FALSE(heads);
  EXPECT_EQ(
      heads.message(),
      "MLA kv cache requires num_kv_heads == 1 (the latent is one head).");
}

TEST(AttentionBackend, CapabilitiesOfTheBuiltins) {
  FlashAttentionBackend fa;
  TritonMlaBackend mla;
  EXPECT_FALSE(fa.isMla());
  EXPECT_TRUE(mla.isMla());
  EXPECT_TRUE(fa.supportsSinks());
  EXPECT_FALSE(mla.supportsSinks());
  EXPECT_TRUE(fa.supportsSlidingWindow());
  EXPECT_FALSE(mla.supportsSlidingWindow());
  EXPECT_TRUE(fa.supportsHeadSize(128));
  EXPECT_FALSE(fa.supportsHeadSize(80));
  EXPECT_TRUE(mla.supportsHeadSize(576));
  EXPECT_TRUE(fa.supportsDtype(DType::BF16));
  EXPECT_FALSE(fa.supportsDtype(DType::I32));
  EXPECT_TRUE(fa.supportsBlockSize(32));
  EXPECT_FALSE(fa.supportsBlockSize(8));
  EXPECT_FALSE(fa.supportsBlockSize(0));
  EXPECT_TRUE(fa.supportsKvCacheDtype("auto"));
  EXPECT_TRUE(fa.supportsKvCacheDtype("fp8"));
  EXPECT_TRUE(mla.supportsKvCacheDtype("fp8_e5m2"));
  EXPECT_FALSE(fa.supportsKvCacheDtype("fp16"));
  EXPECT_TRUE(fa.acceptOutputBuffer());
  EXPECT_EQ(fa.kvCacheLayout(), KvCacheLayout::NHD);
}

TEST(AttentionBackend, ValidateConfigurationListsEveryReason) {
  SelectionRequest request;
  request.headSize = 80;
  request.dtype = DType::I64;
  request.kvCacheDtype = "int8";
  request.blockSize = 8;
  request.useMla = false;
  request.hasSinks = true;
  request.useSlidingWindow = true;
  request.useAlibi = true;
  std::vector<std::string> reasons =
      TritonMlaBackend().validateConfiguration(request);
  EXPECT_THAT(reasons,
              ElementsAre("use_mla is false",
                          "head size 80 is not supported (supported: 576)",
                          "dtype i64 is not supported (supported: f32, f16, "
                          "bf16)",
                          "kv cache dtype 'int8' is not supported (supported: "
                          "auto, fp8, fp8_e4m3, fp8_e5m2)",
                          "block size 8 is not a multiple of 16",
                          "attention sinks are not supported",
                          "sliding window is not supported",
                          "ALiBi is not supported"));
  SelectionRequest ok;
  ok.headSize = 128;
  ok.hasSinks = true;
  ok.useSlidingWindow = true;
  EXPECT_TRUE(FlashAttentionBackend().validateConfiguration(ok).empty());
  ok.useMla = true;
  EXPECT_THAT(FlashAttentionBackend().validateConfiguration(ok),
              ElementsAre("use_mla is true but FLASH_ATTN is not an MLA "
                          "backend"));
}

TEST(AttentionBackend, BuildersCheckTheKvCacheSpec) {
  KvCacheSpec spec;
  spec.blockSize = 8;
  auto fa = FlashAttentionBackend().getBuilder(spec, {}, {});
  ASSERT_FALSE(fa);
  EXPECT_THAT(fa.message(), HasSubstr("FLASH_ATTN: block size 8"));
  spec.blockSize = 16;
  spec.numKvHeads = 4;
  auto mla = TritonMlaBackend().getBuilder(spec, {}, {});
  ASSERT_FALSE(mla);
  EXPECT_THAT(mla.message(), HasSubstr("num_kv_heads == 1"));
  spec.numKvHeads = 1;
  auto ok = TritonMlaBackend().getBuilder(spec, {"l0", "l1"}, {});
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_THAT((*ok)->layerNames(), ElementsAre("l0", "l1"));
}

//===----------------------------------------------------------------------===//
// PerLayerParameters
//===----------------------------------------------------------------------===//

AttentionLayer layerNamed(std::string name) {
  AttentionLayer layer;
  layer.name = std::move(name);
  layer.numHeads = 8;
  layer.numKvHeads = 2;
  layer.headSize = 64;
  layer.scale = 0.125;
  return layer;
}

TEST(PerLayerParameters, FromLayer) {
  AttentionLayer layer = layerNamed("l");
  layer.slidingWindow = 128;
  layer.logitsSoftCap = 30.0;
  layer.sinks.assign(8, 0.5f);
  PerLayerParameters p = getPerLayerParameters(layer);
  EXPECT_EQ(p.windowLeft, 127);
  EXPECT_EQ(p.logitsSoftCap, 30.0);
  EXPECT_EQ(p.smScale, 0.125);
  EXPECT_TRUE(p.hasSinks);
  EXPECT_EQ(getPerLayerParameters(layerNamed("m")).windowLeft, -1);
}

TEST(PerLayerParameters, AgreeingLayers) {
  std::vector<AttentionLayer> layers = {layerNamed("a"), layerNamed("b")};
  auto global = inferGlobalHyperparameters(layers);
  ASSERT_TRUE(global) << global.message();
  EXPECT_EQ(global->smScale, 0.125);
  EXPECT_EQ(global->hasSameWindowLefts, true);
  EXPECT_EQ(global->hasSameAllParams, true);
}

TEST(PerLayerParameters, DisagreementNamesTheLayer) {
  std::vector<AttentionLayer> layers = {layerNamed("model.layers.0"),
                                        layerNamed("model.layers.1"),
                                        layerNamed("model.layers.2")};
  layers[2].slidingWindow = 4096;
  auto window = inferGlobalHyperparameters(layers);
  ASSERT_FALSE(window);
  EXPECT_THAT(window.message(),
              HasSubstr("layer 'model.layers.2' has window_left 4095 but layer "
                        "'model.layers.0' has -1"));

  layers[2] = layerNamed("model.layers.2");
  layers[1].scale = 0.25;
  auto scale = inferGlobalHyperparameters(layers);
  ASSERT_FALSE(scale);
  EXPECT_THAT(scale.message(),
              HasSubstr("layer 'model.layers.1' has sm_scale"));

  layers[1] = layerNamed("model.layers.1");
  layers[1].logitsSoftCap = 50.0;
  auto cap = inferGlobalHyperparameters(layers);
  ASSERT_FALSE(cap);
  EXPECT_THAT(cap.message(),
              HasSubstr("layer 'model.layers.1' has logits_soft_cap"));

  layers[1] = layerNamed("model.layers.1");
  layers[2].sinks.assign(8, 0.0f);
  auto sinks = inferGlobalHyperparameters(layers);
  ASSERT_FALSE(sinks);
  EXPECT_THAT(sinks.message(),
              HasSubstr("layer 'model.layers.2' has has_sinks true"));
}

TEST(PerLayerParameters, WithoutRequireSameReportsAgreement) {
  std::vector<AttentionLayer> layers = {layerNamed("a"), layerNamed("b")};
  layers[1].scale = 0.5;
  auto global = inferGlobalHyperparameters(layers, /*requireSame=*/false);
  ASSERT_TRUE(global) << global.message();
  EXPECT_EQ(global->smScale, 0.125);
  EXPECT_EQ(global->hasSameWindowLefts, true);
  EXPECT_EQ(global->hasSameAllParams, false);
}

TEST(PerLayerParameters, NoLayersIsAnError) {
  auto global = inferGlobalHyperparameters({});
  ASSERT_FALSE(global);
  EXPECT_THAT(global.message(), HasSubstr("no attention layers"));
}

//===----------------------------------------------------------------------===//
// getImpl
//===----------------------------------------------------------------------===//

TEST(FlashAttentionBackend, GetImplChecksTheLayer) {
  FakeExecutor executor;
  FlashAttentionBackend backend;
  auto impl = backend.getImpl(layerNamed("l"), executor);
  ASSERT_TRUE(impl) << impl.message();
  EXPECT_EQ((*impl)->numHeads, 8);
  EXPECT_EQ((*impl)->scale, 0.125);

  AttentionLayer head = layerNamed("l");
  head.headSize = 80;
  auto badHead = backend.getImpl(head, executor);
  ASSERT_FALSE(badHead);
  EXPECT_THAT(
      badHead.message(),
      HasSubstr("FLASH_ATTN: layer 'l': head size 80 is not supported"));

  AttentionLayer gqa = layerNamed("l");
  gqa.numKvHeads = 3;
  auto badGqa = backend.getImpl(gqa, executor);
  ASSERT_FALSE(badGqa);
  EXPECT_THAT(badGqa.message(), HasSubstr("not a multiple of num_kv_heads 3"));

  AttentionLayer sinks = layerNamed("l");
  sinks.sinks.assign(3, 0.0f);
  auto badSinks = backend.getImpl(sinks, executor);
  ASSERT_FALSE(badSinks);
  EXPECT_THAT(badSinks.message(), HasSubstr("sinks has 3 values for 8 heads"));
}

AttentionLayer mlaLayer() {
  AttentionLayer layer;
  layer.name = "mla";
  layer.numHeads = 16;
  layer.numKvHeads = 1;
  layer.headSize = 576;
  layer.kvLoraRank = 512;
  layer.scale = 0.1;
  layer.dtype = DType::BF16;
  return layer;
}

TEST(TritonMlaBackend, RefusesPerHeadScales) {
  // The latent cache has one k_scale (kv_scale_strategy does not apply).
  FakeExecutor executor;
  AttentionLayer layer = mlaLayer();
  layer.kvCacheDtype = "fp8";
  layer.kHeadScales = layer.vHeadScales = {0.5f};
  auto impl = TritonMlaBackend().getImpl(layer, executor);
  ASSERT_FALSE(impl);
  EXPECT_EQ(impl.message(), "TRITON_MLA: layer 'mla': per-kv-head k_scale / "
                            "v_scale are not supported");
}

TEST(TritonMlaBackend, GetImplChecksTheLayer) {
  FakeExecutor executor;
  TritonMlaBackend backend;
  ASSERT_TRUE(backend.getImpl(mlaLayer(), executor));

  AttentionLayer window = mlaLayer();
  window.slidingWindow = 64;
  auto badWindow = backend.getImpl(window, executor);
  ASSERT_FALSE(badWindow);
  EXPECT_THAT(badWindow.message(),
              HasSubstr("sliding window is not supported"));

  AttentionLayer cap = mlaLayer();
  cap.logitsSoftCap = 10.0;
  auto badCap = backend.getImpl(cap, executor);
  ASSERT_FALSE(badCap);
  EXPECT_THAT(badCap.message(), HasSubstr("logits soft cap is not supported"));

  AttentionLayer heads = mlaLayer();
  heads.numKvHeads = 2;
  heads.numHeads = 16;
  auto badHeads = backend.getImpl(heads, executor);
  ASSERT_FALSE(badHeads);
  EXPECT_THAT(badHeads.message(), HasSubstr("num_kv_heads == 1"));

  AttentionLayer rank = mlaLayer();
  rank.kvLoraRank = 576;
  auto badRank = backend.getImpl(rank, executor);
  ASSERT_FALSE(badRank);
  EXPECT_THAT(badRank.message(), HasSubstr("kv_lora_rank 576 must be in"));

  // vLLM's TRITON_MLA serves decoder layers only (supports_attn_type).
  AttentionLayer cross = mlaLayer();
  cross.attnType = AttentionType::EncoderDecoder;
  auto badCross = backend.getImpl(cross, executor);
  ASSERT_FALSE(badCross);
  EXPECT_THAT(badCross.message(),
              HasSubstr("attention type encoder_decoder is not supported"));
}

//===----------------------------------------------------------------------===//
// FLASH_ATTN forward
//===----------------------------------------------------------------------===//

/// Two requests (3-token prefill, 1-token decode) over a 4-block cache of
/// block size 16, 8 query heads / 2 kv heads of 64.
class FlashForward : public ::testing::Test {
protected:
  void SetUp() override {
    layer = layerNamed("model.layers.0");
    auto made = FlashAttentionBackend().getImpl(layer, executor);
    ASSERT_TRUE(made) << made.message();
    impl = std::move(*made);
    md.numReqs = 2;
    md.numActualTokens = 4;
    md.maxQueryLen = 3;
    md.maxSeqLen = 20;
    md.queryStartLoc = toTensor(std::vector<int32_t>{0, 3, 4});
    md.seqLens = toTensor(std::vector<int32_t>{3, 20});
    md.blockTable = *toTensor(std::vector<int32_t>{0, 3, 1, 2}, {2, 2});
    md.slotMapping = toTensor(std::vector<int64_t>{0, 1, 2, 35});
  }

  Status run(const Tensor *outputScale = nullptr) {
    return forward(md, outputScale);
  }
  /// forward on device copies of the fixture's tensors.
  Status forward(const AttentionMetadata &metadata,
                 const Tensor *outputScale = nullptr) {
    return impl->forward(layer, dev(query), dev(key), dev(value),
                         dev(kvCache), metadata, dev(output), outputScale);
  }
  DeviceTensor dev(const Tensor &t) { return test::onDevice(executor, t); }

  FakeExecutor executor;
  AttentionLayer layer;
  std::unique_ptr<AttentionImpl> impl;
  FlashAttentionMetadata md;
  Tensor query{DType::F16, {4, 8, 64}};
  Tensor key{DType::F16, {4, 2, 64}};
  Tensor value{DType::F16, {4, 2, 64}};
  Tensor kvCache{DType::F16, {4, 2, 16, 2, 64}};
  Tensor output{DType::F16, {4, 8, 64}};
};

// A query of another dtype than the layer's is the query's fault (it was
// once reported as "output must be f16, got bf16").
TEST_F(FlashForward, BlamesTheQueryForADtypeOtherThanTheLayers) {
  layer.dtype = DType::BF16;
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "FLASH_ATTN: query is [4, 8, 64] f16 but layer "
                         "'model.layers.0' is bf16");
  EXPECT_EQ(executor.cacheWrites, 0);
}

TEST_F(FlashForward, WritesTheCacheThenRunsPagedAttention) {
  Status s = run();
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(executor.cacheWrites, 1);
  EXPECT_EQ(executor.lastSlotMapping.getInt(3), 35);
  ASSERT_EQ(executor.pagedCalls.size(), 1u);
  const test::PagedCall &call = executor.pagedCalls[0];
  EXPECT_EQ(call.params.scale, 0.125);
  EXPECT_TRUE(call.params.causal);
  EXPECT_EQ(call.params.windowLeft, -1);
  EXPECT_EQ(call.params.softCap, 0.0);
  EXPECT_EQ(call.params.sinks, nullptr);
  EXPECT_FALSE(call.wantsLse);
  EXPECT_EQ(executor.merges, 0);
}

TEST_F(FlashForward, PassesWindowSoftCapAndSinks) {
  layer.slidingWindow = 8;
  layer.logitsSoftCap = 30.0;
  layer.sinks.assign(8, 1.0f);
  impl = FlashAttentionBackend().getImpl(layer, executor).value();
  ASSERT_TRUE(run());
  const PagedAttentionParams &p = executor.pagedCalls.at(0).params;
  EXPECT_EQ(p.windowLeft, 7);
  EXPECT_EQ(p.windowRight, 0);
  EXPECT_EQ(p.softCap, 30.0);
  ASSERT_NE(p.sinks, nullptr);
  EXPECT_EQ(p.sinks->dim(0), 8);
}

TEST_F(FlashForward, EmptyKeySkipsTheCacheWrite) {
  key = Tensor();
  value = Tensor();
  ASSERT_TRUE(run());
  EXPECT_EQ(executor.cacheWrites, 0);
  EXPECT_EQ(executor.pagedCalls.size(), 1u);
}

TEST_F(FlashForward, PaddedTokensAreAccepted) {
  query = Tensor(DType::F16, {6, 8, 64});
  output = Tensor(DType::F16, {6, 8, 64});
  key = Tensor(DType::F16, {6, 2, 64});
  value = Tensor(DType::F16, {6, 2, 64});
  Status s = run();
  EXPECT_TRUE(s) << s.message();
}

TEST_F(FlashForward, RejectsFusedOutputQuantization) {
  Tensor scale(DType::F32, {1});
  Status s = run(&scale);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("fused output quantization"));
  EXPECT_EQ(executor.cacheWrites, 0);
}

TEST_F(FlashForward, RejectsMetadataOfAnotherKind) {
  MlaMetadata mla;
  Status s = forward(mla);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(),
              HasSubstr("attention metadata must be "
                        "FlashAttentionMetadata, got MlaMetadata"));
}

TEST_F(FlashForward, RejectsNonPositiveScale) {
  impl->scale = 0.0;
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("scale must be positive"));
}

TEST_F(FlashForward, RejectsMismatchedShapes) {
  output = Tensor(DType::F16, {4, 8, 32});
  Status badOut = run();
  ASSERT_FALSE(badOut);
  EXPECT_THAT(badOut.message(), HasSubstr("output must be [4, 8, 64]"));

  output = Tensor(DType::F16, {4, 8, 64});
  kvCache = Tensor(DType::BF16, {4, 2, 16, 2, 64});
  Status badDtype = run();
  ASSERT_FALSE(badDtype);
  EXPECT_THAT(badDtype.message(), HasSubstr("kv cache must be f16, got bf16"));

  kvCache = Tensor(DType::F16, {4, 16, 2, 64});
  Status badRank = run();
  ASSERT_FALSE(badRank);
  EXPECT_THAT(badRank.message(),
              HasSubstr("kv cache must be [?, 2, ?, 2, 64]"));

  kvCache = Tensor(DType::F16, {4, 2, 16, 2, 64});
  query = Tensor(DType::F16, {3, 8, 64});
  output = Tensor(DType::F16, {3, 8, 64});
  Status shortQuery = run();
  ASSERT_FALSE(shortQuery);
  EXPECT_THAT(shortQuery.message(),
              HasSubstr("query has 3 tokens but the metadata has 4"));
}

TEST_F(FlashForward, RejectsOutOfRangeBlocksAndSlots) {
  md.blockTable = *toTensor(std::vector<int32_t>{0, 3, 1, 4}, {2, 2});
  Status block = run();
  ASSERT_FALSE(block);
  EXPECT_THAT(block.message(),
              HasSubstr("FLASH_ATTN: block_table[1][1] = 4 is outside "
                        "[0, num_blocks = 4)"));
  // Request 0 only reads its first block, so its second entry is ignored.
  md.blockTable = *toTensor(std::vector<int32_t>{0, 99, 1, 2}, {2, 2});
  EXPECT_TRUE(run());

  md.slotMapping = toTensor(std::vector<int64_t>{0, 1, -1, 64});
  Status slot = run();
  ASSERT_FALSE(slot);
  EXPECT_THAT(slot.message(), HasSubstr("slot_mapping[3] = 64 is outside"));

  md.slotMapping = toTensor(std::vector<int64_t>{0, 1, 2, 3});
  md.seqLens = toTensor(std::vector<int32_t>{3, 40});
  Status wide = run();
  ASSERT_FALSE(wide);
  EXPECT_THAT(wide.message(),
              HasSubstr("block_table has 2 columns, but request 1 with "
                        "seq_lens[1] = 40 needs 3 blocks of 16"));
}

TEST_F(FlashForward, ExecutorErrorsPropagate) {
  executor.failWith = "vulkan: device lost";
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "vulkan: device lost");
}

TEST_F(FlashForward, CascadeRunsPrefixAndSuffixThenMerges) {
  // Both requests share the first block (16 tokens) and cached it earlier.
  md.seqLens = toTensor(std::vector<int32_t>{20, 30});
  md.blockTable = *toTensor(std::vector<int32_t>{3, 0, 3, 1}, {2, 2});
  md.useCascade = true;
  md.commonPrefixLen = 16;
  md.cuPrefixQueryLens = toTensor(std::vector<int32_t>{0, 4});
  md.prefixKvLens = toTensor(std::vector<int32_t>{16});
  md.suffixKvLens = toTensor(std::vector<int32_t>{4, 14});
  Status s = run();
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(executor.pagedCalls.size(), 2u);
  const test::PagedCall &prefix = executor.pagedCalls[0];
  EXPECT_FALSE(prefix.params.causal);
  EXPECT_TRUE(prefix.wantsLse);
  // The prefix pass is one one-token request per query token.
  EXPECT_THAT(values(prefix.queryStartLoc), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(values(prefix.seqLens), ElementsAre(16, 16, 16, 16));
  EXPECT_THAT(prefix.blockTable.shape(), ElementsAre(4, 1));
  EXPECT_THAT(values(prefix.blockTable), ElementsAre(3, 3, 3, 3));
  const test::PagedCall &suffix = executor.pagedCalls[1];
  EXPECT_TRUE(suffix.params.causal);
  EXPECT_TRUE(suffix.wantsLse);
  EXPECT_THAT(values(suffix.queryStartLoc), ElementsAre(0, 3, 4));
  EXPECT_THAT(values(suffix.seqLens), ElementsAre(4, 14));
  EXPECT_THAT(values(suffix.blockTable), ElementsAre(0, 1));
  EXPECT_EQ(executor.merges, 1);
}

TEST_F(FlashForward, CascadeRejectsInconsistentLengths) {
  md.seqLens = toTensor(std::vector<int32_t>{20, 30});
  md.useCascade = true;
  md.commonPrefixLen = 16;
  md.cuPrefixQueryLens = toTensor(std::vector<int32_t>{0, 4});
  md.prefixKvLens = toTensor(std::vector<int32_t>{16});
  md.suffixKvLens = toTensor(std::vector<int32_t>{4, 15});
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("suffix_kv_lens[1] = 15"));
  EXPECT_TRUE(executor.pagedCalls.empty());
}

TEST_F(FlashForward, CascadeRejectsSlidingWindow) {
  layer.slidingWindow = 8;
  impl = FlashAttentionBackend().getImpl(layer, executor).value();
  md.seqLens = toTensor(std::vector<int32_t>{20, 30});
  md.useCascade = true;
  md.commonPrefixLen = 16;
  md.cuPrefixQueryLens = toTensor(std::vector<int32_t>{0, 4});
  md.prefixKvLens = toTensor(std::vector<int32_t>{16});
  md.suffixKvLens = toTensor(std::vector<int32_t>{4, 14});
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("cascade attention does not support"));
}

//===----------------------------------------------------------------------===//
// TRITON_MLA forward
//===----------------------------------------------------------------------===//

/// Three decodes over an 8-block latent cache of block size 16.
class MlaForward : public ::testing::Test {
protected:
  void SetUp() override {
    layer = mlaLayer();
    auto made = TritonMlaBackend().getImpl(layer, executor);
    ASSERT_TRUE(made) << made.message();
    impl.reset(static_cast<TritonMlaImpl *>(made->release()));
    md.numReqs = 3;
    md.numActualTokens = 3;
    md.maxQueryLen = 1;
    md.maxSeqLen = 40;
    md.numDecodes = 3;
    md.numDecodeTokens = 3;
    md.queryStartLoc = toTensor(std::vector<int32_t>{0, 1, 2, 3});
    md.seqLens = toTensor(std::vector<int32_t>{5, 40, 17});
    md.blockTable =
        *toTensor(std::vector<int32_t>{0, 0, 0, 1, 2, 3, 4, 5, 0}, {3, 3});
    md.slotMapping = toTensor(std::vector<int64_t>{4, 39, 16});
  }

  Status run() { return forward(query, Tensor(), Tensor(), kvCache, output); }
  /// forward on device copies of the tensors.
  Status forward(const Tensor &q, const Tensor &kvC, const Tensor &kPe,
                 const Tensor &cache, const Tensor &out,
                 const AttentionMetadata *metadata = nullptr,
                 const Tensor *outputBlockScale = nullptr) {
    return impl->forward(layer, dev(q), dev(kvC), dev(kPe), dev(cache),
                         metadata ? *metadata : md, dev(out), nullptr,
                         outputBlockScale);
  }
  Status forwardMqa(const Tensor &out, const Tensor *lse = nullptr) {
    DeviceTensor l = lse ? dev(*lse) : DeviceTensor();
    return impl->forwardMqa(layer, dev(query), dev(kvCache), md, dev(out),
                            lse ? &l : nullptr);
  }
  DeviceTensor dev(const Tensor &t) { return test::onDevice(executor, t); }

  FakeExecutor executor;
  AttentionLayer layer;
  std::unique_ptr<TritonMlaImpl> impl;
  MlaMetadata md;
  Tensor query{DType::BF16, {3, 16, 576}};
  Tensor kvCache{DType::BF16, {8, 16, 576}};
  Tensor output{DType::BF16, {3, 16, 512}};
};

TEST_F(MlaForward, DispatchesMlaDecode) {
  Status s = run();
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(executor.mlaCalls, 1);
  EXPECT_EQ(executor.lastMlaParams.scale, 0.1);
  EXPECT_EQ(executor.lastMlaParams.kvLoraRank, 512);
  EXPECT_EQ(executor.lastMlaParams.numKvSplits, 4);
  EXPECT_EQ(executor.cacheWrites, 0);
}

TEST_F(MlaForward, WritesTheLatentCacheThenDecodes) {
  // Five rows: the two past slot_mapping's three are padding.
  Tensor kvC(DType::BF16, {5, 512}), kPe(DType::BF16, {5, 64});
  Status s = forward(query, kvC, kPe, kvCache, output);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(executor.order,
            (std::vector<std::string>{"concat_and_cache_mla", "mla_decode"}));
  EXPECT_EQ(executor.lastSlotMapping, md.slotMapping);
  EXPECT_EQ(executor.lastKvC.shape(), kvC.shape());
  EXPECT_EQ(executor.lastKPe.shape(), kPe.shape());
  EXPECT_EQ(executor.cacheWrites, 0);
}

TEST_F(MlaForward, RejectsABadLatentWriteBeforeWriting) {
  Tensor kvC(DType::BF16, {3, 512}), kPe(DType::BF16, {3, 64});
  auto expectRejected = [&](const Tensor &c, const Tensor &p,
                            const std::string &what) {
    Status s = forward(query, c, p, kvCache, output);
    ASSERT_FALSE(s);
    EXPECT_THAT(s.message(), HasSubstr(what));
    EXPECT_TRUE(executor.order.empty());
  };
  expectRejected(kvC, Tensor(), "kv_c (key) and k_pe (value) go together");
  expectRejected(Tensor(), kPe, "kv_c (key) and k_pe (value) go together");
  expectRejected(kvC, Tensor(DType::BF16, {3, 1, 64}), "k_pe must be [3, 64]");
  expectRejected(Tensor(DType::BF16, {3, 576}), kPe, "kv_c must be [?, 512]");
  expectRejected(Tensor(DType::F16, {3, 512}), kPe,
                 "kv_c must be bf16, got f16");
  expectRejected(Tensor(DType::BF16, {2, 512}), Tensor(DType::BF16, {2, 64}),
                 "kv_c has 2 tokens but slot_mapping has 3");

  // 8 blocks of 16: slot 128 is the first outside; negative is padding.
  md.slotMapping = toTensor(std::vector<int64_t>{4, 128, 16});
  expectRejected(kvC, kPe, "slot_mapping[1] = 128 is outside the cache");
  md.slotMapping = toTensor(std::vector<int32_t>{4, 39, 16});
  expectRejected(kvC, kPe, "slot_mapping must be i64, got i32");
  md.slotMapping = toTensor(std::vector<int64_t>{4, -1, 16});

  // The decode's own checks also run before the write.
  Tensor wide(DType::BF16, {3, 16, 576});
  Status out = forward(query, kvC, kPe, kvCache, wide);
  ASSERT_FALSE(out);
  EXPECT_THAT(out.message(), HasSubstr("output must be [3, 16, 512]"));
  layer.slidingWindow = 64;
  expectRejected(kvC, kPe, "sliding window is not supported by MLA");
  layer.slidingWindow.reset();
  EXPECT_TRUE(executor.order.empty());

  ASSERT_TRUE(forward(query, kvC, kPe, kvCache, output));
  EXPECT_EQ(executor.mlaCacheWrites, 1);
}

TEST_F(MlaForward, RejectsFusedOutputQuantization) {
  Tensor scale(DType::F32, {1});
  Status s =
      forward(query, Tensor(), Tensor(), kvCache, output, nullptr, &scale);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("TRITON_MLA: fused output quantization"));
}

TEST_F(MlaForward, RejectsMetadataOfAnotherKind) {
  FlashAttentionMetadata fa;
  Status s = forward(query, Tensor(), Tensor(), kvCache, output, &fa);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("must be MlaMetadata, got "
                                     "FlashAttentionMetadata"));
}

TEST_F(MlaForward, RejectsNonDecodeShapes) {
  query = Tensor(DType::BF16, {5, 16, 576});
  Status tokens = run();
  ASSERT_FALSE(tokens);
  EXPECT_THAT(tokens.message(), HasSubstr("only the pure decode shape"));

  query = Tensor(DType::BF16, {3, 16, 576});
  md.numDecodes = 2;
  md.numPrefills = 1;
  Status prefill = run();
  ASSERT_FALSE(prefill);
  EXPECT_THAT(prefill.message(), HasSubstr("with 1 prefills"));
}

TEST_F(MlaForward, RejectsSlidingWindow) {
  layer.slidingWindow = 128;
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(
      s.message(),
      HasSubstr("sliding window is not supported by MLA (layer 'mla')"));
  EXPECT_EQ(executor.mlaCalls, 0);
}

TEST_F(MlaForward, RejectsNonPositiveScale) {
  impl->scale = -1.0;
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("scale must be positive"));
}

TEST_F(MlaForward, RejectsNonMlaCache) {
  kvCache = Tensor(DType::BF16, {8, 2, 16, 1, 576});
  Status s = run();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("kv cache must be the 3-D MLA cache"));
}

TEST_F(MlaForward, ForwardMqaChecksOutputAndBlocks) {
  Tensor lse(DType::F32, {3, 16});
  Status ok = forwardMqa(output, &lse);
  ASSERT_TRUE(ok) << ok.message();

  Tensor wide(DType::BF16, {3, 16, 576});
  Status out = forwardMqa(wide);
  ASSERT_FALSE(out);
  EXPECT_THAT(out.message(), HasSubstr("output must be [3, 16, 512]"));

  md.blockTable =
      *toTensor(std::vector<int32_t>{0, 0, 0, 1, 2, 8, 4, 5, 0}, {3, 3});
  Status block = forwardMqa(output);
  ASSERT_FALSE(block);
  EXPECT_THAT(block.message(), HasSubstr("block_table[1][2] = 8"));
}

} // namespace
} // namespace attn::runtime
