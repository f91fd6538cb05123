//===- DTypeTest.cpp - f16/bf16 rounding and Tensor element access -------===//
#include "core/DType.h"
#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace attn {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64})
    EXPECT_EQ(parseDType(toString(t)), t);
  EXPECT_EQ(parseDType("f64"), std::nullopt);
  EXPECT_EQ(byteWidth(DType::BF16), 2u);
  EXPECT_EQ(byteWidth(DType::I64), 8u);
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_FALSE(isFloat(DType::I32));
}

TEST(DType, F16TiesRoundToEven) {
  // 1 + 2^-11 is halfway between 1 and the next f16, 1 + 2^-10.
  EXPECT_EQ(doubleToF16Bits(1.0 + 0x1p-11), 0x3C00);
  EXPECT_EQ(doubleToF16Bits(1.0 + 3 * 0x1p-11), 0x3C02);
  EXPECT_EQ(doubleToF16Bits(-(1.0 + 0x1p-11)), 0xBC00);
  EXPECT_EQ(doubleToF16Bits(1.0 + 0x1p-11 + 0x1p-52), 0x3C01);
  EXPECT_EQ(doubleToF16Bits(1.0 + 0x1p-11 - 0x1p-52), 0x3C00);
}

TEST(DType, F16RoundsOnceNotThroughF32) {
  // Through f32 the 2^-40 is lost first, leaving a tie that rounds down.
  const double v = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(doubleToF16Bits(static_cast<float>(v)), 0x3C00);
  EXPECT_EQ(doubleToF16Bits(v), 0x3C01);
}

TEST(DType, BF16TiesRoundToEven) {
  EXPECT_EQ(doubleToBF16Bits(1.0 + 0x1p-8), 0x3F80);
  EXPECT_EQ(doubleToBF16Bits(1.0 + 3 * 0x1p-8), 0x3F82);
  const double v = 1.0 + 0x1p-8 + 0x1p-30; // a tie once rounded to f32
  EXPECT_EQ(doubleToBF16Bits(static_cast<float>(v)), 0x3F80);
  EXPECT_EQ(doubleToBF16Bits(v), 0x3F81);
}

TEST(DType, F16Subnormals) {
  EXPECT_EQ(doubleToF16Bits(0x1p-24), 0x0001);         // smallest subnormal
  EXPECT_EQ(doubleToF16Bits(0x1p-25), 0x0000);         // tie -> even (0)
  EXPECT_EQ(doubleToF16Bits(0x1p-25 + 0x1p-60), 0x0001);
  EXPECT_EQ(doubleToF16Bits(3 * 0x1p-25), 0x0002);     // tie 1|2 -> 2
  EXPECT_EQ(doubleToF16Bits(1023 * 0x1p-24), 0x03FF);  // largest subnormal
  EXPECT_EQ(doubleToF16Bits(1023.5 * 0x1p-24), 0x0400); // rounds up to normal
  EXPECT_EQ(doubleToF16Bits(-0x1p-24), 0x8001);
  EXPECT_EQ(doubleToF16Bits(1e-300), 0x0000);
  EXPECT_EQ(doubleToF16Bits(-1e-310), 0x8000); // double subnormal
  EXPECT_EQ(f16BitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(f16BitsToFloat(0x03FF), 1023 * 0x1p-24f);
}

TEST(DType, BF16Subnormals) {
  EXPECT_EQ(doubleToBF16Bits(0x1p-133), 0x0001);
  EXPECT_EQ(doubleToBF16Bits(0x1p-134), 0x0000);
  EXPECT_EQ(doubleToBF16Bits(3 * 0x1p-134), 0x0002);
  EXPECT_EQ(doubleToBF16Bits(127.5 * 0x1p-133), 0x0080);
  EXPECT_EQ(bf16BitsToFloat(0x0001), 0x1p-133f);
}

TEST(DType, OverflowBecomesInfinity) {
  EXPECT_EQ(doubleToF16Bits(65504.0), 0x7BFF); // f16 max
  EXPECT_EQ(doubleToF16Bits(65519.99), 0x7BFF);
  EXPECT_EQ(doubleToF16Bits(65520.0), 0x7C00); // tie with 2^16 -> even: inf
  EXPECT_EQ(doubleToF16Bits(1e10), 0x7C00);
  EXPECT_EQ(doubleToF16Bits(-1e300), 0xFC00);
  EXPECT_EQ(doubleToF16Bits(inf), 0x7C00);
  EXPECT_EQ(doubleToF16Bits(-inf), 0xFC00);
  EXPECT_EQ(doubleToBF16Bits(0x1.FEp127), 0x7F7F); // bf16 max
  EXPECT_EQ(doubleToBF16Bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(doubleToBF16Bits(1e39), 0x7F80);
  EXPECT_EQ(doubleToBF16Bits(-inf), 0xFF80);
}

TEST(DType, NaNStaysNaN) {
  auto isF16NaN = [](uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF); };
  auto isBF16NaN = [](uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F); };
  EXPECT_TRUE(isF16NaN(doubleToF16Bits(nan)));
  EXPECT_TRUE(isBF16NaN(doubleToBF16Bits(nan)));
  EXPECT_TRUE(isBF16NaN(doubleToBF16Bits(-nan)));
  EXPECT_TRUE(std::isnan(f16BitsToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(0x7FC1)));
}

