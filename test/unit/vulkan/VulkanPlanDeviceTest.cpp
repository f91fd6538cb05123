//===- VulkanPlanDeviceTest.cpp - Kernel symbols on a shared device ------===//
//
// Several bundles load their kernels onto one VulkanPlanDevice. A symbol
// names one kernel for the life of the device: the same kernel again is a
// no-op, another kernel under a taken symbol is refused (it once silently
// replaced the first, and a Llama layer then ran a Gemma kernel).
//
//===----------------------------------------------------------------------===//

#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#include "test/unit/vulkan/TestKernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

using namespace attn;
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

} // namespace
