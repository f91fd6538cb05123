//===- AttentionState.h - Softmax-weighted averages in f64 ----------------===//
//
// The math every attention op shares, before rounding to an output dtype:
// attention of one query over a set of keys is the pair (out, lse) with
//   out = sum_j exp(s_j - lse) * v_j,   lse = log(sum_j exp(s_j)).
// Two such states over disjoint key sets merge into the state over their
// union, which is what split-KV decode and merge_states compute.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_OPS_ATTENTIONSTATE_H
#define ATTN_REFERENCE_OPS_ATTENTIONSTATE_H

#include "core/DType.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace attn {

struct AttentionState {
  /// The normalized output, zero when no key contributes.
  std::vector<double> out;
  /// Natural log of the softmax denominator; -inf when it is empty.
  double lse = -std::numeric_limits<double>::infinity();
};

/// Attention over keys with scores `scores[j]` and value rows `values[j]`
/// (each `valueDim` long). `extraLogit` is one more logit in the denominator
/// only (an attention sink); -inf means none.
AttentionState
attend(const std::vector<double> &scores,
       const std::vector<const double *> &values, int64_t valueDim,
       double extraLogit = -std::numeric_limits<double>::infinity());

/// attend() as a straightforward implementation in a device's precision
/// computes it (FlashAttention's "naive" reference, what DESIGN.md's second
/// verdict measures a device against): the softmax in f32 over the given
/// scores, the probabilities rounded to `precision`, P·V accumulated in f32
/// and rounded to `precision`; lse in f32.
AttentionState
attendNaive(const std::vector<double> &scores,
            const std::vector<const double *> &values, int64_t valueDim,
            DType precision,
            double extraLogit = -std::numeric_limits<double>::infinity());

/// The state over the union of the key sets of `a` and `b`: each side is
/// rescaled by exp(lse - max(lseA, lseB)). A side whose lse is -inf or +inf
/// is empty and contributes nothing; both empty gives out 0, lse -inf; a NaN
/// lse makes the row NaN.
AttentionState mergeAttentionStates(const AttentionState &a,
                                    const AttentionState &b);

/// mergeAttentionStates() as a straightforward kernel in f32 computes it:
/// weights and sums in f32, out rounded to `precision`, lse in f32.
AttentionState mergeAttentionStatesNaive(const AttentionState &a,
                                         const AttentionState &b,
                                         DType precision);

} // namespace attn

#endif // ATTN_REFERENCE_OPS_ATTENTIONSTATE_H
