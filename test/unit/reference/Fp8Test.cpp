//===- Fp8Test.cpp - fp8 cache element types, quantize and dequantize ----===//
//
// The conversions of DType.h for f8E4M3FN and f8E5M2 (every bit pattern,
// saturation, ties), and the ops on fp8 caches: the write stores
// fp8(x / scale), attention and MLA decode read scale * cached exactly.
//
//===----------------------------------------------------------------------===//
#include "core/DType.h"
#include "reference/ops/Ops.h"
#include "reference/testing/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace attn {
namespace {

using test::floats;
using test::ints;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

double decode(DType t, uint8_t bits) {
  return t == DType::F8E4M3FN ? f8E4M3FNBitsToFloat(bits)
                              : f8E5M2BitsToFloat(bits);
}
uint8_t encode(DType t, double v) {
  return t == DType::F8E4M3FN ? doubleToF8E4M3FNBits(v)
                              : doubleToF8E5M2Bits(v);
}

class Fp8Types : public ::testing::TestWithParam<DType> {};

TEST(Fp8, Names) {
  EXPECT_EQ(toString(DType::F8E4M3FN), "f8E4M3FN");
  EXPECT_EQ(parseDType("f8E5M2"), DType::F8E5M2);
  EXPECT_EQ(byteWidth(DType::F8E4M3FN), 1u);
  EXPECT_TRUE(isFloat(DType::F8E5M2));
  EXPECT_TRUE(isFp8(DType::F8E5M2));
  EXPECT_FALSE(isModelDType(DType::F8E4M3FN));
  EXPECT_TRUE(isModelDType(DType::BF16));
}

TEST(Fp8, KnownValues) {
  // Values from the formats' definitions, not from the decoder.
  EXPECT_EQ(f8E4M3FNBitsToFloat(0x38), 1.0);
  EXPECT_EQ(f8E4M3FNBitsToFloat(0x7E), 448.0);
  EXPECT_EQ(f8E4M3FNBitsToFloat(0x78), 256.0); // top exponent: normal values
  EXPECT_EQ(f8E4M3FNBitsToFloat(0x08), 0x1p-6);
  EXPECT_EQ(f8E4M3FNBitsToFloat(0x01), 0x1p-9);
  EXPECT_EQ(f8E4M3FNBitsToFloat(0xB9), -1.125);
  EXPECT_TRUE(std::isnan(f8E4M3FNBitsToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(f8E4M3FNBitsToFloat(0xFF)));
  EXPECT_EQ(f8E5M2BitsToFloat(0x3C), 1.0);
  EXPECT_EQ(f8E5M2BitsToFloat(0x7B), 57344.0);
  EXPECT_EQ(f8E5M2BitsToFloat(0x01), 0x1p-16);
  EXPECT_EQ(f8E5M2BitsToFloat(0x7C), inf);
  EXPECT_TRUE(std::isnan(f8E5M2BitsToFloat(0x7D)));
  EXPECT_EQ(fp8MaxFinite(DType::F8E4M3FN), 448.0);
  EXPECT_EQ(fp8MaxFinite(DType::F8E5M2), 57344.0);
}

TEST_P(Fp8Types, EveryValueRoundTrips) {
  const DType t = GetParam();
  int finite = 0;
  for (int bits = 0; bits < 256; ++bits) {
    const double v = decode(t, static_cast<uint8_t>(bits));
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(decode(t, encode(t, v)))) << bits;
      continue;
    }
    if (std::isinf(v))
      continue; // e5m2's infinities saturate (below)
    ++finite;
    EXPECT_EQ(encode(t, v), bits) << "value " << v;
    EXPECT_EQ(roundToDType(v, t), v);
  }
  // e4m3: 256 patterns less the two NaNs; e5m2: less 6 NaNs and 2 infinities.
  EXPECT_EQ(finite, t == DType::F8E4M3FN ? 254 : 248);
}

