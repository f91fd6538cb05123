//===- WordsType.h - How kernels move raw bytes as words -------*- C++ -*-===//
//
// The type convert-attn-to-gpu stages and loads `bytes` raw bytes as, and
// the one attn-spirv-vector-loads recognises: both must agree, so both take
// it from here. Header-only: the two libraries do not link each other.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_WORDSTYPE_H
#define ATTN_LOWERING_WORDSTYPE_H

#include "mlir/IR/BuiltinTypes.h"

#include <cassert>

namespace mlir {
namespace attn {

/// The type that holds `bytes` (4, 8, 16 or 32) bytes as words: i32,
/// vector<(bytes / 4) x i32>, or for 32 bytes (SPIR-V vectors have at most
/// four elements) vector<4 x i64>.
inline Type getWordsType(MLIRContext *ctx, int64_t bytes) {
  assert((bytes == 4 || bytes == 8 || bytes == 16 || bytes == 32) &&
         "4, 8, 16 or 32 bytes");
  Type i32 = IntegerType::get(ctx, 32);
  if (bytes == 4)
    return i32;
  if (bytes == 32)
    return VectorType::get({4}, IntegerType::get(ctx, 64));
  return VectorType::get({bytes / 4}, i32);
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_WORDSTYPE_H
