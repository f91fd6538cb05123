//===- TestUtil.cpp - Helpers for the reference op tests ----------------===//
#include "TestUtil.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace attn::test {

Tensor floats(DType dtype, std::vector<int64_t> shape,
              const std::vector<double> &values) {
  Tensor t(dtype, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    t.setFloat(i, values[i]);
  return t;
}

Tensor ints(DType dtype, std::vector<int64_t> shape,
            const std::vector<int64_t> &values) {
  Tensor t(dtype, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    t.setInt(i, values[i]);
  return t;
}

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[i] = t.getFloat(i);
  return v;
}

PagedBatch toPaged(const DenseBatch &batch, DType dtype, KvLayout layout,
                   int64_t blockSize) {
  const int64_t numReqs = batch.requests.size();
  const int64_t g = batch.numKvHeads, h = batch.numHeads, d = batch.headSize;
  int64_t usedBlocks = 0, maxBlocks = 0, numTokens = 0;
  for (const DenseRequest &req : batch.requests) {
    const int64_t n = (req.seqLen + blockSize - 1) / blockSize;
    usedBlocks += n;
    maxBlocks = std::max(maxBlocks, n);
    numTokens += req.queryLen;
  }
  const int64_t numBlocks = usedBlocks + 1; // block 0 stays unused

  PagedBatch p;
  p.kvCache = layout == KvLayout::NHD
                  ? Tensor(dtype, {numBlocks, 2, blockSize, g, d})
                  : Tensor(dtype, {numBlocks, 2, g, blockSize, d});
  // NaN everywhere no token lives: reading it would poison the output.
  for (int64_t i = 0; i < p.kvCache.numElements(); ++i)
    p.kvCache.setFloat(i, std::numeric_limits<double>::quiet_NaN());
  p.blockTable = Tensor(DType::I32, {numReqs, maxBlocks + 1});
  for (int64_t i = 0; i < p.blockTable.numElements(); ++i)
    p.blockTable.setInt(i, -7);
  p.seqLens = Tensor(DType::I32, {numReqs});
  p.queryStartLoc = Tensor(DType::I32, {numReqs + 1});
  p.query = Tensor(dtype, {numTokens, h, d});

  int64_t nextBlock = numBlocks - 1, token = 0;
  for (int64_t r = 0; r < numReqs; ++r) {
    const DenseRequest &req = batch.requests[r];
    for (int64_t j = 0; j < req.seqLen; ++j) {
      if (j % blockSize == 0)
        p.blockTable.setInt(p.blockTable.offset({r, j / blockSize}),
                            nextBlock--);
      const int64_t block =
          p.blockTable.getInt(p.blockTable.offset({r, j / blockSize}));
      const int64_t off = j % blockSize;
      for (int64_t kv = 0; kv < g; ++kv) {
        for (int64_t e = 0; e < d; ++e) {
          const int64_t dense = (j * g + kv) * d + e;
          const int64_t k = layout == KvLayout::NHD
                                ? p.kvCache.offset({block, 0, off, kv, e})
                                : p.kvCache.offset({block, 0, kv, off, e});
          const int64_t v = layout == KvLayout::NHD
                                ? p.kvCache.offset({block, 1, off, kv, e})
                                : p.kvCache.offset({block, 1, kv, off, e});
          p.kvCache.setFloat(k, req.keys[dense]);
          p.kvCache.setFloat(v, req.values[dense]);
        }
      }
    }
    for (int64_t i = 0; i < req.queryLen * h * d; ++i)
      p.query.setFloat(token * h * d + i, req.queries[i]);
    token += req.queryLen;
    p.seqLens.setInt(r, req.seqLen);
    p.queryStartLoc.setInt(r + 1, token);
  }
  return p;
}

DenseResult denseAttention(const DenseBatch &batch,
                           const PagedAttentionParams &params,
                           const std::vector<double> *alibiSlopes,
                           const std::vector<double> *sinks) {
  using LD = long double;
  const int64_t h = batch.numHeads, g = batch.numKvHeads, d = batch.headSize;
  DenseResult result;
  for (const DenseRequest &req : batch.requests) {
    const int64_t context = req.seqLen - req.queryLen;
    for (int64_t i = 0; i < req.queryLen; ++i) {
      const int64_t p = context + i;
      int64_t lo = 0, hi = req.seqLen - 1;
      if (params.causal)
        hi = std::min(hi, p);
      if (params.windowLeft >= 0)
        lo = std::max(lo, p - params.windowLeft);
      if (!params.causal && params.windowRight >= 0)
        hi = std::min(hi, p + params.windowRight);
      for (int64_t head = 0; head < h; ++head) {
        const int64_t kv = head / (h / g);
        std::vector<LD> scores;
        for (int64_t j = lo; j <= hi; ++j) {
          LD dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += static_cast<LD>(req.queries[(i * h + head) * d + e]) *
                   req.keys[(j * g + kv) * d + e];
          LD s = params.scale * dot;
          if (params.softCap > 0)
            s = params.softCap * std::tanh(s / params.softCap);
          if (alibiSlopes)
            s -= static_cast<LD>((*alibiSlopes)[head]) * std::abs(j - p);
          scores.push_back(s);
        }
        LD maxScore = -std::numeric_limits<LD>::infinity();
        for (LD s : scores)
          maxScore = std::max(maxScore, s);
        if (sinks)
          maxScore = std::max<LD>(maxScore, (*sinks)[head]);
        std::vector<LD> out(d, 0);
        if (maxScore == -std::numeric_limits<LD>::infinity()) {
          result.out.insert(result.out.end(), out.begin(), out.end());
          result.lse.push_back(maxScore);
          continue;
        }
        LD sum = sinks ? std::exp((*sinks)[head] - maxScore) : 0;
        for (int64_t j = lo; j <= hi; ++j) {
          const LD w = std::exp(scores[j - lo] - maxScore);
          sum += w;
          for (int64_t e = 0; e < d; ++e)
            out[e] += w * req.values[(j * g + kv) * d + e];
        }
        for (LD &o : out)
          result.out.push_back(o / sum);
        result.lse.push_back(maxScore + std::log(sum));
      }
    }
  }
  return result;
}

double softmaxAverage(const std::vector<double> &scores,
                      const std::vector<double> &values, double sink) {
  double numerator = 0, denominator = std::exp(sink);
  for (size_t j = 0; j < scores.size(); ++j) {
    numerator += std::exp(scores[j]) * values[j];
    denominator += std::exp(scores[j]);
  }
  return numerator / denominator;
}

double logSumExp(const std::vector<double> &scores, double sink) {
  double sum = std::exp(sink);
  for (double s : scores)
    sum += std::exp(s);
  return std::log(sum);
}

double toleranceRatio(const std::vector<double> &got,
                      const std::vector<long double> &want, double atol,
                      double rtol) {
  assert(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(static_cast<double>(want[i])) && got[i] == want[i])
      continue;
    const double err = std::fabs(got[i] - static_cast<double>(want[i]));
    const double ratio =
        err / (atol + rtol * std::fabs(static_cast<double>(want[i])));
    worst = std::isnan(ratio) ? INFINITY : std::max(worst, ratio);
    if (std::isinf(worst))
      return worst;
  }
  return worst;
}

} // namespace attn::test
