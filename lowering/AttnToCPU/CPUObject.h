//===- CPUObject.h - attn's kernels as CPU shared objects ------*- C++ -*-===//
//
// The cpu target's path from convert-attn-to-gpu's kernels (built for
// subgroup size 1, one invocation per workgroup) to machine code: the
// kernels become CPU functions of one work item (convert-gpu-kernels-to-
// cpu), upstream's conversions take them to the LLVM dialect, each gets
// its C entry point (attn-cpu-entry-points, core/CpuKernel.h), LLVM's
// TargetMachine emits an object for the ISA level in process, and ld.lld
// links it into a shared object, one per kernel. Light on includes so that
// tools can use it cheaply.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOCPU_CPUOBJECT_H
#define ATTN_LOWERING_ATTNTOCPU_CPUOBJECT_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class ModuleOp;
class OpPassManager;

namespace attn {

/// Adds convert-gpu-kernels-to-cpu, attn-cpu-bf16-dot where `bf16Dot`
/// (levels with AVX-512 BF16), bf16 arithmetic as integer code
/// (arith-expand), and upstream's conversions of scf, vector, memref,
/// math, arith, func and cf to the LLVM dialect, then
/// attn-cpu-entry-points: the `attn-cpu-to-llvm` pipeline.
void buildCPUToLLVMPipeline(OpPassManager &pm, bool bf16Dot = false);

/// One kernel's shared object.
struct CPUKernel {
  /// The kernel's name (its gpu.func's): its entry point symbol.
  std::string entryPoint;
  /// An ELF shared object for the level's triple.
  std::string sharedObject;
};

/// What translateKernelsToCPU stops at.
enum class CPUOutput {
  /// Optimized LLVM IR text, for attn-translate and the tests.
  LLVMIR,
  /// Linked shared objects: what a bundle holds.
  SharedObject,
};

/// Every attn kernel of `module` (after convert-attn-to-gpu at subgroup
/// size 1), compiled for the ISA level named `isaLevel`
/// (core/CpuKernel.h): its `sharedObject` holds the text or the shared
/// object `output` asks for. Errors are reported at `module`.
FailureOr<SmallVector<CPUKernel>>
translateKernelsToCPU(ModuleOp module, StringRef isaLevel,
                      CPUOutput output = CPUOutput::SharedObject);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOCPU_CPUOBJECT_H
