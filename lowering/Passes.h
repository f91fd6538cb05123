//===- Passes.h - attn lowering passes ------------------------*- C++ -*-===//
//
// Declarations of the conversions declared in lowering/Passes.td, and their
// registration for the tools.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_PASSES_H
#define ATTN_LOWERING_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

/// Options of the `attn-gpu-to-spirv` pipeline.
struct GPUToSPIRVPipelineOptions {
  /// attn-spirv-attach-target's `subgroup-size`; 0: the kernels'.
  int64_t subgroupSize = 0;
  /// attn-spirv-vector-loads' `alias`.
  bool aliasWideLoads = true;
  /// Kernel buffers by device address (attn-spirv-buffer-addresses), as
  /// Vulkan runs them; else descriptor bindings, as SPIRV-Cross maps them to
  /// Metal buffer indices.
  bool bufferAddresses = false;
};

/// Adds attn-spirv-attach-target, attn-spirv-workgroup-memory,
/// attn-spirv-vector-loads, convert-attn-math-to-spirv, upstream
/// convert-gpu-to-spirv, and on every spirv.module spirv-lower-abi-attrs
/// (then attn-spirv-buffer-addresses when asked) + spirv-update-vce.
void buildGPUToSPIRVPipeline(OpPassManager &pm,
                             const GPUToSPIRVPipelineOptions &options);

/// Adds one-shot bufferization (function boundaries included, identity
/// layouts, so operands flatten on the host) and convert-attn-to-gpu: attn
/// IR on tensors or memrefs to kernels and their launches.
void buildAttnToGPUPipeline(OpPassManager &pm,
                            const ConvertAttnToGPUOptions &options);

/// Registers every lowering pass and the `attn-gpu-to-spirv`,
/// `attn-gpu-to-nvvm`, `attn-gpu-to-ptx` and `attn-cpu-to-llvm` pipelines.
/// Tools that run the PTX pipelines by name also need
/// registerGPUToPTXDependencies (lowering/GPUToPTX/GPUToPTX.h) on their
/// registry.
void registerLoweringPasses();

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_PASSES_H
