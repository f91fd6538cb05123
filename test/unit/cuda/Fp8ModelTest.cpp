//===- Fp8ModelTest.cpp - NVIDIA's model of the fp8 write vs the reference ===//
//
// PTX from sm_89 on writes fp8 caches with cvt.rn.satfinite (lowering/
// GPUToPTX/NVVMFp8Convert.cpp). The CUDA toolkit's cuda_fp8.hpp models that
// instruction in software: __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...)
// takes it on the device and a host path elsewhere. That host path must
// agree with attn's reference write (core/DType.h) on every non-NaN f32,
// and it writes 0x7F for a NaN of either sign, where the reference keeps
// the sign: the reason the kernels select a NaN apart. No GPU is needed.
//
//===----------------------------------------------------------------------===//

#include "core/DType.h"

#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

/// f32 inputs that reach every rounding case: each sign and exponent, the
/// 12 high mantissa bits in full, and low bits that make a tie exact, just
/// above it, or far from it.
template <typename Fn> void forEachProbe(Fn fn) {
  const uint32_t lows[] = {0, 1, 0x3FF, 0x400, 0x401, 0x7FF};
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t exponent = 0; exponent < 256; ++exponent)
      for (uint32_t high = 0; high < 4096; ++high)
        for (uint32_t low : lows) {
          uint32_t bits = sign << 31 | exponent << 23 | high << 11 | low;
          float f;
          std::memcpy(&f, &bits, sizeof(f));
          fn(f);
        }
}

void expectModelMatches(__nv_fp8_interpretation_t format,
                        uint8_t (*reference)(double)) {
  int64_t mismatches = 0, nans = 0;
  forEachProbe([&](float f) {
    uint8_t model = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, format);
    uint8_t want = reference(f);
    if (std::isnan(f)) {
      ++nans;
      EXPECT_EQ(model, 0x7F) << "NaN";
      EXPECT_EQ(want, std::signbit(f) ? 0xFF : 0x7F) << "NaN";
      return;
    }
    if (model != want && mismatches++ < 5)
      ADD_FAILURE() << "f32 " << f << ": NVIDIA's model writes 0x" << std::hex
                    << int(model) << ", the reference 0x" << int(want);
  });
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(nans, 0);
}

TEST(Fp8Model, E4M3SatfiniteWriteIsTheReferenceButForNaNSign) {
  expectModelMatches(__NV_E4M3, attn::doubleToF8E4M3FNBits);
}

TEST(Fp8Model, E5M2SatfiniteWriteIsTheReferenceButForNaNSign) {
  expectModelMatches(__NV_E5M2, attn::doubleToF8E5M2Bits);
}

} // namespace
