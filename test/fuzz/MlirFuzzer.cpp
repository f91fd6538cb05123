//===- MlirFuzzer.cpp - Fuzz target: attn IR -> verify -> SPIR-V ---------===//
//
// Input: MLIR text. It is parsed with the dialects attn IR is written in
// (attn, func, arith, tensor), verified, and what verifies is compiled for
// target spirv as attn-compile does (compileModule: the attn-to-GPU
// pipeline, plans, SPIR-V serialization). Any input must end in a
// diagnostic or a compiled module, never a crash, an ASan/UBSan report or a
// hang (libFuzzer's -timeout).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <string>

using namespace mlir;
using namespace mlir::attn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads up to a terminating NUL, which files read through
  // llvm::MemoryBuffer have and libFuzzer's bytes do not.
  const std::string text(reinterpret_cast<const char *>(data), size);
  // Parse with attn's own dialects only: the upstream dialects' parsers are
  // not what this target tests. The pipeline's dialects come after.
  DialectRegistry parseDialects;
  parseDialects.insert<AttnDialect, func::FuncDialect, arith::ArithDialect,
                       tensor::TensorDialect>();
  MLIRContext context(parseDialects, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module || failed(verify(*module)))
    return 0;
  DialectRegistry compileDialects;
  registerCompilerDialects(compileDialects);
  context.appendDialectRegistry(compileDialects);
  CompileOptions options;
  options.targets = {::attn::Target::SPIRV};
  (void)compileModule(*module, options);
  return 0;
}
