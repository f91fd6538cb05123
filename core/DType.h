//===- DType.h - Element types and exact 16-bit float conversions --------===//
//
// Element types of attn tensors, and the conversions between f16/bf16 bit
// patterns and wider floats. Narrowing rounds to nearest, ties to even, as the
// reference rounds exactly once to the output dtype.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_DTYPE_H
#define ATTN_CORE_DTYPE_H

#include <bit>
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

/// IEEE half / bfloat16 bit patterns <-> float / double. Widening is exact;
/// it is inline because the reference ops widen every element they read.
inline float f16BitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  // Rebias the exponent (15 -> 127); all ones stays all ones (inf / NaN).
  const uint32_t wideExponent = exponent == 0x1F ? 0xFF : exponent + 112;
  return std::bit_cast<float>(sign | wideExponent << 23 | mantissa << 13);
}
inline float bf16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
/// Rounds to nearest-even from double directly (one rounding, no double
/// rounding through f32). NaN stays NaN, overflow becomes infinity.
uint16_t doubleToF16Bits(double v);
uint16_t doubleToBF16Bits(double v);
/// Rounds a double to the nearest-even f32.
inline float doubleToF32(double v) { return static_cast<float>(v); }
/// `v` rounded once (nearest-even) to the float dtype `t`, back as double.
double roundToDType(double v, DType t);

} // namespace attn

#endif // ATTN_CORE_DTYPE_H
