//===- KernelModuleAttrs.h - What kernel modules say -------*- C++ -*-===//
//
// convert-attn-to-gpu marks each gpu.module it makes with the subgroup size
// its kernels were built for (lane layouts, shuffles and the workgroup size
// depend on it), and the target pipelines, which lower subgroup operations
// for a size of their own option, check that the two agree. Header-only:
// the target libraries do not link AttnToGPU.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_KERNELMODULEATTRS_H
#define ATTN_LOWERING_KERNELMODULEATTRS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace attn {

/// The i64 attribute of a convert-attn-to-gpu gpu.module: the subgroup size
/// its kernels were built for.
inline constexpr llvm::StringLiteral kBuiltSubgroupSizeAttr =
    "attn.subgroup_size";

/// Fails, naming the gpu.module, both sizes and `pass`, when a kernel module
/// of `module` was built for another subgroup size than `subgroupSize`.
inline LogicalResult checkBuiltSubgroupSize(ModuleOp module,
                                            int64_t subgroupSize,
                                            StringRef pass) {
  for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
    auto built = kernels->getAttrOfType<IntegerAttr>(kBuiltSubgroupSizeAttr);
    if (!built || built.getInt() == subgroupSize)
      continue;
    return kernels.emitError()
           << "gpu.module @" << kernels.getName()
           << " was built by convert-attn-to-gpu for subgroup size "
           << built.getInt() << ", but " << pass << " was given subgroup-size="
           << subgroupSize << "; give both the same size (attn-compile and "
           << "attn-translate do)";
  }
  return success();
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_KERNELMODULEATTRS_H
