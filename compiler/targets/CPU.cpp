//===- CPU.cpp - The cpu target: shared objects for the CPU device --------===//

#include "compiler/targets/Target.h"
#include "core/LaunchFacts.h"
#include "lowering/AttnToCPU/CPUObject.h"

using namespace mlir;

/// The kernels of `lowered` for ISA level `isa`, appended to `out`.
static LogicalResult
compileLevel(const mlir::attn::LoweredModule &lowered, const std::string &isa,
             std::vector<mlir::attn::CompiledKernel> &out) {
  ModuleOp input = lowered.input;
  FailureOr<SmallVector<mlir::attn::CPUKernel>> objects =
      mlir::attn::translateKernelsToCPU(lowered.lowered, isa);
  if (failed(objects))
    return failure();
  for (mlir::attn::CPUKernel &k : *objects) {
    FailureOr<mlir::attn::CompiledKernel> kernel =
        lowered.entries.compiled(input, ::attn::Target::CPU, k.entryPoint);
    if (failed(kernel))
      return failure();
    kernel->bytes = std::move(k.sharedObject);
    ::attn::LaunchFacts launch;
    launch.workgroup = lowered.entries.workgroup.lookup(k.entryPoint);
    launch.cpuIsa = isa;
    launch.argElementBytes = lowered.entries.elementBytes.lookup(k.entryPoint);
    launch.bounds = lowered.entries.bounds.lookup(k.entryPoint);
    kernel->launchJson = ::attn::writeLaunchFacts(launch, ::attn::Target::CPU);
    out.push_back(std::move(*kernel));
  }
  return success();
}

LogicalResult mlir::attn::compileCPUKernels(const LoweredModule &lowered,
                                            const CompileOptions &options,
                                            std::vector<CompiledKernel> &out) {
  ModuleOp input = lowered.input;
  // One invocation per work item: the kernels of the cpu lowering alone.
  if (options.subgroupSize != 1 || &lowered.family != &kCPULowering)
    return mlir::emitError(input.getLoc())
           << "target cpu needs kernels built for subgroup size 1 by the cpu "
              "lowering, alone in its compile (attn-compile builds it "
              "apart), got subgroup size "
           << options.subgroupSize;
  if (options.cpu.isaLevels.empty())
    return mlir::emitError(input.getLoc())
           << "target cpu needs at least one ISA level";
  for (const std::string &isa : options.cpu.isaLevels)
    if (failed(compileLevel(lowered, isa, out)))
      return failure();
  return success();
}
