//===- RegistryTest.cpp - Backend registration and selection --------------===//

#include "runtime/host/Registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SelectionRequest request(int64_t headSize = 128, bool useMla = false) {
  SelectionRequest r;
  r.headSize = headSize;
  r.dtype = DType::BF16;
  r.blockSize = 16;
  r.useMla = useMla;
  return r;
}

/// A backend serving anything, to see where selection looks.
class AnyBackend final : public AttentionBackend {
public:
  std::string_view name() const override { return "ANY"; }
  Result<std::vector<int64_t>>
  getKvCacheShape(int64_t, int64_t, int64_t, int64_t,
                  std::string_view) const override {
    return std::vector<int64_t>{1};
  }
  std::vector<DType> supportedDtypes() const override {
    return {DType::F32, DType::F16, DType::BF16};
  }
  std::vector<int64_t> supportedHeadSizes() const override { return {80, 128}; }
  Status checkBlockSize(int64_t) const override { return Status::ok(); }

protected:
  Result<std::unique_ptr<AttentionMetadataBuilder>>
  makeBuilder(const KvCacheSpec &, std::vector<std::string>,
              const BuilderConfig &) const override {
    return Status::error("unused");
  }
  Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &, KernelExecutor &) const override {
    return Status::error("unused");
  }
};

AttentionBackendFactory anyFactory() {
  return [] { return std::unique_ptr<AttentionBackend>(new AnyBackend()); };
}

TEST(DeviceType, Names) {
  EXPECT_EQ(toString(DeviceType::CPU), "cpu");
  EXPECT_EQ(toString(DeviceType::TENSTORRENT), "tenstorrent");
  EXPECT_EQ(parseDeviceType("vulkan"), DeviceType::VULKAN);
  EXPECT_EQ(parseDeviceType("metal"), DeviceType::METAL);
  EXPECT_EQ(parseDeviceType("cuda"), DeviceType::CUDA);
  EXPECT_EQ(parseDeviceType("rocm"), std::nullopt);
}

TEST(BackendRegistry, GlobalHoldsTheBuiltins) {
  BackendRegistry &global = BackendRegistry::global();
  for (DeviceType device :
       {DeviceType::CPU, DeviceType::CUDA, DeviceType::VULKAN,
        DeviceType::METAL, DeviceType::TENSTORRENT})
    EXPECT_TRUE(global.isRegistered(device, "FLASH_ATTN")) << toString(device);
  // TRITON_MLA wherever attn has MLA kernels: everywhere.
  for (DeviceType device :
       {DeviceType::CPU, DeviceType::CUDA, DeviceType::VULKAN,
        DeviceType::METAL, DeviceType::TENSTORRENT}) {
    EXPECT_TRUE(global.isRegistered(device, "TRITON_MLA")) << toString(device);
    EXPECT_THAT(global.priority(device),
                ElementsAre("FLASH_ATTN", "TRITON_MLA"));
  }
}

TEST(BackendRegistry, SelectsByUseMla) {
  auto fa = selectBackend(DeviceType::CUDA, request());
  ASSERT_TRUE(fa) << fa.message();
  EXPECT_EQ((*fa)->name(), "FLASH_ATTN");
  auto mla = selectBackend(DeviceType::CUDA, request(576, /*useMla=*/true));
  ASSERT_TRUE(mla) << mla.message();
  EXPECT_EQ((*mla)->name(), "TRITON_MLA");
  auto vulkan = selectBackend(DeviceType::VULKAN, request());
  ASSERT_TRUE(vulkan) << vulkan.message();
  EXPECT_EQ((*vulkan)->name(), "FLASH_ATTN");
  for (DeviceType device : {DeviceType::CPU, DeviceType::VULKAN}) {
    auto onDevice = selectBackend(device, request(576, /*useMla=*/true));
    ASSERT_TRUE(onDevice) << onDevice.message();
    EXPECT_EQ((*onDevice)->name(), "TRITON_MLA") << toString(device);
  }
}

