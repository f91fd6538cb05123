//===- TextNesting.h - Bracket depth before a recursive parser --*- C++ -*-===//
//
// llvm::json's parser and MLIR's attribute, type and region parsers recurse
// once per nesting level, so a text nested a hundred thousand brackets deep
// overflows the stack (SIGSEGV) before they can report anything. Tools scan
// the text first with checkNesting, which counts depth without recursing.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_TEXTNESTING_H
#define ATTN_CORE_TEXTNESTING_H

#include "core/Status.h"

#include <string_view>

namespace attn {

/// The deepest nesting handed to a recursive parser: far above any attn IR,
/// grid or manifest (under 20), far below what overflows a thread's 8 MiB
/// stack in those parsers.
inline constexpr int kMaxTextNesting = 256;

/// Checks that the brackets of `text` ([ ] { } ( ) < >, outside double
/// quoted strings and // comments; MLIR's "->" and ">=" are not brackets)
/// nest at most `maxDepth` deep. The error is "NAME:LINE:COL: ..." at the
/// bracket that goes deeper.
Status checkNesting(std::string_view text, std::string_view name,
                    int maxDepth = kMaxTextNesting);

} // namespace attn

#endif // ATTN_CORE_TEXTNESTING_H
