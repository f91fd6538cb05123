//===- Passes.cpp - Registration of attn's lowering passes ----------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<int64_t> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("Subgroup size the kernels were built for"),
      llvm::cl::init(32)};
};
} // namespace

void attn::buildAttnToGPUPipeline(OpPassManager &pm,
                                  const ConvertAttnToGPUOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createConvertAttnToGPU(options));
}

void attn::registerLoweringPasses() {
  registerAttnLoweringPasses();
  PassPipelineRegistration<PipelineOptions>(
      "attn-gpu-to-spirv",
      "Converts the gpu.module kernels of convert-attn-to-gpu to SPIR-V "
      "modules for Vulkan (target env, math, gpu/arith/scf/memref, ABI, VCE)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildGPUToSPIRVPipeline(pm, {options.subgroupSize});
      });
}
