//===- SessionTest.cpp - Layers of a session and their caches ------------===//
//
// What createLayer allocates for a layer's kv cache dtype, what it
// refuses, and the builder it gives a cross-attention layer.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Session.h"

#include "reference/ops/Ops.h"
#include "reference/testing/Random.h"
#include "runtime/executor/CpuExecutor.h"

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::HasSubstr;

AttentionLayer llamaLayer(const char *kvCacheDtype) {
  AttentionLayer layer;
  layer.name = "layers.0";
  layer.numHeads = 8;
  layer.numKvHeads = 2;
  layer.headSize = 64;
  layer.scale = 0.125;
  layer.dtype = DType::BF16;
  layer.kvCacheDtype = kvCacheDtype;
  layer.kScale = 0.02f;
  layer.vScale = 0.03f;
  return layer;
}

std::unique_ptr<Session> cpuSession() {
  Result<std::unique_ptr<Session>> session =
      Session::open(DeviceType::CPU, std::make_unique<CpuDevice>());
  EXPECT_TRUE(session) << session.message();
  return std::move(*session);
}

TEST(Session, Fp8CacheIsOneBytePerElement) {
  std::unique_ptr<Session> session = cpuSession();
  for (auto [name, dtype] : {std::pair{"fp8", DType::F8E4M3FN},
                             {"fp8_e4m3", DType::F8E4M3FN},
                             {"fp8_e5m2", DType::F8E5M2},
                             {"auto", DType::BF16}}) {
    KvCacheSpec spec{16, 2, 64, DType::BF16, name};
    Result<std::unique_ptr<SessionLayer>> layer =
        session->createLayer(llamaLayer(name), spec, /*numBlocks=*/4);
    ASSERT_TRUE(layer) << layer.message();
    EXPECT_EQ((*layer)->kvCache.dtype, dtype) << name;
    EXPECT_EQ((*layer)->kvCache.shape,
              (std::vector<int64_t>{4, 2, 16, 2, 64}));
  }
}

TEST(Session, LayerAndCacheSpecAgreeOnTheCacheDtype) {
  std::unique_ptr<Session> session = cpuSession();
  KvCacheSpec spec{16, 2, 64, DType::BF16, "auto"};
  Result<std::unique_ptr<SessionLayer>> layer =
      session->createLayer(llamaLayer("fp8"), spec, /*numBlocks=*/4);
  ASSERT_FALSE(layer);
  EXPECT_THAT(layer.message(),
              HasSubstr("layer 'layers.0' has kv cache dtype 'fp8' but its "
                        "cache spec has 'auto'"));
}

/// A host tensor's copy on the session's device (the CPU's host memory).
DeviceTensor onDevice(Session &session, const Tensor &t) {
  Result<DeviceTensor> d = session.allocate(t.dtype(), t.shape());
  EXPECT_TRUE(d) << d.message();
  Result<Tensor> view = hostView(*d);
  EXPECT_TRUE(view) << view.message();
  std::memcpy(view->data(), t.data(), t.numBytes());
  return *d;
}

// An encoder-decoder layer: 5 decoder queries attend, non-causally, to the
// 3 keys of the encoder that the first step writes. The session wraps the
// builder (seq_lens from encoder_seq_lens, the encoder's slots), and
// forward agrees with the reference op run non-causally on those keys.
TEST(Session, CrossAttentionLayerReadsTheEncodersKeys) {
  std::unique_ptr<Session> session = cpuSession();
  AttentionLayer layer = llamaLayer("auto");
  layer.dtype = DType::F32;
  layer.attnType = AttentionType::EncoderDecoder;
  KvCacheSpec spec{16, 2, 64, DType::F32, "auto"};
  Result<std::unique_ptr<SessionLayer>> made =
      session->createLayer(layer, spec, /*numBlocks=*/2);
  ASSERT_TRUE(made) << made.message();
  SessionLayer &cross = **made;

  // The decoder's first step: 5 queries, its cache block 1.
  CommonAttentionMetadata cam;
  cam.queryStartLoc = {0, 5};
  cam.seqLens = {5};
  cam.hasBlockTable = true;
  cam.blockTable = {1};
  cam.blockTableCols = 1;
  cam.slotMapping = {16, 17, 18, 19, 20};
  cam.encoderSeqLens = std::vector<int32_t>{3};
  Result<CommonAttentionMetadata> full = makeCommonAttentionMetadata(cam);
  ASSERT_TRUE(full) << full.message();
  Result<std::unique_ptr<AttentionMetadata>> md =
      cross.builder->build(/*commonPrefixLen=*/0, *full);
  ASSERT_TRUE(md) << md.message();

  Random random(7);
  Tensor query(DType::F32, {5, 8, 64}), key(DType::F32, {3, 2, 64});
  Tensor value(DType::F32, {3, 2, 64});
  for (Tensor *t : {&query, &key, &value})
    random.fill(*t, -1.0, 1.0);
  DeviceTensor out = *session->allocate(DType::F32, {5, 8, 64});
  Status s = cross.impl->forward(layer, onDevice(*session, query),
                                 onDevice(*session, key),
                                 onDevice(*session, value), cross.kvCache,
                                 **md, out);
  ASSERT_TRUE(s) << s.message();

  Tensor cache(DType::F32, {2, 2, 16, 2, 64});
  std::memset(cache.data(), 0, cache.numBytes());
  ASSERT_TRUE(reshapeAndCache(key, value, cache,
                              toTensor(std::vector<int64_t>{16, 17, 18}),
                              KvLayout::NHD));
  PagedAttentionParams params;
  params.scale = layer.scale;
  params.causal = false;
  Result<AttentionOutput> expected = pagedAttention(
      query, cache, *toTensor(std::vector<int32_t>{1}, {1, 1}),
      toTensor(std::vector<int32_t>{3}), toTensor(std::vector<int32_t>{0, 5}),
      nullptr, nullptr, params);
  ASSERT_TRUE(expected) << expected.message();
  Tensor got = *hostView(out);
  for (int64_t i = 0; i < got.numElements(); ++i)
    ASSERT_NEAR(got.getFloat(i), expected->out.getFloat(i), 1e-6) << i;
}

} // namespace
} // namespace attn::runtime
