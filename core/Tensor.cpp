//===- Tensor.cpp - A dense host tensor ----------------------------------===//
#include "core/Tensor.h"

#include "core/MemoryBudget.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <new>
#include <sstream>

namespace attn {

namespace {

std::string describeShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  return os.str();
}

template <typename T>
T load(const uint8_t *bytes, int64_t flat) {
  T v;
  std::memcpy(&v, bytes + flat * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t *bytes, int64_t flat, T v) {
  std::memcpy(bytes + flat * sizeof(T), &v, sizeof(T));
}

} // namespace

Result<uint64_t> tensorBytes(uint64_t elementBytes,
                             const std::vector<int64_t> &shape) {
  uint64_t bytes = elementBytes;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0)
      return errorf("a tensor dimension is negative: ", d);
    zero |= d == 0;
  }
  if (zero)
    return uint64_t{0};
  for (int64_t d : shape) {
    if (static_cast<uint64_t>(d) > kMaxTensorBytes / bytes)
      return errorf("a tensor of shape [", describeShape(shape), "] and ",
                    elementBytes, "-byte elements would exceed the limit of ",
                    kMaxTensorBytes, " bytes");
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

Result<Tensor> Tensor::create(DType dtype, std::vector<int64_t> shape) {
  Result<uint64_t> bytes = tensorBytes(dtype, shape);
  if (!bytes)
    return bytes.status();
  ATTN_RETURN_IF_ERROR(checkHostMemory(
      *bytes, "a " + std::string(toString(dtype)) + " tensor of shape [" +
                  describeShape(shape) + "]"));
  try {
    return Tensor(dtype, std::move(shape));
  } catch (const std::bad_alloc &) {
    return errorf("out of host memory for a ", toString(dtype),
                  " tensor of ", *bytes, " bytes");
  }
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  // The size comes from tensorBytes, never from a product that could
  // overflow: a shape it rejects (a caller's bug; shapes from input go
  // through create()) asks for SIZE_MAX bytes, which vector refuses with
  // std::length_error instead of wrapping to a small buffer.
  Result<uint64_t> bytes = tensorBytes(dtype_, shape_);
  assert(bytes && "invalid shape: check shapes from input with create()");
  bytes_.assign(bytes ? static_cast<size_t>(*bytes) : SIZE_MAX, 0);
}

Tensor Tensor::wrap(DType dtype, std::vector<int64_t> shape, void *data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  Result<uint64_t> bytes = tensorBytes(dtype, t.shape_);
  assert(bytes && "wrap() of a shape tensorBytes rejects");
  t.externalBytes_ = static_cast<size_t>(*bytes);
  t.external_ = static_cast<uint8_t *>(data);
  return t;
}

Tensor::Tensor(const Tensor &other)
    : dtype_(other.dtype_), shape_(other.shape_),
      bytes_(other.data(), other.data() + other.numBytes()) {}

Tensor &Tensor::operator=(const Tensor &other) {
  if (this == &other)
    return *this;
  dtype_ = other.dtype_;
  shape_ = other.shape_;
  bytes_.assign(other.data(), other.data() + other.numBytes());
  external_ = nullptr;
  externalBytes_ = 0;
  return *this;
}

bool Tensor::operator==(const Tensor &other) const {
  // An empty tensor's data() may be null, which memcmp must not get.
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         numBytes() == other.numBytes() &&
         (numBytes() == 0 ||
          std::memcmp(data(), other.data(), numBytes()) == 0);
}

// From the bytes rather than the shape, so that a default-constructed
// (empty) Tensor has no elements, while a rank-0 tensor has one.
int64_t Tensor::numElements() const {
  return static_cast<int64_t>(numBytes() / byteWidth(dtype_));
}

int64_t Tensor::offset(std::initializer_list<int64_t> index) const {
  assert(static_cast<int64_t>(index.size()) == rank() && "index rank");
  int64_t flat = 0;
  int64_t axis = 0;
  for (int64_t i : index) {
    assert(i >= 0 && i < shape_[axis] && "index out of bounds");
    flat = flat * shape_[axis] + i;
    ++axis;
  }
  return flat;
}

double Tensor::getFloat(int64_t flat) const {
  assert(flat >= 0 && flat < numElements() && "element out of bounds");
  switch (dtype_) {
  case DType::F32:
    return load<float>(data(), flat);
  case DType::F16:
    return f16BitsToFloat(load<uint16_t>(data(), flat));
  case DType::BF16:
    return bf16BitsToFloat(load<uint16_t>(data(), flat));
  case DType::F8E4M3FN:
    return f8E4M3FNBitsToFloat(load<uint8_t>(data(), flat));
  case DType::F8E5M2:
    return f8E5M2BitsToFloat(load<uint8_t>(data(), flat));
  case DType::I32:
  case DType::I64:
    break;
  }
  assert(false && "getFloat on an integer tensor");
  return 0.0;
}

void Tensor::getFloats(int64_t flat, int64_t count, double *out) const {
  assert(flat >= 0 && count >= 0 && flat + count <= numElements() &&
         "elements out of bounds");
  const uint8_t *base = data();
  switch (dtype_) {
  case DType::F32:
    for (int64_t i = 0; i < count; ++i)
      out[i] = load<float>(base, flat + i);
    return;
  case DType::F16:
    for (int64_t i = 0; i < count; ++i)
      out[i] = f16BitsToFloat(load<uint16_t>(base, flat + i));
    return;
  case DType::BF16:
    for (int64_t i = 0; i < count; ++i)
      out[i] = bf16BitsToFloat(load<uint16_t>(base, flat + i));
    return;
  case DType::F8E4M3FN:
    for (int64_t i = 0; i < count; ++i)
      out[i] = f8E4M3FNBitsToFloat(load<uint8_t>(base, flat + i));
    return;
  case DType::F8E5M2:
    for (int64_t i = 0; i < count; ++i)
      out[i] = f8E5M2BitsToFloat(load<uint8_t>(base, flat + i));
    return;
  case DType::I32:
  case DType::I64:
    break;
  }
  assert(false && "getFloats on an integer tensor");
}

void Tensor::setFloat(int64_t flat, double v) {
  assert(flat >= 0 && flat < numElements() && "element out of bounds");
  switch (dtype_) {
  case DType::F32:
    store<float>(data(), flat, doubleToF32(v));
    return;
  case DType::F16:
    store<uint16_t>(data(), flat, doubleToF16Bits(v));
    return;
  case DType::BF16:
    store<uint16_t>(data(), flat, doubleToBF16Bits(v));
    return;
  case DType::F8E4M3FN:
    store<uint8_t>(data(), flat, doubleToF8E4M3FNBits(v));
    return;
  case DType::F8E5M2:
    store<uint8_t>(data(), flat, doubleToF8E5M2Bits(v));
    return;
  case DType::I32:
  case DType::I64:
    break;
  }
  assert(false && "setFloat on an integer tensor");
}

int64_t Tensor::getInt(int64_t flat) const {
  assert(flat >= 0 && flat < numElements() && "element out of bounds");
  if (dtype_ == DType::I32)
    return load<int32_t>(data(), flat);
  assert(dtype_ == DType::I64 && "getInt on a float tensor");
  return load<int64_t>(data(), flat);
}

void Tensor::setInt(int64_t flat, int64_t v) {
  assert(flat >= 0 && flat < numElements() && "element out of bounds");
  if (dtype_ == DType::I32) {
    assert(v >= INT32_MIN && v <= INT32_MAX && "value does not fit i32");
    store<int32_t>(data(), flat, static_cast<int32_t>(v));
    return;
  }
  assert(dtype_ == DType::I64 && "setInt on a float tensor");
  store<int64_t>(data(), flat, v);
}

std::string Tensor::describe() const {
  return "[" + describeShape(shape_) + "] " + std::string(toString(dtype_));
}

} // namespace attn
