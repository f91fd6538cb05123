//===- GPUToPTX.h - attn's kernels as PTX ----------------------*- C++ -*-===//
//
// The C++ entry point of the NVVM path: runs the `attn-gpu-to-ptx` pipeline
// on a module that convert-attn-to-gpu produced and returns the PTX text of
// every kernel. Light on includes so that tools can use it cheaply.
//
// Kernel ABI on CUDA (lowering/GPUToPTX/README.md has the details): the
// kernels keep upstream's default memref calling convention, so every
// `memref<?xT>` argument of the kernel IR becomes five `.param .u64` values
// (allocated pointer, aligned pointer, offset, size, stride) in argument
// order; runtimes pass (p, p, 0, element count, 1) for a buffer at p.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_GPUTOPTX_GPUTOPTX_H
#define ATTN_LOWERING_GPUTOPTX_GPUTOPTX_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
class OpPassManager;

namespace attn {

/// NVIDIA's subgroup (warp) size: the only one the PTX path supports, since
/// the kernels' shuffles and reductions are built for a known subgroup size.
inline constexpr int64_t kNVIDIAWarpSize = 32;

/// The oldest PTX ISA that LLVM accepts for `chip` and attn's kernels, as
/// NVPTX features: "+ptx80" for sm_80 and sm_90, "+ptx81" for sm_89 (its
/// fp8 cvt), "+ptx86" for sm_100/sm_101, "+ptx87" for sm_120, "+ptx88"
/// beyond.
std::string ptxFeaturesForChip(StringRef chip);

/// A CUDA toolkit with libdevice (nvvm/libdevice/libdevice.10.bc): $CUDA_HOME,
/// $CUDA_PATH, $CUDA_ROOT or /usr/local/cuda; "" when there is none.
/// convert-gpu-to-nvvm lowers math ops (exp2, log) to libdevice calls, which
/// gpu-module-to-binary links from there; only libdevice is needed, not
/// ptxas or a driver.
std::string findCUDAToolkit();

/// Options of the `attn-gpu-to-nvvm` and `attn-gpu-to-ptx` pipelines.
struct GPUToPTXPipelineOptions {
  /// The SM the PTX targets ("sm_80", "sm_90", ...).
  std::string chip = "sm_90";
  /// LLVM NVPTX features, chiefly the PTX ISA version ("+ptx80").
  std::string features = "+ptx80";
  /// Stop before gpu-module-to-binary (LLVM + NVVM dialects in each
  /// gpu.module), for tests of the conversion itself.
  bool emitBinary = true;
};

/// Adds attn-lower-subgroup-reduce (32 lanes), upstream nvvm-attach-target
/// (chip, features), attn-nvvm-fp8-convert (the fp8 codec: cvt from sm_89
/// on), attn-nvvm-register-budget, convert-scf-to-cf and
/// convert-gpu-to-nvvm in every gpu.module, reconcile-unrealized-casts and,
/// with `emitBinary`, gpu-module-to-binary{format=isa}.
void buildGPUToPTXPipeline(OpPassManager &pm,
                           const GPUToPTXPipelineOptions &options);

/// What the pipeline needs besides the dialects: the NVVM target attribute's
/// interface, the to-LLVM conversion interfaces of the kernel dialects, and
/// the LLVM IR translations. translateKernelsToPTX appends it to the context
/// itself; tools that run the pipeline by name register it up front.
void registerGPUToPTXDependencies(DialectRegistry &registry);

/// One kernel as PTX: its entry point (the gpu.func name, also the PTX
/// `.entry` name) and the PTX text of the module that holds only it.
struct PTXKernel {
  std::string entryPoint;
  std::string ptx;
};

/// Runs the `attn-gpu-to-ptx` pipeline on `module` (which must hold the
/// gpu.module kernels of convert-attn-to-gpu, built for subgroup size 32)
/// and returns the PTX of each kernel, in the order of the kernels.
/// Diagnostics go to the context's handler.
FailureOr<SmallVector<PTXKernel>>
translateKernelsToPTX(ModuleOp module, StringRef chip = "sm_90",
                      StringRef features = "+ptx80");

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_GPUTOPTX_GPUTOPTX_H
