//===- RunFlags.cpp - What attn-run and attn-diff start from --------------===//

#include "tools/DeviceRun/RunFlags.h"

#include "compiler/Compile.h"
#include "compiler/ParseFile.h"
#include "reference/interp/Signature.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/WithColor.h"

namespace mlir::attn {

RunFlags::RunFlags(llvm::cl::OptionCategory &category)
    : inputFile(llvm::cl::Positional, llvm::cl::desc("<input .mlir file>"),
                llvm::cl::Required, llvm::cl::cat(category)),
      entry(category), knobs(category), cpuEmulator(category) {}

namespace {

/// The part of loadRun that can fail with a message; parse errors leave it
/// empty (the diagnostic handler has printed them).
llvm::Error load(const RunFlags &flags, LoadedRun &run) {
  std::string error;
  run.module =
      parseModuleFile(flags.inputFile, *run.context, *run.sourceMgr, error);
  if (!run.module)
    return llvm::createStringError(error);
  llvm::Expected<func::FuncOp> fn =
      ::attn::findEntry(*run.module, flags.entry.entry, flags.inputFile);
  if (!fn)
    return fn.takeError();
  run.fn = *fn;
  llvm::Expected<::attn::Signature> signature =
      ::attn::describeSignature(run.fn);
  if (!signature)
    return signature.takeError();
  run.signature = std::move(*signature);
  llvm::Expected<std::vector<::attn::Tensor>> inputs =
      ::attn::loadInputs(run.signature, flags.entry.source());
  if (!inputs)
    return inputs.takeError();
  run.inputs = std::move(*inputs);
  return llvm::Error::success();
}

} // namespace

FailureOr<LoadedRun> loadRun(const RunFlags &flags, llvm::StringRef tool) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  LoadedRun run;
  run.context = std::make_unique<MLIRContext>(registry);
  run.context->loadAllAvailableDialects();
  run.sourceMgr = std::make_unique<llvm::SourceMgr>();
  run.diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(
      *run.sourceMgr, run.context.get());
  if (llvm::Error err = load(flags, run)) {
    std::string message = llvm::toString(std::move(err));
    if (!message.empty())
      llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
    return failure();
  }
  return run;
}

} // namespace mlir::attn
