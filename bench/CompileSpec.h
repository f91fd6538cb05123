//===- CompileSpec.h - Compile one variant spec in process -----*- C++ -*-===//
//
// What the device benchmarks share before they load kernels: an
// `attn-compile --variant` spec built and compiled in process, in a context
// of its own, into one plan and its kernels. Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_COMPILESPEC_H
#define ATTN_BENCH_COMPILESPEC_H

#include "compiler/Compile.h"
#include "compiler/Variant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <string>

namespace attn::bench {

/// `spec` compiled with `options`; nullopt, and why in `error`, when it does
/// not parse, build or compile to exactly one plan.
inline std::optional<mlir::attn::CompiledModule>
compileSpec(const std::string &spec, const mlir::attn::CompileOptions &options,
            std::string &error) {
  mlir::DialectRegistry registry;
  mlir::attn::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  llvm::Expected<mlir::attn::Variant> variant = mlir::attn::parseVariant(spec);
  if (!variant) {
    error = llvm::toString(variant.takeError());
    return std::nullopt;
  }
  mlir::OpBuilder builder(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(builder.getUnknownLoc());
  if (llvm::Error err = mlir::attn::buildVariant(*variant, *module)) {
    error = llvm::toString(std::move(err));
    return std::nullopt;
  }
  mlir::FailureOr<mlir::attn::CompiledModule> compiled =
      mlir::attn::compileModule(*module, options);
  if (mlir::failed(compiled) || compiled->plans.size() != 1) {
    error = "cannot compile the variant: " + diagnostics;
    return std::nullopt;
  }
  return std::move(*compiled);
}

} // namespace attn::bench

#endif // ATTN_BENCH_COMPILESPEC_H
