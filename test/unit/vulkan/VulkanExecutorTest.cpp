//===- VulkanExecutorTest.cpp - Kernels from MLIR lowering, run on Vulkan -===//
//
// Runs the kernels lowered from Inputs/*.mlir on the machine's Vulkan device
// (lavapipe in CI) and compares bit for bit with the host. Inputs are chosen
// so the device's rounding cannot differ from the host's (products exact,
// sums of small f16 multiples of 1/2), whether or not the driver contracts
// a * s + b into an fma. Validation layers are on where installed, and any
// message they report fails the test. Without a Vulkan loader or device the
// tests are skipped with the reason.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanExecutor.h"
#include "test/unit/vulkan/TestKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace attn;
using namespace attn::vulkan;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Half-precision bits of a float that f16 represents exactly (test inputs
/// only: normal numbers and zero, no rounding).
uint16_t exactF16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if ((bits & 0x7fffffff) == 0)
    return sign;
  int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  EXPECT_TRUE(exponent > 0 && exponent < 31 && (bits & 0x1fff) == 0)
      << v << " is not exactly representable as a normal f16";
  return static_cast<uint16_t>(sign | (exponent << 10) |
                               ((bits >> 13) & 0x3ff));
}

float f16BitsToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0 && mantissa == 0) {
    float zero;
    std::memcpy(&zero, &sign, 4);
    return zero;
  }
  // Normal numbers only: the sums in these tests never leave that range.
  uint32_t bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

template <typename T>
Result<std::unique_ptr<VulkanBuffer>>
makeBuffer(VulkanDevice &device, const std::vector<T> &values,
           BufferMemory memory = BufferMemory::Auto) {
  return device.createBuffer(values.data(), values.size() * sizeof(T), memory);
}

template <typename T>
Result<std::unique_ptr<VulkanBuffer>> makeScalar(VulkanDevice &device, T v) {
  return device.createBuffer(&v, sizeof(T));
}

