//===- DType.h - Element types and exact 16-bit float conversions --------===//
//
// Element types of attn tensors, and the conversions between f16/bf16 bit
// patterns and wider floats. Narrowing rounds to nearest, ties to even, as the
// reference rounds exactly once to the output dtype.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_OPS_DTYPE_H
#define ATTN_REFERENCE_OPS_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace attn {

enum class DType { F32, F16, BF16, I32, I64 };

/// Bytes per element.
size_t byteWidth(DType t);
/// "f32", "f16", "bf16", "i32", "i64": the spelling of MLIR and of --variant.
std::string_view toString(DType t);
std::optional<DType> parseDType(std::string_view s);
bool isFloat(DType t);

/// IEEE half / bfloat16 bit patterns <-> float / double.
float f16BitsToFloat(uint16_t bits);
float bf16BitsToFloat(uint16_t bits);
/// Rounds to nearest-even from double directly (one rounding, no double
/// rounding through f32). NaN stays NaN, overflow becomes infinity.
uint16_t doubleToF16Bits(double v);
uint16_t doubleToBF16Bits(double v);
/// Rounds a double to the nearest-even f32.
inline float doubleToF32(double v) { return static_cast<float>(v); }

} // namespace attn

#endif // ATTN_REFERENCE_OPS_DTYPE_H
