//===- api/compute/reduce.h -------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Row, column and scalar reductions. As in the SDK reduce_init's template
// defaults are REDUCE_OP and REDUCE_DIM, which a kernel must define before
// including this header.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common.h"

namespace ckernel {

template <PoolType reduce_type = REDUCE_OP, ReduceDim reduce_dim = REDUCE_DIM,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb,
                      uint32_t call_line = __builtin_LINE()) {
  attn_tt_device::reduce_init(reduce_type, reduce_dim, icb, icb_scaler, ocb);
}

/// Clears the packer edge masks reduce_init set.
template <bool enforce_fp32_accumulation = false>
ALWI void reduce_uninit(uint32_t icb = 0) {
  attn_tt_device::reduce_uninit();
}

/// Unlike reduce_init, the newest SDK gives reduce_tile no defaults for the
/// pool type and dimension, so a kernel must name both.
template <PoolType reduce_type, ReduceDim reduce_dim,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile,
                      uint32_t itile_scaler, uint32_t idst) {
  attn_tt_device::reduce_tile(reduce_type, reduce_dim, icb, icb_scaler, itile,
                              itile_scaler, idst);
}

} // namespace ckernel
