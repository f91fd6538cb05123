//===- VulkanPlanDeviceTest.cpp - Kernel symbols on a shared device ------===//
//
// Several bundles load their kernels onto one VulkanPlanDevice. A symbol
// names one kernel for the life of the device: the same kernel again is a
// no-op, another kernel under a taken symbol is refused (it once silently
// replaced the first, and a Llama layer then ran a Gemma kernel).
// Allocations are zero-filled without a host buffer as large as the request.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanPlanDevice.h"
#include "test/unit/vulkan/TestKernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

using namespace attn;
using namespace attn::vulkan;
using ::testing::HasSubstr;

namespace {

class VulkanPlanDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!std::getenv("XDG_RUNTIME_DIR"))
      setenv("XDG_RUNTIME_DIR", "/tmp", /*overwrite=*/0);
    auto created = VulkanPlanDevice::create();
    if (!created) {
      if (created.message().rfind("no Vulkan", 0) == 0)
        GTEST_SKIP() << "no Vulkan device to run on: " << created.message();
      FAIL() << created.message();
    }
    device = std::move(*created);
    axpy = test::readKernel("axpy");
    sum = test::readKernel("subgroup_sum");
    ASSERT_FALSE(axpy.empty() || sum.empty()) << "test kernels not built";
  }

  std::unique_ptr<VulkanPlanDevice> device;
  std::vector<uint32_t> axpy, sum;
};

TEST_F(VulkanPlanDeviceTest, TheSameKernelAgainIsANoOp) {
  ASSERT_TRUE(device->addKernel("m::k", axpy, "axpy"));
  Status again = device->addKernel("m::k", axpy, "axpy");
  EXPECT_TRUE(again) << again.message();
  EXPECT_TRUE(device->hasKernel("m::k"));
}

TEST_F(VulkanPlanDeviceTest, AnotherKernelUnderATakenSymbolIsRefused) {
  ASSERT_TRUE(device->addKernel("m::k", axpy, "axpy"));
  Status other = device->addKernel("m::k", sum, "subgroup_sum");
  ASSERT_FALSE(other);
  EXPECT_THAT(other.message(),
              HasSubstr("already has a different kernel under the symbol "
                        "m::k; a device never replaces a kernel"));
  // The first kernel is still the one the symbol names.
  Status again = device->addKernel("m::k", axpy, "axpy");
  EXPECT_TRUE(again) << again.message();
}

TEST_F(VulkanPlanDeviceTest, SubgroupSizesComeFromTheDevice) {
  runtime::SubgroupSizes sizes = device->subgroupSizes();
  const VulkanDeviceInfo &info = device->device().info();
  EXPECT_EQ(sizes.native, info.subgroupSize);
  EXPECT_TRUE(sizes.canRun(info.subgroupSize));
  EXPECT_LE(sizes.min, sizes.native);
  EXPECT_GE(sizes.max, sizes.native);
  EXPECT_FALSE(sizes.canRun(sizes.max * 2));
}

// A request larger than the device can allocate is an error value: it once
// made a host zero buffer as large as the request first (std::bad_alloc,
// abort).
TEST_F(VulkanPlanDeviceTest, HugeAllocationIsAnError) {
  auto huge = device->allocate(uint64_t{1} << 50);
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.message(), HasSubstr("-byte buffer exceeds the device's"));
}

// Fresh buffers are zero across the fill's 1 MiB chunks, also where a
// dropped buffer held other bytes before.
TEST_F(VulkanPlanDeviceTest, FreshBuffersAreZeroAcrossChunks) {
  const uint64_t bytes = (uint64_t{3} << 20) + 6;
  for (int round = 0; round < 2; ++round) {
    auto buffer = device->allocate(bytes);
    ASSERT_TRUE(buffer) << buffer.message();
    ASSERT_GE((*buffer)->size(), bytes);
    std::vector<uint8_t> got(bytes, 0xab);
    ASSERT_TRUE(device->read(**buffer, 0, got.data(), bytes));
    EXPECT_TRUE(std::all_of(got.begin(), got.end(),
                            [](uint8_t b) { return b == 0; }))
        << "round " << round;
    std::vector<uint8_t> junk(bytes, 0xab);
    ASSERT_TRUE(device->write(**buffer, 0, junk.data(), bytes));
    ASSERT_TRUE(device->synchronize());
  }
}

} // namespace