TEST(DType, SignedZero) {
  EXPECT_EQ(doubleToF16Bits(-0.0), 0x8000);
  EXPECT_EQ(doubleToBF16Bits(-0.0), 0x8000);
  EXPECT_EQ(doubleToF16Bits(0.0), 0x0000);
}

TEST(DType, EveryBitPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float h = f16BitsToFloat(bits);
    const float bf = bf16BitsToFloat(bits);
    if (std::isnan(h))
      EXPECT_TRUE(std::isnan(f16BitsToFloat(doubleToF16Bits(h))));
    else
      ASSERT_EQ(doubleToF16Bits(h), bits) << b;
    if (std::isnan(bf))
      EXPECT_TRUE(std::isnan(bf16BitsToFloat(doubleToBF16Bits(bf))));
    else
      ASSERT_EQ(doubleToBF16Bits(bf), bits) << b;
  }
}

/// The nearest-even value among the two neighbours, decided exactly in long
/// double: an oracle independent of the bit manipulation.
template <typename ToBits, typename FromBits>
void checkAgainstNeighbours(ToBits toBits, FromBits fromBits, double v) {
  const uint16_t bits = toBits(v);
  const long double got = fromBits(bits);
  if (std::isinf(got))
    return; // overflow is covered by OverflowBecomesInfinity
  // The neighbours one step towards and away from zero.
  const uint16_t down = bits & 0x7FFF ? bits - 1 : bits;
  const uint16_t up = bits + 1;
  const long double err = std::fabs(static_cast<long double>(v) - got);
  for (uint16_t other : {down, up}) {
    const long double o = fromBits(other);
    if (std::isnan(o) || std::isinf(o) || other == bits)
      continue;
    const long double otherErr = std::fabs(static_cast<long double>(v) - o);
    ASSERT_LE(err, otherErr) << v;
    if (err == otherErr) {
      ASSERT_EQ(bits & 1, 0) << "tie not to even at " << v;
    }
  }
}

TEST(DType, RandomValuesRoundToNearest) {
  std::mt19937_64 engine(7);
  for (int i = 0; i < 200000; ++i) {
    // Random bits spread over the range where f16/bf16 are finite.
    uint64_t raw = engine();
    double mantissa = 1.0 + static_cast<double>(raw >> 12) * 0x1p-52;
    const int exponent = static_cast<int>(engine() % 60) - 30;
    const double v = std::ldexp(mantissa, exponent) * (raw & 1 ? -1 : 1);
    checkAgainstNeighbours(doubleToF16Bits, f16BitsToFloat, v);
    checkAgainstNeighbours(doubleToBF16Bits, bf16BitsToFloat,
                           std::ldexp(v, static_cast<int>(engine() % 200) - 100));
  }
}

TEST(Tensor, ElementsRoundOnceAndReadBack) {
  Tensor t(DType::BF16, {2, 3});
  EXPECT_EQ(t.numElements(), 6);
  EXPECT_EQ(t.numBytes(), 12u);
  EXPECT_EQ(t.offset({1, 2}), 5);
  t.setFloat(t.offset({1, 2}), 1.0 + 0x1p-8 + 0x1p-30);
  EXPECT_EQ(t.getFloat(5), 1.0 + 0x1p-7);
  EXPECT_EQ(t.getFloat(0), 0.0);
  EXPECT_EQ(t.describe(), "[2, 3] bf16");

  Tensor f(DType::F32, {1});
  f.setFloat(0, 0.1);
  EXPECT_EQ(f.getFloat(0), static_cast<double>(0.1f));

  Tensor i(DType::I64, {2});
  i.setInt(1, -5000000000);
  EXPECT_EQ(i.getInt(1), -5000000000);
  Tensor j(DType::I32, {3});
  j.setInt(2, -7);
  EXPECT_EQ(j.getInt(2), -7);
  EXPECT_EQ(j.describe(), "[3] i32");
  EXPECT_FALSE(i == Tensor(DType::I64, {2}));
  EXPECT_TRUE(Tensor(DType::F16, {0, 4}) == Tensor(DType::F16, {0, 4}));
}

} // namespace
} // namespace attn
