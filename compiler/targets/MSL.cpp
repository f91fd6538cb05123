//===- MSL.cpp - The msl target: Metal through SPIR-V and SPIRV-Cross -----===//

#include "compiler/targets/Target.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/SPIRVToMSL/SPIRVToMSL.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

LogicalResult mlir::attn::compileMSLKernels(const LoweredModule &lowered,
                                            const CompileOptions &options,
                                            std::vector<CompiledKernel> &out) {
  ModuleOp module = lowered.lowered;
  // Found before SPIRV-Cross, whose message for such SPIR-V says nothing of
  // the cause; at the op's location, without the kernel printed after it.
  for (auto kernels : module.getOps<gpu::GPUModuleOp>())
    if (usesMatrixProducts(kernels))
      return mlir::emitError(kernels.getLoc())
             << "target msl has no matrix products: the Metal path (SPIR-V "
                "through SPIRV-Cross) does not translate "
                "SPV_KHR_cooperative_matrix; compile msl with "
                "prefill-matrix=none or emulate";
  OwningOpRef<ModuleOp> copy = module.clone();
  // SPIRVToMSL maps each binding to one Metal buffer: the MSL kernels read
  // wide loads element by element instead of through aliased bindings.
  FailureOr<SmallVector<SPIRVKernel>> spirv =
      translateKernelsToSPIRV(*copy, /*aliasWideLoads=*/false,
                              /*bufferAddresses=*/false);
  if (failed(spirv))
    return failure();
  for (const SPIRVKernel &k : *spirv) {
    FailureOr<CompiledKernel> kernel =
        lowered.entries.compiled(module, ::attn::Target::MSL, k.entryPoint);
    if (failed(kernel))
      return failure();
    MSLOptions mslOptions;
    mslOptions.subgroupSize = options.subgroupSize;
    mslOptions.version = options.msl.version;
    llvm::Expected<MSLKernel> msl =
        translateSPIRVToMSL(k.words, k.entryPoint, mslOptions);
    // At the module's location, without the module printed after it: the
    // message names the kernel.
    if (!msl)
      return mlir::emitError(module.getLoc())
             << llvm::toString(msl.takeError());
    // Plans launch known_block_size threads, which the LocalSize must match.
    std::array<int64_t, 3> block =
        lowered.entries.workgroup.lookup(k.entryPoint);
    for (int i = 0; i < 3; ++i)
      if (block[i] != static_cast<int64_t>(msl->threadgroupSize[i]))
        return mlir::emitError(module.getLoc())
               << "kernel " << k.entryPoint << " has threadgroup size "
               << msl->threadgroupSize[0] << "x" << msl->threadgroupSize[1]
               << "x" << msl->threadgroupSize[2] << " but its plan launches "
               << block[0] << "x" << block[1] << "x" << block[2];
    kernel->entryPoint = msl->entryPoint;
    kernel->bytes = std::move(msl->source);
    kernel->launchJson =
        mslLaunchFacts(*msl, options.subgroupSize,
                       lowered.entries.bounds.lookup(k.entryPoint));
    out.push_back(std::move(*kernel));
  }
  return success();
}
