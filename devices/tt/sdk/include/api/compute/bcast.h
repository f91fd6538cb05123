//===- api/compute/bcast.h --------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Binary operations broadcasting column 0 of the second operand (icb1) over
// each row.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
// As in eltwise_binary.h: PR #50745 renamed the *_init_short inits to
// *_init (and added bcast_init<op, dim>), deprecated until 2026-09-15, and
// ATTN_TT_SDK_WITHOUT_DEPRECATED leaves the old names out.
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

ALWI void add_bcast_cols_init(uint32_t icb0, uint32_t icb1,
                              uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWADD, BroadcastType::COL,
                              icb0, icb1);
}
ALWI void sub_bcast_cols_init(uint32_t icb0, uint32_t icb1,
                              uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWSUB, BroadcastType::COL,
                              icb0, icb1);
}
ALWI void mul_bcast_cols_init(uint32_t icb0, uint32_t icb1,
                              uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(EltwiseBinaryType::ELWMUL, BroadcastType::COL,
                              icb0, icb1);
}

template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void bcast_init(uint32_t icb0, uint32_t icb1,
                     uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(tBcastOp, tBcastDim, icb0, icb1);
}

#ifndef ATTN_TT_SDK_WITHOUT_DEPRECATED
[[deprecated("renamed add_bcast_cols_init; removed after 2026-09-15")]] ALWI void
add_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                          uint32_t call_line = __builtin_LINE()) {
  add_bcast_cols_init(icb0, icb1, call_line);
}
[[deprecated("renamed sub_bcast_cols_init; removed after 2026-09-15")]] ALWI void
sub_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                          uint32_t call_line = __builtin_LINE()) {
  sub_bcast_cols_init(icb0, icb1, call_line);
}
[[deprecated("renamed mul_bcast_cols_init; removed after 2026-09-15")]] ALWI void
mul_bcast_cols_init_short(uint32_t icb0, uint32_t icb1,
                          uint32_t call_line = __builtin_LINE()) {
  mul_bcast_cols_init(icb0, icb1, call_line);
}
#endif // ATTN_TT_SDK_WITHOUT_DEPRECATED

} // namespace ckernel
