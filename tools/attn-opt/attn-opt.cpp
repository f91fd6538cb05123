//===- attn-opt.cpp - The attn optimizer driver --------------------------===//
//
// MlirOptMain with the attn dialect and the upstream dialects and passes the
// project's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/Target.h"
#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "lowering/AttnToTT/Passes.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/Passes.h"
#include "tools/ToolCommandLine.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
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
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn optimizer driver: parses, verifies and transforms attn "
                  "IR\n",
      registry));
}
