//===- TTPlanDevice.h - TT programs behind a PlanDevice --------*- C++ -*-===//
//
// Runs the plans attn-compile writes for target tt (compiler/TTPlanBuilder.h)
// on any TTDevice, so that BundleExecutor serves a TT bundle as it serves a
// GPU one:
//
//   EmulatorDevice emu(Arch::WormholeB0);          // or MetalDevice::open(0)
//   TTPlanDevice device(emu);
//   BundleExecutor executor(*bundle, "tt", device);
//
// Plan buffers are host memory (runtime/device/HostMemory.h) holding tensors in the
// runtime's layouts (the vLLM cache layouts, row-major queries); a Launch
// names a program and passes its dynamic sizes as its grid (see
// TTPlanBuilder.h for each op's operands). The launch puts its operands in
// DRAM in the layouts the kernels read (AttentionOps.h), runs the program
// and brings the results back, so the tiled cache lives on the device only
// while a launch runs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H

#include "runtime/device/HostMemory.h"
#include "runtime/device/KernelSymbols.h"
#include "devices/tt/TTDevice.h"

#include <map>
#include <memory>
#include <string>

namespace attn::tt {

class TTPlanDevice final : public runtime::HostMemoryDevice {
public:
  /// Runs on `device`, which must outlive this.
  explicit TTPlanDevice(TTDevice &device);
  /// Runs on `device`, which it keeps.
  explicit TTPlanDevice(std::unique_ptr<TTDevice> device);

  std::string_view name() const override { return name_; }
  TTDevice &device() { return device_; }

  /// Loads the program folder `dir` (and its merge program) as what Launch
  /// ops naming `symbol` run; with loadNow false, when it first launches
  /// (its files may still be being written).
  Status addProgram(const std::string &symbol, const std::string &dir,
                    bool loadNow = true);
  /// Given a program's program.json kernel of `bundle`, checks every file
  /// of the program (its merge program included) against the manifest's
  /// hashes and loads the program's folder; the program's other files load
  /// with it. Executors of several bundles may share the device: loading the
  /// same program under a symbol again is a no-op, another one an error
  /// (runtime/device/KernelSymbols.h).
  Status loadKernel(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;
  /// The programs loaded so far, by symbol.
  const std::map<std::string, Program> &programs() const { return programs_; }

protected:
  /// Runs the program to completion.
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;

private:
  std::unique_ptr<TTDevice> owned_;
  TTDevice &device_;
  std::string name_;
  std::map<std::string, Program> programs_;
  /// Programs added to load at their first launch: symbol -> folder.
  std::map<std::string, std::string> pending_;
  runtime::KernelSymbols symbols_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H
