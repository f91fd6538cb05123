//===- DeviceRun.h - Compile and run a function on a device ----*- C++ -*-===//
//
// What attn-run and attn-diff do for a device backend: compile the module
// in process for the device (its subgroup size), load the kernels, and run
// the function's plan with the same runner a serving engine uses.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_DEVICERUN_DEVICERUN_H
#define ATTN_TOOLS_DEVICERUN_DEVICERUN_H

#include "reference/ops/Compare.h"
#include "core/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>
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
  /// reference/ops/Compare.h's defaults (empty: those), and where it is
  /// documented.
  std::vector<::attn::Tolerance> tolerances;
  std::string toleranceNote;
};

/// The device backends this build can run ("vulkan" when the Vulkan
/// executor is built, "tt" when the Tenstorrent emulator is); "reference" is
/// always there besides them.
std::vector<std::string> deviceBackends();

/// The subgroup size of the first Vulkan device of this machine, for
/// compiling bundles that will run here (attn-compile --subgroup-size=0).
llvm::Expected<int64_t> localVulkanSubgroupSize();

/// Knobs of the GPU kernels' shape, which do not change what they compute
/// (the tests check every one against the reference); see
/// convert-attn-to-gpu's options of the same names.
struct KernelKnobs {
  /// 0: the compiler's choice, N: N splits and a reduce kernel.
  int64_t splitKv = 0;
  /// Contiguous elements a lane owns, on targets with scalar loads.
  int64_t vectorWidth = 1;
  /// Subgroups per paged_attention workgroup.
  int64_t attentionSubgroups = 4;
  /// Values a lane may keep live; 0: what the device suggests
  /// (CompileOptions::laneRegistersFor).
  int64_t laneRegisters = 0;
  /// paged_attention: the tiled prefill kernel for requests longer than
  /// `decodeThreshold` query tokens (-1: the backend's threshold, or 1).
  bool tiledPrefill = true;
  int64_t decodeThreshold = -1;
  /// Products of the tiled prefill kernel: "" (the target's), "none",
  /// "subgroup-mma" or "emulate".
  std::string prefillMatrix;
  /// Workgroup memory a kernel may use; 0: the lowering's default.
  int64_t maxWorkgroupMemory = 0;
  /// vulkan: the SPIR-V ABI forms compiled, "both", "addresses" or
  /// "bindings" (CompileOptions::SpirvAbi, parseSpirvAbi).
  std::string spirvAbi = "both";
};

/// The command-line flags of KernelKnobs (--split-kv, --vector-width,
/// --attention-subgroups, --lane-registers, --tiled-prefill,
/// --decode-threshold, --prefill-matrix, --max-workgroup-memory,
/// --spirv-abi), shared by attn-run and attn-diff.
struct KernelKnobFlags {
  explicit KernelKnobFlags(llvm::cl::OptionCategory &category);
  KernelKnobs knobs() const;

  llvm::cl::opt<int64_t> splitKv;
  llvm::cl::opt<int64_t> vectorWidth;
  llvm::cl::opt<int64_t> attentionSubgroups;
  llvm::cl::opt<int64_t> laneRegisters;
  llvm::cl::opt<bool> tiledPrefill;
  llvm::cl::opt<int64_t> decodeThreshold;
  llvm::cl::opt<std::string> prefillMatrix;
  llvm::cl::opt<int64_t> maxWorkgroupMemory;
  llvm::cl::opt<std::string> spirvAbi;
};

/// Compiles `module` for `backend` with `knobs`, runs function `entry` on
/// `inputs` and returns its results.
llvm::Expected<std::vector<::attn::Tensor>>
runOnDevice(ModuleOp module, llvm::StringRef entry, llvm::StringRef backend,
            llvm::ArrayRef<::attn::Tensor> inputs,
            DeviceRunStats *stats = nullptr, const KernelKnobs &knobs = {});

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_DEVICERUN_DEVICERUN_H