TEST_P(Fp8Types, SaturatesToTheLargestFinite) {
  const DType t = GetParam();
  const double max = fp8MaxFinite(t);
  const uint8_t maxBits = encode(t, max);
  for (double v : {max * 1.01, max * 1.5, max * 4, 1e30, inf}) {
    EXPECT_EQ(encode(t, v), maxBits) << v;
    EXPECT_EQ(decode(t, encode(t, -v)), -max) << v;
  }
  EXPECT_TRUE(std::isnan(decode(t, encode(t, nan))));
  EXPECT_TRUE(std::isnan(decode(t, encode(t, -nan))));
}

TEST(Fp8, RoundingTiesGoToEven) {
  // e4m3 has 3 fraction bits: 1 + 1/16 is halfway between 1 and 1.125.
  EXPECT_EQ(f8E4M3FNBitsToFloat(doubleToF8E4M3FNBits(1.0 + 1.0 / 16)), 1.0);
  EXPECT_EQ(f8E4M3FNBitsToFloat(doubleToF8E4M3FNBits(1.0 + 3.0 / 16)), 1.25);
  EXPECT_EQ(f8E4M3FNBitsToFloat(doubleToF8E4M3FNBits(1.0 + 1.0 / 16 + 1e-9)),
            1.125);
  // Subnormal ties: 2^-10 is halfway between 0 and 2^-9.
  EXPECT_EQ(doubleToF8E4M3FNBits(0x1p-10), 0x00);
  EXPECT_EQ(doubleToF8E4M3FNBits(3 * 0x1p-10), 0x02);
  EXPECT_EQ(doubleToF8E4M3FNBits(-3 * 0x1p-10), 0x82);
  // 464 is halfway between 448 and 480 (the NaN pattern): to even is 480,
  // out of range, so it saturates.
  EXPECT_EQ(doubleToF8E4M3FNBits(464.0), 0x7E);
  EXPECT_EQ(doubleToF8E4M3FNBits(447.0), 0x7E);
  EXPECT_EQ(doubleToF8E4M3FNBits(432.0), 0x7E); // 416 / 448 tie: 448 is even
  // e5m2 has 2 fraction bits.
  EXPECT_EQ(f8E5M2BitsToFloat(doubleToF8E5M2Bits(1.0 + 1.0 / 8)), 1.0);
  EXPECT_EQ(f8E5M2BitsToFloat(doubleToF8E5M2Bits(1.0 + 3.0 / 8)), 1.5);
  EXPECT_EQ(doubleToF8E5M2Bits(0x1p-17), 0x00);
  EXPECT_EQ(doubleToF8E5M2Bits(3 * 0x1p-17), 0x02);
  // Between 57344 and where the infinity would be: saturated.
  EXPECT_EQ(doubleToF8E5M2Bits(61440.0), 0x7B);
}

TEST_P(Fp8Types, NpyStoresExactFloats) {
  const DType t = GetParam();
  Tensor x(t, {3});
  x.setFloat(0, 1.5);
  x.setFloat(1, -0x1p-9);
  x.setFloat(2, 1e9);
  Result<Tensor> back = parseNpy(formatNpy(x), "x.npy", t);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(*back, x);
}

/// A cache of `dtype` and the same cache in f32 holding what the fp8 one
/// means: scale * cached, per part and kv head.
struct CachePair {
  Tensor fp8;
  Tensor exact;
};

