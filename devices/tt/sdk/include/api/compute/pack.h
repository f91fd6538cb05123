//===- api/compute/pack.h ---------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Packing destination tiles into circular buffers, and the packer's format.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "api/compute/common_globals.h"

namespace ckernel {

/// Packs DST[ifrom_dst] into the next reserved page of icb (or page
/// output_tile_index of the reservation when out_of_order_output).
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb,
                    std::uint32_t output_tile_index = 0) {
  attn_tt_device::pack_tile(ifrom_dst, icb, out_of_order_output,
                            output_tile_index);
}

/// Reconfigures the packer for the data format of new_cb_id.
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t new_cb_id) {
  attn_tt_device::reconfig_pack(new_cb_id);
}

/// The same, skipped by the device when old_cb_id has the same format.
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t old_cb_id,
                                    const uint32_t new_cb_id) {
  attn_tt_device::reconfig_pack(new_cb_id);
}

} // namespace ckernel
