//===- api/compute/reconfig_data_format.h -----------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Reconfiguring the unpackers (source registers A and B) and the packer for
// new operands.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
// tt-metal PR #49119 gave the two-source forms a SrcOrder (operands in
// natural order, mapped onto A and B as compute_kernel_hw_startup maps them)
// and dropped to_from_int8; the <to_from_int8, is_tile_dim_reconfig_en>
// overloads stay, deprecated, until the SDK removes them.
// ATTN_TT_SDK_WITHOUT_DEPRECATED leaves them out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"
#include "api/compute/src_order.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular,
          bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format(const uint32_t icb0_new_operand,
                               const uint32_t icb1_new_operand) {
  constexpr bool reverse = src_order == SrcOrder::Reverse;
  attn_tt_device::reconfig_srca(reverse ? icb1_new_operand : icb0_new_operand);
  attn_tt_device::reconfig_srcb(reverse ? icb0_new_operand : icb1_new_operand);
}

template <SrcOrder src_order = SrcOrder::Regular,
          bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format(const uint32_t icb0_old_operand,
                               const uint32_t icb0_new_operand,
                               const uint32_t icb1_old_operand,
                               const uint32_t icb1_new_operand) {
  reconfig_data_format<src_order, is_tile_dim_reconfig_en>(icb0_new_operand,
                                                           icb1_new_operand);
}

template <bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format_srca(const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format_srca(const uint32_t srca_old_operand,
                                    const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format_srcb(const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool is_tile_dim_reconfig_en = false>
ALWI void reconfig_data_format_srcb(const uint32_t srcb_old_operand,
                                    const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

#ifndef ATTN_TT_SDK_WITHOUT_DEPRECATED
template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format<SrcOrder::Regular>")]] ALWI void
reconfig_data_format(const uint32_t srca_new_operand,
                     const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format<SrcOrder::Regular>")]] ALWI void
reconfig_data_format(const uint32_t srca_old_operand,
                     const uint32_t srca_new_operand,
                     const uint32_t srcb_old_operand,
                     const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format_srca<is_tile_dim_reconfig_en>")]] ALWI
    void
    reconfig_data_format_srca(const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format_srca<is_tile_dim_reconfig_en>")]] ALWI
    void
    reconfig_data_format_srca(const uint32_t srca_old_operand,
                              const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format_srcb<is_tile_dim_reconfig_en>")]] ALWI
    void
    reconfig_data_format_srcb(const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8, bool is_tile_dim_reconfig_en>
[[deprecated("use reconfig_data_format_srcb<is_tile_dim_reconfig_en>")]] ALWI
    void
    reconfig_data_format_srcb(const uint32_t srcb_old_operand,
                              const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}
#endif // ATTN_TT_SDK_WITHOUT_DEPRECATED

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
