//===- api/compute/tile_move_copy.h -----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Copying a tile from a circular buffer into a destination register.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

/// Configures unpacker A and the math thread for copy_tile from cbid;
/// transpose swaps the whole tile, transpose_within_16x16_face each face.
/// Does not reconfigure data formats.
ALWI void copy_tile_to_dst_init_short(uint32_t cbid, uint32_t transpose = 0,
                                      uint32_t transpose_within_16x16_face =
                                          false,
                                      uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::copy_init(cbid, transpose, transpose_within_16x16_face);
}

ALWI void copy_tile_init(uint32_t cbid, uint32_t call_line = __builtin_LINE()) {
  copy_tile_to_dst_init_short(cbid, 0, false, call_line);
}

ALWI void copy_tile(uint32_t in_cb_id, uint32_t in_tile_index,
                    uint32_t dst_tile_index) {
  attn_tt_device::copy_tile(in_cb_id, in_tile_index, dst_tile_index);
}

} // namespace ckernel
