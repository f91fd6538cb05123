//===- attn-opt.cpp - The attn optimizer driver --------------------------===//
//
// MlirOptMain with the attn dialect and the upstream dialects and passes the
// project's pipelines use. --help lists attn's own pipelines and passes
// first, in its overview, then every option and pass as MLIR lists them.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/Target.h"
#include "core/TextNesting.h"
#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "lowering/AttnToTT/Passes.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/Passes.h"
#include "tools/ToolCommandLine.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace {

/// attn's pass pipelines and passes, which --help lists before MLIR's
/// (test/Tools/attn-opt-help.test checks that every pass attn-opt has
/// beyond mlir-opt's is here).
constexpr const char *kAttnPipelines[] = {
    "attn-to-spirv",     "attn-to-ptx",      "attn-to-cpu-kernels",
    "attn-gpu-to-spirv", "attn-gpu-to-nvvm", "attn-gpu-to-ptx",
    "attn-cpu-to-llvm"};
constexpr const char *kAttnPasses[] = {
    "convert-attn-to-gpu",          "convert-attn-to-ttkernel",
    "convert-gpu-kernels-to-cpu",   "convert-attn-math-to-spirv",
    "attn-lower-subgroup-reduce",   "attn-spirv-attach-target",
    "attn-spirv-buffer-addresses",  "attn-spirv-vector-loads",
    "attn-spirv-workgroup-memory",  "attn-nvvm-fp8-convert",
    "attn-nvvm-register-budget",    "attn-cpu-polynomial-exp2",
    "attn-cpu-bf16-dot",            "attn-cpu-entry-points"};

/// One "  --name  description" line per pass or pipeline `names` names, as
/// registered.
template <typename Info>
std::string describe(llvm::ArrayRef<const char *> names) {
  std::string text;
  for (const char *name : names) {
    const Info *info = Info::lookup(name);
    llvm::StringRef description =
        info ? info->getPassDescription() : "(not registered)";
    text += "  --" + std::string(name) + "\n      " + description.str() +
            "\n";
  }
  return text;
}

/// What --help prints first.
std::string overview() {
  return "attn optimizer driver: parses, verifies and transforms attn IR\n\n"
         "attn's pipelines (attn-compile's lowering of each target, up to "
         "its kernels):\n" +
         describe<mlir::PassPipelineInfo>(kAttnPipelines) +
         "\nattn's passes (the options of each, and MLIR's passes, follow "
         "under OPTIONS):\n" +
         describe<mlir::PassInfo>(kAttnPasses);
}

/// MlirOptMain on the file, once its nesting is checked: MLIR's parser
/// recurses per level and overflows the stack on a text nested thousands
/// deep.
mlir::LogicalResult runOnFile(llvm::StringRef inputFile,
                              llvm::StringRef outputFile,
                              mlir::DialectRegistry &registry,
                              const mlir::MlirOptMainConfig &config) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFile, &error);
  if (file)
    if (attn::Status s =
            attn::checkNesting(file->getBuffer(), file->getBufferIdentifier());
        !s)
      error = s.message();
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (error.empty())
    output = mlir::openOutputFile(outputFile, &error);
  if (!error.empty()) {
    llvm::WithColor::error(llvm::errs(), "attn-opt") << error << "\n";
    return mlir::failure();
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return mlir::failure();
  output->keep();
  return mlir::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::setToolVersionPrinter("attn-opt");
  // The flags registered so far are the LLVM libraries' (backends, codegen):
  // off --help (--help-hidden lists them). MlirOptMain registers MLIR's and
  // the passes' after this, and --help lists those.
  mlir::attn::hideOtherOptions(nullptr);
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllPasses();
  mlir::attn::registerLoweringPasses();
  mlir::attn::registerTargetPipelines();
  mlir::attn::registerAttnToTTLoweringPasses();
  registry.insert<mlir::attn::AttnDialect>();
  mlir::attn::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::attn::registerGPUToPTXDependencies(registry);
  std::string help = overview();
  auto [inputFile, outputFile] =
      mlir::registerAndParseCLIOptions(argc, argv, help, registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  return mlir::asMainReturnCode(
      runOnFile(inputFile, outputFile, registry, config));
}
