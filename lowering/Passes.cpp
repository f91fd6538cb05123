//===- Passes.cpp - Registration of attn's lowering passes ----------------===//

#include "lowering/Passes.h"
#include "lowering/AttnToCPU/CPUObject.h"
#include "lowering/GPUToPTX/GPUToPTX.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<int64_t> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("0: the subgroup size convert-attn-to-gpu built the "
                     "kernels for (32 for gpu.modules that do not say); "
                     "another size must match it"),
      llvm::cl::init(0)};
  Option<bool> aliasWideLoads{
      *this, "alias-wide-loads",
      llvm::cl::desc("Wide loads read aliased bindings of 32-bit words "
                     "(false: scalar loads)"),
      llvm::cl::init(true)};
  Option<bool> bufferAddresses{
      *this, "buffer-addresses",
      llvm::cl::desc("Pass buffers by 64-bit device address in push "
                     "constants instead of descriptor bindings (what Vulkan "
                     "bundles run)"),
      llvm::cl::init(false)};
};

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("Dot products of bf16 rows with AVX-512 BF16 "
                     "(attn-cpu-bf16-dot): for ISA levels that have it"),
      llvm::cl::init(false)};
};

struct PTXPipelineOptions : public PassPipelineOptions<PTXPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The SM the PTX targets"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX features, chiefly the PTX ISA version"),
      llvm::cl::init("+ptx80")};
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
        buildGPUToSPIRVPipeline(pm, {options.subgroupSize,
                                     options.aliasWideLoads,
                                     options.bufferAddresses});
      });
  PassPipelineRegistration<CPUPipelineOptions>(
      "attn-cpu-to-llvm",
      "Converts the single-invocation kernels of convert-attn-to-gpu "
      "(subgroup size 1) to LLVM functions with the cpu target's C entry "
      "points (convert-gpu-kernels-to-cpu, upstream's conversions to LLVM, "
      "attn-cpu-entry-points); the input must hold kernels only",
      [](OpPassManager &pm, const CPUPipelineOptions &options) {
        buildCPUToLLVMPipeline(pm, options.bf16Dot);
      });
  for (bool emitBinary : {false, true})
    PassPipelineRegistration<PTXPipelineOptions>(
        emitBinary ? "attn-gpu-to-ptx" : "attn-gpu-to-nvvm",
        emitBinary
            ? "Converts the gpu.module kernels of convert-attn-to-gpu to PTX: "
              "attn-gpu-to-nvvm, then gpu-module-to-binary{format=isa}"
            : "Converts the gpu.module kernels of convert-attn-to-gpu to the "
              "LLVM and NVVM dialects (subgroup reductions as shuffles, "
              "NVVM target, scf to cf, convert-gpu-to-nvvm)",
        [emitBinary](OpPassManager &pm, const PTXPipelineOptions &options) {
          buildGPUToPTXPipeline(pm, {options.chip, options.features,
                                     emitBinary});
        });
}
