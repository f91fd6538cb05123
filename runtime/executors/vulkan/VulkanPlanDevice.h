//===- VulkanPlanDevice.h - Runs plans on a Vulkan device ------*- C++ -*-===//
//
// Adapts VulkanDevice to the plan runner (runtime/PlanRunner.h): buffers are
// Vulkan storage buffers, and a plan's Launch of kernel symbol S dispatches
// the SPIR-V kernel registered under S with addKernel.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H

#include "runtime/BundleExecutor.h"
#include "runtime/KernelSymbols.h"
#include "runtime/PlanRunner.h"
#include "runtime/executors/vulkan/VulkanExecutor.h"

#include <map>
#include <memory>
#include <string>

namespace attn {

class VulkanPlanDevice : public runtime::PlanDevice {
public:
  static Result<std::unique_ptr<VulkanPlanDevice>>
  create(const VulkanOptions &options = {});

  /// Builds the pipeline of one kernel and makes it launchable as `symbol`.
  /// `subgroupSize` is the subgroup size the kernel was compiled for (0:
  /// any): a kernel that reduces across a subgroup computes wrong results
  /// with another one, so a mismatch the device cannot pin is an error.
  /// Adding the kernel a symbol already has is a no-op; another kernel
  /// under a taken symbol is an error (runtime/KernelSymbols.h).
  Status addKernel(const std::string &symbol, std::vector<uint32_t> spirv,
                   const std::string &entryPoint, uint32_t subgroupSize = 0);

  /// Loads a bundle's SPIR-V kernels (for BundleExecutor): checks the file
  /// is whole words and honours the `subgroup_size` of its launch facts.
  runtime::KernelLoader kernelLoader();
  bool hasKernel(const std::string &symbol) const {
    return kernels_.count(symbol) != 0;
  }

  VulkanDevice &device() { return *device_; }

  std::string_view name() const override { return name_; }
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocate(uint64_t bytes) override;
  Status write(runtime::DeviceBuffer &buffer, const void *data,
               uint64_t bytes) override;
  Status read(const runtime::DeviceBuffer &buffer, void *data,
              uint64_t bytes) override;
  Status launch(std::string_view kernel, const std::array<uint32_t, 3> &grid,
                const std::array<int64_t, 3> &block,
                std::span<runtime::DeviceBuffer *const> args) override;
  Status finish() override { return Status::ok(); }
  runtime::SubgroupSizes subgroupSizes() const override;

private:
  explicit VulkanPlanDevice(std::unique_ptr<VulkanDevice> device);

  std::unique_ptr<VulkanDevice> device_;
  std::string name_;
  std::map<std::string, std::unique_ptr<VulkanKernel>, std::less<>> kernels_;
  runtime::KernelSymbols symbols_;
};

} // namespace attn

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
