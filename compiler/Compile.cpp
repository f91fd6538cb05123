//===- Compile.cpp - attn IR -> plans and device kernels -----------------===//

#include "compiler/Compile.h"
#include "compiler/PlanBuilder.h"
#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <nlohmann/json.hpp>

using namespace mlir;

void mlir::attn::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registry.insert<AttnDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

FailureOr<mlir::attn::CompiledModule>
mlir::attn::compileModule(ModuleOp input, const CompileOptions &options) {
  for (const std::string &target : options.targets)
    if (!llvm::is_contained(kTargetNames, target))
      return input.emitError() << "unknown target '" << target << "'";

  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm(module->getContext());
  ConvertAttnToGPUOptions lowering;
  lowering.subgroupSize = options.subgroupSize;
  lowering.splitKv = options.splitKv;
  lowering.bf16AsI16 = options.bf16AsI16;
  buildAttnToGPUPipeline(pm, lowering);
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

  // Each kernel sits alone in its gpu.module; plans name it module::func.
  llvm::StringMap<std::string> symbolOfEntry;
  llvm::StringMap<std::array<int64_t, 3>> workgroupOfEntry;
  for (auto gpuModule : module->getOps<gpu::GPUModuleOp>())
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      std::string symbol =
          (gpuModule.getName() + "::" + kernel.getName()).str();
      if (!symbolOfEntry.try_emplace(kernel.getName(), symbol).second)
        return kernel.emitError()
               << "two kernels share the entry point name " << kernel.getName();
      std::array<int64_t, 3> wg = {1, 1, 1};
      if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize())
        for (int i = 0; i < 3 && i < static_cast<int>(known->size()); ++i)
          wg[i] = (*known)[i];
      workgroupOfEntry[kernel.getName()] = wg;
    }

  for (const std::string &target : options.targets) {
    if (target == "spirv") {
      OwningOpRef<ModuleOp> copy = module->clone();
      FailureOr<SmallVector<SPIRVKernel>> kernels =
          translateKernelsToSPIRV(*copy, options.subgroupSize);
      if (failed(kernels))
        return failure();
      for (SPIRVKernel &k : *kernels) {
        auto symbol = symbolOfEntry.find(k.entryPoint);
        if (symbol == symbolOfEntry.end())
          return input.emitError()
                 << "SPIR-V entry point " << k.entryPoint
                 << " matches no kernel of convert-attn-to-gpu";
        CompiledKernel out;
        out.symbol = symbol->second;
        out.target = target;
        out.entryPoint = k.entryPoint;
        out.bytes.assign(reinterpret_cast<const char *>(k.words.data()),
                         k.words.size() * sizeof(uint32_t));
        nlohmann::json launch;
        launch["subgroup_size"] = options.subgroupSize;
        launch["workgroup_size"] = workgroupOfEntry[k.entryPoint];
        out.launchJson = launch.dump();
        compiled.kernels.push_back(std::move(out));
      }
    }
  }
  return compiled;
}
