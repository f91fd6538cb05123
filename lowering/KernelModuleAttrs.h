//===- KernelModuleAttrs.h - What kernel modules say -------*- C++ -*-===//
//
// convert-attn-to-gpu marks each gpu.module it makes with the subgroup size
// its kernels were built for (lane layouts, shuffles and the workgroup size
// depend on it). The target pipelines lower subgroup operations for that
// size: they read it from the module, so the knob is given once, and a size
// given to them as well must agree. It also names the fp8 codec functions
// a target pass may replace. Header-only: the target libraries do
// not link AttnToGPU.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_KERNELMODULEATTRS_H
#define ATTN_LOWERING_KERNELMODULEATTRS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir {
namespace attn {

/// The i64 attribute of a convert-attn-to-gpu gpu.module: the subgroup size
/// its kernels were built for.
inline constexpr llvm::StringLiteral kBuiltSubgroupSizeAttr =
    "attn.subgroup_size";

/// The unit attribute of a function convert-gpu-kernels-to-cpu made from a
/// kernel, which attn-cpu-entry-points gives its C entry point.
inline constexpr llvm::StringLiteral kCpuKernelAttr = "attn.cpu_kernel";

/// The TypeAttr (f8E4M3FN or f8E5M2) that marks a private function of a
/// gpu.module as the fp8 codec convert-attn-to-gpu makes with fp8-calls:
/// fp8 bytes (i8, or a vector of them) to f32 element-wise, or one f32 to
/// its fp8 byte (rounded to nearest even, saturated to the largest finite
/// value, NaN as the sign and 0x7F). Its body is the integer codec; a
/// target pass may give it the device's conversion, and inlines it
/// (attn-nvvm-fp8-convert).
inline constexpr llvm::StringLiteral kFp8ToF32Attr = "attn.fp8_to_f32";
inline constexpr llvm::StringLiteral kF32ToFp8Attr = "attn.f32_to_fp8";

/// The subgroup size convert-attn-to-gpu built for when a pass's
/// subgroup-size option is 0 and no gpu.module says (hand-written kernels).
inline constexpr int64_t kDefaultSubgroupSize = 32;

/// The subgroup size a target pass lowers the kernels of `module` for.
/// With `given` 0 (the passes' default), the size their gpu.modules were
/// built for, which must be one size, or kDefaultSubgroupSize when none
/// says. A positive `given` must match every gpu.module that says.
/// Failures name `pass`, the gpu.module and both sizes.
inline FailureOr<int64_t> resolveSubgroupSize(ModuleOp module, int64_t given,
                                              StringRef pass) {
  // At the locations alone: an error of a pass on an op would print the
  // whole kernel module after it.
  if (given < 0)
    return mlir::emitError(module.getLoc())
           << pass << " expects subgroup-size >= 0 (0: the size the kernels "
           << "were built for), got " << given;
  std::optional<int64_t> built;
  StringRef builtBy;
  for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
    auto attr = kernels->getAttrOfType<IntegerAttr>(kBuiltSubgroupSizeAttr);
    if (!attr)
      continue;
    int64_t size = attr.getInt();
    if (given > 0 && size != given)
      return mlir::emitError(kernels.getLoc())
             << "gpu.module @" << kernels.getName()
             << " was built by convert-attn-to-gpu for subgroup size " << size
             << ", but " << pass << " was given subgroup-size=" << given
             << "; give both the same size (attn-compile and attn-translate "
             << "do)";
    if (built && *built != size)
      return mlir::emitError(kernels.getLoc())
             << "gpu.module @" << kernels.getName()
             << " was built by convert-attn-to-gpu for subgroup size " << size
             << ", but gpu.module @" << builtBy << " for " << *built << "; "
             << pass << " lowers one module for one size";
    built = size;
    builtBy = kernels.getName();
  }
  if (given > 0)
    return given;
  return built.value_or(kDefaultSubgroupSize);
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_KERNELMODULEATTRS_H
