//===- Pipelines.cpp - attn-compile's lowering as named attn-opt pipelines ===//
//
// What attn-compile runs on a variant's IR for a target, registered under
// a name, so that a lowering can be reproduced and bisected with attn-opt
// without reverse-engineering its options: bufferization and
// convert-attn-to-gpu with the target family's options (loweringOptions:
// bf16 as i16 words for SPIR-V, row-vectors for the cpu target, ...), then
// the target's kernel pipeline where one exists as passes.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/Target.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct TargetPipelineOptions
    : public PassPipelineOptions<TargetPipelineOptions> {
  Option<int64_t> subgroupSize{
      *this, "subgroup-size",
      llvm::cl::desc("The subgroup size to build the kernels for (attn-compile "
                     "--subgroup-size); targets of one size (ptx: 32, cpu: 1) "
                     "take theirs"),
      llvm::cl::init(32)};
  Option<int64_t> splitKv{
      *this, "split-kv",
      llvm::cl::desc("attn-compile --split-kv: KV splits of paged attention "
                     "(0: none)"),
      llvm::cl::init(0)};
};

/// attn-compile's options for `target` from the pipeline's.
mlir::attn::CompileOptions compileOptions(::attn::Target target,
                                          const TargetPipelineOptions &o) {
  const mlir::attn::TargetBackend &backend = mlir::attn::targetBackend(target);
  mlir::attn::CompileOptions options;
  options.targets = {target};
  options.subgroupSize =
      backend.subgroupSize ? backend.subgroupSize : int64_t(o.subgroupSize);
  options.splitKv = o.splitKv;
  return options;
}

/// Bufferization and convert-attn-to-gpu as attn-compile runs them for
/// `target`.
void addLowering(OpPassManager &pm, ::attn::Target target,
                 const TargetPipelineOptions &o) {
  mlir::attn::buildAttnToGPUPipeline(
      pm, mlir::attn::loweringOptions(
              *mlir::attn::targetBackend(target).family,
              compileOptions(target, o)));
}

} // namespace

void mlir::attn::registerTargetPipelines() {
  PassPipelineRegistration<TargetPipelineOptions>(
      "attn-to-spirv",
      "attn IR to SPIR-V kernels as attn-compile --targets=spirv builds them "
      "for Vulkan: bufferization, convert-attn-to-gpu with the SPIR-V "
      "family's options (bf16 as i16 words, 16-byte loads), then "
      "attn-gpu-to-spirv with buffers by device address",
      [](OpPassManager &pm, const TargetPipelineOptions &o) {
        addLowering(pm, ::attn::Target::SPIRV, o);
        buildGPUToSPIRVPipeline(pm, {o.subgroupSize, /*aliasWideLoads=*/true,
                                     /*bufferAddresses=*/true});
      });
  PassPipelineRegistration<TargetPipelineOptions>(
      "attn-to-ptx",
      "attn IR to PTX as attn-compile --targets=ptx builds it: "
      "bufferization, convert-attn-to-gpu with the PTX family's options "
      "(subgroup size 32), then attn-gpu-to-ptx for sm_90",
      [](OpPassManager &pm, const TargetPipelineOptions &o) {
        addLowering(pm, ::attn::Target::PTX, o);
        buildGPUToPTXPipeline(pm, {});
      });
  PassPipelineRegistration<TargetPipelineOptions>(
      "attn-to-cpu-kernels",
      "attn IR to the cpu target's kernels before LLVM, as attn-compile "
      "--targets=cpu lowers it: bufferization and convert-attn-to-gpu for "
      "one invocation per work item (row-vectors, fp8-via-f16); each "
      "gpu.module then goes through attn-cpu-to-llvm on its own, which "
      "attn-translate --attn-to-cpu runs",
      [](OpPassManager &pm, const TargetPipelineOptions &o) {
        addLowering(pm, ::attn::Target::CPU, o);
      });
}
