// Emulated TT-Metalium compute API (see attn_tt_api.h).
#pragma once
#include "attn_tt_api.h"
#ifndef NAMESPACE
#define NAMESPACE attn_tt_compute
#endif
#define MAIN compute_main()
namespace NAMESPACE {
void compute_main();
}
/// The entry the emulator looks up after loading the kernel.
extern "C" __attribute__((visibility("default"))) void attn_tt_kernel_entry() {
  NAMESPACE::compute_main();
}
