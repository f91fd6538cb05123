//===- KvScaleStrategyTest.cpp - Per-kv-head fp8 scales in the runtime ----===//
//
// kv_scale_strategy from the layer to the bundle: a layer with per-kv-head
// scales asks for attn_head variants, one with per-layer scales for tensor
// variants (which manifests from before the key serve), and FLASH_ATTN
// checks the per-head scales it is given (TRITON_MLA's refusal is in
// BackendTest).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/BundleExecutor.h"
#include "runtime/executor/VariantQuery.h"
#include "runtime/host/FlashAttention.h"
#include "runtime/host/Registry.h"
#include "runtime/host/TritonMla.h"

#include "HostDevice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kHeads = 8, kKvHeads = 4, kHeadSize = 64, kBlockSize = 16;

/// An fp8 layer of FLASH_ATTN's shape, with per-layer scales.
AttentionLayer fp8Layer() {
  AttentionLayer layer;
  layer.name = "layers.0";
  layer.numHeads = kHeads;
  layer.numKvHeads = kKvHeads;
  layer.headSize = kHeadSize;
  layer.scale = 0.125;
  layer.dtype = DType::BF16;
  layer.kvCacheDtype = "fp8";
  layer.kScale = 0.02f;
  layer.vScale = 0.03f;
  return layer;
}

/// The same layer with a scale per kv head.
AttentionLayer perHeadLayer() {
  AttentionLayer layer = fp8Layer();
  layer.kHeadScales = {0.01f, 0.02f, 0.03f, 0.04f};
  layer.vHeadScales = {0.05f, 0.06f, 0.07f, 0.08f};
  return layer;
}

KvCacheSpec cacheSpec(const AttentionLayer &layer) {
  KvCacheSpec spec;
  spec.blockSize = kBlockSize;
  spec.numKvHeads = layer.numKvHeads;
  spec.headSize = layer.headSize;
  spec.dtype = layer.dtype;
  spec.kvCacheDtype = layer.kvCacheDtype;
  return spec;
}

/// The queries FLASH_ATTN's impl of `layer` makes: the cache write, then
/// paged attention.
std::vector<VariantQuery> callsOf(const AttentionLayer &layer) {
  test::HostDevice device;
  BundleExecutor none(Bundle{}, "spirv", device);
  Result<std::unique_ptr<AttentionImpl>> impl =
      FlashAttentionBackend().getImpl(layer, none);
  EXPECT_TRUE(impl) << impl.message();
  if (!impl)
    return {};
  return (*impl)->calls(layer, cacheSpec(layer));
}

TEST(KvScaleStrategy, PerHeadScalesAskForAttnHead) {
  for (const VariantQuery &q : callsOf(perHeadLayer()))
    EXPECT_THAT(q.describe(),
                HasSubstr(",kv_cache_dtype=fp8_e4m3,kv_scale_strategy="
                          "attn_head,layout=nhd"));
  for (const VariantQuery &q : callsOf(fp8Layer()))
    EXPECT_THAT(q.describe(), HasSubstr(",kv_cache_dtype=fp8_e4m3,"
                                        "kv_scale_strategy=tensor,layout="));
  // A cache in the model dtype has no scales and its queries no such key.
  AttentionLayer plain = fp8Layer();
  plain.kvCacheDtype = "auto";
  for (const VariantQuery &q : callsOf(plain))
    EXPECT_THAT(q.describe(), Not(HasSubstr("kv_scale_strategy")));
}

TEST(KvScaleStrategy, AManifestWithoutTheKeyServesTensorOnly) {
  std::vector<VariantQuery> tensor = callsOf(fp8Layer());
  std::vector<VariantQuery> perHead = callsOf(perHeadLayer());
  ASSERT_EQ(tensor.size(), 2u);
  ASSERT_EQ(perHead.size(), 2u);
  // The cache write's parameters as attn-compile writes them for each.
  std::map<std::string, std::string> old = {
      {"op", "reshape_and_cache"}, {"num_kv_heads", "4"},
      {"head_size", "64"},         {"block_size", "16"},
      {"dtype", "bf16"},           {"kv_cache_dtype", "fp8_e4m3"},
      {"layout", "nhd"}};
  std::map<std::string, std::string> headed = old;
  headed["kv_scale_strategy"] = "attn_head";

  EXPECT_TRUE(tensor[0].matches(old));
  EXPECT_FALSE(tensor[0].matches(headed));
  EXPECT_TRUE(perHead[0].matches(headed));
  EXPECT_FALSE(perHead[0].matches(old));
  EXPECT_EQ(perHead[0].mismatches(old),
            std::vector<std::string>{"kv_scale_strategy missing"});
}

