//===- SessionTest.cpp - Layers of a session and their caches ------------===//
//
// What createLayer allocates for a layer's kv cache dtype, what it
// refuses, the builder it gives a cross-attention layer, and the threads
// and lifetimes contract (Session.h): forward from several threads, a
// layer that outlives its Session object. The scripts/sanitize TSan stage
// runs these.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Session.h"

#include "reference/ops/Ops.h"
#include "reference/testing/Random.h"
#include "runtime/executor/CpuExecutor.h"

#include <cstring>
#include <thread>

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

/// A decode step of `requests` requests of `context` tokens on `layer`:
/// its metadata, new keys and values and queries drawn from `seed`.
struct DecodeStep {
  std::unique_ptr<AttentionMetadata> md;
  DeviceTensor q, k, v, out;
};

DecodeStep decodeStep(Session &session, SessionLayer &layer, int seed) {
  constexpr int32_t requests = 2, context = 20;
  CommonAttentionMetadata cam;
  cam.queryStartLoc = {0, 1, 2};
  cam.seqLens = {context, context};
  cam.hasBlockTable = true;
  cam.blockTable = {0, 1, 2, 3};
  cam.blockTableCols = 2;
  cam.slotMapping = {context - 1, 32 + context - 1};
  Result<CommonAttentionMetadata> full = makeCommonAttentionMetadata(cam);
  EXPECT_TRUE(full) << full.message();
  DecodeStep step;
  Result<std::unique_ptr<AttentionMetadata>> md = layer.builder->build(0, *full);
  EXPECT_TRUE(md) << md.message();
  step.md = std::move(*md);
  Random random(seed);
  Tensor q(DType::F32, {requests, 8, 64}), k(DType::F32, {requests, 2, 64});
  Tensor v(DType::F32, {requests, 2, 64});
  for (Tensor *t : {&q, &k, &v})
    random.fill(*t, -1.0, 1.0);
  step.q = onDevice(session, q);
  step.k = onDevice(session, k);
  step.v = onDevice(session, v);
  step.out = *session.allocate(DType::F32, {requests, 8, 64});
  return step;
}

std::vector<float> hostFloats(const DeviceTensor &t) {
  Tensor h = *hostView(t);
  std::vector<float> v;
  for (int64_t i = 0; i < h.numElements(); ++i)
    v.push_back(float(h.getFloat(i)));
  return v;
}

/// An f32 layer of 8 heads over 2 kv heads, on 4 blocks.
std::unique_ptr<SessionLayer> f32Layer(Session &session, const char *name) {
  AttentionLayer layer = llamaLayer("auto");
  layer.name = name;
  layer.dtype = DType::F32;
  Result<std::unique_ptr<SessionLayer>> made = session.createLayer(
      layer, KvCacheSpec{16, 2, 64, DType::F32, "auto"}, /*numBlocks=*/4);
  EXPECT_TRUE(made) << made.message();
  return std::move(*made);
}

// Two threads calling forward on the same layer, and on two layers, of one
// session: every call runs whole (the device's lock), so each thread's
// outputs equal what the same calls give one after the other.
TEST(SessionThreads, ForwardFromTwoThreads) {
  std::unique_ptr<Session> session = cpuSession();
  std::unique_ptr<SessionLayer> a = f32Layer(*session, "layers.0");
  std::unique_ptr<SessionLayer> b = f32Layer(*session, "layers.1");
  constexpr int kCalls = 40;
  auto run = [&](SessionLayer &layer, DecodeStep &step) {
    for (int i = 0; i < kCalls; ++i)
      ASSERT_TRUE(layer.impl->forward(layer.config, step.q, step.k, step.v,
                                      layer.kvCache, *step.md, step.out));
  };
  // One after the other: what each thread's last output must be.
  DecodeStep one = decodeStep(*session, *a, 1), two = decodeStep(*session, *a, 2);
  run(*a, one);
  std::vector<float> wantOne = hostFloats(one.out);
  for (SessionLayer *second : {a.get(), b.get()}) {
    SCOPED_TRACE(second == a.get() ? "same layer" : "two layers");
    DecodeStep x = decodeStep(*session, *a, 1);
    DecodeStep y = decodeStep(*session, *second, 2);
    std::thread t1([&] { run(*a, x); });
    std::thread t2([&] { run(*second, y); });
    t1.join();
    t2.join();
    ASSERT_TRUE(session->synchronize());
    EXPECT_EQ(hostFloats(x.out), wantOne);
    run(*second, two);
    EXPECT_EQ(hostFloats(y.out), hostFloats(two.out));
  }
}

// A layer keeps what it runs on: it works after its Session object is
// gone, and frees the device last.
TEST(SessionThreads, LayerOutlivesItsSession) {
  std::unique_ptr<Session> session = cpuSession();
  std::unique_ptr<SessionLayer> layer = f32Layer(*session, "layers.0");
  DecodeStep step = decodeStep(*session, *layer, 3);
  ASSERT_TRUE(layer->impl->forward(layer->config, step.q, step.k, step.v,
                                   layer->kvCache, *step.md, step.out));
  std::vector<float> want = hostFloats(step.out);
  session.reset();
  Status s = layer->impl->forward(layer->config, step.q, step.k, step.v,
                                  layer->kvCache, *step.md, step.out);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(hostFloats(step.out), want);
}

} // namespace
} // namespace attn::runtime
