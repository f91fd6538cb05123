//===- DeviceRun.h - Compile and run a function on a device ----*- C++ -*-===//
//
// What attn-run and attn-diff do for a device backend: compile the module
// in process for the device (its subgroup size), load the kernels, and run
// the function's plan with the same runner a serving engine uses.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_DEVICERUN_DEVICERUN_H
#define ATTN_TOOLS_DEVICERUN_DEVICERUN_H

#include "compiler/Compile.h"
#include "core/Tensor.h"
#include "reference/testing/Compare.h"
#include "runtime/bundle/BundleSignature.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;

namespace attn {

struct DeviceRunStats {
  /// "vulkan:llvmpipe (LLVM 15.0.6, 256 bits)", ...
  std::string device;
  double compileSeconds = 0.0;
  double kernelSeconds = 0.0;
  int64_t launches = 0;
  /// vulkan: the launches of kernels in their descriptor-binding and their
  /// device-address form (both 0 on other backends).
  int64_t boundLaunches = 0;
  int64_t addressedLaunches = 0;
  /// Per result, the backend's documented tolerance where it differs from
  /// reference/testing/Compare.h's defaults (empty: those), and where it is
  /// documented.
  std::vector<::attn::Tolerance> tolerances;
  std::string toleranceNote;
  /// Every kernel compiled for the run, in order: its entry point and the
  /// content hash a bundle's manifest records for the same bytes.
  std::vector<std::pair<std::string, std::string>> kernels;
};

/// The device backends this build has ("cpu"; "vulkan", "cuda" and "tt"
/// when their devices are built); "reference" is always there besides them.
std::vector<std::string> deviceBackends();

/// For a message about a backend name this build does not run: the backends
/// that run on this machine ("reference" first when `withReference`), then
/// those built in whose device does not open here, e.g.
/// "run here: cpu, vulkan, tt; built in, no device here: cuda". Opens each
/// GPU device to find out, so it is for error paths only.
std::string describeDeviceBackends(bool withReference);

/// The subgroup size of the first Vulkan device of this machine, for
/// compiling bundles that will run here (attn-compile --subgroup-size=0).
llvm::Expected<int64_t> localVulkanSubgroupSize();

/// The command-line flags of the GPU kernels' shape, which do not change
/// what the kernels compute (the tests check every one against the
/// reference), shared by attn-run and attn-diff: --split-kv,
/// --vector-width, --attention-subgroups, --lane-registers, --tiled-prefill,
/// --decode-threshold, --prefill-matrix, --max-workgroup-memory (see
/// convert-attn-to-gpu's options of the same names), --spirv-abi and
/// --cpu-isa. Each is one CompileOptions field.
struct KernelKnobFlags {
  explicit KernelKnobFlags(llvm::cl::OptionCategory &category);
  /// Writes the flags into `options`; --lane-registers only when positive
  /// (0 keeps the device's suggestion). An error for a bad --spirv-abi.
  llvm::Error apply(CompileOptions &options) const;

  llvm::cl::opt<int64_t> splitKv;
  llvm::cl::opt<int64_t> vectorWidth;
  llvm::cl::opt<int64_t> attentionSubgroups;
  llvm::cl::opt<int64_t> laneRegisters;
  llvm::cl::opt<bool> tiledPrefill;
  llvm::cl::opt<int64_t> decodeThreshold;
  llvm::cl::opt<std::string> prefillMatrix;
  llvm::cl::opt<int64_t> maxWorkgroupMemory;
  llvm::cl::opt<std::string> spirvAbi;
  /// Backend cpu: the ISA level; empty: the widest this host runs.
  llvm::cl::opt<std::string> cpuIsa;
};

/// How backend cpu runs kernels its host cannot (devices/cpu/CpuEmulator.h):
/// --cpu-emulator and --cpu-launcher, test tooling for the aarch64 level on
/// an x86-64 host. Each is one CpuEmulatorOptions field.
struct CpuEmulatorFlags {
  explicit CpuEmulatorFlags(llvm::cl::OptionCategory &category);

  /// qemu-user for AArch64; empty: no emulation.
  llvm::cl::opt<std::string> emulator;
  /// attn-cpu-launch built for AArch64; empty: the one beside this tool.
  llvm::cl::opt<std::string> launcher;
};

/// A compiled bundle to run from, and the keys its signature is checked
/// against before any of its kernels is read (--trust-key,
/// --require-signature).
struct BundleSource {
  std::string dir;
  ::attn::runtime::BundleTrust trust;

  bool empty() const { return dir.empty(); }
  const std::string &str() const { return dir; }
};

/// Compiles `module` for `backend` (with the device's options and `knobs`
/// applied), runs function `entry` on `inputs` and returns its results,
/// with launch counts in `stats` when given. Backend cpu runs the kernels
/// of a level its host cannot under `cpuEmulator` when it names one. With
/// `bundleDir`, nothing is compiled: the function's variant runs from that
/// bundle's kernels for the device (backends vulkan, cpu and cuda), found
/// and loaded as a session would (runtime/executor/BundleExecutor.h).
llvm::Expected<std::vector<::attn::Tensor>>
runOnDevice(ModuleOp module, llvm::StringRef entry, llvm::StringRef backend,
            llvm::ArrayRef<::attn::Tensor> inputs, DeviceRunStats *stats,
            const KernelKnobFlags &knobs, const CpuEmulatorFlags &cpuEmulator,
            const BundleSource &bundleDir = {});

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_DEVICERUN_DEVICERUN_H
