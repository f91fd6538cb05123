//===- api/compute/common_globals.h -----------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// What every compute header includes first: ALWI and the LLK stand-in.
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compile_time_args.h"
#include "internal/attn_tt_llk.h"
