//===- VariantFuzzer.cpp - Fuzz target: variant specs and grids ----------===//
//
// Input: a `key=value,...` variant spec (attn-compile --variant), or, when
// it starts with '{' or '[', a JSON grid (attn-compile --grid). Every spec
// parseVariant accepts must build a function the verifier accepts: a
// variant that passes the parser's checks and then fails to build means the
// two disagree. A grid's specs go through the same checks.
//
//===----------------------------------------------------------------------===//

#include "compiler/Grid.h"
#include "compiler/Variant.h"
#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// How many specs of one grid are built: expansion is checked in full, the
/// build (the slow part) on the first few.
constexpr size_t kMaxBuiltSpecs = 16;

void checkSpec(MLIRContext &context, const std::string &spec) {
  llvm::Expected<Variant> variant = parseVariant(spec);
  if (!variant) {
    llvm::consumeError(variant.takeError());
    return;
  }
  (void)variantParameters(*variant);
  (void)variantName(*variant);
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  if (llvm::Error err = buildVariant(*variant, *module)) {
    llvm::errs() << "variant: parseVariant accepts '" << spec
                 << "', buildVariant fails: " << llvm::toString(std::move(err))
                 << "\n";
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect,
                      tensor::TensorDialect>();
  // Verifier diagnostics are what a failed build returns; keep them quiet.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  if (!text.starts_with("{") && !text.starts_with("[")) {
    checkSpec(context, text.str());
    return 0;
  }
  std::vector<std::string> specs;
  if (llvm::Error err = expandGrid(text, "fuzz.json", specs)) {
    llvm::consumeError(std::move(err));
    return 0;
  }
  for (size_t i = 0; i < specs.size() && i < kMaxBuiltSpecs; ++i)
    checkSpec(context, specs[i]);
  return 0;
}
