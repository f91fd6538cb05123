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

#include "bench/StepTiming.h"
#include "reference/testing/Random.h"

#include <map>
#include <string>
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

/// The prefill benchmarks' batches: one request of 2048 tokens, four of
/// 512, and 48 decodes (511 cached tokens each) beside two prefills of 512.
struct PrefillBatch {
  const char *name;
  std::vector<RequestShape> requests;
};

inline const std::vector<PrefillBatch> &prefillBatches() {
  static const std::vector<PrefillBatch> all = [] {
    std::vector<PrefillBatch> b;
    b.push_back({"1x2048", {{0, 2048}}});
    b.push_back({"4x512", std::vector<RequestShape>(4, {0, 512})});
    std::vector<RequestShape> mixed(48, {511, 1});
    mixed.push_back({0, 512});
    mixed.push_back({0, 512});
    b.push_back({"mixed48d+2x512", mixed});
    return b;
  }();
  return all;
}

/// The step of prefillBatches()[batch], made once.
inline const Problem &prefillProblem(size_t batch) {
  static std::map<size_t, Problem> problems;
  auto it = problems.find(batch);
  if (it == problems.end())
    it = problems.emplace(batch, makeBatch(prefillBatches()[batch].requests))
             .first;
  return it->second;
}

/// The reference's output of prefillBatches()[batch], computed once; null
/// with `error` set when it fails.
inline const Tensor *prefillReference(size_t batch, std::string &error) {
  static std::map<size_t, Tensor> outs;
  if (auto it = outs.find(batch); it != outs.end())
    return &it->second;
  Result<AttentionOutput> want = runReference(prefillProblem(batch));
  if (!want) {
    error = want.message();
    return nullptr;
  }
  return &outs.emplace(batch, std::move(want->out)).first->second;
}

} // namespace attn::bench

#endif // ATTN_BENCH_BATCHSTEP_H
