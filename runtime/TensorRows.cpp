//===- TensorRows.cpp - Leading rows of padded batch tensors -------------===//

#include "runtime/TensorRows.h"

#include <cassert>
#include <cstring>

namespace attn::runtime {

namespace {

/// Bytes of one row (everything after dimension 0).
size_t rowBytes(const Tensor &t) {
  size_t bytes = byteWidth(t.dtype());
  for (int64_t i = 1; i < t.rank(); ++i)
    bytes *= static_cast<size_t>(t.dim(i));
  return bytes;
}

} // namespace

Tensor leadingRows(const Tensor &t, int64_t rows) {
  assert(t.rank() >= 1 && rows >= 0 && rows <= t.dim(0));
  std::vector<int64_t> shape = t.shape();
  shape[0] = rows;
  Tensor out(t.dtype(), std::move(shape));
  if (out.numBytes() != 0)
    std::memcpy(out.data(), t.data(), out.numBytes());
  return out;
}

Status copyIntoLeadingRows(const Tensor &src, Tensor &dst,
                           std::string_view name) {
  bool fits = src.rank() >= 1 && dst.rank() == src.rank() &&
              dst.dtype() == src.dtype() && dst.dim(0) >= src.dim(0);
  for (int64_t i = 1; fits && i < src.rank(); ++i)
    fits = dst.dim(i) == src.dim(i);
  if (!fits)
    return errorf(name, " is ", dst.describe(), ", which cannot hold the ",
                  src.describe(), " result");
  if (src.numBytes() != 0)
    std::memcpy(dst.data(), src.data(), src.dim(0) * rowBytes(src));
  return Status::ok();
}

} // namespace attn::runtime
