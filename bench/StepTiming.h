//===- StepTiming.h - The reference and the timing loops of benches -*- C++
//-*-===//
//
// What every device benchmark shares, whatever its device: the reference on
// a fixed thread count, the process's CPU time, and the loop that times a
// step per iteration of a Google Benchmark state. Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_STEPTIMING_H
#define ATTN_BENCH_STEPTIMING_H

#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/testing/Random.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <chrono>

namespace attn::bench {

/// Reference threads unless a benchmark says otherwise: lavapipe's default
/// on this 2-core machine is 2 as well (LP_NUM_THREADS changes it).
constexpr int kThreads = 2;

/// The paged-attention reference on `p` (causal, no knobs; an fp8 cache
/// with `scales`) on `threads` threads.
inline Result<AttentionOutput> runReference(const Problem &p,
                                            const KvCacheScales &scales = {},
                                            int threads = kThreads) {
  PagedAttentionParams params;
  params.scale = p.scale;
  setReferenceThreadCount(threads);
  Result<AttentionOutput> out =
      pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                     p.queryStartLoc, nullptr, nullptr, params, scales);
  setReferenceThreadCount(0);
  return out;
}

/// CPU seconds this process has used, all threads (a device's workers
/// too): on a machine shared with other work, CPU time per step is steadier
/// than wall time.
inline double processCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) +
           1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// The seconds a benchmark's iterations took: wall, CPU (all threads) and,
/// for plan runs, the kernels'.
struct StepSeconds {
  double wall = 0, cpu = 0, kernel = 0;
};

/// Runs `run` (a Result) once per iteration of `state`, adding its wall and
/// CPU time to `seconds`; the result of the last run, or the first error
/// (the state then skipped with it).
template <typename Run>
auto timeIterations(benchmark::State &state, StepSeconds &seconds, Run run)
    -> decltype(run()) {
  decltype(run()) out = Status::error("no iterations");
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    double cpuStart = processCpuSeconds();
    out = run();
    seconds.wall +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    seconds.cpu += processCpuSeconds() - cpuStart;
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return out;
    }
  }
  return out;
}

/// Times runReference(p) on `threads` threads per iteration of `state`;
/// false when it failed.
inline bool timeReference(benchmark::State &state, const Problem &p,
                          StepSeconds &seconds, int threads = kThreads) {
  auto run = [&] {
    Result<AttentionOutput> out = runReference(p, {}, threads);
    if (out)
      benchmark::DoNotOptimize(out->out.data());
    return out;
  };
  return timeIterations(state, seconds, run).isOk();
}

} // namespace attn::bench

#endif // ATTN_BENCH_STEPTIMING_H
