//===- DecodeStep.h - The decode step the decode benchmarks time -*- C++
//-*-===//
//
// One decode step at Llama-3-8B's shape (H 32, G 8, D 128, 16-token blocks,
// bf16, NHD): `numReqs` requests of 2047 cached tokens each, one query token
// per request, seed 1, the K + V bytes such a step reads, and the step
// over an e4m3 cache. Header-only, shared by the decode benchmarks.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_DECODESTEP_H
#define ATTN_BENCH_DECODESTEP_H

#include "reference/testing/Random.h"

#include <cstdlib>
#include <iostream>

namespace attn::bench {

/// The step; exits with a message if it cannot be made.
inline Problem makeDecodeStep(int64_t numReqs) {
  ProblemShape shape; // H 32, G 8, D 128, B 16, bf16, NHD
  ProblemOptions options;
  options.seed = 1;
  options.numReqs = numReqs;
  options.minContextLen = 2047;
  options.maxContextLen = 2047;
  options.decodeFraction = 1.0;
  options.extraFreeBlocks = 0;
  Result<Problem> p = generateProblem(shape, options);
  if (!p) {
    std::cerr << "generateProblem: " << p.message() << "\n";
    std::exit(1);
  }
  return std::move(p).value();
}

/// K and V bytes the step reads: every request's keys and values once.
inline int64_t kvBytes(const Problem &p) {
  const int64_t rowBytes = p.kvCache.dim(3) * p.kvCache.dim(4) *
                           static_cast<int64_t>(byteWidth(p.kvCache.dtype()));
  int64_t bytes = 0;
  for (int64_t r = 0; r < p.seqLens.dim(0); ++r)
    bytes += 2 * p.seqLens.getInt(r) * rowBytes;
  return bytes;
}

/// The fp8 cache's scales: the bf16 cache's values, in [-1, 1], become up
/// to 256 of e4m3's 448.
constexpr double kFp8Scale = 1.0 / 256;

/// A decode step with its cache quantized to e4m3 by kFp8Scale, and the
/// scales as the variant takes them ([1] f32 each).
struct Fp8Step {
  Problem problem;
  Tensor kScale{DType::F32, {1}}, vScale{DType::F32, {1}};
};

/// `bf16` with its cache quantized (see Fp8Step).
inline Fp8Step makeFp8Step(const Problem &bf16) {
  Fp8Step s{bf16};
  s.problem.kvCache =
      quantizeCache(bf16.kvCache, DType::F8E4M3FN, kFp8Scale, kFp8Scale);
  s.kScale.setFloat(0, kFp8Scale);
  s.vScale.setFloat(0, kFp8Scale);
  return s;
}

} // namespace attn::bench

#endif // ATTN_BENCH_DECODESTEP_H
