//===- CpuEmulator.h - AArch64 cpu kernels under qemu-user -----*- C++ -*-===//
//
// Test tooling, not a serving path: the CPU device runs cpu kernels of the
// aarch64 ISA level on an x86-64 host under qemu-user when asked to
// (CpuDeviceOptions::emulator), so that CI checks them against the
// reference. Every launch is one process,
//
//   qemu-aarch64 -L /usr/aarch64-linux-gnu attn-cpu-launch
//       /proc/self/fd/K ENTRY /proc/self/fd/M X Y Z OFFSET:ELEMENTS...
//
// (tools/attn-cpu-launch): K is the kernel's sealed memory file, made as
// the in-process loader makes it (CpuKernelLoader.h), M a memory file that
// holds a copy of the launch's buffers, which the launcher maps shared and
// the device copies back when the process has exited. Loading a kernel runs
// the launcher once without a grid: it checks the ABI and the entry point
// as the in-process loader does. Slow (a process, qemu's translation and a
// copy of every buffer per launch, one thread), but what runs is the
// kernel's own AArch64 code.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_CPU_CPUEMULATOR_H
#define ATTN_DEVICES_CPU_CPUEMULATOR_H

#include "core/CpuKernel.h"
#include "core/Status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace attn::cpu {

/// Where the emulated path's programs are. An empty `emulator` turns it off.
struct CpuEmulatorOptions {
  /// qemu-user for AArch64 (Debian's qemu-user: /usr/bin/qemu-aarch64): a
  /// path, or a name looked up in PATH.
  std::string emulator;
  /// attn-cpu-launch, built for AArch64.
  std::string launcher;
  /// The AArch64 C library's root, qemu's -L (libc6-arm64-cross).
  std::string sysroot = "/usr/aarch64-linux-gnu";
};

/// A kernel the launcher has checked: its sealed memory file. Closing it
/// (the destructor) closes the file.
class EmulatedKernel {
public:
  EmulatedKernel() = default;
  ~EmulatedKernel();
  EmulatedKernel(EmulatedKernel &&other) noexcept;
  EmulatedKernel &operator=(EmulatedKernel &&other) noexcept;
  EmulatedKernel(const EmulatedKernel &) = delete;
  EmulatedKernel &operator=(const EmulatedKernel &) = delete;

private:
  friend class CpuEmulator;
  int fd_ = -1;
  std::string entryPoint_;
};

/// One argument of an emulated launch: `bytes` bytes at `data` (null: no
/// buffer), `elements` elements.
struct EmulatedArg {
  uint8_t *data = nullptr;
  uint64_t bytes = 0;
  int64_t elements = 0;
};

class CpuEmulator {
public:
  /// An error naming the program or folder of `options` that is missing.
  static Result<std::unique_ptr<CpuEmulator>>
  create(const CpuEmulatorOptions &options);

  /// The architecture of the kernels it runs.
  CpuArch arch() const { return CpuArch::AArch64; }

  /// Copies `bytes` into a sealed memory file and has the launcher check
  /// that it loads, has this runtime's ABI and defines `entryPoint`.
  /// `what` names the kernel in errors.
  Result<EmulatedKernel> load(std::string_view what, std::string_view bytes,
                              std::string_view entryPoint) const;

  /// Runs `kernel` once per work item of `grid` over `args` and returns
  /// when the launcher has exited and the buffers hold what it wrote.
  /// Arguments may overlap.
  Status launch(std::string_view what, const EmulatedKernel &kernel,
                const std::array<uint32_t, 3> &grid,
                std::span<const EmulatedArg> args) const;

private:
  explicit CpuEmulator(const CpuEmulatorOptions &options) : options_(options) {}

  /// Runs the launcher with `args` after the kernel's file and entry point,
  /// `memoryFd` (or -1) open in the process.
  Status runLauncher(std::string_view what, const EmulatedKernel &kernel,
                     int memoryFd, std::span<const std::string> args) const;

  CpuEmulatorOptions options_;
};

} // namespace attn::cpu

#endif // ATTN_DEVICES_CPU_CPUEMULATOR_H
