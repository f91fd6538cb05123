//===- api/compute/matmul.h -------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Tile matrix multiply. in0 is unpacked to source B and in1 to source A; the
// transpose of in1 is part of the init. As the SDK documents, matmul_init
// needs the kernel to have started with
// compute_kernel_hw_startup<SrcOrder::Reverse>(in0, in1, out), which sets
// each source register up in that order (the emulator refuses otherwise).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void matmul_init(uint32_t in0_cb_id, uint32_t in1_cb_id,
                      const uint32_t transpose = 0,
                      uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::matmul_init(in0_cb_id, in1_cb_id, transpose);
}

/// DST[idst] += in0[in0_tile_index] x in1[in1_tile_index].
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id,
                       uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst) {
  attn_tt_device::matmul_tiles(in0_cb_id, in1_cb_id, in0_tile_index,
                               in1_tile_index, idst);
}

} // namespace ckernel
