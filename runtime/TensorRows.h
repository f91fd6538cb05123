//===- TensorRows.h - Leading rows of padded batch tensors -----*- C++ -*-===//
//
// KernelExecutor calls may carry padded tensors: rows (dimension 0) beyond
// the batch's tokens are neither read nor written. Executors whose kernels
// take exactly the batch's rows (the reference ops, compiled plans) cut the
// inputs to those rows and copy their results back into the caller's
// tensors with these two functions.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_TENSORROWS_H
#define ATTN_RUNTIME_TENSORROWS_H

#include "reference/ops/Status.h"
#include "reference/ops/Tensor.h"

#include <cstdint>
#include <string_view>

namespace attn::runtime {

/// A copy of the first `rows` rows of `t` (rank >= 1, rows in
/// [0, t.dim(0)]).
Tensor leadingRows(const Tensor &t, int64_t rows);

/// Copies `src` into the first src.dim(0) rows of `dst`, which must have
/// src's dtype and trailing dimensions and at least as many rows. `name`
/// names `dst` in messages.
Status copyIntoLeadingRows(const Tensor &src, Tensor &dst,
                           std::string_view name);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_TENSORROWS_H
