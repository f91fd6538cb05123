//===- api/compute/bcast.h --------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Binary operations broadcasting column 0 of the second operand (icb1) over
// each row.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void add_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                               uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWADD, BroadcastType::COL,
                               icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                               uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWSUB, BroadcastType::COL,
                               icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                               uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWMUL, BroadcastType::COL,
                               icb0, icb1, itile0, itile1, idst);
}

ALWI void add_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                                    uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWADD, BroadcastType::COL,
                              icb0, icb1);
}
ALWI void sub_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                                    uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWSUB, BroadcastType::COL,
                              icb0, icb1);
}
ALWI void mul_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                                    uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWMUL, BroadcastType::COL,
                              icb0, icb1);
}

} // namespace ckernel
