//===- TTPlanBuilder.h - A TT function -> runtime plan ----------*- C++ -*-===//
//
// The plan of a function compiled for Tenstorrent: the TT lowering turns each
// attn op of the function into a program (two for split-KV decode) and keeps
// no host function, so the plan is built from the function itself, on
// tensors. Every attn op becomes one Launch of its program's symbol (the
// function's name, with _<i> for the i-th of several ops):
//
//   op                 grid (the program's dynamic sizes)   buffers
//   paged_attention    T, R, M (block-table columns)        query, kv_cache,
//                                                           block_table,
//                                                           seq_lens,
//                                                           query_start_loc,
//                                                           [alibi_slopes],
//                                                           [sinks], out, lse
//   reshape_and_cache  T, 1, 1                              key, value,
//                                                           slot_mapping,
//                                                           kv_cache
//   mla_decode         R, M, 1                              q, kv_cache,
//                                                           block_table,
//                                                           seq_lens, out, lse
//   merge_states       T, 1, 1                              out_a, lse_a,
//                                                           out_b, lse_b, out,
//                                                           lse
//
// On TT a Launch's grid carries these sizes, not workgroups: a TT program's
// host side spreads the work over the cores itself. TTPlanDevice
// (devices/tt/TTPlanDevice.h) runs such plans.
//
// An op writes its `outs` in place, so each outs value must have no other
// use; tensor.empty outs become Allocs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TTPLANBUILDER_H
#define ATTN_COMPILER_TTPLANBUILDER_H

#include "runtime/bundle/Plan.h"

#include "mlir/Support/LLVM.h"

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace attn {

/// The TT plan of `func`; what a TT plan cannot express is reported at its
/// location.
FailureOr<::attn::runtime::Plan> buildTTPlan(func::FuncOp func);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_TTPLANBUILDER_H
