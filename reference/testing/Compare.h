//===- Compare.h - A device's tensors against the reference ----*- C++ -*-===//
//
// The one comparison every check in attn uses (attn-diff, the runtime's
// examples, the end-to-end tests): per element, |got - want| <= atol +
// rtol * |want|, with infinities and NaNs compared as values (-inf matches
// -inf, NaN matches nothing but NaN; a NaN on one side only makes the error
// NaN, not infinite). Default tolerances per output dtype
// are vLLM's (DESIGN.md).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_TESTING_COMPARE_H
#define ATTN_REFERENCE_TESTING_COMPARE_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

/// f32: 1e-5 / 1.3e-6, f16: 1e-3 / 1e-3, bf16: 1e-3 / 1.6e-2; integers
/// exactly.
Tolerance defaultTolerance(DType dtype);

struct TensorDiff {
  int64_t numElements = 0;
  /// Elements outside the tolerance.
  int64_t numMismatches = 0;
  /// Of those, elements where exactly one side is NaN.
  int64_t numNanMismatches = 0;
  /// NaN when some element has NaN on one side only.
  double maxAbsError = 0.0;
  /// max |got - want| / |want| over elements with want != 0.
  double maxRelError = 0.0;
  /// Elements outside the tolerance per index of dimension 0 (per token of
  /// an attention output); empty for rank-0 tensors.
  std::vector<int64_t> rowMismatches;
  /// Elements outside the tolerance per index of dimension 1 (per head of
  /// an attention output); empty below rank 2.
  std::vector<int64_t> headMismatches;
  /// Per index of dimensions 0 and 1 (a token and a head of an attention
  /// output), row-major, the largest of its elements' error relative to
  /// their tolerance, |got - want| / (atol + rtol |want|): above 1 fails.
  /// Infinite for a NaN on one side or a differing infinity, and for any
  /// error under a zero tolerance. One column below rank 2; empty for
  /// rank 0.
  std::vector<double> rowHeadWorst;
  /// The element furthest outside the tolerance, or, when all pass, the
  /// closest to failing (its error the largest part of its own atol + rtol
  /// |want|): its multi-index, and both values.
  std::vector<int64_t> worstIndex;
  double worstGot = 0.0;
  double worstWant = 0.0;
  /// The element with the largest error (maxAbsError; a NaN mismatch
  /// first), which near-zero references make differ from the worst.
  std::vector<int64_t> largestIndex;
  double largestGot = 0.0;
  double largestWant = 0.0;

  bool passed() const { return numMismatches == 0; }
};

/// Compares two tensors of the same dtype and shape (else an error).
Result<TensorDiff> compareTensors(const Tensor &got, const Tensor &want,
                                  Tolerance tolerance);

/// "[3, 17, 5]".
std::string formatIndex(const std::vector<int64_t> &index);

} // namespace attn

#endif // ATTN_REFERENCE_TESTING_COMPARE_H
