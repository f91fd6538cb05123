//===- api/compute/binary_max_min.h -----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Element-wise maximum of two destination tiles (SFPU).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst,
                          VectorMode vector_mode = VectorMode::RC) {
  attn_tt_device::sfpu_binary_max(idst0, idst1, odst);
}

ALWI void binary_max_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::BinaryMax);
}

} // namespace ckernel
