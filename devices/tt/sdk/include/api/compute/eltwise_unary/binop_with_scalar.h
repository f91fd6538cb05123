//===- api/compute/eltwise_unary/binop_with_scalar.h ------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// A destination tile combined with a scalar given as f32 bits (SFPU).
// Bodies forward to internal/attn_tt_llk.h; see devices/tt/sdk/README.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "api/compute/common_globals.h"

namespace ckernel {

enum { ADD_UNARY = 0, SUB_UNARY = 1, MUL_UNARY = 2, DIV_UNARY = 3, RSUB_UNARY = 4 };

ALWI void add_unary_tile(uint32_t idst, uint32_t param1) {
  attn_tt_device::sfpu_scalar(attn_tt_device::ScalarOp::Add, idst, param1);
}
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1) {
  attn_tt_device::sfpu_scalar(attn_tt_device::ScalarOp::Sub, idst, param1);
}
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1) {
  attn_tt_device::sfpu_scalar(attn_tt_device::ScalarOp::Mul, idst, param1);
}
ALWI void div_unary_tile(uint32_t idst, uint32_t param1) {
  attn_tt_device::sfpu_scalar(attn_tt_device::ScalarOp::Div, idst, param1);
}

ALWI void binop_with_scalar_tile_init() {
  attn_tt_device::sfpu_init(attn_tt_device::Sfpu::BinopWithScalar);
}

} // namespace ckernel
