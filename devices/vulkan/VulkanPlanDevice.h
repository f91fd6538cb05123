//===- VulkanPlanDevice.h - Runs plans on a Vulkan device ------*- C++ -*-===//
//
// Adapts VulkanDevice to the runtime's device model (runtime/device/Device.h):
// buffers are Vulkan storage buffers, a plan's Launch of kernel symbol S
// dispatches the SPIR-V kernel loaded under S, with each argument bound at
// its tensor's offset. Launches and copies are queued and submitted
// together, in one command buffer with a barrier between consecutive
// commands, when the host waits (synchronize, a read) or the queue grows
// long; a small write behind queued work is queued with it
// (vkCmdUpdateBuffer). A recorded step (runtime/device/RecordedStep.h) is a command
// buffer of its own that each replay submits again.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H

#include "core/LaunchFacts.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelSymbols.h"
#include "devices/vulkan/VulkanExecutor.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace attn::vulkan {

class VulkanPlanDevice : public runtime::PlanDevice {
public:
  static Result<std::unique_ptr<VulkanPlanDevice>>
  create(const VulkanOptions &options = {});

  /// Builds the pipeline of one kernel and makes it launchable as `symbol`.
  /// `subgroupSize` is the subgroup size the kernel was compiled for (0:
  /// any): a kernel that reduces across a subgroup computes wrong results
  /// with another one, so a mismatch the device cannot pin is an error.
  /// Adding the kernel a symbol already has is a no-op; another kernel
  /// under a taken symbol is an error (runtime/device/KernelSymbols.h).
  /// `addressedBuffers`: the kernel takes that many buffers by device
  /// address (attn-spirv-buffer-addresses); absent, by descriptor binding.
  ///
  /// A symbol holds up to two forms of its kernel, one by binding and one by
  /// address (attn-compile --spirv-abi=both); each launch takes the binding
  /// form when there is one and every buffer of the launch fits a binding
  /// (offset aligned to minStorageBufferOffsetAlignment, at most
  /// maxStorageBufferRange bytes), else the address form.
  Status addKernel(const std::string &symbol, std::vector<uint32_t> spirv,
                   const std::string &entryPoint, uint32_t subgroupSize = 0,
                   std::optional<uint32_t> addressedBuffers = std::nullopt);
  /// The same from a compiled kernel: `bytes` the SPIR-V file, `launchJson`
  /// its launch facts as a bundle holds them (core/LaunchFacts.h: the
  /// subgroup size, and whether buffers go by device address).
  Status addKernel(const std::string &symbol, std::string_view bytes,
                   const std::string &entryPoint, std::string_view launchJson);
  bool hasKernel(const std::string &symbol) const {
    return kernels_.count(symbol) != 0;
  }

  VulkanDevice &device() { return *device_; }

  std::string_view name() const override { return name_; }
  runtime::SubgroupSizes subgroupSizes() const override;
  /// SPIR-V kernels, through addKernel with the kernel's launch facts.
  Status loadKernelCode(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;
  /// Steps record into a command buffer of their own.
  bool canRecord() const override { return true; }
  /// The timestamps of its submissions and replays, summed.
  double deviceSeconds() const override { return deviceSeconds_; }
  /// Launches enqueued (or recorded: a replayed step counts once) in each
  /// form: by descriptor binding, by device address.
  uint64_t boundLaunches() const { return boundLaunches_; }
  uint64_t addressedLaunches() const { return addressedLaunches_; }

protected:
  /// Zero-filled at once; sizes round up to a multiple of 4.
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override;
  Status enqueueCopy(const runtime::BufferView &src,
                     const runtime::BufferView &dst) override;
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;
  /// Submits what is pending, in one command buffer, and waits.
  Status finishWork() override;
  /// With work pending, a small write (metadata) is enqueued as update
  /// commands after it; a large one waits for the work, then copies.
  Status writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                    const void *data, uint64_t bytes) override;
  /// Waits for the pending work, then copies.
  Status readBytes(const runtime::DeviceBuffer &buffer, uint64_t offset,
                   void *data, uint64_t bytes) override;
  Status beginRecording() override;
  Result<std::unique_ptr<runtime::RecordedWork>>
  endRecording(std::vector<runtime::BufferView> zeroFirst) override;
  Status replayRecording(const runtime::RecordedWork &work) override;

private:
  explicit VulkanPlanDevice(std::unique_ptr<VulkanDevice> device);

  /// One form of a kernel, with its launch facts (checkIndexRange).
  struct LoadedKernel {
    std::unique_ptr<VulkanKernel> kernel;
    LaunchFacts facts;
  };
  /// The forms of one symbol's kernel; at least one is loaded.
  struct KernelForms {
    LoadedKernel bound, addressed;
  };

  Status addKernelForm(const std::string &symbol, std::vector<uint32_t> spirv,
                       const std::string &entryPoint, LaunchFacts facts);
  /// The form of `forms` a launch on `args` takes (see addKernel).
  const LoadedKernel &
  formFor(const KernelForms &forms,
          std::span<const runtime::BufferView> args) const;

  std::unique_ptr<VulkanDevice> device_;
  std::string name_;
  std::map<std::string, KernelForms, std::less<>> kernels_;
  /// Each form under its own key (the symbol and the form), so that two
  /// forms of one kernel share a symbol and two kernels do not.
  runtime::KernelSymbols symbols_;
  uint64_t boundLaunches_ = 0;
  uint64_t addressedLaunches_ = 0;

  /// Where enqueued work goes: the queue, or the step being recorded.
  std::vector<VulkanCommand> &commands() {
    return recording_ ? recorded_ : pending_;
  }
  /// Keeps the buffers of enqueued work alive until it has run (a
  /// metadata tensor may be dropped right after its launch is enqueued).
  void keepAlive(const runtime::DeviceBuffer *buffer);
  Status enqueue(VulkanCommand command);

  std::vector<VulkanCommand> pending_;
  std::vector<std::shared_ptr<runtime::DeviceBuffer>> pendingBuffers_;
  bool recording_ = false;
  std::vector<VulkanCommand> recorded_;
  double deviceSeconds_ = 0;
  std::vector<std::shared_ptr<runtime::DeviceBuffer>> recordedBuffers_;
};

} // namespace attn::vulkan

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANPLANDEVICE_H
