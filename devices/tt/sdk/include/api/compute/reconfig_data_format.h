//===- api/compute/reconfig_data_format.h -----------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Reconfiguring the unpackers (source registers A and B) for new operands.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

template <bool to_from_int8 = false>
ALWI void reconfig_data_format(const uint32_t srca_new_operand,
                               const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8 = false>
ALWI void reconfig_data_format(const uint32_t srca_old_operand,
                               const uint32_t srca_new_operand,
                               const uint32_t srcb_old_operand,
                               const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srca(const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srca(const uint32_t srca_old_operand,
                                    const uint32_t srca_new_operand) {
  attn_tt_device::reconfig_srca(srca_new_operand);
}

template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srcb(const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

template <bool to_from_int8 = false>
ALWI void reconfig_data_format_srcb(const uint32_t srcb_old_operand,
                                    const uint32_t srcb_new_operand) {
  attn_tt_device::reconfig_srcb(srcb_new_operand);
}

} // namespace ckernel