TEST(BackendRegistry, ErrorListsEveryCandidateAndReason) {
  SelectionRequest r = request();
  r.blockSize = 8;
  auto none = selectBackend(DeviceType::CUDA, r);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.message(), HasSubstr("no attention backend for cuda accepts "
                                        "head_size=128, dtype=bf16"));
  EXPECT_THAT(none.message(),
              HasSubstr(": FLASH_ATTN: block size 8 is not a multiple of 16; "
                        "TRITON_MLA: use_mla is false, head size 128 is not "
                        "supported (supported: 576), block size 8 is not a "
                        "multiple of 16"));
}

TEST(BackendRegistry, MlaOnTenstorrent) {
  auto mla =
      selectBackend(DeviceType::TENSTORRENT, request(576, /*useMla=*/true));
  ASSERT_TRUE(mla) << mla.message();
  EXPECT_EQ((*mla)->name(), "TRITON_MLA");
}

TEST(BackendRegistry, Fp8CachesEverywhereButTenstorrent) {
  // The GPU devices' kernels read and write fp8 caches (a bundle without
  // the variant says so when the call comes); TT-Metalium has no fp8 format.
  for (bool mla : {false, true}) {
    SelectionRequest fp8 = request(mla ? 576 : 128, mla);
    fp8.kvCacheDtype = "fp8";
    for (DeviceType device : {DeviceType::CPU, DeviceType::VULKAN,
                              DeviceType::CUDA, DeviceType::METAL}) {
      auto backend = selectBackend(device, fp8);
      EXPECT_TRUE(backend) << toString(device) << ": " << backend.message();
    }
    auto tt = selectBackend(DeviceType::TENSTORRENT, fp8);
    ASSERT_FALSE(tt);
    EXPECT_THAT(tt.message(),
                HasSubstr("kv cache dtype 'fp8': TT-Metalium has no fp8 data "
                          "format"));
  }
}

TEST(BackendRegistry, EachRejectionReason) {
  struct Case {
    SelectionRequest request;
    const char *reason;
  };
  auto with = [](auto edit) {
    SelectionRequest r = request(576, /*useMla=*/true);
    edit(r);
    return r;
  };
  const Case cases[] = {
      {with([](SelectionRequest &r) { r.headSize = 512; }),
       "TRITON_MLA: head size 512 is not supported (supported: 576)"},
      {with([](SelectionRequest &r) { r.dtype = DType::I32; }),
       "TRITON_MLA: dtype i32 is not supported"},
      {with([](SelectionRequest &r) { r.kvCacheDtype = "int8"; }),
       "TRITON_MLA: kv cache dtype 'int8' is not supported"},
      {with([](SelectionRequest &r) { r.blockSize = 40; }),
       "TRITON_MLA: block size 40 is not a multiple of 16"},
      {with([](SelectionRequest &r) { r.hasSinks = true; }),
       "TRITON_MLA: attention sinks are not supported"},
      {with([](SelectionRequest &r) { r.useSlidingWindow = true; }),
       "TRITON_MLA: sliding window is not supported"},
      {with([](SelectionRequest &r) { r.useAlibi = true; }),
       "TRITON_MLA: ALiBi is not supported"},
  };
  for (const Case &c : cases) {
    auto none = selectBackend(DeviceType::CUDA, c.request);
    ASSERT_FALSE(none) << c.reason;
    EXPECT_THAT(none.message(), HasSubstr(c.reason));
    EXPECT_THAT(none.message(), HasSubstr("FLASH_ATTN: use_mla is true"));
  }
}

TEST(BackendRegistry, ForcedBackendName) {
  SelectionRequest r = request();
  r.backendName = "TRITON_MLA";
  auto forced = selectBackend(DeviceType::TENSTORRENT, r);
  ASSERT_FALSE(forced);
  EXPECT_THAT(forced.message(), HasSubstr("TRITON_MLA: use_mla is false"));
  EXPECT_THAT(forced.message(), ::testing::Not(HasSubstr("FLASH_ATTN")));
  r.backendName = "FLASH_ATTN";
  auto fa = selectBackend(DeviceType::TENSTORRENT, r);
  ASSERT_TRUE(fa) << fa.message();
  EXPECT_EQ((*fa)->name(), "FLASH_ATTN");
}

