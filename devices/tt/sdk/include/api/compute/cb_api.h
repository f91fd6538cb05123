//===- api/compute/cb_api.h -------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Circular buffers seen from the compute kernel (unsigned operands).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles) {
  attn_tt_device::cb_wait_front(int32_t(cbid), int32_t(ntiles));
}
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles) {
  attn_tt_device::cb_pop_front(int32_t(cbid), int32_t(ntiles));
}
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles) {
  attn_tt_device::cb_reserve_back(int32_t(cbid), int32_t(ntiles));
}
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles) {
  attn_tt_device::cb_push_back(int32_t(cbid), int32_t(ntiles));
}

} // namespace ckernel
