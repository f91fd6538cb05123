//===- Entry.cpp - The function a tool runs, and its inputs --------------===//

#include "reference/interp/Entry.h"
#include "reference/interp/Inputs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace attn;

llvm::Expected<mlir::func::FuncOp> attn::findEntry(mlir::ModuleOp module,
                                                   llvm::StringRef name,
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
  return llvm::createStringError(fileName + " has several functions (" + names +
                                 "); pick one with --entry");
}

static const std::string &randomOptionsHelp() {
  static const std::string help =
      std::string("Options of the --random generator: ") + kRandomOptionsHelp;
  return help;
}

EntryFlags::EntryFlags(llvm::cl::OptionCategory &category)
    : entry("entry",
            llvm::cl::desc("Function to run (default: the module's only "
                           "function)"),
            llvm::cl::value_desc("NAME"), llvm::cl::cat(category)),
      inputsDir("inputs",
                llvm::cl::desc("Read the inputs from DIR/arg0.npy, "
                               "arg1.npy, ... in argument order (bf16 "
                               "arguments from f32 files)"),
                llvm::cl::value_desc("DIR"), llvm::cl::cat(category)),
      randomSeed("random",
                 llvm::cl::desc("Make realistic random inputs with this "
                                "seed: a batch of decode, prefill and "
                                "chunked-prefill requests over a paged "
                                "cache, shaped by the argument types and by "
                                "the role of each argument in the attn ops"),
                 llvm::cl::value_desc("SEED"), llvm::cl::cat(category)),
      randomOptions("random-options", llvm::cl::desc(randomOptionsHelp()),
                    llvm::cl::value_desc("KEY=VALUE,..."),
                    llvm::cl::cat(category)) {}

InputSource EntryFlags::source() const {
  InputSource source;
  source.directory = inputsDir;
  if (randomSeed.getNumOccurrences())
    source.seed = randomSeed;
  source.randomOptions = randomOptions;
  return source;
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
