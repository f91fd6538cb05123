//===- CpuPlanDevice.h - The CPU as a device that runs kernels -*- C++ -*-===//
//
// The CPU device: host memory (runtime/device/HostMemory.h), as the
// reference's CpuDevice, plus kernels of target cpu (core/CpuKernel.h), so
// that BundleExecutor serves a cpu bundle as it serves a GPU one:
//
//   auto device = CpuPlanDevice::create().value();
//   BundleExecutor executor(*bundle, "cpu", *device);
//
// A launch runs every work item of its grid on the device's thread pool
// and returns when all are done, so launches complete in order and there
// is never work to wait for. A recorded step (runtime/device/RecordedStep.h)
// keeps its launches and copies, checked as a launch checks them, and a
// replay zeroes the step's scratch buffers and runs them in order, as
// Vulkan submits a recorded command buffer. Kernels are loaded from the bytes the bundle
// reader checked, never from the bundle's files (CpuKernelLoader.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_CPU_CPUPLANDEVICE_H
#define ATTN_DEVICES_CPU_CPUPLANDEVICE_H

#include "devices/cpu/CpuEmulator.h"
#include "devices/cpu/CpuKernelLoader.h"
#include "devices/cpu/ThreadPool.h"
#include "runtime/device/HostMemory.h"
#include "runtime/device/KernelSymbols.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::cpu {

/// The environment variable that sets the device's threads when its
/// options do not: a count from 1 to kMaxCpuThreads.
inline constexpr const char *kCpuThreadsEnv = "ATTN_CPU_THREADS";
inline constexpr unsigned kMaxCpuThreads = 1024;

struct CpuDeviceOptions {
  /// Threads a launch runs on, the launching thread included; 0: the value
  /// of ATTN_CPU_THREADS when set, else the CPUs this process may run on.
  unsigned threads = 0;
  /// Test tooling: with `emulator.emulator` set, kernels of the aarch64
  /// level run under qemu-user on a host that cannot run them natively
  /// (CpuEmulator.h), one process per launch. Default: off, and such
  /// kernels are refused.
  CpuEmulatorOptions emulator;
};

class CpuPlanDevice final : public runtime::HostMemoryDevice {
public:
  /// An error when the options or ATTN_CPU_THREADS ask for no thread or
  /// more than kMaxCpuThreads.
  static Result<std::unique_ptr<CpuPlanDevice>>
  create(const CpuDeviceOptions &options = {});

  std::string_view name() const override { return "cpu"; }

  /// A cpu kernel of an ISA level this host runs, or the emulator does.
  bool runsKernel(const runtime::BundleKernel &kernel) const override;
  /// Loads a cpu kernel of `bundle` (its shared object's `bytes`, already
  /// checked against its hash) under kernel.symbol. Refuses another
  /// target, an ISA level neither this host nor the emulator runs, an
  /// object of another ABI or without the entry point. A symbol may get one
  /// kernel per ISA level; launches run the widest loaded that runs
  /// natively, else the emulated one. Loading the kernel a symbol already
  /// has at its level is a no-op; another one there is an error
  /// (KernelSymbols.h).
  Status loadKernelCode(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;
  bool hasKernel(std::string_view symbol) const {
    return kernels_.count(symbol) != 0;
  }

  bool canRecord() const override { return true; }

  unsigned threads() const { return pool_->threads(); }
  /// Launches that ran under the emulator so far.
  int64_t emulatedLaunches() const { return emulatedLaunches_; }
  /// Runs later launches on `threads` threads (1 to kMaxCpuThreads).
  Status setThreads(unsigned threads);

private:
  CpuPlanDevice(unsigned threads, std::unique_ptr<CpuEmulator> emulator);

  /// Whether the emulator runs kernels of `level` (and the host does not).
  bool emulates(const CpuIsaLevel &level) const;

  struct Kernel {
    /// Loaded in process, or checked by the emulator (`emulated`).
    CpuKernelObject object;
    EmulatedKernel emulatedObject;
    bool emulated = false;
    /// Bytes per element of each argument (its launch facts).
    std::vector<int64_t> argElementBytes;
    /// Of a symbol's kernels the device launches the one of highest rank:
    /// its ISA level's index in cpuIsaLevels(), above every emulated one
    /// when it runs natively.
    size_t rank = 0;
  };

  /// The kernel `kernel` launches on `grid` with `block` and `args`, or
  /// why that launch is refused.
  Result<const Kernel *> checkLaunch(std::string_view kernel,
                                     const std::array<uint32_t, 3> &grid,
                                     const std::array<int64_t, 3> &block,
                                     std::span<const runtime::BufferView> args);
  /// Runs a launch checkLaunch accepted, to completion.
  Status runLaunch(std::string_view kernel, const Kernel &k,
                   const std::array<uint32_t, 3> &grid,
                   std::span<const runtime::BufferView> args);
  /// Runs a launch of an emulated kernel (buffers_ and elements_ set).
  Status launchEmulated(std::string_view kernel, const Kernel &k,
                        const std::array<uint32_t, 3> &grid,
                        std::span<const runtime::BufferView> args);

  std::map<std::string, Kernel, std::less<>> kernels_;
  runtime::KernelSymbols symbols_;
  std::unique_ptr<ThreadPool> pool_;
  /// Null unless the options ask for emulation.
  std::unique_ptr<CpuEmulator> emulator_;
  int64_t emulatedLaunches_ = 0;
  /// A launch's argument pointers and element counts, sized for the
  /// kernel with the most arguments when kernels load, so that a launch
  /// allocates nothing.
  std::vector<void *> buffers_;
  std::vector<int64_t> elements_;
  /// Set between beginRecording() and endRecording(): launches and copies
  /// are kept here instead of running.
  bool recording_ = false;
  /// A launch (kernel set) or a copy (args = {src, dst}) of a recording.
  struct Command {
    std::string kernel;
    std::array<uint32_t, 3> grid = {0, 0, 0};
    std::vector<runtime::BufferView> args;
  };
  std::vector<Command> recorded_;
  /// What endRecording returns: the scratch to zero, then the commands.
  struct Recording;

protected:
  /// Runs the work items of `grid` (block must be 1, 1, 1) to completion;
  /// while recording, checks the launch and keeps it.
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;
  Status enqueueCopy(const runtime::BufferView &src,
                     const runtime::BufferView &dst) override;
  Status beginRecording() override;
  Result<std::unique_ptr<runtime::RecordedWork>>
  endRecording(std::vector<runtime::BufferView> zeroFirst) override;
  Status replayRecording(const runtime::RecordedWork &work) override;
};

} // namespace attn::cpu

#endif // ATTN_DEVICES_CPU_CPUPLANDEVICE_H
