//===- api/compute/eltwise_binary.h -----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Element-wise binary operations of two tiles (icb0 to source A, icb1 to source
// B), and with one operand from DST.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb,
                                uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::hw_startup(icb0, icb1, ocb);
}

template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(uint32_t icb0, uint32_t icb1,
                            bool acc_to_dest = false,
                            uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(eltwise_binary_type, BroadcastType::NONE, icb0,
                              icb1);
}

ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1,
                         uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWMUL>(icb0, icb1, true,
                                                     call_line);
}
ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1, uint32_t acc_to_dest,
                         uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWMUL>(icb0, icb1, acc_to_dest,
                                                     call_line);
}
ALWI void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                         uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWADD>(icb0, icb1, acc_to_dest,
                                                     call_line);
}
ALWI void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                         uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWSUB>(icb0, icb1, acc_to_dest,
                                                     call_line);
}

ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                    uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWMUL, BroadcastType::NONE,
                               icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                    uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWADD, BroadcastType::NONE,
                               icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0,
                    uint32_t itile1, uint32_t idst) {
  attn_tt_device::binary_tiles(EltwiseBinaryType::ELWSUB, BroadcastType::NONE,
                               icb0, icb1, itile0, itile1, idst);
}

/// With DEST_TO_SRCA, DST[idst] is the first operand (source A) and the
/// tile of icb0 the second (source B); DEST_TO_SRCB swaps them.
template <EltwiseBinaryType eltwise_binary_type = EltwiseBinaryType::ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest =
              EltwiseBinaryReuseDestType::NONE>
ALWI void binary_dest_reuse_tiles_init(uint32_t icb0,
                                       uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::dest_reuse_init(eltwise_binary_type, binary_reuse_dest, icb0);
}

template <EltwiseBinaryType eltwise_binary_type = EltwiseBinaryType::ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest =
              EltwiseBinaryReuseDestType::NONE>
ALWI void binary_dest_reuse_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                                  uint32_t dst_tile_index) {
  attn_tt_device::dest_reuse_tiles(eltwise_binary_type, binary_reuse_dest,
                                   in_cb_id, in_tile_index, dst_tile_index);
}

} // namespace ckernel
