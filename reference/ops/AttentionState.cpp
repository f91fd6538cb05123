//===- AttentionState.cpp - Softmax-weighted averages in f64 --------------===//
#include "reference/ops/AttentionState.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace attn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The state of a row whose logits hold a NaN: out and lse all NaN, as a
/// device's arithmetic gives them (std::max would skip the NaN and make the
/// row look as if it had no keys).
AttentionState nanState(int64_t valueDim) {
  AttentionState state;
  state.out.assign(valueDim, kNaN);
  state.lse = kNaN;
  return state;
}

bool anyNaN(const std::vector<double> &scores, double extraLogit) {
  return std::isnan(extraLogit) ||
         std::any_of(scores.begin(), scores.end(),
                     [](double s) { return std::isnan(s); });
}

} // namespace

AttentionState attend(const std::vector<double> &scores,
                      const std::vector<const double *> &values,
                      int64_t valueDim, double extraLogit) {
  assert(scores.size() == values.size() && "one value row per score");
  if (anyNaN(scores, extraLogit))
    return nanState(valueDim);
  AttentionState state;
  state.out.assign(valueDim, 0.0);

  // Subtract the largest logit before exp so that nothing overflows.
  double maxLogit = extraLogit;
  for (double s : scores)
    maxLogit = std::max(maxLogit, s);
  if (maxLogit == -std::numeric_limits<double>::infinity())
    return state; // nothing visible (or every logit is -inf): out 0, lse -inf

  double denominator = std::exp(extraLogit - maxLogit);
  for (size_t j = 0; j < scores.size(); ++j) {
    const double weight = std::exp(scores[j] - maxLogit);
    denominator += weight;
    for (int64_t d = 0; d < valueDim; ++d)
      state.out[d] += weight * values[j][d];
  }
  for (double &o : state.out)
    o /= denominator;
  state.lse = maxLogit + std::log(denominator);
  return state;
}

AttentionState attendNaive(const std::vector<double> &scores,
                           const std::vector<const double *> &values,
                           int64_t valueDim, DType precision,
                           double extraLogit) {
  assert(scores.size() == values.size() && "one value row per score");
  if (anyNaN(scores, extraLogit))
    return nanState(valueDim);
  AttentionState state;
  state.out.assign(valueDim, 0.0);
  float maxLogit = static_cast<float>(extraLogit);
  for (double s : scores)
    maxLogit = std::max(maxLogit, static_cast<float>(s));
  if (maxLogit == -std::numeric_limits<float>::infinity())
    return state;
  float denominator = std::exp(static_cast<float>(extraLogit) - maxLogit);
  std::vector<float> weights(scores.size());
  for (size_t j = 0; j < scores.size(); ++j) {
    weights[j] = std::exp(static_cast<float>(scores[j]) - maxLogit);
    denominator += weights[j];
  }
  std::vector<float> acc(valueDim, 0.0f);
  for (size_t j = 0; j < scores.size(); ++j) {
    const float p =
        static_cast<float>(roundToDType(weights[j] / denominator, precision));
    for (int64_t d = 0; d < valueDim; ++d)
      acc[d] += p * static_cast<float>(values[j][d]);
  }
  for (int64_t d = 0; d < valueDim; ++d)
    state.out[d] = roundToDType(acc[d], precision);
  state.lse = static_cast<float>(maxLogit + std::log(denominator));
  return state;
}

/// A side's lse as the merge reads it: either infinity marks an empty side
/// (FlashAttention-2 reports +inf for a row that saw no key, and vLLM's
/// merge_attn_states.cu treats both so), NaN and finite values stay.
static double mergeLse(double lse) {
  return std::isinf(lse) ? -std::numeric_limits<double>::infinity() : lse;
}

AttentionState mergeAttentionStates(const AttentionState &a,
                                    const AttentionState &b) {
  assert(a.out.size() == b.out.size() && "merging states of unequal width");
  if (std::isnan(a.lse) || std::isnan(b.lse))
    return nanState(static_cast<int64_t>(a.out.size()));
  AttentionState merged;
  merged.out.assign(a.out.size(), 0.0);
  const double lseA = mergeLse(a.lse), lseB = mergeLse(b.lse);
  const double maxLse = std::max(lseA, lseB);
  if (maxLse == -std::numeric_limits<double>::infinity())
    return merged;
  const double weightA = std::exp(lseA - maxLse);
  const double weightB = std::exp(lseB - maxLse);
  const double denominator = weightA + weightB;
  // An empty side contributes nothing, whatever its out holds.
  auto term = [](double lse, const AttentionState &s, double weight, size_t d) {
    return lse == -std::numeric_limits<double>::infinity() ? 0.0
                                                           : weight * s.out[d];
  };
  for (size_t d = 0; d < merged.out.size(); ++d)
    merged.out[d] =
        (term(lseA, a, weightA, d) + term(lseB, b, weightB, d)) / denominator;
  merged.lse = maxLse + std::log(denominator);
  return merged;
}

AttentionState mergeAttentionStatesNaive(const AttentionState &a,
                                         const AttentionState &b,
                                         DType precision) {
  assert(a.out.size() == b.out.size() && "merging states of unequal width");
  if (std::isnan(a.lse) || std::isnan(b.lse))
    return nanState(static_cast<int64_t>(a.out.size()));
  AttentionState merged;
  merged.out.assign(a.out.size(), 0.0);
  const float lseA = static_cast<float>(mergeLse(a.lse));
  const float lseB = static_cast<float>(mergeLse(b.lse));
  const float maxLse = std::max(lseA, lseB);
  if (maxLse == -std::numeric_limits<float>::infinity())
    return merged;
  const float weightA = std::exp(lseA - maxLse);
  const float weightB = std::exp(lseB - maxLse);
  const float total = weightA + weightB;
  // As in the exact form, an empty side is selected out, not weighted by 0.
  auto term = [](float lse, float weight, double out) {
    return lse == -std::numeric_limits<float>::infinity()
               ? 0.0f
               : weight * static_cast<float>(out);
  };
  for (size_t d = 0; d < a.out.size(); ++d)
    merged.out[d] = roundToDType(
        (term(lseA, weightA, a.out[d]) + term(lseB, weightB, b.out[d])) / total,
        precision);
  merged.lse = maxLse + std::log(total);
  return merged;
}

} // namespace attn
