//===- attn-opt.cpp - The attn optimizer driver --------------------------===//
//
// MlirOptMain with the attn dialect and the upstream dialects and passes the
// project's pipelines use.
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
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

namespace {

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
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "attn optimizer driver: parses, verifies and transforms attn IR\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  return mlir::asMainReturnCode(
      runOnFile(inputFile, outputFile, registry, config));
}
