//===- Entry.cpp - The function a tool runs, and its inputs --------------===//

#include "reference/interp/Entry.h"
#include "reference/interp/Inputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace attn;

llvm::Expected<mlir::func::FuncOp>
attn::findEntry(mlir::ModuleOp module, llvm::StringRef name,
                llvm::StringRef fileName) {
  if (!name.empty()) {
    auto fn = module.lookupSymbol<mlir::func::FuncOp>(name);
    if (!fn)
      return llvm::createStringError("no function @" + name + " in " +
                                     fileName);
    return fn;
  }
  auto functions = llvm::to_vector(module.getOps<mlir::func::FuncOp>());
  if (functions.size() == 1)
    return functions.front();
  if (functions.empty())
    return llvm::createStringError(fileName + " has no function to run");
  std::string names;
  for (mlir::func::FuncOp fn : functions)
    names += (names.empty() ? "@" : ", @") + fn.getSymName().str();
  return llvm::createStringError(fileName + " has several functions (" +
                                 names + "); pick one with --entry");
}

llvm::Expected<std::vector<Tensor>>
attn::loadInputs(const Signature &signature, const InputSource &source) {
  bool random = source.seed.has_value();
  if (random == !source.directory.empty())
    return llvm::createStringError(
        "give exactly one of --inputs DIR and --random SEED");
  if (!source.randomOptions.empty() && !random)
    return llvm::createStringError("--random-options needs --random");
  if (!random)
    return readInputs(signature, source.directory);
  ProblemOptions options;
  options.seed = *source.seed;
  llvm::Expected<ProblemOptions> parsed =
      parseRandomOptions(source.randomOptions, options);
  if (!parsed)
    return parsed.takeError();
  return makeRandomInputs(signature, *parsed);
}
