//===- api/compute/compute_kernel_api.h -------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// The SFPU operations the SDK still keeps in this header (log, tanh).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

template <bool fast_and_approx = false> ALWI void log_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::Log);
}
template <bool fast_and_approx = false> ALWI void log_tile(uint32_t idst) {
  attn_tt_device::sfpu_unary(attn_tt_device::Sfpu::Log, idst);
}

template <bool fast_and_approx = false> ALWI void tanh_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::Tanh);
}
template <bool fast_and_approx = false> ALWI void tanh_tile(uint32_t idst) {
  attn_tt_device::sfpu_unary(attn_tt_device::Sfpu::Tanh, idst);
}

} // namespace ckernel