template <typename T> std::vector<T> readAll(const VulkanBuffer &buffer) {
  std::vector<T> values(buffer.size() / sizeof(T));
  Status s = buffer.read(values.data(), values.size() * sizeof(T));
  EXPECT_TRUE(s) << s.message();
  return values;
}

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                        \
  auto lhs##Result = (expr);                                                   \
  ASSERT_TRUE(lhs##Result) << lhs##Result.message();                           \
  auto lhs = std::move(*lhs##Result)

/// Where the test may run; "no Vulkan ..." errors mean it cannot.
bool isMissingVulkan(const std::string &message) {
  return message.rfind("no Vulkan loader", 0) == 0 ||
         message.rfind("no Vulkan physical device", 0) == 0;
}

void setRuntimeDirIfUnset() {
  // Mesa warns on every device creation without it.
  if (!std::getenv("XDG_RUNTIME_DIR"))
    setenv("XDG_RUNTIME_DIR", "/tmp", /*overwrite=*/0);
}

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

class VulkanExecutorTest : public ::testing::Test {
protected:
  void SetUp() override {
    setRuntimeDirIfUnset();
    VulkanOptions options;
    options.validation = ValidationMode::IfAvailable;
    auto device = VulkanDevice::create(options);
    if (!device) {
      if (isMissingVulkan(device.message()))
        GTEST_SKIP() << "no Vulkan device to run on: " << device.message();
      FAIL() << device.message();
    }
    device_ = std::move(*device);
  }

  void TearDown() override {
    if (!device_)
      return;
    std::vector<std::string> messages = device_->takeValidationMessages();
    for (const std::string &m : messages)
      ADD_FAILURE() << "validation " << m;
  }

  std::unique_ptr<VulkanKernel> loadKernel(const std::string &name,
                                           KernelDesc desc = {}) {
    desc.spirv = test::readKernel(name);
    EXPECT_FALSE(desc.spirv.empty()) << "kernels/" << name << ".spv missing";
    if (desc.entryPoint.empty())
      desc.entryPoint = name;
    auto kernel = device_->createKernel(desc);
    EXPECT_TRUE(kernel) << kernel.message();
    return kernel ? std::move(*kernel) : nullptr;
  }

  std::unique_ptr<VulkanDevice> device_;
};

/// Inputs of the axpy kernel: out[i] = a[i] * s + b[i] for i < n. The
/// products are exact in f32, so a fused multiply-add rounds the same.
struct AxpyCase {
  static constexpr int n = 1000; // not a multiple of the 64-wide workgroup
  static constexpr float s = 1.75f;
  std::vector<float> a, b;
  AxpyCase() {
    for (int i = 0; i < n; ++i) {
      a.push_back(0.5f * static_cast<float>(i % 37) - 7.0f);
      b.push_back(1.0f / static_cast<float>(i + 3));
    }
  }
  std::vector<float> expected(float scale, const std::vector<float> &x) const {
    std::vector<float> out(n);
    for (int i = 0; i < n; ++i) {
      volatile float product = x[i] * scale; // no host contraction either
      out[i] = product + b[i];
    }
    return out;
  }
  static std::array<uint32_t, 3> groups() { return {(n + 63) / 64, 1, 1}; }
};

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

TEST_F(VulkanExecutorTest, ReportsDeviceInfo) {
  const VulkanDeviceInfo &info = device_->info();
  std::cout << describe(info) << "validation layer: "
            << (device_->validationEnabled() ? "on" : "not installed") << "\n";
  EXPECT_FALSE(info.name.empty());
  EXPECT_TRUE(info.hasComputeQueue);
  EXPECT_GT(info.subgroupSize, 0u);
  EXPECT_EQ(info.subgroupSize & (info.subgroupSize - 1), 0u)
      << "subgroup size is a power of two";
  EXPECT_LE(info.minSubgroupSize, info.subgroupSize);
  EXPECT_GE(info.maxSubgroupSize, info.subgroupSize);
  // Vulkan's required minimums.
  EXPECT_GE(info.maxSharedMemoryBytes, 16384u);
  EXPECT_GE(info.maxWorkgroupInvocations, 128u);
  EXPECT_GE(info.maxPushConstantsBytes, 128u);
}

TEST(VulkanDeviceCreation, MissingLoaderIsAnError) {
  VulkanOptions options;
  options.loaderLibrary = "libattn-no-such-vulkan.so.1";
  auto device = VulkanDevice::create(options);
  ASSERT_FALSE(device);
  EXPECT_EQ(device.message(),
            "no Vulkan loader (libattn-no-such-vulkan.so.1) found");
  auto list = VulkanDevice::listPhysicalDevices(options);
  ASSERT_FALSE(list);
  EXPECT_EQ(list.message(), device.message());
}

TEST(VulkanDeviceCreation, DeviceIndexOutOfRangeIsAnError) {
  setRuntimeDirIfUnset();
  VulkanOptions options;
  options.deviceIndex = 1000;
  auto device = VulkanDevice::create(options);
  ASSERT_FALSE(device);
  if (isMissingVulkan(device.message()) &&
      device.message().find("1000") == std::string::npos)
    GTEST_SKIP() << "no Vulkan device: " << device.message();
  EXPECT_NE(device.message().find("no Vulkan physical device 1000"),
            std::string::npos)
      << device.message();
}

//===----------------------------------------------------------------------===//
// Kernels from MLIR
//===----------------------------------------------------------------------===//

TEST_F(VulkanExecutorTest, AxpyMatchesHost) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  // One binding per gpu.func argument, scalars included.
  EXPECT_EQ(kernel->numBuffers(), 5u);
  EXPECT_EQ(kernel->pushConstantBytes(), 0u);
  ASSERT_TRUE(kernel->workgroupSize().has_value());
  EXPECT_EQ(*kernel->workgroupSize(), (std::array<uint32_t, 3>{64, 1, 1}));

  AxpyCase c;
  ASSERT_OK_AND_ASSIGN(a, makeBuffer(*device_, c.a));
  ASSERT_OK_AND_ASSIGN(b, makeBuffer(*device_, c.b));
  ASSERT_OK_AND_ASSIGN(s, makeScalar(*device_, AxpyCase::s));
  ASSERT_OK_AND_ASSIGN(n, makeScalar<int32_t>(*device_, AxpyCase::n));
  // Poisoned: elements the kernel does not write must keep it.
  std::vector<float> poison(AxpyCase::n + 24, -123.0f);
  ASSERT_OK_AND_ASSIGN(out, makeBuffer(*device_, poison));

  auto timing = device_->dispatch(
      *kernel, {a.get(), b.get(), s.get(), n.get(), out.get()},
      AxpyCase::groups());
  ASSERT_TRUE(timing) << timing.message();
  EXPECT_GT(timing->hostSeconds, 0);
  EXPECT_EQ(timing->deviceSeconds.has_value(),
            device_->info().timestampPeriodNs > 0);
  if (timing->deviceSeconds) {
    EXPECT_GE(*timing->deviceSeconds, 0);
  }

  std::vector<float> result = readAll<float>(*out);
  std::vector<float> expected = c.expected(AxpyCase::s, c.a);
  for (int i = 0; i < AxpyCase::n; ++i)
    ASSERT_EQ(result[i], expected[i]) << "at " << i;
  for (size_t i = AxpyCase::n; i < result.size(); ++i)
    ASSERT_EQ(result[i], -123.0f) << "bounds check failed at " << i;
}

TEST_F(VulkanExecutorTest, AxpyThroughStagingBuffers) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  AxpyCase c;
  constexpr BufferMemory staged = BufferMemory::DeviceLocalStaged;
  ASSERT_OK_AND_ASSIGN(a, makeBuffer(*device_, c.a, staged));
  ASSERT_OK_AND_ASSIGN(b, makeBuffer(*device_, c.b, staged));
  EXPECT_FALSE(a->isHostMapped());
  ASSERT_OK_AND_ASSIGN(s, makeScalar(*device_, AxpyCase::s));
  ASSERT_OK_AND_ASSIGN(n, makeScalar<int32_t>(*device_, AxpyCase::n));
  ASSERT_OK_AND_ASSIGN(out, device_->createBuffer(AxpyCase::n * 4, staged));

  auto timing = device_->dispatch(
      *kernel, {a.get(), b.get(), s.get(), n.get(), out.get()},
      AxpyCase::groups());
  ASSERT_TRUE(timing) << timing.message();
  EXPECT_EQ(readAll<float>(*out), c.expected(AxpyCase::s, c.a));

  // A partial read at an offset goes through staging too.
  float tail[2];
  ASSERT_TRUE(out->read(tail, sizeof(tail), (AxpyCase::n - 2) * 4));
  EXPECT_EQ(tail[1], c.expected(AxpyCase::s, c.a).back());
}

