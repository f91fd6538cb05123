//===- api/compute/pack.h ---------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Packing destination tiles into circular buffers (the packer's format is
// reconfig_data_format.h's, as at the pin).
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

} // namespace ckernel
