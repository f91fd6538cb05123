//===- Npy.h - NumPy .npy files <-> tensors --------------------------------===//
//
// Format 1.0 and 2.0, little-endian, C order, with element types <f4, <f2,
// <i4 and <i8. NumPy has no bf16, so a bf16 tensor travels as <f4: written
// exactly, read back with one round to nearest even. That is why reading
// takes the dtype the caller expects.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_TESTING_NPY_H
#define ATTN_REFERENCE_TESTING_NPY_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <optional>
#include <string>
#include <string_view>

namespace attn {

/// Reads the .npy file at `path`. With `expected`, the file must hold that
/// dtype (<f4 for bf16, which is rounded); without, the file's own dtype is
/// kept (<f4 -> f32). Messages name the file.
Result<Tensor> readNpy(const std::string &path,
                       std::optional<DType> expected = std::nullopt);

/// Writes `t` to `path` as .npy (bf16 as <f4).
Status writeNpy(const std::string &path, const Tensor &t);

/// readNpy on the bytes of a file; `name` is used in messages.
Result<Tensor> parseNpy(std::string_view bytes, std::string_view name,
                        std::optional<DType> expected = std::nullopt);

/// The bytes writeNpy writes: format 1.0 (2.0 if the header needs it), the
/// header padded so the data starts at a multiple of 64 bytes.
std::string formatNpy(const Tensor &t);

} // namespace attn

#endif // ATTN_REFERENCE_TESTING_NPY_H
