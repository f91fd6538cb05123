//===- SessionTest.cpp - Layers of a session and their caches ------------===//
//
// What createLayer allocates for a layer's kv cache dtype, and what it
// refuses.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Session.h"

#include "runtime/executor/CpuExecutor.h"

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

} // namespace
} // namespace attn::runtime
