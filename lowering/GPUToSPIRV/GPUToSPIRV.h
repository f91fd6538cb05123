//===- GPUToSPIRV.h - attn's kernels as SPIR-V binaries --------*- C++ -*-===//
//
// The C++ entry point of the SPIR-V path: runs the `attn-gpu-to-spirv`
// pipeline on a module that convert-attn-to-gpu produced and serializes
// every kernel. Light on includes so that tools can use it cheaply.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_GPUTOSPIRV_GPUTOSPIRV_H
#define ATTN_LOWERING_GPUTOSPIRV_GPUTOSPIRV_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
class Operation;

namespace attn {

/// One kernel as SPIR-V: its entry point (the gpu.func name) and the words
/// of the module that holds only it.
struct SPIRVKernel {
  std::string entryPoint;
  SmallVector<uint32_t, 0> words;
};

/// Runs the `attn-gpu-to-spirv` pipeline on `module` (which must hold the
/// gpu.module kernels of convert-attn-to-gpu) and serializes each resulting
/// spirv.module, in the order of the kernels. The subgroup size is the one
/// the kernels were built for (attn.subgroup_size); kernels on matrix
/// products get SPV_KHR_cooperative_matrix. Wide loads read aliased
/// bindings of 32-bit words unless `aliasWideLoads` is false (then scalar
/// loads; attn-spirv-vector-loads); with `bufferAddresses` the kernels take
/// their buffers by device address (push constant u64 i for argument i), a
/// bundle's address form. Diagnostics go to the context's handler.
FailureOr<SmallVector<SPIRVKernel>>
translateKernelsToSPIRV(ModuleOp module, bool aliasWideLoads,
                        bool bufferAddresses);

/// Whether `op` holds gpu.subgroup_mma_compute ops (the tiled prefill
/// kernel of prefill-matrix=subgroup-mma): such kernels need a target
/// environment with SPV_KHR_cooperative_matrix.
bool usesMatrixProducts(Operation *op);

/// The kernels of one module in both ABI forms, each list in the kernels'
/// order.
struct SPIRVForms {
  /// Argument i at descriptor binding i.
  SmallVector<SPIRVKernel> bound;
  /// Argument i by device address (translateKernelsToSPIRV with
  /// bufferAddresses).
  SmallVector<SPIRVKernel> addressed;
};

/// translateKernelsToSPIRV in both forms, at the cost of about one: the
/// conversion runs once and only the ABI passes twice (kernels on matrix
/// products, whose environment differs per form, convert twice). Each form
/// is the same SPIR-V translateKernelsToSPIRV makes of it.
FailureOr<SPIRVForms> translateKernelsToSPIRVForms(ModuleOp module,
                                                   bool aliasWideLoads);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_GPUTOSPIRV_GPUTOSPIRV_H
