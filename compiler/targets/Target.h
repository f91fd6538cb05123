//===- Target.h - The device targets of the compile driver -----*- C++ -*-===//
//
// Each device target is one TargetBackend, registered in Targets.cpp beside
// the others, its kernel compile in a file of its own in this folder. The
// driver (compiler/Compile.cpp) runs convert-attn-to-gpu once for the GPU
// targets of a compile and then asks each requested backend for its
// kernels; attn-compile takes a target's bundle file extension and the
// subgroup sizes it builds from here too. A target that lowers the attn ops
// itself (tt: convert-attn-to-ttkernel, EmitC) compiles from the input
// instead (compileInput).
//
// Adding a target: a file with its compile function, a header with its own
// knobs when it has any (SPIRVOptions.h, ...; a member of CompileOptions),
// and one line in Targets.cpp (DESIGN.md, "Adding a kernel knob, adding a
// target").
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_TARGET_H
#define ATTN_COMPILER_TARGETS_TARGET_H

#include "compiler/Compile.h"
#include "core/LaunchBounds.h"
#include "core/Target.h"
#include "lowering/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <vector>

namespace mlir::attn {

/// What the bundle records of each kernel of convert-attn-to-gpu, by entry
/// point: its symbol (module::func, what plans name), workgroup size,
/// argument element sizes and launch bounds.
struct KernelEntries {
  llvm::StringMap<std::string> symbol;
  llvm::StringMap<std::array<int64_t, 3>> workgroup;
  llvm::StringMap<std::vector<int64_t>> elementBytes;
  /// What its launches must keep (its `attn.bounds`, core/LaunchBounds.h).
  llvm::StringMap<::attn::LaunchBounds> bounds;