TEST(BackendRegistry, DuplicateRegistrationIsAnError) {
  BackendRegistry registry;
  ASSERT_TRUE(registerBuiltinBackends(registry));
  Status again = registerBuiltinBackends(registry);
  ASSERT_FALSE(again);
  EXPECT_THAT(again.message(),
              HasSubstr("backend 'FLASH_ATTN' is already registered for cpu"));
  Status noFactory = registry.registerBackend(DeviceType::CPU, "NULL",
                                              AttentionBackendFactory());
  ASSERT_FALSE(noFactory);
  EXPECT_THAT(noFactory.message(), HasSubstr("has no factory"));
}

TEST(BackendRegistry, EmptyRegistryExplainsItself) {
  BackendRegistry registry;
  registry.setPriority(DeviceType::METAL, {});
  auto none = registry.selectBackend(DeviceType::METAL, request());
  ASSERT_FALSE(none);
  EXPECT_THAT(none.message(), HasSubstr("no backend is registered"));
  // The default priority names FLASH_ATTN, which this registry lacks.
  auto missing = registry.selectBackend(DeviceType::CUDA, request());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(),
              HasSubstr("FLASH_ATTN: not registered for cuda; TRITON_MLA: not "
                        "registered for cuda"));
}

TEST(BackendRegistry, RegistrarAddsABackendAfterThePriorityList) {
  BackendRegistry registry;
  ASSERT_TRUE(registerBuiltinBackends(registry));
  AttentionBackendRegistrar registrar(DeviceType::VULKAN, "ANY", anyFactory(),
                                      registry);
  ASSERT_TRUE(registrar.status()) << registrar.status().message();
  EXPECT_THAT(registry.registeredNames(DeviceType::VULKAN),
              ElementsAre("ANY", "FLASH_ATTN", "TRITON_MLA"));
  EXPECT_THAT(registry.candidates(DeviceType::VULKAN),
              ElementsAre("FLASH_ATTN", "TRITON_MLA", "ANY"));
  // FLASH_ATTN still comes first; ANY catches what it rejects.
  auto fa = registry.selectBackend(DeviceType::VULKAN, request());
  ASSERT_TRUE(fa);
  EXPECT_EQ((*fa)->name(), "FLASH_ATTN");
  auto any = registry.selectBackend(DeviceType::VULKAN, request(80));
  ASSERT_TRUE(any) << any.message();
  EXPECT_EQ((*any)->name(), "ANY");

  AttentionBackendRegistrar twice(DeviceType::VULKAN, "ANY", anyFactory(),
                                  registry);
  EXPECT_FALSE(twice.status());
}

TEST(BackendRegistry, PriorityDecidesTheOrder) {
  BackendRegistry registry;
  ASSERT_TRUE(registerBuiltinBackends(registry));
  ASSERT_TRUE(registry.registerBackend(DeviceType::CPU, "ANY", anyFactory()));
  registry.setPriority(DeviceType::CPU, {"ANY", "FLASH_ATTN"});
  auto any = registry.selectBackend(DeviceType::CPU, request());
  ASSERT_TRUE(any);
  EXPECT_EQ((*any)->name(), "ANY");
}

TEST(BackendRegistry, CreateByName) {
  auto fa = BackendRegistry::global().create(DeviceType::METAL, "FLASH_ATTN");
  ASSERT_TRUE(fa) << fa.message();
  EXPECT_EQ((*fa)->name(), "FLASH_ATTN");
  auto missing = BackendRegistry::global().create(DeviceType::METAL, "NOPE");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(),
              HasSubstr("backend 'NOPE' is not registered for metal"));
}

} // namespace
} // namespace attn::runtime
