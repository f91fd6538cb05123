//===- api/compute/common.h -------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Included by every compute header: registers, packing, reconfiguration,
// circular buffers and runtime arguments.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"

template <typename T> FORCE_INLINE T get_arg_val(int arg_idx) {
  static_assert("Error: only 4B args are supported" && sizeof(T) == 4);
  uint32_t bits = attn_tt_device::runtime_arg(arg_idx);
  return *reinterpret_cast<T *>(&bits);
}

template <typename T> FORCE_INLINE T get_common_arg_val(int arg_idx) {
  static_assert("Error: only 4B args are supported" && sizeof(T) == 4);
  uint32_t bits = attn_tt_device::common_runtime_arg(arg_idx);
  return *reinterpret_cast<T *>(&bits);
}