/// A bundle with FLASH_ATTN's two variants for `layer`, as attn-compile
/// compiles them from the queries' --variant text.
Bundle bundleFor(const AttentionLayer &layer) {
  Bundle bundle;
  bundle.directory = "per-head.attnb";
  for (const VariantQuery &q : callsOf(layer)) {
    BundleVariant v;
    v.name = q.describe();
    for (const VariantParameter &p : q.parameters)
      if (!(p.key == "kv_scale_strategy" && p.value == "tensor"))
        v.parameters[p.key] = p.value;
    v.kernels = {{v.name + "::main", "spirv", "k.spv", "main", "", "{}"}};
    bundle.variants.push_back(std::move(v));
  }
  return bundle;
}

TEST(KvScaleStrategy, ImplFindsThePerHeadVariantOrSaysWhatToCompile) {
  test::HostDevice device;
  KvCacheSpec spec = cacheSpec(perHeadLayer());
  BundleExecutor perHead(bundleFor(perHeadLayer()), "spirv", device);
  Result<std::unique_ptr<AttentionImpl>> served =
      FlashAttentionBackend().getImpl(perHeadLayer(), perHead, &spec);
  EXPECT_TRUE(served) << served.message();

  // A bundle of per-layer variants serves neither call of a per-head layer.
  BundleExecutor tensor(bundleFor(fp8Layer()), "spirv", device);
  Result<std::unique_ptr<AttentionImpl>> missing =
      FlashAttentionBackend().getImpl(perHeadLayer(), tensor, &spec);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(),
              HasSubstr("has no reshape_and_cache variant with "
                        "num_kv_heads=4,head_size=64,block_size=16,"
                        "dtype=bf16,kv_cache_dtype=fp8_e4m3,"
                        "kv_scale_strategy=attn_head,layout=nhd"));
  EXPECT_THAT(missing.message(),
              HasSubstr("(kv_scale_strategy missing)); compile one with: "
                        "attn-compile --variant op=reshape_and_cache,"));

  // And the other way round.
  Result<std::unique_ptr<AttentionImpl>> wrong =
      FlashAttentionBackend().getImpl(fp8Layer(), perHead, &spec);
  ASSERT_FALSE(wrong);
  EXPECT_THAT(wrong.message(), HasSubstr("(kv_scale_strategy=attn_head)"));
}

TEST(KvScaleStrategy, LayersAreChecked) {
  test::HostDevice device;
  BundleExecutor none(Bundle{}, "spirv", device);
  auto fail = [&](const AttentionLayer &layer) {
    Result<std::unique_ptr<AttentionImpl>> impl =
        FlashAttentionBackend().getImpl(layer, none);
    return impl ? std::string("accepted") : impl.message();
  };
  AttentionLayer three = perHeadLayer();
  three.vHeadScales.pop_back();
  EXPECT_EQ(fail(three),
            "FLASH_ATTN: layer 'layers.0': per-kv-head v_scale has 3 values "
            "for 4 kv heads");
  AttentionLayer zero = perHeadLayer();
  zero.kHeadScales[2] = 0.0f;
  EXPECT_EQ(fail(zero),
            "FLASH_ATTN: layer 'layers.0': per-kv-head k_scale must be "
            "finite and > 0, got 0");
  AttentionLayer plain = perHeadLayer();
  plain.kvCacheDtype = "auto";
  EXPECT_EQ(fail(plain),
            "FLASH_ATTN: layer 'layers.0': per-kv-head scales are given but "
            "the kv cache dtype is 'auto' (only an fp8 cache has scales)");
}

TEST(KvScaleStrategy, SelectionAsksTheBackend) {
  SelectionRequest request;
  request.headSize = 576;
  request.kvCacheDtype = "fp8";
  request.useMla = true;
  request.usePerHeadQuantScales = true;
  EXPECT_THAT(TritonMlaBackend().validateConfiguration(request),
              ::testing::Contains("per-head quant scales are not supported"));
  request.headSize = 128;
  request.useMla = false;
  EXPECT_TRUE(FlashAttentionBackend().validateConfiguration(request).empty());
  EXPECT_TRUE(selectBackend(DeviceType::VULKAN, request));

  // TT-Metalium refuses every fp8 cache, per-head scales or not.
  auto tt = selectBackend(DeviceType::TENSTORRENT, request);
  EXPECT_THAT(tt ? std::string("selected") : tt.message(),
              HasSubstr("per-head quant scales: kv cache dtype 'fp8': "
                        "TT-Metalium has no fp8 data format"));
}

} // namespace
} // namespace attn::runtime
