//===- DType.h - Element types and exact narrow float conversions --------===//
//
// Element types of attn tensors, and the conversions between f16/bf16/fp8 bit
// patterns and wider floats. Narrowing rounds to nearest, ties to even, as the
// reference rounds exactly once to the output dtype.
//
// The fp8 types are KV-cache element types only (MLIR's f8E4M3FN and
// f8E5M2). Narrowing to them saturates: a finite value past the largest
// finite one, and an infinity, become that largest value with its sign (448
// for e4m3, 57344 for e5m2); NaN stays NaN. This is vLLM's cache write
// (__NV_SATFINITE) and PTX's cvt.rn.satfinite, for e5m2 as for e4m3, so an
// fp8 cache never holds an infinity.
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

enum class DType { F32, F16, BF16, I32, I64, F8E4M3FN, F8E5M2 };

/// Bytes per element.
size_t byteWidth(DType t);
/// "f32", "f16", "bf16", "i32", "i64", "f8E4M3FN", "f8E5M2": the spelling
/// of MLIR and of --variant.
std::string_view toString(DType t);
std::optional<DType> parseDType(std::string_view s);
/// Whether elements are floats (read with getFloat): the fp8 types too.
bool isFloat(DType t);
/// Whether `t` is one of the fp8 cache element types.
inline bool isFp8(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E5M2;
}
/// Whether `t` can be the dtype of a query, of new keys and values and of
/// out (f32, f16, bf16); an fp8 type is a cache's element type only.
bool isModelDType(DType t);

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
/// fp8 bit patterns -> float, exact. e5m2 is the high byte of an f16; e4m3
/// (FN: finite, no infinity) has bias 7 and one NaN per sign, S.1111.111.
inline float f8E5M2BitsToFloat(uint8_t bits) {
  return f16BitsToFloat(static_cast<uint16_t>(bits) << 8);
}
float f8E4M3FNBitsToFloat(uint8_t bits);
/// Rounds to nearest-even from double directly (one rounding, no double
/// rounding through f32). NaN stays NaN, overflow becomes infinity.
uint16_t doubleToF16Bits(double v);
uint16_t doubleToBF16Bits(double v);
/// Rounds to nearest-even and saturates (see the file comment).
uint8_t doubleToF8E4M3FNBits(double v);
uint8_t doubleToF8E5M2Bits(double v);
/// The largest finite value of an fp8 type (448, 57344).
double fp8MaxFinite(DType t);
/// What an fp8 cache write rounds to fp8: f32(x) / f32(scale), divided in
/// f32 as vLLM's write does (quant_utils.cuh), so the quotient is rounded to
/// f32 before the fp8 rounding.
inline double fp8Quotient(double x, double scale) {
  return static_cast<float>(x) / static_cast<float>(scale);
}
/// Rounds a double to the nearest-even f32.
inline float doubleToF32(double v) { return static_cast<float>(v); }
/// `v` rounded once (nearest-even) to the float dtype `t`, back as double.
double roundToDType(double v, DType t);

} // namespace attn

#endif // ATTN_CORE_DTYPE_H
