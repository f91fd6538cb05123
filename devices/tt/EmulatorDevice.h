//===- EmulatorDevice.h - The host emulator as a TT device -----*- C++ -*-===//
//
// TTDevice over devices/tt/emulator: kernels are built into the host process by
// KernelCompiler (the SDK's JIT warning flags, attn's declarations of the
// pinned SDK) and every launch runs on Device / runProgram, with the
// emulator's checks.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_EMULATORDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_TT_EMULATORDEVICE_H

#include "devices/tt/TTDevice.h"
#include "devices/tt/emulator/KernelCompiler.h"

#include <memory>

namespace attn::tt {

class EmulatorDevice final : public TTDevice {
public:
  /// Up to `parallelCores` cores run at a time (0: the host's thread count).
  explicit EmulatorDevice(Arch arch = Arch::WormholeB0,
                          unsigned parallelCores = 0);
  ~EmulatorDevice() override;

  std::string name() const override;
  Arch arch() const override { return arch_; }
  uint32_t numDramBanks() const override;
  Result<Buffer> createBuffer(uint32_t pageSize, uint32_t numPages) override;
  void releaseBuffer(const Buffer &buffer) override;
  Result<std::shared_ptr<const LoadedKernels>>
  loadKernels(const ProgramDescription &description) override;
  Status run(const Program &program,
             const std::vector<LaunchArgs> &launches) override;

  /// Buffers created and not yet released.
  uint32_t liveBuffers() const { return live_; }

protected:
  Status writeBuffer(const Buffer &buffer, const void *data) override;
  Status readBuffer(const Buffer &buffer, void *data) override;

private:
  Arch arch_;
  unsigned parallelCores_;
  std::unique_ptr<Device> dram_;
  uint32_t live_ = 0;
  KernelCompiler compiler_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_EMULATORDEVICE_H
