//===- api/compute/eltwise_unary/exp.h --------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Exponential of a destination tile (SFPU).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

/// Whether the approximate exponential clamps very negative inputs.
enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 };

template <bool approx = false, uint32_t scale = 0x3F800000,
          InputClamping input_clamping = InputClamping::ClampToNegative>
ALWI void exp_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::Exp);
}

template <bool approx = false, bool scale_en = false,
          InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC,
                   uint16_t scale = p_sfpu::kCONST_1_FP16B) {
  static_assert(!scale_en, "attn's declarations model exp_tile without scale");
  attn_tt_device::sfpu_unary(attn_tt_device::Sfpu::Exp, idst);
}

} // namespace ckernel
