//===- PTX.cpp - The ptx target: NVVM and PTX for CUDA --------------------===//

#include "compiler/PlanBuilder.h"
#include "compiler/targets/Target.h"
#include "core/LaunchFacts.h"
#include "lowering/GPUToPTX/GPUToPTX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

/// A lowering of `input` for PTX when the compile's was for another family
/// (bf16 as i16 words, scalar loads): NVVM has bf16, and NVIDIA GPUs load
/// 128 bits per lane. The host side must not depend on it, which is checked
/// against the plans already built.
static FailureOr<OwningOpRef<ModuleOp>>
lowerForPTX(const mlir::attn::LoweredModule &lowered,
            const mlir::attn::CompileOptions &options) {
  ModuleOp input = lowered.input;
  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm(module->getContext());
  mlir::attn::buildAttnToGPUPipeline(
      pm, mlir::attn::loweringOptions(mlir::attn::kPTXLowering, options));
  if (failed(pm.run(*module)))
    return failure();
  size_t index = 0;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    FailureOr<::attn::runtime::Plan> plan = mlir::attn::buildPlan(func);
    if (failed(plan))
      return failure();
    if (index >= lowered.plans.size() || !(*plan == lowered.plans[index++]))
      return func.emitError() << "the host plan of this function differs "
                                 "between target ptx and the others";
  }
  return module;
}

LogicalResult mlir::attn::compilePTXKernels(const LoweredModule &lowered,
                                            const CompileOptions &options,
                                            std::vector<CompiledKernel> &out) {
  ModuleOp input = lowered.input, loweredModule = lowered.lowered;
  if (options.subgroupSize != kNVIDIAWarpSize)
    return mlir::emitError(input.getLoc())
           << "target ptx needs kernels built for subgroup size "
           << kNVIDIAWarpSize << " (an NVIDIA warp), got "
           << options.subgroupSize;
  OwningOpRef<ModuleOp> module = loweredModule.clone();
  if (&lowered.family != &kPTXLowering) {
    FailureOr<OwningOpRef<ModuleOp>> own = lowerForPTX(lowered, options);
    if (failed(own))
      return failure();
    module = std::move(*own);
  }
  // Its own lowering may shape the kernels differently (workgroup sizes).
  FailureOr<KernelEntries> entries = collectEntries(*module);
  if (failed(entries))
    return failure();
  // The kernels of every chip come from one lowering: only the NVVM
  // translation differs, and each chip's PTX is one more kernel under the
  // same symbol, told apart by the chip in its launch facts.
  for (const std::string &chip : options.ptx.chips) {
    OwningOpRef<ModuleOp> forChip = module->clone();
    std::string features = options.ptx.features.empty()
                               ? ptxFeaturesForChip(chip)
                               : options.ptx.features;
    FailureOr<SmallVector<PTXKernel>> ptx =
        translateKernelsToPTX(*forChip, chip, features);
    if (failed(ptx))
      return failure();
    for (PTXKernel &k : *ptx) {
      FailureOr<CompiledKernel> kernel =
          entries->compiled(input, ::attn::Target::PTX, k.entryPoint);
      if (failed(kernel))
        return failure();
      kernel->bytes = std::move(k.ptx);
      // The launch facts: workgroup size, the chip and the element size of
      // each memref argument (the `size` field of its descriptor).
      ::attn::LaunchFacts launch;
      launch.workgroup = entries->workgroup.lookup(k.entryPoint);
      launch.subgroupSize = kNVIDIAWarpSize;
      launch.chip = chip;
      launch.argElementBytes = entries->elementBytes.lookup(k.entryPoint);
      launch.bounds = entries->bounds.lookup(k.entryPoint);
      kernel->launchJson =
          ::attn::writeLaunchFacts(launch, ::attn::Target::PTX);
      out.push_back(std::move(*kernel));
    }
  }
  return success();
}
