//===- Interpreter.h - Runs attn functions on the CPU reference ----*- C++ -*-===//
//
// Walks a func.func whose body holds attn ops (and the arith.constant,
// tensor.empty, tensor.dim and func.return around them), evaluating each op
// with the reference op functions of reference/ops. What it computes is, by
// definition, what the function means.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_INTERP_INTERPRETER_H
#define ATTN_REFERENCE_INTERP_INTERPRETER_H

#include "core/Tensor.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace attn {

/// Runs `func` on `args` and returns its results. The arguments are checked
/// against the signature first (see checkArguments in Signature.h); they are
/// taken by value, so a caller that is done with them moves them in and no
/// cache is copied. Failures (invalid metadata, an unsupported op, ...) are
/// errors whose message starts with the location of the op that failed.
/// With `naiveDevicePrecision`, paged attention, MLA decode and
/// merge_states compute what a naive implementation in their output dtype
/// would (PagedAttentionParams in reference/ops/Ops.h), and cache writes,
/// which only copy, stay exact: not the definition, the yardstick of
/// attn-diff's second verdict.
llvm::Expected<std::vector<Tensor>> interpret(mlir::func::FuncOp func,
                                              std::vector<Tensor> args,
                                              bool naiveDevicePrecision = false);

} // namespace attn

#endif // ATTN_REFERENCE_INTERP_INTERPRETER_H