  /// A kernel of `target` for the kernel `entryPoint` of the lowered module
  /// (its symbol, target and entry point set; bytes and launch facts are
  /// the caller's), or an error at `module` when there is none.
  FailureOr<CompiledKernel> compiled(ModuleOp module, ::attn::Target target,
                                     StringRef entryPoint) const;
};

/// The entries of the kernels of `module` (after convert-attn-to-gpu).
FailureOr<KernelEntries> collectEntries(ModuleOp module);

/// One convert-attn-to-gpu lowering that GPU targets share, and what it
/// assumes of their devices. Targets name their family by address
/// (TargetBackend::family); the family has no name of its own.
struct LoweringFamily {
  /// bf16 buffers as 16-bit words that the kernels convert (SPIR-V has no
  /// bf16 type; NVVM has).
  bool bf16AsI16;
  /// One invocation per workgroup, subgroups of one lane: the kernels run
  /// as functions of one work item (cpu).
  bool singleInvocation;
  /// lane-registers and vector-load-bytes where the compile leaves them to
  /// the target (CompileOptions::laneRegistersFor, vectorLoadBytesFor).
  int64_t laneRegisters;
  int64_t vectorLoadBytes;
  /// prefill-matrix and matrix-workgroup-memory where the compile leaves
  /// them to the target: "auto" and 48 KiB on PTX (every chip it builds
  /// for has matrix units), "none" elsewhere.
  StringLiteral prefillMatrix;
  int64_t matrixWorkgroupMemory;
  /// The fp8 codec as calls that the target's pipeline resolves per chip
  /// (fp8-calls: PTX uses cvt from sm_89 on).
  bool fp8Calls;
};

/// The lowering of spirv and msl, of ptx, and of cpu.
extern const LoweringFamily kSPIRVLowering;
extern const LoweringFamily kPTXLowering;
extern const LoweringFamily kCPULowering;

/// convert-attn-to-gpu's options for `family`: its assumptions, the
/// compile's own knobs, and the family's lane budget and widest load where
/// the compile leaves them to the target. attn-compile, attn-translate and
/// attn-run / attn-diff all build a target's kernels through this.
ConvertAttnToGPUOptions loweringOptions(const LoweringFamily &family,
                                        const CompileOptions &options);

/// Registers attn-opt's `attn-to-spirv`, `attn-to-ptx` and
/// `attn-to-cpu-kernels` pipelines: what attn-compile runs for the target,
/// with its family's options (Pipelines.cpp).
void registerTargetPipelines();

/// The lowering the driver builds the host plans and kernels of
/// `options.targets` with: the one their GPU targets share, else
/// kSPIRVLowering (a target of another family lowers again for itself and
/// checks that its host plans are the same).
const LoweringFamily &gpuLoweringFamily(const CompileOptions &options);

/// What a GPU target makes its kernels from.
struct LoweredModule {
  /// The compile's input (attn ops on tensors): diagnostics, and a target
  /// that needs its own lowering.
  ModuleOp input;
  /// The input after convert-attn-to-gpu for `family` (loweringOptions).
  ModuleOp lowered;
  const LoweringFamily &family;
  const KernelEntries &entries;
  /// The host plans of the lowered functions, in order.
  const std::vector<::attn::runtime::Plan> &plans;
};

struct TargetBackend {
  /// The target: its name (what --targets names it) and runtime facts are
  /// core's (core/Target.h), which the runtime reads too.
  ::attn::Target id;
  /// What its kernels are, for --help: "SPIR-V", "PTX", "Metal", ...
  StringLiteral kernels;
  /// Of its kernel files in a bundle, without the dot.
  StringLiteral fileExtension;
  /// Its kernels are the files of programs, all of a program under its
  /// symbol, and a bundle keeps each program's files in one folder (tt);
  /// else every kernel is one file.
  bool programFolders;
  /// The one subgroup size its kernels are built for; 0: any.
  int64_t subgroupSize;
  /// The convert-attn-to-gpu lowering its kernels come from; null for a
  /// target that lowers the attn ops itself.
  const LoweringFamily *family;
  /// Appends its kernels to `out`; null for a target that lowers the attn
  /// ops itself.
  LogicalResult (*compileKernels)(const LoweredModule &lowered,
                                  const CompileOptions &options,
                                  std::vector<CompiledKernel> &out);
  /// For a target that lowers the attn ops itself: appends the kernels of
  /// the input's functions to `out` and, when `plans` is given, the host
  /// plans that launch them; null for a GPU target.
  LogicalResult (*compileInput)(ModuleOp input,
                                std::vector<CompiledKernel> &out,
                                std::vector<::attn::runtime::Plan> *plans);

  bool lowersItself() const { return compileInput != nullptr; }
  StringRef name() const { return ::attn::toString(id); }
};

/// Every target: spirv, ptx, msl, tt, cpu.
ArrayRef<TargetBackend> targetBackends();
/// The backend named `name`, or null.
const TargetBackend *findTargetBackend(StringRef name);
/// The backend of `target`.
const TargetBackend &targetBackend(::attn::Target target);

// The GPU targets' kernel compiles (SPIRV.cpp, PTX.cpp, MSL.cpp).
LogicalResult compileSPIRVKernels(const LoweredModule &lowered,
                                  const CompileOptions &options,
                                  std::vector<CompiledKernel> &out);
LogicalResult compilePTXKernels(const LoweredModule &lowered,
                                const CompileOptions &options,
                                std::vector<CompiledKernel> &out);
LogicalResult compileMSLKernels(const LoweredModule &lowered,
                                const CompileOptions &options,
                                std::vector<CompiledKernel> &out);

/// The cpu target (CPU.cpp): a shared object per kernel for the ISA level
/// of options.cpu.isa.
LogicalResult compileCPUKernels(const LoweredModule &lowered,
                                const CompileOptions &options,
                                std::vector<CompiledKernel> &out);

/// The Tenstorrent target (TT.cpp, a compileInput): the programs of
/// `input`'s functions as kernels, and, when `plans` is given, the host
/// plans that launch them.
LogicalResult compileTTKernels(ModuleOp input, std::vector<CompiledKernel> &out,
                               std::vector<::attn::runtime::Plan> *plans);

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_TARGET_H
