//===- reference_decode.cpp - Reference paged attention at a decode step --===//
//
// pagedAttention at Llama-3-8B's decode shape: H = 32, G = 8, D = 128, bf16,
// NHD, block size 16, 64 requests with 2048 tokens each (one new). The
// counter kv_GB/s is the K and V bytes the step reads (seq_len * G * D * 2
// per request, 512 MiB in all) over the wall time.
//
//===----------------------------------------------------------------------===//
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/ops/Random.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

namespace {

const attn::Problem &decodeStep() {
  static const attn::Problem problem = [] {
    attn::ProblemShape shape; // H 32, G 8, D 128, B 16, bf16, NHD
    attn::ProblemOptions options;
    options.seed = 1;
    options.numReqs = 64;
    options.minContextLen = 2047;
    options.maxContextLen = 2047;
    options.decodeFraction = 1.0;
    options.extraFreeBlocks = 0;
    attn::Result<attn::Problem> p = attn::generateProblem(shape, options);
    if (!p) {
      std::cerr << "generateProblem: " << p.message() << "\n";
      std::exit(1);
    }
    return std::move(p).value();
  }();
  return problem;
}

/// The argument is the number of reference threads.
void BM_PagedAttentionDecode(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  attn::setReferenceThreadCount(static_cast<unsigned>(state.range(0)));
  attn::PagedAttentionParams params;
  params.scale = p.scale;

  int64_t kvBytes = 0;
  const int64_t rowBytes = p.kvCache.dim(3) * p.kvCache.dim(4) *
                           static_cast<int64_t>(attn::byteWidth(p.kvCache.dtype()));
  for (int64_t r = 0; r < p.seqLens.dim(0); ++r)
    kvBytes += 2 * p.seqLens.getInt(r) * rowBytes; // keys and values

  for (auto _ : state) {
    attn::Result<attn::AttentionOutput> out =
        attn::pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                             p.queryStartLoc, nullptr, nullptr, params);
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->out.data());
  }
  state.counters["kv_GB/s"] = benchmark::Counter(
      static_cast<double>(kvBytes) * state.iterations() / 1e9,
      benchmark::Counter::kIsRate);
  attn::setReferenceThreadCount(0);
}

} // namespace

BENCHMARK(BM_PagedAttentionDecode)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
