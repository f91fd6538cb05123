//===- OpParams.h - The knobs of the attention ops ------------*- C++ -*-===//
//
// The parameters of paged_attention and mla_decode beside their tensors,
// shared by the reference (reference/ops/Ops.h), the runtime's impls and
// the compiler's variants.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_OPPARAMS_H
#define ATTN_CORE_OPPARAMS_H

#include "core/KvCache.h"

#include <cstdint>

namespace attn {

struct PagedAttentionParams {
  KvLayout layout = KvLayout::NHD;
  /// Multiplies <q, k>; usually 1 / sqrt(D).
  double scale = 1.0;
  bool causal = true;
  /// Key j is visible to position p only if j >= p - windowLeft; < 0: off.
  int64_t windowLeft = -1;
  /// Non-causal only: key j is visible only if j <= p + windowRight; < 0: off.
  int64_t windowRight = -1;
  /// s = softCap * tanh(s / softCap) when > 0; 0 is off, negative an error.
  double softCap = 0.0;
  /// Not the definition: computes what a naive implementation in the output
  /// dtype's precision would (scores in f32 rounded to that dtype after each
  /// step, softmax in f32, P rounded, P·V accumulated in f32). attn-diff's
  /// second verdict compares a device's error against this one's.
  bool naiveDevicePrecision = false;
};

struct MlaDecodeParams {
  /// Multiplies <q, k> over all L + P dims; must be > 0.
  double scale = 0.0;
  /// L: the first L dims of a cache row are also its value.
  int64_t kvLoraRank = 0;
  /// How many chunks the keys of a request are split into; schedules work
  /// only (the result matches any other count up to rounding).
  int64_t numKvSplits = 1;
  /// Not the definition: what a naive kernel in q's precision computes (one
  /// pass over the keys, dot products in f32, scores rounded to q's dtype,
  /// then the reference's attendNaive); see PagedAttentionParams.
  bool naiveDevicePrecision = false;
};

} // namespace attn

#endif // ATTN_CORE_OPPARAMS_H
