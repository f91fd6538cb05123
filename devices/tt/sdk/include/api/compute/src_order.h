//===- api/compute/src_order.h ----------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// How a two-operand init's (icb0, icb1) map onto source registers A and B:
// Regular puts icb0 in A, Reverse (matmul) puts it in B.
// See devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ckernel {

enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };

} // namespace ckernel
