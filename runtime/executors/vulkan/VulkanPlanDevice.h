//===- VulkanPlanDevice.h - Runs plans on a Vulkan device ------*- C++ -*-===//
//
// Adapts VulkanDevice to the runtime's device model (runtime/Device.h):
// buffers are Vulkan storage buffers, a plan's Launch of kernel symbol S
// dispatches the SPIR-V kernel loaded under S, with each argument bound at
// its tensor's offset. Work is submitted as it is enqueued and waited for,
// so the queue is trivially in order.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H

#include "runtime/Device.h"
#include "runtime/KernelSymbols.h"
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
  bool hasKernel(const std::string &symbol) const {
    return kernels_.count(symbol) != 0;
  }

  VulkanDevice &device() { return *device_; }

  std::string_view name() const override { return name_; }
  runtime::SubgroupSizes subgroupSizes() const override;
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocate(uint64_t bytes) override;
  Status copy(const runtime::BufferView &src,
              const runtime::BufferView &dst) override;
  Status launch(std::string_view kernel, const std::array<uint32_t, 3> &grid,
                const std::array<int64_t, 3> &block,
                std::span<const runtime::BufferView> args) override;
  Status synchronize() override { return Status::ok(); }
  /// SPIR-V kernels: checks the file is whole words and honours the
  /// `subgroup_size` of its launch facts.
  Status loadKernel(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;

protected:
  Status writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                    const void *data, uint64_t bytes) override;
  Status readBytes(const runtime::DeviceBuffer &buffer, uint64_t offset,
                   void *data, uint64_t bytes) override;

private:
  explicit VulkanPlanDevice(std::unique_ptr<VulkanDevice> device);

  std::unique_ptr<VulkanDevice> device_;
  std::string name_;
  std::map<std::string, std::unique_ptr<VulkanKernel>, std::less<>> kernels_;
  runtime::KernelSymbols symbols_;
};

} // namespace attn

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
