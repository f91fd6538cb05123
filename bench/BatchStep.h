//===- BatchStep.h - A batch of exact request shapes for benchmarks -*- C++ -*-===//
//
// A step whose requests have the given (context, query length) each, at
// Llama-3-8B's attention shape (H 32, G 8, D 128, 16-token blocks, bf16,
// NHD), causal: contents uniform in [-1, 1) from seed 1, every request's
// blocks a stretch of a shuffled block list. Also the attention FLOPs of
// such a step: 4 * H * D per visible (query, key) pair (QK^T and PV, a
// multiply and an add each). Header-only, for the benchmarks.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_BATCHSTEP_H
#define ATTN_BENCH_BATCHSTEP_H

#include "reference/testing/Random.h"

#include <utility>
#include <vector>

namespace attn::bench {

/// (context, query length) of one request.
using RequestShape = std::pair<int64_t, int64_t>;

inline Problem makeBatch(const std::vector<RequestShape> &requests) {
  ProblemShape shape; // H 32, G 8, D 128, B 16, bf16, NHD
  const int64_t b = shape.blockSize;
  Random random(1);
  int64_t numReqs = static_cast<int64_t>(requests.size());
  int64_t numTokens = 0, numBlocks = 0, maxBlocks = 1;
  for (auto [context, qLen] : requests) {
    int64_t blocks = (context + qLen + b - 1) / b;
    numBlocks += blocks;
    maxBlocks = std::max(maxBlocks, blocks);
    numTokens += qLen;
  }
  std::vector<int64_t> ids(numBlocks);
  for (int64_t i = 0; i < numBlocks; ++i)
    ids[i] = i;
  for (int64_t i = numBlocks - 1; i > 0; --i)
    std::swap(ids[i], ids[random.uniformInt(0, i)]);

  Problem p;
  p.blockTable = Tensor(DType::I32, {numReqs, maxBlocks});
  p.seqLens = Tensor(DType::I32, {numReqs});
  p.queryStartLoc = Tensor(DType::I32, {numReqs + 1});
  int64_t next = 0, tokens = 0;
  for (int64_t r = 0; r < numReqs; ++r) {
    auto [context, qLen] = requests[r];
    int64_t blocks = (context + qLen + b - 1) / b;
    for (int64_t i = 0; i < blocks; ++i)
      p.blockTable.setInt(p.blockTable.offset({r, i}), ids[next++]);
    p.seqLens.setInt(r, context + qLen);
    tokens += qLen;
    p.queryStartLoc.setInt(r + 1, tokens);
  }
  const int64_t g = shape.numKvHeads, d = shape.headSize;
  p.kvCache = Tensor(shape.dtype, {numBlocks, 2, b, g, d});
  p.query = Tensor(shape.dtype, {numTokens, shape.numHeads, d});
  random.fill(p.kvCache, -1.0, 1.0);
  random.fill(p.query, -1.0, 1.0);
  p.scale = 1.0 / std::sqrt(static_cast<double>(d));
  return p;
}

/// Attention FLOPs of the causal step: 4 * H * D per visible (query, key)
/// pair; query i of a request with context c sees c + i + 1 keys.
inline double causalFlops(const std::vector<RequestShape> &requests) {
  ProblemShape shape;
  double pairs = 0;
  for (auto [context, qLen] : requests)
    pairs += static_cast<double>(qLen) * static_cast<double>(context) +
             static_cast<double>(qLen) * static_cast<double>(qLen + 1) / 2;
  return 4.0 * static_cast<double>(shape.numHeads * shape.headSize) * pairs;
}

} // namespace attn::bench

#endif // ATTN_BENCH_BATCHSTEP_H
