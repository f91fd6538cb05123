//===- Compare.cpp - A device's tensors against the reference ------------===//

#include "reference/testing/Compare.h"

#include <cmath>
#include <limits>

namespace attn {

Tolerance defaultTolerance(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return {1e-5, 1.3e-6};
  case DType::F16:
    return {1e-3, 1e-3};
  case DType::BF16:
    return {1e-3, 1.6e-2};
  // One fp8 step (the smallest subnormal, one ulp at the bottom of a
  // binade): a device whose f32 division by the scale is not correctly
  // rounded may, rarely, land one step from the reference's write.
  case DType::F8E4M3FN:
    return {0x1p-9, 0x1p-3};
  case DType::F8E5M2:
    return {0x1p-16, 0x1p-2};
  case DType::I32:
  case DType::I64:
    return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

std::string formatIndex(const std::vector<int64_t> &index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

namespace {

/// The multi-index of element `flat` of a tensor of `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

} // namespace

Result<TensorDiff> compareTensors(const Tensor &got, const Tensor &want,
                                  Tolerance tolerance) {
  if (got.dtype() != want.dtype())
    return errorf("dtype ", toString(got.dtype()), " differs from the "
                  "reference's ", toString(want.dtype()));
  if (got.shape() != want.shape())
    return errorf("shape ", formatIndex(got.shape()),
                  " differs from the reference's ", formatIndex(want.shape()));
  TensorDiff diff;
  diff.numElements = want.numElements();
  bool integer = !isFloat(want.dtype());
  // How far outside the tolerance the worst element is, relative to its
  // tolerance (<= 0: inside), and the largest error's element.
  double worstExcess = -INFINITY;
  int64_t worstFlat = -1, largestFlat = -1;
  int64_t rowElements = 1, headElements = 1;
  if (want.rank() > 0) {
    diff.rowMismatches.assign(want.dim(0), 0);
    if (want.dim(0) > 0)
      rowElements = diff.numElements / want.dim(0);
  }
  int64_t numHeads = 1;
  if (want.rank() > 1) {
    numHeads = want.dim(1);
    diff.headMismatches.assign(numHeads, 0);
    if (numHeads > 0)
      headElements = rowElements / numHeads;
  }
  if (want.rank() > 0)
    diff.rowHeadWorst.assign(want.dim(0) * numHeads, 0.0);
  for (int64_t i = 0; i < diff.numElements; ++i) {
    double g = integer ? static_cast<double>(got.getInt(i)) : got.getFloat(i);
    double w = integer ? static_cast<double>(want.getInt(i)) : want.getFloat(i);
    double err, excess, ratio;
    if (std::isnan(g) != std::isnan(w)) {
      // One side NaN: the error is NaN, and reported as such.
      err = std::numeric_limits<double>::quiet_NaN();
      excess = ratio = INFINITY;
      ++diff.numNanMismatches;
    } else if (std::isnan(g) || std::isinf(g) || std::isinf(w)) {
      bool same = std::isnan(g) || g == w;
      err = same ? 0.0 : INFINITY;
      excess = same ? -INFINITY : INFINITY;
      ratio = same ? 0.0 : INFINITY;
    } else {
      err = std::fabs(g - w);
      double allowed = tolerance.atol + tolerance.rtol * std::fabs(w);
      // Relative to the element's own tolerance, so that passing elements
      // rank by how near they come to failing (an exact compare: by error).
      excess = allowed > 0 ? err / allowed - 1 : err;
      ratio = allowed > 0 ? err / allowed : err > 0 ? INFINITY : 0.0;
      if (w != 0.0)
        diff.maxRelError = std::max(diff.maxRelError, err / std::fabs(w));
    }
    if (largestFlat < 0 || (!std::isnan(diff.maxAbsError) &&
                            (std::isnan(err) || err > diff.maxAbsError))) {
      diff.maxAbsError = err;
      largestFlat = i;
      diff.largestGot = g;
      diff.largestWant = w;
    }
    if (!diff.rowHeadWorst.empty()) {
      double &cell = diff.rowHeadWorst[i / headElements];
      cell = std::max(cell, ratio);
    }
    if (excess > 0) {
      ++diff.numMismatches;
      if (!diff.rowMismatches.empty())
        ++diff.rowMismatches[i / rowElements];
      if (!diff.headMismatches.empty())
        ++diff.headMismatches[(i / headElements) % want.dim(1)];
    }
    if (excess > worstExcess || worstFlat < 0) {
      worstExcess = excess;
      worstFlat = i;
      diff.worstGot = g;
      diff.worstWant = w;
    }
  }
  if (worstFlat >= 0) {
    diff.worstIndex = unflatten(worstFlat, want.shape());
    diff.largestIndex = unflatten(largestFlat, want.shape());
  }
  return diff;
}

} // namespace attn
