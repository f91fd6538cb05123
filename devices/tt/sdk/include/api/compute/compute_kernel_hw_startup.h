//===- api/compute/compute_kernel_hw_startup.h ------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// The one-time hardware setup at the start of a compute kernel: the unpackers
// from icb0 and icb1 (source A and B, swapped by SrcOrder::Reverse), the
// packer to ocb.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"
#include "api/compute/src_order.h"

namespace ckernel {

template <SrcOrder src_order = SrcOrder::Regular>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1,
                                    uint32_t ocb) {
  constexpr bool reverse = src_order == SrcOrder::Reverse;
  attn_tt_device::hw_startup(reverse ? icb1 : icb0, reverse ? icb0 : icb1, ocb,
                             reverse);
}

ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) {
  compute_kernel_hw_startup(icb0, icb0, ocb);
}

} // namespace ckernel
