//===- TT.cpp - The tt target: TT-Metalium programs -----------------------===//

#include "compiler/TTPlanBuilder.h"
#include "compiler/targets/Target.h"
#include "core/LaunchFacts.h"
#include "lowering/AttnToTT/TTMetalTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>

using namespace mlir;

/// The Tenstorrent target lowers the attn ops itself
/// (convert-attn-to-ttkernel): a program's host side is its program.json.
/// Each program's files become kernels named after the program, program.json
/// first so that looking a program up by symbol finds its description. The
/// plans, built from the functions themselves (TTPlanBuilder.h), launch the
/// programs.
LogicalResult
mlir::attn::compileTTKernels(ModuleOp input,
                             std::vector<CompiledKernel> &kernels,
                             std::vector<::attn::runtime::Plan> *plans) {
  if (failed(mlir::attn::checkNoFp8Cache(input)))
    return failure();
  if (plans)
    for (auto func : input.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      FailureOr<::attn::runtime::Plan> plan = mlir::attn::buildTTPlan(func);
      if (failed(plan))
        return failure();
      plans->push_back(std::move(*plan));
    }
  OwningOpRef<ModuleOp> module = input.clone();
  FailureOr<SmallVector<mlir::attn::TTMetalProgram>> programs =
      mlir::attn::emitTTMetalPrograms(*module);
  if (failed(programs))
    return failure();
  for (mlir::attn::TTMetalProgram &program : *programs) {
    std::stable_partition(program.files.begin(), program.files.end(),
                          [](const mlir::attn::TTMetalFile &f) {
                            return f.name == "program.json";
                          });
    for (mlir::attn::TTMetalFile &file : program.files) {
      mlir::attn::CompiledKernel kernel;
      kernel.symbol = program.name;
      kernel.target = ::attn::toString(::attn::Target::TT);
      kernel.entryPoint = file.name;
      kernel.bytes = std::move(file.text);
      ::attn::LaunchFacts launch;
      launch.program = program.name;
      launch.description = "program.json";
      kernel.launchJson = ::attn::writeLaunchFacts(launch, ::attn::Target::TT);
      kernels.push_back(std::move(kernel));
    }
  }
  return success();
}
