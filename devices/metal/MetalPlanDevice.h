//===- MetalPlanDevice.h - Runs plans on a Metal device --------*- C++ -*-===//
//
// Adapts a Metal device (macOS) to the plan runner (runtime/device/PlanRunner.h):
// buffers are shared-storage MTLBuffers, and a plan's Launch of kernel
// symbol S dispatches the MSL kernel registered under S, binding argument i
// at the buffer index its launch facts give. Plain C++ interface; the
// Objective-C++ lives in MetalPlanDevice.mm.
//
// Launches are encoded into one serial compute encoder (each dispatch sees
// the writes of the ones before it), committed by synchronize(), read(),
// write() and copy(); a copy is a blit that runs to completion.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_METAL_METALPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_METAL_METALPLANDEVICE_H

#include "runtime/device/Device.h"
#include "core/LaunchFacts.h"

#include <memory>
#include <string>
#include <string_view>

namespace attn::metal {

class MetalPlanDevice : public runtime::PlanDevice {
public:
  /// The system's default Metal device, or an error without one.
  static Result<std::unique_ptr<MetalPlanDevice>> create();
  ~MetalPlanDevice() override;

  /// Compiles `source` (MSL) with fast math off and the facts' MSL version,
  /// builds the pipeline of its entry point and makes it launchable as
  /// `symbol`. A device whose SIMD width differs from the facts' subgroup
  /// size is an error: the kernels reduce across one SIMD-group.
  Status addKernel(const std::string &symbol, std::string_view source,
                   const LaunchFacts &facts);

  /// A bundle's MSL kernels, with the launch facts the bundle records.
  Status loadKernelCode(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;

  std::string_view name() const override { return name_; }
  /// Apple GPUs run SIMD-groups of 32.
  runtime::SubgroupSizes subgroupSizes() const override {
    return {32, 32, 32};
  }

protected:
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override;
  /// A blit after the launches encoded before it.
  Status enqueueCopy(const runtime::BufferView &src,
                     const runtime::BufferView &dst) override;
  /// Encoded into the open command buffer, committed by finishWork().
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;
  Status finishWork() override;
  /// Shared storage: the host copies once no launch uses the buffer.
  Status writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                    const void *data, uint64_t bytes) override;
  Status readBytes(const runtime::DeviceBuffer &buffer, uint64_t offset,
                   void *data, uint64_t bytes) override;

private:
  struct Impl;
  explicit MetalPlanDevice(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::string name_;
};

} // namespace attn::metal

#endif // ATTN_RUNTIME_EXECUTORS_METAL_METALPLANDEVICE_H
