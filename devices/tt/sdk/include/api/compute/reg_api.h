//===- api/compute/reg_api.h ------------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// Destination-register handshakes between the math and pack threads.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

ALWI void tile_regs_acquire() { attn_tt_device::regs_acquire(); }
ALWI void tile_regs_wait() { attn_tt_device::regs_wait(); }
ALWI void tile_regs_commit() { attn_tt_device::regs_commit(); }
ALWI void tile_regs_release() { attn_tt_device::regs_release(); }
/// The older single-call form: math and packing both allowed until
/// release_dst.
ALWI void acquire_dst() { attn_tt_device::regs_acquire_dst(); }
ALWI void release_dst() { attn_tt_device::regs_release_dst(); }

} // namespace ckernel