CachePair writeBoth(DType dtype, KvLayout layout, const Tensor &key,
                    const Tensor &value, const Tensor &slots,
                    const KvCacheScales &scales, int64_t numBlocks,
                    int64_t blockSize) {
  const int64_t g = key.dim(1), d = key.dim(2);
  std::vector<int64_t> shape = layout == KvLayout::NHD
                                   ? std::vector<int64_t>{numBlocks, 2,
                                                          blockSize, g, d}
                                   : std::vector<int64_t>{numBlocks, 2, g,
                                                          blockSize, d};
  CachePair pair{Tensor(dtype, shape), Tensor(DType::F32, shape)};
  EXPECT_TRUE(
      reshapeAndCache(key, value, pair.fp8, slots, layout, scales).isOk());
  const KvCacheGeometry geometry =
      *KvCacheGeometry::of(pair.exact, layout);
  for (int64_t block = 0; block < numBlocks; ++block)
    for (int64_t offset = 0; offset < blockSize; ++offset)
      for (int64_t head = 0; head < g; ++head)
        for (KvPart part : {KvPart::Key, KvPart::Value}) {
          const Tensor &scale =
              part == KvPart::Key ? *scales.key : *scales.value;
          const double s = scale.getFloat(scale.dim(0) == 1 ? 0 : head);
          const int64_t row = geometry.rowOffset(part, block, offset, head);
          for (int64_t e = 0; e < d; ++e)
            pair.exact.setFloat(row + e, pair.fp8.getFloat(row + e) * s);
        }
  return pair;
}

TEST_P(Fp8Types, CacheWriteQuantizesEveryValueExactly) {
  // Every finite fp8 value v, times a scale, written and read back: the
  // cache holds v, and scale * v is the value written.
  const DType t = GetParam();
  std::vector<double> values;
  for (int bits = 0; bits < 256; ++bits) {
    const double v = decode(t, static_cast<uint8_t>(bits));
    if (std::isfinite(v))
      values.push_back(v);
  }
  const int64_t d = static_cast<int64_t>(values.size());
  for (double s : {1.0, 0.25, 8.0}) {
    std::vector<double> scaled;
    for (double v : values)
      scaled.push_back(v * s);
    const Tensor key = floats(DType::F32, {1, 1, d}, scaled);
    const Tensor scale = floats(DType::F32, {1}, {s});
    Tensor cache(t, {1, 2, 1, 1, d});
    ASSERT_TRUE(reshapeAndCache(key, key, cache, ints(DType::I64, {1}, {0}),
                                KvLayout::NHD, {&scale, &scale})
                    .isOk());
    for (int64_t e = 0; e < d; ++e) {
      EXPECT_EQ(cache.getFloat(e), values[e]) << "scale " << s;
      EXPECT_EQ(cache.getFloat(d + e) * s, scaled[e]) << "scale " << s;
    }
  }
}

TEST_P(Fp8Types, CacheWriteSaturates) {
  const DType t = GetParam();
  const Tensor key = floats(DType::BF16, {1, 1, 3}, {1e6, -1e6, 3.0});
  const Tensor scale = floats(DType::F32, {1}, {0.5});
  Tensor cache(t, {1, 2, 1, 1, 3});
  ASSERT_TRUE(reshapeAndCache(key, key, cache, ints(DType::I64, {1}, {0}),
                              KvLayout::NHD, {&scale, &scale})
                  .isOk());
  EXPECT_EQ(cache.getFloat(0), fp8MaxFinite(t));
  EXPECT_EQ(cache.getFloat(1), -fp8MaxFinite(t));
  EXPECT_EQ(cache.getFloat(2), 6.0); // 3 / 0.5
}

class Fp8Layouts
    : public ::testing::TestWithParam<std::tuple<DType, KvLayout>> {};