TEST_F(VulkanExecutorTest, ChainedDispatchesInOneSubmission) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  AxpyCase c;
  ASSERT_OK_AND_ASSIGN(a, makeBuffer(*device_, c.a));
  ASSERT_OK_AND_ASSIGN(b, makeBuffer(*device_, c.b));
  ASSERT_OK_AND_ASSIGN(s, makeScalar(*device_, AxpyCase::s));
  // Multiplying by 2 is exact, so the second step cannot round differently.
  ASSERT_OK_AND_ASSIGN(two, makeScalar(*device_, 2.0f));
  ASSERT_OK_AND_ASSIGN(n, makeScalar<int32_t>(*device_, AxpyCase::n));
  ASSERT_OK_AND_ASSIGN(t, device_->createBuffer(AxpyCase::n * 4));
  ASSERT_OK_AND_ASSIGN(out, device_->createBuffer(AxpyCase::n * 4));

  // t = a * s + b, then out = t * 2 + b: the second reads what the first
  // wrote, so it needs the barrier between them.
  std::vector<DispatchDesc> steps(2);
  steps[0].kernel = kernel.get();
  steps[0].buffers = {a.get(), b.get(), s.get(), n.get(), t.get()};
  steps[0].groups = AxpyCase::groups();
  steps[1].kernel = kernel.get();
  steps[1].buffers = {t.get(), b.get(), two.get(), n.get(), out.get()};
  steps[1].groups = AxpyCase::groups();
  auto timing = device_->run(steps);
  ASSERT_TRUE(timing) << timing.message();

  std::vector<float> first = c.expected(AxpyCase::s, c.a);
  EXPECT_EQ(readAll<float>(*t), first);
  EXPECT_EQ(readAll<float>(*out), c.expected(2.0f, first));
}

