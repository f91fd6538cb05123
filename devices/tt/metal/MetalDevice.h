//===- MetalDevice.h - A Tenstorrent card as a TT device -------*- C++ -*-===//
//
// TTDevice over TT-Metalium's host API: the card is opened as a 1x1 mesh
// (distributed::MeshDevice::create_unit_mesh), buffers are replicated DRAM
// MeshBuffers, and a launch is one Program (CreateProgram, a
// CreateCircularBuffer per circular buffer of program.json, a CreateKernel
// per kernel with its compile-time arguments, SetRuntimeArgs per core)
// enqueued as a MeshWorkload on the device's command queue. The SDK compiles
// the kernel sources (JIT) when a program is first enqueued.
//
// Built only when the SDK is found (devices/tt/CMakeLists.txt);
// without it, the same source is compiled against attn's declarations of
// the pinned host API (devices/tt/sdk/host/include) so that it stays in step with
// them. Nothing here has run on a card yet.
//
// The SDK reports errors by throwing; every call catches at this boundary
// and returns a Status.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_METAL_METALDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_TT_METAL_METALDEVICE_H

#include "devices/tt/TTDevice.h"

#include <memory>

namespace attn::tt {

class MetalDevice final : public TTDevice {
public:
  /// Opens card `deviceId` (0 .. the SDK's GetNumAvailableDevices - 1).
  static Result<std::unique_ptr<MetalDevice>> open(int deviceId);
  ~MetalDevice() override;

  std::string name() const override;
  Arch arch() const override;
  uint32_t numDramBanks() const override;
  Result<Buffer> createBuffer(uint32_t pageSize, uint32_t numPages) override;
  void releaseBuffer(const Buffer &buffer) override;
  Result<std::shared_ptr<const LoadedKernels>>
  loadKernels(const ProgramDescription &description) override;
  Status run(const Program &program,
             const std::vector<LaunchArgs> &launches) override;

  struct Impl;

protected:
  Result<Buffer> allocateBuffer(uint32_t pageSize, uint32_t numPages) override;
  Status writeBuffer(const Buffer &buffer, const void *data) override;
  Status readBuffer(const Buffer &buffer, void *data) override;

private:
  explicit MetalDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_METAL_METALDEVICE_H
