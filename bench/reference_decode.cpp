//===- reference_decode.cpp - Reference paged attention at a decode step --===//
//
// pagedAttention at Llama-3-8B's decode shape: H = 32, G = 8, D = 128, bf16,
// NHD, block size 16, 64 requests with 2048 tokens each (one new). The
// counter kv_GB/s is the K and V bytes the step reads (seq_len * G * D * 2
// per request, 512 MiB in all) over the wall time.
//
//===----------------------------------------------------------------------===//
#include "bench/DecodeStep.h"
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/testing/Random.h"

#include <benchmark/benchmark.h>


namespace {

const attn::Problem &decodeStep() {
  static const attn::Problem problem = attn::bench::makeDecodeStep(64);
  return problem;
}

/// The argument is the number of reference threads.
void BM_PagedAttentionDecode(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  attn::setReferenceThreadCount(static_cast<unsigned>(state.range(0)));
  attn::PagedAttentionParams params;
  params.scale = p.scale;

  const int64_t kvBytes = attn::bench::kvBytes(p);

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
