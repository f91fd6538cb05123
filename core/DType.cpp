//===- DType.cpp - Element types and exact narrow float conversions ------===//
//
// Narrowing works on the bits of the double: the significand is shifted right
// to the target precision and rounded once, to nearest with ties to even. A
// float cast on the way would round twice (double -> f32 -> f16) and get some
// ties wrong.
//
//===----------------------------------------------------------------------===//
#include "core/DType.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace attn {

size_t byteWidth(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  case DType::F8E4M3FN:
  case DType::F8E5M2:
    return 1;
  }
  return 0;
}

std::string_view toString(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F8E4M3FN:
    return "f8E4M3FN";
  case DType::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view s) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64,
                  DType::F8E4M3FN, DType::F8E5M2})
    if (toString(t) == s)
      return t;
  return std::nullopt;
}

bool isFloat(DType t) { return isModelDType(t) || isFp8(t); }

bool isModelDType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

float f8E4M3FNBitsToFloat(uint8_t bits) {
  const bool negative = bits & 0x80;
  const int exponent = (bits >> 3) & 0xF;
  const int mantissa = bits & 0x7;
  float magnitude;
  if (exponent == 0xF && mantissa == 0x7)
    magnitude = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0) // zero or subnormal: mantissa * 2^-9
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  else
    magnitude = std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
  return negative ? -magnitude : magnitude;
}

namespace {

/// A binary format with `mantissaBits` stored fraction bits and
/// `exponentBits` exponent bits, at most 16 bits wide in all. `maxFinite` is
/// the magnitude bits of its largest finite value: the pattern below the
/// infinity for IEEE formats, 0x7E for e4m3 (whose top exponent holds
/// normal values). A saturating format clamps there; the others overflow to
/// infinity.
struct NarrowFormat {
  int mantissaBits;
  int exponentBits;
  uint16_t quietNaN;
  uint16_t maxFinite;
  bool saturate;
};

/// Rounds `v` once, to nearest with ties to even, into `format`.
uint16_t narrow(double v, NarrowFormat format) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const uint16_t sign =
      static_cast<uint16_t>((bits >> 63) << (format.mantissaBits +
                                             format.exponentBits));
  const int m = format.mantissaBits;
  const uint16_t infinityBits =
      static_cast<uint16_t>(((1u << format.exponentBits) - 1) << m);
  const uint16_t overflowBits =
      format.saturate ? format.maxFinite : infinityBits;
  if (std::isnan(v))
    return sign | format.quietNaN;
  if (std::isinf(v))
    return sign | overflowBits;
  if (v == 0.0)
    return sign;

  // |v| = significand * 2^scale with a 53-bit significand (fewer bits for a
  // double subnormal, which is far below every target's range anyway).
  const int biasedExponent = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t significand = bits & ((uint64_t(1) << 52) - 1);
  int scale;
  int exponent; // unbiased exponent of the leading bit
  if (biasedExponent == 0) {
    scale = -1074;
    exponent = -1023; // below every target's minimum; only used to pick a case
  } else {
    significand |= uint64_t(1) << 52;
    scale = biasedExponent - 1075;
    exponent = biasedExponent - 1023;
  }

  // The target's quantum (value of the last kept bit) at this exponent: the
  // subnormal quantum when |v| is below the smallest normal.
  const int bias = (1 << (format.exponentBits - 1)) - 1;
  const int minExponent = 1 - bias;
  const bool subnormal = exponent < minExponent;
  const int quantum = (subnormal ? minExponent : exponent) - m;
  const int shift = quantum - scale; // bits to drop, always >= 52 - m > 0
  uint64_t kept;
  if (shift > 54) {
    kept = 0; // below half the smallest subnormal
  } else {
    kept = significand >> shift;
    const uint64_t rest = significand & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
      ++kept;
  }

  // A subnormal's bits are its multiple of the quantum; a carry out of the
  // significand ripples into the exponent field, which is what IEEE wants.
  uint64_t magnitude =
      subnormal ? kept
                : (static_cast<uint64_t>(exponent + bias) << m) + kept -
                      (uint64_t(1) << m);
  if (magnitude > format.maxFinite)
    magnitude = overflowBits;
  return sign | static_cast<uint16_t>(magnitude);
}

} // namespace

uint16_t doubleToF16Bits(double v) {
  return narrow(v, NarrowFormat{10, 5, 0x7E00, 0x7BFF, false});
}

uint16_t doubleToBF16Bits(double v) {
  return narrow(v, NarrowFormat{7, 8, 0x7FC0, 0x7F7F, false});
}

uint8_t doubleToF8E4M3FNBits(double v) {
  return static_cast<uint8_t>(narrow(v, NarrowFormat{3, 4, 0x7F, 0x7E, true}));
}

uint8_t doubleToF8E5M2Bits(double v) {
  return static_cast<uint8_t>(narrow(v, NarrowFormat{2, 5, 0x7F, 0x7B, true}));
}

double fp8MaxFinite(DType t) {
  return t == DType::F8E4M3FN ? 448.0 : 57344.0;
}

double roundToDType(double v, DType t) {
  switch (t) {
  case DType::F16:
    return f16BitsToFloat(doubleToF16Bits(v));
  case DType::BF16:
    return bf16BitsToFloat(doubleToBF16Bits(v));
  case DType::F8E4M3FN:
    return f8E4M3FNBitsToFloat(doubleToF8E4M3FNBits(v));
  case DType::F8E5M2:
    return f8E5M2BitsToFloat(doubleToF8E5M2Bits(v));
  default:
    return doubleToF32(v);
  }
}

} // namespace attn
