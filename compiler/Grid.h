//===- Grid.h - Variant grids: JSON -> variant specs -----------*- C++ -*-===//
//
// A grid is a JSON object of variant key -> list of values, or an array of
// such objects (DESIGN.md, "Variants and grids"). Every combination becomes
// one `key=value,...` spec for parseVariant; keys that do not apply to a
// combination's op are left out of it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_GRID_H
#define ATTN_COMPILER_GRID_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::attn {

/// Appends the specs of every combination of the grid `json` to `specs`, in
/// a stable order (keys sorted, the first key varying fastest). `name` (the
/// grid's file) starts every message. An unknown key, a value list that is
/// empty or holds something other than strings, numbers and booleans, and
/// JSON that is not a grid are errors.
llvm::Error expandGrid(llvm::StringRef json, llvm::StringRef name,
                       std::vector<std::string> &specs);

} // namespace mlir::attn

#endif // ATTN_COMPILER_GRID_H
