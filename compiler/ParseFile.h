//===- ParseFile.h - An .mlir input, parsed within limits -------*- C++ -*-===//
//
// The one way the tools read an .mlir file: its text is checked for bracket
// nesting (core/TextNesting.h) before MLIR's recursive parser sees it, so a
// deeply nested attribute is an error at its location, not a stack overflow.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_PARSEFILE_H
#define ATTN_COMPILER_PARSEFILE_H

#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
class ModuleOp;

namespace attn {

/// Opens and parses `path` ("-": stdin) into `context` through `sourceMgr`,
/// whose diagnostic handler the caller may install (parse errors print with
/// file:line:col). Null on failure; `error` says why when the file could not
/// be opened or nests too deep (and stays empty when the parser reported
/// the problem).
OwningOpRef<ModuleOp> parseModuleFile(llvm::StringRef path,
                                      MLIRContext &context,
                                      llvm::SourceMgr &sourceMgr,
                                      std::string &error);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_PARSEFILE_H