TEST_F(VulkanExecutorTest, SubgroupReduceF16MatchesHost) {
  const VulkanDeviceInfo &info = device_->info();
  const auto &ops = info.subgroupOperations;
  if (!info.shaderFloat16 || !info.storageBuffer16BitAccess ||
      !info.shaderSubgroupExtendedTypes ||
      std::find(ops.begin(), ops.end(), "arithmetic") == ops.end())
    GTEST_SKIP() << "device lacks f16, 16-bit storage or f16 subgroup "
                    "arithmetic";
  auto kernel = loadKernel("subgroup_sum");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->numBuffers(), 4u);

  constexpr int n = 256, workgroup = 64;
  std::vector<uint16_t> in(n);
  std::vector<float> scaled(n);
  for (int i = 0; i < n; ++i) {
    float v = static_cast<float>((i * 7) % 9 - 4); // -4..4
    in[i] = exactF16Bits(v);
    scaled[i] = v * 0.5f;
  }
  ASSERT_OK_AND_ASSIGN(inBuf, makeBuffer(*device_, in));
  ASSERT_OK_AND_ASSIGN(scale, makeScalar(*device_, exactF16Bits(0.5f)));
  ASSERT_OK_AND_ASSIGN(out, device_->createBuffer(n * 2));
  ASSERT_OK_AND_ASSIGN(sg, device_->createBuffer(n * 4));

  auto timing = device_->dispatch(
      *kernel, {inBuf.get(), scale.get(), out.get(), sg.get()},
      {n / workgroup, 1, 1});
  ASSERT_TRUE(timing) << timing.message();

  // Group invocations by (workgroup, subgroup id) as the device reported;
  // every sum of halves in [-2, 2] over at most 64 lanes is exact in f16.
  std::vector<int32_t> subgroupOf = readAll<int32_t>(*sg);
  std::map<std::pair<int, int>, float> sums;
  std::map<std::pair<int, int>, int> lanes;
  for (int i = 0; i < n; ++i) {
    std::pair<int, int> key{i / workgroup, subgroupOf[i]};
    sums[key] += scaled[i];
    ++lanes[key];
  }
  if (info.minSubgroupSize == info.maxSubgroupSize) {
    for (auto [key, count] : lanes)
      EXPECT_EQ(static_cast<uint32_t>(count), info.subgroupSize)
          << "lanes in subgroup " << key.second << " of workgroup "
          << key.first;
  }
  std::vector<uint16_t> result = readAll<uint16_t>(*out);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(f16BitsToFloat(result[i]), (sums[{i / workgroup, subgroupOf[i]}]))
        << "at " << i;
}

TEST_F(VulkanExecutorTest, PushConstantRangeIsChecked) {
  // The upstream lowering passes no push constants, so the range is declared
  // but unused by the module: the executor still checks and pushes it.
  KernelDesc desc;
  desc.pushConstantBytes = 16;
  auto kernel = loadKernel("axpy", desc);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->pushConstantBytes(), 16u);

  AxpyCase c;
  ASSERT_OK_AND_ASSIGN(a, makeBuffer(*device_, c.a));
  ASSERT_OK_AND_ASSIGN(b, makeBuffer(*device_, c.b));
  ASSERT_OK_AND_ASSIGN(s, makeScalar(*device_, AxpyCase::s));
  ASSERT_OK_AND_ASSIGN(n, makeScalar<int32_t>(*device_, AxpyCase::n));
  ASSERT_OK_AND_ASSIGN(out, device_->createBuffer(AxpyCase::n * 4));
  std::vector<const VulkanBuffer *> buffers = {a.get(), b.get(), s.get(),
                                               n.get(), out.get()};

  std::vector<uint8_t> tooFew(8, 0);
  auto wrong = device_->dispatch(*kernel, buffers, AxpyCase::groups(), tooFew);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.message().find("takes 16 bytes of push constants, got 8"),
            std::string::npos)
      << wrong.message();

  std::vector<uint8_t> push(16, 0xab);
  auto ok = device_->dispatch(*kernel, buffers, AxpyCase::groups(), push);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(readAll<float>(*out), c.expected(AxpyCase::s, c.a));

  KernelDesc odd;
  odd.pushConstantBytes = 6;
  odd.spirv = test::readKernel("axpy");
  odd.entryPoint = "axpy";
  auto bad = device_->createKernel(odd);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("not a multiple of 4"), std::string::npos);
}

TEST_F(VulkanExecutorTest, PipelineCacheRoundTrips) {
  ASSERT_TRUE(loadKernel("axpy"));
  auto data = device_->pipelineCacheData();
  ASSERT_TRUE(data) << data.message();
  EXPECT_FALSE(data->empty());

  VulkanOptions options;
  options.validation = ValidationMode::IfAvailable;
  options.pipelineCacheData = *data;
  auto second = VulkanDevice::create(options);
  ASSERT_TRUE(second) << second.message();
  KernelDesc desc;
  desc.spirv = test::readKernel("axpy");
  desc.entryPoint = "axpy";
  auto kernel = (*second)->createKernel(desc);
  EXPECT_TRUE(kernel) << kernel.message();
  for (const std::string &m : (*second)->takeValidationMessages())
    ADD_FAILURE() << "validation " << m;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(VulkanExecutorTest, BadSpirvBlobIsAnError) {
  KernelDesc desc;
  desc.entryPoint = "axpy";
  desc.spirv = {0xdeadbeef, 1, 2, 3, 4, 5, 6, 7};
  auto garbage = device_->createKernel(desc);
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.message().find("not a SPIR-V blob"), std::string::npos)
      << garbage.message();

  desc.spirv.clear();
  auto empty = device_->createKernel(desc);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("too short"), std::string::npos);

  // A real kernel cut in the middle of an instruction.
  desc.spirv = test::readKernel("axpy");
  ASSERT_GT(desc.spirv.size(), 20u);
  desc.spirv[5] |= 0xfff0u << 16;
  auto cut = device_->createKernel(desc);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.message().find("malformed SPIR-V"), std::string::npos)
      << cut.message();
}

