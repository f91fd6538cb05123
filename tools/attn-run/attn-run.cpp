//===- attn-run.cpp - Runs an attn function on a backend -----------------===//
//
// Parses a module, picks a function, gets its inputs (from .npy files or the
// seeded problem generator), runs it on a backend and writes the results as
// .npy files. The reference backend is the interpreter of reference/interp;
// device backends plug in beside it.
//
//===----------------------------------------------------------------------===//

#include "reference/interp/Entry.h"
#include "reference/interp/Inputs.h"
#include "reference/interp/Interpreter.h"
#include "reference/interp/Signature.h"
#include "tools/DeviceRun/RunFlags.h"
#include "tools/ToolCommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

using namespace attn;

namespace {

llvm::cl::OptionCategory category("attn-run options");

llvm::cl::opt<std::string>
    backend("backend",
            llvm::cl::desc("Where to run: 'reference' (the CPU interpreter, "
                           "the definition of every op), 'cpu' (the cpu "
                           "target's kernels, compiled in process for this "
                           "machine's CPU), 'vulkan' (compiled "
                           "in process for the first Vulkan device), 'cuda' "
                           "(PTX for the first CUDA device) or 'tt' "
                           "(TT-Metalium kernels on the host emulator); "
                           "device backends exist when this build has their "
                           "executor"),
            llvm::cl::value_desc("NAME"), llvm::cl::init("reference"),
            llvm::cl::cat(category));

mlir::attn::RunFlags runFlags(category);

llvm::cl::opt<std::string> outputsDir(
    "outputs",
    llvm::cl::desc("Write the results to DIR/result0.npy, result1.npy, ...; "
                   "with --random also the inputs made, as DIR/arg*.npy, so "
                   "that --inputs DIR replays them bit for bit"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-run") << message << "\n";
  return 1;
}

int fail(llvm::Error err) { return fail(llvm::toString(std::move(err))); }

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::setToolVersionPrinter("attn-run");
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: runs a function of an attn module on a backend\n\n"
      "  attn-run v.mlir --random 0 --outputs out/\n"
      "  attn-run v.mlir --inputs out/ --outputs out2/\n\n"
      "Inputs are DIR/arg<i>.npy in argument order; results are written to "
      "DIR/result<i>.npy, and their shapes and dtypes printed.\n");

  if (backend != "reference" &&
      !llvm::is_contained(mlir::attn::deviceBackends(), backend))
    return fail("backend '" + backend + "' is not a backend of this build (" +
                mlir::attn::describeDeviceBackends(/*withReference=*/true) +
                ")");
  bool random = runFlags.entry.randomSeed.getNumOccurrences() > 0;

  mlir::FailureOr<mlir::attn::LoadedRun> run =
      mlir::attn::loadRun(runFlags, "attn-run");
  if (failed(run))
    return 1;
  if (random && !outputsDir.empty())
    if (llvm::Error err = writeTensors(outputsDir, "arg", run->inputs))
      return fail(std::move(err));

  llvm::Expected<std::vector<Tensor>> results =
      backend == "reference"
          ? interpret(run->fn, std::move(run->inputs))
          : mlir::attn::runOnDevice(
                *run->module, run->fn.getSymName(), backend, run->inputs,
                /*stats=*/nullptr, runFlags.knobs, runFlags.cpuEmulator);
  if (!results)
    return fail(results.takeError());
  if (!outputsDir.empty())
    if (llvm::Error err = writeTensors(outputsDir, "result", *results))
      return fail(std::move(err));

  for (auto [i, result] : llvm::enumerate(*results))
    llvm::outs() << "result" << i << ": " << result.describe() << "\n";
  return 0;
}
