//===- api/compute/eltwise_binary.h -----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Element-wise binary operations of two tiles (icb0 to source A, icb1 to source
// B), and with one operand from DST.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
// tt-metal PR #50745 (before the pin) renamed the per-op inits (add_init,
// ..., {add,sub,mul}_reuse_dest_*) and deprecated the old names until
// 2026-09-15; they are gone from tt-metal since. ATTN_TT_SDK_WITHOUT_DEPRECATED
// leaves them out, as the current SDK does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(uint32_t icb0, uint32_t icb1,
                            bool acc_to_dest = false,
                            uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::binary_init(eltwise_binary_type, BroadcastType::NONE, icb0,
                              icb1);
}

namespace detail {
template <EltwiseBinaryType eltwise_binary_type,
          EltwiseBinaryReuseDestType reuse_dest>
ALWI void binary_reuse_dest_init(uint32_t icb0, uint32_t call_line) {
  attn_tt_device::dest_reuse_init(eltwise_binary_type, reuse_dest, icb0);
}

/// With DEST_TO_SRCA, DST[dst_tile_index] is the first operand (source A)
/// and the tile of in_cb_id the second (source B); DEST_TO_SRCB swaps them.
template <EltwiseBinaryType eltwise_binary_type,
          EltwiseBinaryReuseDestType reuse_dest>
ALWI void binary_reuse_dest_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                                  uint32_t dst_tile_index) {
  attn_tt_device::dest_reuse_tiles(eltwise_binary_type, reuse_dest, in_cb_id,
                                   in_tile_index, dst_tile_index);
}
} // namespace detail

ALWI void add_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                   uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWADD>(icb0, icb1, acc_to_dest,
                                                     call_line);
}
ALWI void sub_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                   uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWSUB>(icb0, icb1, acc_to_dest,
                                                     call_line);
}
ALWI void mul_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = true,
                   uint32_t call_line = __builtin_LINE()) {
  binary_tiles_init<true, EltwiseBinaryType::ELWMUL>(icb0, icb1, acc_to_dest,
                                                     call_line);
}

template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_init(uint32_t icb,
                              uint32_t call_line = __builtin_LINE()) {
  static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE,
                "reuse_dest is DEST_TO_SRCA or DEST_TO_SRCB");
  detail::binary_reuse_dest_init<EltwiseBinaryType::ELWADD, reuse_dest>(
      icb, call_line);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void sub_reuse_dest_init(uint32_t icb,
                              uint32_t call_line = __builtin_LINE()) {
  static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE,
                "reuse_dest is DEST_TO_SRCA or DEST_TO_SRCB");
  detail::binary_reuse_dest_init<EltwiseBinaryType::ELWSUB, reuse_dest>(
      icb, call_line);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void mul_reuse_dest_init(uint32_t icb,
                              uint32_t call_line = __builtin_LINE()) {
  static_assert(reuse_dest != EltwiseBinaryReuseDestType::NONE,
                "reuse_dest is DEST_TO_SRCA or DEST_TO_SRCB");
  detail::binary_reuse_dest_init<EltwiseBinaryType::ELWMUL, reuse_dest>(
      icb, call_line);
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

template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void add_reuse_dest_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                               uint32_t dst_tile_index) {
  detail::binary_reuse_dest_tiles<EltwiseBinaryType::ELWADD, reuse_dest>(
      in_cb_id, in_tile_index, dst_tile_index);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void sub_reuse_dest_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                               uint32_t dst_tile_index) {
  detail::binary_reuse_dest_tiles<EltwiseBinaryType::ELWSUB, reuse_dest>(
      in_cb_id, in_tile_index, dst_tile_index);
}
template <EltwiseBinaryReuseDestType reuse_dest>
ALWI void mul_reuse_dest_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                               uint32_t dst_tile_index) {
  detail::binary_reuse_dest_tiles<EltwiseBinaryType::ELWMUL, reuse_dest>(
      in_cb_id, in_tile_index, dst_tile_index);
}

#ifndef ATTN_TT_SDK_WITHOUT_DEPRECATED
[[deprecated("use compute_kernel_hw_startup, then add_init / sub_init / "
             "mul_init; removed after 2026-09-15")]] ALWI void
binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb,
                      uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::hw_startup(icb0, icb1, ocb, /*matmulOrder=*/false);
}

[[deprecated("renamed mul_init; removed after 2026-09-15")]] ALWI void
mul_tiles_init(uint32_t icb0, uint32_t icb1,
               uint32_t call_line = __builtin_LINE()) {
  mul_init(icb0, icb1, true, call_line);
}
[[deprecated("renamed mul_init; removed after 2026-09-15")]] ALWI void
mul_tiles_init(uint32_t icb0, uint32_t icb1, uint32_t acc_to_dest,
               uint32_t call_line = __builtin_LINE()) {
  mul_init(icb0, icb1, acc_to_dest, call_line);
}
[[deprecated("renamed add_init; removed after 2026-09-15")]] ALWI void
add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
               uint32_t call_line = __builtin_LINE()) {
  add_init(icb0, icb1, acc_to_dest, call_line);
}
[[deprecated("renamed sub_init; removed after 2026-09-15")]] ALWI void
sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
               uint32_t call_line = __builtin_LINE()) {
  sub_init(icb0, icb1, acc_to_dest, call_line);
}

template <EltwiseBinaryType eltwise_binary_type = EltwiseBinaryType::ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest =
              EltwiseBinaryReuseDestType::NONE>
[[deprecated("renamed {add,sub,mul}_reuse_dest_init<reuse_dest>; removed "
             "after 2026-09-15")]] ALWI void
binary_dest_reuse_tiles_init(uint32_t icb0,
                             uint32_t call_line = __builtin_LINE()) {
  detail::binary_reuse_dest_init<eltwise_binary_type, binary_reuse_dest>(
      icb0, call_line);
}

template <EltwiseBinaryType eltwise_binary_type = EltwiseBinaryType::ELWADD,
          EltwiseBinaryReuseDestType binary_reuse_dest =
              EltwiseBinaryReuseDestType::NONE>
[[deprecated("renamed {add,sub,mul}_reuse_dest_tiles<reuse_dest>; removed "
             "after 2026-09-15")]] ALWI void
binary_dest_reuse_tiles(uint32_t in_cb_id, uint32_t in_tile_index,
                        uint32_t dst_tile_index) {
  detail::binary_reuse_dest_tiles<eltwise_binary_type, binary_reuse_dest>(
      in_cb_id, in_tile_index, dst_tile_index);
}
#endif // ATTN_TT_SDK_WITHOUT_DEPRECATED

} // namespace ckernel
