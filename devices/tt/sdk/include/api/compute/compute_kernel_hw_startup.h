//===- api/compute/compute_kernel_hw_startup.h ------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// The one-time hardware setup at the start of a compute kernel: unpacker A from
// icb0, B from icb1, packer to ocb.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1,
                                    uint32_t ocb) {
  attn_tt_device::hw_startup(icb0, icb1, ocb);
}

ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) {
  compute_kernel_hw_startup(icb0, icb0, ocb);
}

} // namespace ckernel
