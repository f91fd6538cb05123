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

namespace attn {

/// One kernel as SPIR-V: its entry point (the gpu.func name) and the words
/// of the module that holds only it.
struct SPIRVKernel {
  std::string entryPoint;
  SmallVector<uint32_t, 0> words;
};

/// Runs the `attn-gpu-to-spirv` pipeline on `module` (which must hold the
/// gpu.module kernels of convert-attn-to-gpu) and serializes each resulting
/// spirv.module, in the order of the kernels. Wide loads read aliased
/// bindings of 32-bit words unless `aliasWideLoads` is false (then scalar
/// loads; attn-spirv-vector-loads); with `cooperativeMatrix` the target
/// environment has SPV_KHR_cooperative_matrix; with `bufferAddresses` the
/// kernels take their buffers by device address (push constant u64 i for
/// argument i), a bundle's address form. Diagnostics go to the context's
/// handler. No defaults: three flags in a row are easy to misplace.
FailureOr<SmallVector<SPIRVKernel>>
translateKernelsToSPIRV(ModuleOp module, int64_t subgroupSize,
                        bool aliasWideLoads, bool cooperativeMatrix,
                        bool bufferAddresses);

/// The kernels of one module in both ABI forms, each list in the kernels'
/// order.
struct SPIRVForms {
  /// Argument i at descriptor binding i.
  SmallVector<SPIRVKernel> bound;
  /// Argument i by device address (translateKernelsToSPIRV with
  /// bufferAddresses).
  SmallVector<SPIRVKernel> addressed;
};

/// translateKernelsToSPIRV in both forms (without cooperative matrices), at
/// the cost of about one: the conversion runs once and only the ABI passes
/// twice. Each form is the same SPIR-V translateKernelsToSPIRV makes of it.
FailureOr<SPIRVForms> translateKernelsToSPIRVForms(ModuleOp module,
                                                   int64_t subgroupSize,
                                                   bool aliasWideLoads);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_GPUTOSPIRV_GPUTOSPIRV_H
