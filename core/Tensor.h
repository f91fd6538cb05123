//===- Tensor.h - A dense host tensor ------------------------------------===//
//
// The value the reference computes on and the runtime hands to executors: an
// element type, a shape, and row-major (C order) bytes. Floating elements are
// read and written as double; the write rounds once to the element type.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_TENSOR_H
#define ATTN_CORE_TENSOR_H

#include "core/DType.h"
#include "core/Status.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace attn {

/// The largest tensor attn allocates on the host, in bytes (1 TiB): far
/// above any cache a host holds, far below where size arithmetic overflows.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

/// The byte size of a tensor of `shape` with elements of `elementBytes`
/// bytes, or an error when a dimension is negative or the size exceeds
/// kMaxTensorBytes (checked without overflow, whatever the dimensions).
Result<uint64_t> tensorBytes(uint64_t elementBytes,
                             const std::vector<int64_t> &shape);
inline Result<uint64_t> tensorBytes(DType dtype,
                                    const std::vector<int64_t> &shape) {
  return tensorBytes(byteWidth(dtype), shape);
}

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor. The shape must be valid (see create()).
  Tensor(DType dtype, std::vector<int64_t> shape);
  /// A zero-filled tensor, or an error for a shape tensorBytes rejects or
  /// when the host is out of memory. For shapes that come from input.
  static Result<Tensor> create(DType dtype, std::vector<int64_t> shape);
  /// A tensor over the elements at `data` (tensorBytes(dtype, shape) bytes),
  /// which the caller keeps alive: reads and writes go there, nothing is
  /// copied. This is how the CPU device hands its memory to the reference
  /// ops. A copy of a wrapped tensor owns a copy of its elements, and so
  /// does a wrapped tensor assigned another one.
  static Tensor wrap(DType dtype, std::vector<int64_t> shape, void *data);

  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&) noexcept = default;
  Tensor &operator=(Tensor &&) noexcept = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numElements() const;
  size_t numBytes() const { return external_ ? externalBytes_ : bytes_.size(); }

  uint8_t *data() { return external_ ? external_ : bytes_.data(); }
  const uint8_t *data() const { return external_ ? external_ : bytes_.data(); }

  /// Flat row-major offset of a multi-index (no bounds check beyond assert).
  int64_t offset(std::initializer_list<int64_t> index) const;

  /// Float elements as double (exact for every float dtype).
  double getFloat(int64_t flat) const;
  /// Rounds once (nearest-even) to the element type and stores; fp8 types
  /// saturate (DType.h).
  void setFloat(int64_t flat, double v);
  /// getFloat of `count` consecutive elements from `flat` into `out`; one
  /// dtype dispatch per call, for the inner loops of the reference ops.
  void getFloats(int64_t flat, int64_t count, double *out) const;
  /// Integer elements (i32 / i64) widened to int64.
  int64_t getInt(int64_t flat) const;
  void setInt(int64_t flat, int64_t v);

  /// "tensor<?x32x128xbf16>"-like description for messages: "[4, 32, 128] bf16".
  std::string describe() const;

  /// Bitwise equality of dtype, shape and elements.
  bool operator==(const Tensor &other) const;

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<uint8_t> bytes_;
  /// Set by wrap(): the elements live there, not in bytes_.
  uint8_t *external_ = nullptr;
  size_t externalBytes_ = 0;
};

} // namespace attn

#endif // ATTN_CORE_TENSOR_H