TEST_F(VulkanExecutorTest, MissingEntryPointIsAnError) {
  KernelDesc desc;
  desc.spirv = test::readKernel("axpy");
  desc.entryPoint = "no_such_kernel";
  auto kernel = device_->createKernel(desc);
  ASSERT_FALSE(kernel);
  EXPECT_EQ(kernel.message(), "SPIR-V module has no compute entry point "
                              "'no_such_kernel' (it has: axpy)");
}

TEST_F(VulkanExecutorTest, WrongBufferCountIsAnError) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  AxpyCase c;
  ASSERT_OK_AND_ASSIGN(a, makeBuffer(*device_, c.a));
  ASSERT_OK_AND_ASSIGN(b, makeBuffer(*device_, c.b));
  ASSERT_OK_AND_ASSIGN(s, makeScalar(*device_, AxpyCase::s));
  ASSERT_OK_AND_ASSIGN(n, makeScalar<int32_t>(*device_, AxpyCase::n));
  ASSERT_OK_AND_ASSIGN(out, device_->createBuffer(AxpyCase::n * 4));

  auto tooFew = device_->dispatch(*kernel, {a.get(), b.get(), out.get()},
                                  AxpyCase::groups());
  ASSERT_FALSE(tooFew);
  EXPECT_NE(tooFew.message().find("takes 5 buffers"), std::string::npos)
      << tooFew.message();
  EXPECT_NE(tooFew.message().find("got 3"), std::string::npos);

  auto withNull = device_->dispatch(
      *kernel, {a.get(), b.get(), nullptr, n.get(), out.get()},
      AxpyCase::groups());
  ASSERT_FALSE(withNull);
  EXPECT_NE(withNull.message().find("buffer 2 is null"), std::string::npos);

  // Declaring fewer buffers than the module binds is caught up front.
  KernelDesc desc;
  desc.spirv = test::readKernel("axpy");
  desc.entryPoint = "axpy";
  desc.numBuffers = 3;
  auto narrow = device_->createKernel(desc);
  ASSERT_FALSE(narrow);
  EXPECT_NE(narrow.message().find("uses binding 4 but numBuffers is 3"),
            std::string::npos)
      << narrow.message();

  // The device is still usable after the errors.
  auto ok = device_->dispatch(*kernel,
                              {a.get(), b.get(), s.get(), n.get(), out.get()},
                              AxpyCase::groups());
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(readAll<float>(*out), c.expected(AxpyCase::s, c.a));
}

TEST_F(VulkanExecutorTest, BufferRangeErrors) {
  auto empty = device_->createBuffer(0);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("at least one byte"), std::string::npos);

  ASSERT_OK_AND_ASSIGN(buffer, device_->createBuffer(16));
  uint8_t bytes[8] = {};
  Status past = buffer->write(bytes, 8, 12);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.message(),
            "a write of 8 bytes at offset 12 is outside the 16-byte buffer");
  Status read = buffer->read(bytes, 8, 100);
  ASSERT_FALSE(read);
  EXPECT_TRUE(buffer->write(bytes, 8, 8));
}

TEST_F(VulkanExecutorTest, ObjectsOfAnotherDeviceAreRejected) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  auto other = VulkanDevice::create();
  ASSERT_TRUE(other) << other.message();
  ASSERT_OK_AND_ASSIGN(foreign, (*other)->createBuffer(64));
  ASSERT_OK_AND_ASSIGN(mine, device_->createBuffer(64));
  auto result = device_->dispatch(
      *kernel, {mine.get(), mine.get(), mine.get(), mine.get(), foreign.get()},
      {1, 1, 1});
  ASSERT_FALSE(result);
  EXPECT_NE(result.message().find("buffer 4 belongs to another VulkanDevice"),
            std::string::npos)
      << result.message();
}

TEST_F(VulkanExecutorTest, BuffersAndKernelsMayOutliveTheDevice) {
  auto kernel = loadKernel("axpy");
  ASSERT_TRUE(kernel);
  ASSERT_OK_AND_ASSIGN(buffer, device_->createBuffer(64));
  ASSERT_TRUE(device_->takeValidationMessages().empty());
  device_.reset();
  float value = 3.0f;
  EXPECT_TRUE(buffer->write(&value, 4));
  kernel.reset();
  buffer.reset(); // destroys the Vulkan device; must not crash
}

} // namespace
