//===- attn-compile.cpp - Ahead-of-time compiler for attention variants ---===//
//
// Turns variant descriptions (`--variant op=paged_attention,num_heads=32,...`)
// into code. Today it emits the attn-dialect function of a variant
// (`--emit=mlir`); device targets plug in as further `--emit` kinds.
//
//===----------------------------------------------------------------------===//

#include "compiler/Variant.h"
#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What attn-compile writes. Only `mlir` is built so far; the device targets
/// are listed so that asking for one says it is not built yet rather than
/// "unknown option".
enum class Emit { Mlir, Spirv, Ptx, Msl, TT };

llvm::cl::OptionCategory category("attn-compile options");

llvm::cl::opt<Emit> emitKind(
    "emit", llvm::cl::desc("What to emit"), llvm::cl::init(Emit::Mlir),
    llvm::cl::values(
        clEnumValN(Emit::Mlir, "mlir", "the variant as an attn-dialect module"),
        clEnumValN(Emit::Spirv, "spirv", "SPIR-V kernels (not built yet)"),
        clEnumValN(Emit::Ptx, "ptx", "PTX kernels (not built yet)"),
        clEnumValN(Emit::Msl, "msl", "Metal kernels (not built yet)"),
        clEnumValN(Emit::TT, "tt", "TT-Metalium kernels (not built yet)")),
    llvm::cl::cat(category));

llvm::cl::opt<std::string> variantSpec(
    "variant", llvm::cl::desc("The variant to compile (keys above)"),
    llvm::cl::value_desc("KEY=VALUE,..."), llvm::cl::Required,
    llvm::cl::cat(category));

llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file"),
                                      llvm::cl::value_desc("FILE"),
                                      llvm::cl::init("-"),
                                      llvm::cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

StringRef emitName(Emit emit) {
  switch (emit) {
  case Emit::Mlir:
    return "mlir";
  case Emit::Spirv:
    return "spirv";
  case Emit::Ptx:
    return "ptx";
  case Emit::Msl:
    return "msl";
  case Emit::TT:
    return "tt";
  }
  llvm_unreachable("unknown emit kind");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  std::string overview =
      "attn-compile: ahead-of-time compiler for attention variants\n\n"
      "  attn-compile --emit=mlir --variant "
      "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
      "block_size=16,dtype=bf16 -o v.mlir\n\n"
      "writes a module with one function, named after the op, whose batch "
      "sizes (tokens, requests, cache blocks) are dynamic and whose other "
      "shapes and knobs are those of the variant.\n\n"
      "Variant keys (default) and the ops they apply to:\n" +
      variantKeysHelp();
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);

  if (emitKind != Emit::Mlir)
    return fail("--emit=" + emitName(emitKind) +
                " is not built yet (only --emit=mlir is available)");

  llvm::Expected<Variant> variant = parseVariant(variantSpec);
  if (!variant)
    return fail(llvm::toString(variant.takeError()));

  MLIRContext context;
  context.loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                      tensor::TensorDialect>();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  if (llvm::Error err = buildVariant(*variant, *module))
    return fail(llvm::toString(std::move(err)));

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