TEST_P(Fp8Layouts, AttentionReadsScaledValuesExactly) {
  // Attention over the fp8 cache equals attention over an f32 cache that
  // holds scale * cached, bit for bit, with per-layer and per-head scales.
  const auto [t, layout] = GetParam();
  const int64_t g = 2, h = 4, d = 8, blockSize = 4, numBlocks = 3, tokens = 9;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 2.0);
  std::vector<double> k, v, q;
  for (int64_t i = 0; i < tokens * g * d; ++i) {
    k.push_back(normal(rng));
    v.push_back(normal(rng));
  }
  for (int64_t i = 0; i < 3 * h * d; ++i)
    q.push_back(normal(rng));
  const Tensor key = floats(DType::F32, {tokens, g, d}, k);
  const Tensor value = floats(DType::F32, {tokens, g, d}, v);
  std::vector<int64_t> slotList;
  for (int64_t i = 0; i < tokens; ++i)
    slotList.push_back((i + 2) % (numBlocks * blockSize));
  const Tensor slots = ints(DType::I64, {tokens}, slotList);
  // Scales of few significant bits, so that the f32 cache holds scale *
  // cached exactly.
  const Tensor perLayer = floats(DType::F32, {1}, {0.046875});
  const Tensor perHead = floats(DType::F32, {g}, {0.5, 0.0068359375});
  const KvCacheScales scales{&perLayer, &perHead};
  const CachePair caches =
      writeBoth(t, layout, key, value, slots, scales, numBlocks, blockSize);

  // Two requests: a decode over 5 keys and a 2-token prefill over 4.
  const Tensor query = floats(DType::F32, {3, h, d}, q);
  const Tensor blockTable = ints(DType::I32, {2, 3}, {0, 1, 2, 2, 1, 0});
  const Tensor seqLens = ints(DType::I32, {2}, {5, 4});
  const Tensor qsl = ints(DType::I32, {3}, {0, 1, 3});
  PagedAttentionParams params;
  params.layout = layout;
  params.scale = 0.3;
  Result<AttentionOutput> got = pagedAttention(
      query, caches.fp8, blockTable, seqLens, qsl, nullptr, nullptr, params,
      scales);
  ASSERT_TRUE(got.isOk()) << got.message();
  Result<AttentionOutput> want =
      pagedAttention(query, caches.exact, blockTable, seqLens, qsl, nullptr,
                     nullptr, params);
  ASSERT_TRUE(want.isOk()) << want.message();
  EXPECT_EQ(got->out, want->out);
  EXPECT_EQ(got->lse, want->lse);

  // The naive form reads the same keys to within f32 and model rounding.
  params.naiveDevicePrecision = true;
  Result<AttentionOutput> naive = pagedAttention(
      query, caches.fp8, blockTable, seqLens, qsl, nullptr, nullptr, params,
      scales);
  ASSERT_TRUE(naive.isOk()) << naive.message();
  for (int64_t i = 0; i < want->out.numElements(); ++i)
    EXPECT_NEAR(naive->out.getFloat(i), want->out.getFloat(i), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    All, Fp8Layouts,
    ::testing::Combine(::testing::Values(DType::F8E4M3FN, DType::F8E5M2),
                       ::testing::Values(KvLayout::NHD, KvLayout::HND)));

