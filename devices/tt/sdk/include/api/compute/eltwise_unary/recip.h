//===- api/compute/eltwise_unary/recip.h ------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Reciprocal of a destination tile (SFPU).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

#ifndef RECIP_LEGACY_COMPAT
#define RECIP_LEGACY_COMPAT false
#endif

template <bool legacy_compat = RECIP_LEGACY_COMPAT> ALWI void recip_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::Recip);
}

template <bool legacy_compat = RECIP_LEGACY_COMPAT>
ALWI void recip_tile(uint32_t idst, int vector_mode = (int)VectorMode::RC) {
  attn_tt_device::sfpu_unary(attn_tt_device::Sfpu::Recip, idst);
}

} // namespace ckernel
