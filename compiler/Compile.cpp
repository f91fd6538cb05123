//===- Compile.cpp - attn IR -> plans and device kernels -----------------===//

#include "compiler/Compile.h"
#include "compiler/PlanBuilder.h"
#include "compiler/targets/Target.h"
#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "dialect/Limits.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <iterator>

using namespace mlir;

void mlir::attn::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registry.insert<AttnDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

std::string mlir::attn::checkCompileOptions(const CompileOptions &options) {
  if (options.splitKv < 0 || options.splitKv > kMaxKvSplits)
    return "--split-kv=" + std::to_string(options.splitKv) +
           " is outside [0, " + std::to_string(kMaxKvSplits) +
           "] (0: the compiler chooses; " + std::to_string(kMaxKvSplits) +
           " is the limit of num_kv_splits)";
  if (!options.prefillMatrix.empty() &&
      !llvm::is_contained({"none", "subgroup-mma", "auto", "emulate"},
                          options.prefillMatrix))
    return "--prefill-matrix=" + options.prefillMatrix +
           ": expected none, subgroup-mma, auto or emulate";
  return "";
}

FailureOr<mlir::attn::CompiledModule>
mlir::attn::compileModule(ModuleOp input, const CompileOptions &options) {
  if (std::string why = checkCompileOptions(options); !why.empty())
    return mlir::emitError(input.getLoc()) << why;
  std::vector<const TargetBackend *> backends;
  for (::attn::Target target : options.targets) {
    const TargetBackend *backend = &targetBackend(target);
    // A target named twice compiles once.
    if (!llvm::is_contained(backends, backend))
      backends.push_back(backend);
  }

  // A bundle holds one plan per function: with GPU targets beside a target
  // that lowers the attn ops itself (tt), the plans are theirs (GPU
  // launches) and its programs sit next to them; alone, it gives the plans.
  bool gpuTargets = llvm::any_of(backends, [](const TargetBackend *b) {
    return !b->lowersItself();
  });
  std::vector<CompiledKernel> ownKernels;
  std::vector<::attn::runtime::Plan> ownPlans;
  const TargetBackend *planned = nullptr;
  for (const TargetBackend *backend : backends) {
    if (!backend->lowersItself())
      continue;
    if (planned && !gpuTargets)
      return mlir::emitError(input.getLoc())
             << "targets " << planned->name() << " and " << backend->name()
             << " both lower the attn ops themselves, and a bundle holds one "
                "host plan per function";
    planned = backend;
    if (failed(backend->compileInput(input, ownKernels,
                                     gpuTargets ? nullptr : &ownPlans)))
      return failure();
  }
  if (!options.targets.empty() && !gpuTargets)
    return CompiledModule{std::move(ownPlans), std::move(ownKernels)};

  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm(module->getContext());
  // One lowering serves every GPU target of the compile.
  const LoweringFamily &family = gpuLoweringFamily(options);
  buildAttnToGPUPipeline(pm, loweringOptions(family, options));
  if (failed(pm.run(*module)))
    return failure();

  CompiledModule compiled;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    FailureOr<::attn::runtime::Plan> plan = buildPlan(func);
    if (failed(plan))
      return failure();
    compiled.plans.push_back(std::move(*plan));
  }

  FailureOr<KernelEntries> entries = collectEntries(*module);
  if (failed(entries))
    return failure();
  LoweredModule lowered{input, *module, family, *entries, compiled.plans};
  for (const TargetBackend *backend : backends)
    if (!backend->lowersItself() &&
        failed(backend->compileKernels(lowered, options, compiled.kernels)))
      return failure();
  std::move(ownKernels.begin(), ownKernels.end(),
            std::back_inserter(compiled.kernels));
  return compiled;
}