TEST_P(Fp8Types, MlaWriteAndDecode) {
  const DType t = GetParam();
  const int64_t l = 6, p = 2, blockSize = 2, numBlocks = 3, tokens = 5;
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> c, pe, q;
  for (int64_t i = 0; i < tokens * l; ++i)
    c.push_back(normal(rng));
  for (int64_t i = 0; i < tokens * p; ++i)
    pe.push_back(normal(rng));
  for (int64_t i = 0; i < 2 * 3 * (l + p); ++i)
    q.push_back(normal(rng));
  const Tensor kvC = floats(DType::BF16, {tokens, l}, c);
  const Tensor kPe = floats(DType::BF16, {tokens, p}, pe);
  const Tensor slots = ints(DType::I64, {tokens}, {0, 1, 2, 3, 4});
  const Tensor scale = floats(DType::F32, {1}, {0.01953125}); // 5 / 256
  Tensor cache(t, {numBlocks, blockSize, l + p});
  ASSERT_TRUE(concatAndCacheMla(kvC, kPe, cache, slots, &scale).isOk());
  Tensor exact(DType::F32, cache.shape());
  for (int64_t i = 0; i < cache.numElements(); ++i) {
    const double s = scale.getFloat(0);
    exact.setFloat(i, cache.getFloat(i) * s);
    if (i % (l + p) < l && i / (l + p) < tokens) // written from kvC, rounded
      EXPECT_EQ(cache.getFloat(i),
                roundToDType(kvC.getFloat(i / (l + p) * l + i % (l + p)) / s,
                             t));
  }

  const Tensor query = floats(DType::F32, {2, 3, l + p}, q);
  const Tensor blockTable = ints(DType::I32, {2, 3}, {0, 1, 2, 2, 0, 1});
  const Tensor seqLens = ints(DType::I32, {2}, {5, 3});
  MlaDecodeParams params;
  params.scale = 0.4;
  params.kvLoraRank = l;
  params.numKvSplits = 2;
  Result<AttentionOutput> got =
      mlaDecode(query, cache, blockTable, seqLens, params, &scale);
  ASSERT_TRUE(got.isOk()) << got.message();
  Result<AttentionOutput> want =
      mlaDecode(query, exact, blockTable, seqLens, params);
  ASSERT_TRUE(want.isOk()) << want.message();
  EXPECT_EQ(got->out, want->out);
  EXPECT_EQ(got->lse, want->lse);
}

INSTANTIATE_TEST_SUITE_P(All, Fp8Types,
                         ::testing::Values(DType::F8E4M3FN, DType::F8E5M2));

TEST(Fp8, ScaleErrors) {
  const Tensor key = floats(DType::F16, {1, 2, 2}, {1, 2, 3, 4});
  const Tensor slots = ints(DType::I64, {1}, {0});
  Tensor fp8(DType::F8E4M3FN, {1, 2, 1, 2, 2});
  Tensor f16(DType::F16, {1, 2, 1, 2, 2});
  const Tensor one = floats(DType::F32, {1}, {1.0});
  const Tensor three = floats(DType::F32, {3}, {1, 1, 1});
  const Tensor zero = floats(DType::F32, {1}, {0.0});
  const Tensor f16Scale = floats(DType::F16, {1}, {1.0});
  EXPECT_ERROR(reshapeAndCache(key, key, fp8, slots, KvLayout::NHD),
               "the f8E4M3FN cache needs k_scale");
  EXPECT_ERROR(reshapeAndCache(key, key, fp8, slots, KvLayout::NHD,
                               {&one, nullptr}),
               "the f8E4M3FN cache needs v_scale");
  EXPECT_ERROR(reshapeAndCache(key, key, f16, slots, KvLayout::NHD,
                               {&one, &one}),
               "k_scale is given, but the cache is f16; scales are only for fp8");
  EXPECT_ERROR(reshapeAndCache(key, key, fp8, slots, KvLayout::NHD,
                               {&three, &one}),
               "expected [1] (per layer) or [2] (per kv head)");
  EXPECT_ERROR(reshapeAndCache(key, key, fp8, slots, KvLayout::NHD,
                               {&one, &zero}),
               "v_scale[0] must be finite and > 0, got 0");
  EXPECT_ERROR(reshapeAndCache(key, key, fp8, slots, KvLayout::NHD,
                               {&f16Scale, &one}),
               "k_scale");
  // New tokens are in the model dtype, never fp8.
  Tensor fp8Key(DType::F8E4M3FN, {1, 2, 2});
  EXPECT_ERROR(reshapeAndCache(fp8Key, fp8Key, fp8, slots, KvLayout::NHD,
                               {&one, &one}),
               "key");
  Tensor mla(DType::F8E5M2, {1, 1, 4});
  EXPECT_ERROR(concatAndCacheMla(floats(DType::F16, {1, 2}, {1, 2}),
                                 floats(DType::F16, {1, 2}, {1, 2}), mla,
                                 slots),
               "the f8E5M2 cache needs k_scale");
}

} // namespace
} // namespace attn
