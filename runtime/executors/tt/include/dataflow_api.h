// Emulated TT-Metalium dataflow API (see attn_tt_api.h).
#pragma once
#include "attn_tt_api.h"
void kernel_main();
/// The entry the emulator looks up after loading the kernel.
extern "C" __attribute__((visibility("default"))) void attn_tt_kernel_entry() {
  kernel_main();
}
