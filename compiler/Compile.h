//===- Compile.h - attn IR -> plans and device kernels ---------*- C++ -*-===//
//
// The compiler's one entry point for devices: attn functions on tensors
// become, per function, a runtime::Plan (the host program) and, per kernel
// and target, the kernel binary or source. attn-compile writes the result as
// a bundle; attn-run and attn-diff run it in process.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_COMPILE_H
#define ATTN_COMPILER_COMPILE_H

#include "compiler/targets/CPUOptions.h"
#include "compiler/targets/MSLOptions.h"
#include "compiler/targets/PTXOptions.h"
#include "compiler/targets/SPIRVOptions.h"
#include "core/Target.h"
#include "runtime/bundle/Plan.h"

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class ModuleOp;

namespace attn {

/// Everything the compile pipeline needs registered: the attn dialect, the
/// upstream dialects, and the bufferization models.
void registerCompilerDialects(DialectRegistry &registry);

/// What a compile builds: its targets, the knobs of convert-attn-to-gpu
/// they share, and each target's own.
struct CompileOptions {
  /// The targets to compile for (compiler/targets/Target.h).
  std::vector<::attn::Target> targets = {::attn::Target::SPIRV};
  /// Invocations per subgroup of the device the kernels will run on
  /// (lavapipe: 8, NVIDIA: 32). The attention kernels reduce across one
  /// subgroup, so a kernel runs only on devices with this subgroup size.
  int64_t subgroupSize = 32;
  /// Split-KV decode: 0 lets convert-attn-to-gpu choose.
  int64_t splitKv = 0;
  /// Contiguous head-dimension elements a lane owns in the kernels of
  /// targets with scalar loads (spirv, msl); a tuning knob that also lets
  /// tests reach the kernels' multi-row layouts on small subgroups.
  int64_t vectorWidth = 1;
  /// Subgroups per paged_attention workgroup (convert-attn-to-gpu's
  /// attention-subgroups).
  int64_t attentionSubgroups = 4;
  /// Values a lane may keep live (convert-attn-to-gpu's lane-registers);
  /// 0: the target's (laneRegistersFor).
  int64_t laneRegisters = 0;
  /// Widest load of a lane in bytes (convert-attn-to-gpu's
  /// vector-load-bytes); -1: the target's (vectorLoadBytesFor), 0: scalar
  /// loads.
  int64_t vectorLoadBytes = -1;
  /// paged_attention's tiled prefill kernel and the decode threshold
  /// (convert-attn-to-gpu's tiled-prefill and decode-threshold).
  bool tiledPrefill = true;
  int64_t decodeThreshold = -1;
  /// convert-attn-to-gpu's prefill-matrix; empty: the target's. On target
  /// spirv, the kernels "subgroup-mma" builds on matrix products get a
  /// SPIR-V 1.6 environment with SPV_KHR_cooperative_matrix (the SPIR-V
  /// pipeline sees their ops); target msl refuses them.
  std::string prefillMatrix;
  /// convert-attn-to-gpu's max-workgroup-memory; 0: its default.
  int64_t maxWorkgroupMemory = 0;
  /// convert-attn-to-gpu's workgroup-size (the element-wise kernels); 0:
  /// the subgroup size.
  int64_t workgroupSize = 0;

  /// lane-registers for a device: a GPU keeps about half of a thread's 255
  /// registers for the tiles; a CPU (target cpu, and lavapipe) runs each
  /// lane value as a SIMD register spilled to cache at small cost, and
  /// gains from tiles that reuse each load more, but lavapipe's JIT compile
  /// time grows about quadratically with the values a lane keeps
  /// (bench/README.md).
  static constexpr int64_t laneRegistersFor(bool cpuDevice) {
    return cpuDevice ? 512 : 128;
  }
  /// vector-load-bytes for a device: a CPU serves a lane's load one lane at
  /// a time, so a wider load (32 bytes, four 64-bit words) halves the
  /// accesses; GPUs take 16 bytes (NVIDIA's 128-bit loads, SPIR-V's vec4
  /// of 32-bit words).
  static constexpr int64_t vectorLoadBytesFor(bool cpuDevice) {
    return cpuDevice ? 32 : 16;
  }
  /// The options a device suggests: its subgroup size, and the lane budget
  /// and widest load above for it. The cpu target takes the CPU's values
  /// without asking (kCPULowering).
  static CompileOptions forDevice(int64_t subgroupSize, bool cpuDevice) {
    CompileOptions options;
    options.subgroupSize = subgroupSize;
    options.laneRegisters = laneRegistersFor(cpuDevice);
    options.vectorLoadBytes = vectorLoadBytesFor(cpuDevice);
    return options;
  }

  /// Each target's own knobs, which only its compile reads
  /// (TargetBackend::compileKernels).
  SPIRVTargetOptions spirv;
  PTXTargetOptions ptx;
  MSLTargetOptions msl;
  CPUTargetOptions cpu;
};

struct CompiledKernel {
  /// What plans launch: "gpu_module::gpu_func". For target "tt" each file
  /// of a TT-Metalium program is a kernel whose symbol is the program's name
  /// (what its plan's Launch names, compiler/TTPlanBuilder.h) and whose entry
  /// point is the file's name in the program folder ("program.json",
  /// "reader.cpp", "compute.cpp", "writer.cpp").
  std::string symbol;
  std::string target;
  std::string entryPoint;
  /// The binary (SPIR-V words, little-endian) or source text.
  std::string bytes;
  /// Target-specific launch facts, JSON.
  std::string launchJson = "{}";
};

struct CompiledModule {
  std::vector<::attn::runtime::Plan> plans;
  std::vector<CompiledKernel> kernels;
};

/// The options' values checked against their bounds, before any work:
/// split-kv in [0, kMaxKvSplits] (a million splits once compiled for
/// minutes, then ran out of memory). Empty when they hold, else the reason.
std::string checkCompileOptions(const CompileOptions &options);

/// Compiles every function of `module` (attn IR on tensors; the module is
/// not modified); refuses options checkCompileOptions rejects. Errors are
/// reported through the context's diagnostics.
FailureOr<CompiledModule> compileModule(ModuleOp module,
                                        const CompileOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_COMPILE_H
