//===- cpu_prefill.cpp - CPU prefill against the machine's FMA peak -------===//
//
// Causal prefill batches at Llama-3-8B's attention shape (H 32, G 8, D 128,
// bf16, NHD, 16-token blocks), BatchStep.h's: 1 x 2048, 4 x 512, and 48
// decodes with 511 cached tokens + 2 prefills of 512. In one process:
//
//  - BM_PrefillReference/batch:B/threads:T: reference/ops pagedAttention;
//  - BM_PrefillCpu/<isa>/batch:B/threads:T: the paged_attention variant
//    compiled for target cpu at ISA level <isa> (each level this host
//    runs; its per-token kernel takes prefills and decodes alike: the cpu
//    target has no tiled prefill kernel), on a CPU device of T threads,
//    timed from the plan's first launch to its last one done, on inputs
//    uploaded once.
//
// GFLOP/s counts 4 * H * D FLOPs per visible (query, key) pair over the
// step's time; fma_GFLOP/s is the f32 FMA peak of MachineLimits.h measured
// on as many threads right after the step's runs, pct_fma_peak their
// ratio. x_reference is the reference's step time on as many threads over
// the step's, x_1_thread the step's time on 1 thread over its time on T.
// Each compiled step is checked against the reference (vLLM's bf16
// tolerance) before it is timed. A table of the rows closes the run.
//
//===----------------------------------------------------------------------===//
#include "bench/BatchStep.h"
#include "bench/CpuStep.h"
#include "bench/MachineLimits.h"
#include "reference/testing/Compare.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace {

const char *const kSpec =
    "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
    "block_size=16,dtype=bf16,layout=nhd";

/// The compiled step at `isa`, made once per level.
attn::bench::CpuStep &stepOf(const std::string &isa) {
  static std::map<std::string, attn::bench::CpuStep> steps;
  auto it = steps.find(isa);
  if (it == steps.end())
    it = steps.emplace(isa, attn::bench::makeCpuStep(kSpec, isa)).first;
  return it->second;
}

/// Each row's figures, for the counters that compare rows and the closing
/// table; rows are named "<what>/<batch>/<threads>".
struct Row {
  double stepSeconds = 0, cpuSeconds = 0, flops = 0, fmaPeak = 0;
};
std::map<std::string, Row> &rows() {
  static std::map<std::string, Row> r;
  return r;
}
std::string rowName(const std::string &what, size_t batch, unsigned threads) {
  return what + "/" + attn::bench::prefillBatches()[batch].name + "/" +
         std::to_string(threads);
}
std::optional<Row> findRow(const std::string &name) {
  auto it = rows().find(name);
  if (it == rows().end())
    return std::nullopt;
  return it->second;
}

/// Sets the counters of a step of `batch` that took `seconds` over the
/// state's iterations on `threads` threads, after measuring the FMA peak
/// on as many; records the row.
Row record(benchmark::State &state, const std::string &what, size_t batch,
           unsigned threads, double seconds, double cpuSeconds) {
  double iterations = static_cast<double>(state.iterations());
  Row row;
  row.stepSeconds = seconds / iterations;
  row.cpuSeconds = cpuSeconds / iterations;
  row.flops =
      attn::bench::causalFlops(attn::bench::prefillBatches()[batch].requests) /
      row.stepSeconds;
  row.fmaPeak = attn::bench::measureFmaPeak(attn::bench::probePool(threads));
  state.counters["GFLOP/s"] = row.flops / 1e9;
  state.counters["step_ms"] = row.stepSeconds * 1e3;
  state.counters["cpu_s"] = row.cpuSeconds;
  state.counters["fma_GFLOP/s"] = row.fmaPeak / 1e9;
  if (row.fmaPeak > 0)
    state.counters["pct_fma_peak"] = 100 * row.flops / row.fmaPeak;
  if (std::optional<Row> ref = findRow(rowName("reference", batch, threads));
      ref && what != "reference")
    state.counters["x_reference"] = ref->stepSeconds / row.stepSeconds;
  if (std::optional<Row> one = findRow(rowName(what, batch, 1));
      one && threads > 1)
    state.counters["x_1_thread"] = one->stepSeconds / row.stepSeconds;
  rows()[rowName(what, batch, threads)] = row;
  return row;
}

void BM_PrefillReference(benchmark::State &state) {
  size_t batch = static_cast<size_t>(state.range(0));
  unsigned threads = static_cast<unsigned>(state.range(1));
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeReference(state, attn::bench::prefillProblem(batch),
                                  seconds, static_cast<int>(threads)))
    return;
  record(state, "reference", batch, threads, seconds.wall, seconds.cpu);
  state.SetLabel(attn::bench::prefillBatches()[batch].name);
}

void runPrefillCpu(benchmark::State &state, const std::string &isa,
                   size_t batch, unsigned threads) {
  attn::bench::CpuStep &step = stepOf(isa);
  if (!step.error.empty()) {
    state.SkipWithError(step.error.c_str());
    return;
  }
  if (attn::Status st = step.device->setThreads(threads); !st) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  const attn::Problem &p = attn::bench::prefillProblem(batch);
  const attn::Tensor inputs[] = {p.query, p.kvCache, p.blockTable, p.seqLens,
                                 p.queryStartLoc};
  attn::Result<std::vector<attn::runtime::DeviceTensor>> args =
      attn::bench::uploadInputs(*step.device, inputs);
  if (!args) {
    state.SkipWithError(args.message().c_str());
    return;
  }
  // Checked at each (level, batch) once.
  static std::map<std::pair<std::string, size_t>, bool> checked;
  if (!checked[{isa, batch}]) {
    std::string error;
    const attn::Tensor *want = attn::bench::prefillReference(batch, error);
    if (!attn::bench::matchesReference(state, step, *args, want, error))
      return;
    checked[{isa, batch}] = true;
  }
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeCpuPlanRuns(state, step, *args, seconds))
    return;
  record(state, "cpu/" + isa, batch, threads, seconds.kernel, seconds.cpu);
  state.SetLabel(std::string(attn::bench::prefillBatches()[batch].name) + " " +
                 isa);
}

void printSummary(const std::vector<std::string> &levels) {
  std::printf("\n%-16s %-18s %7s %10s %10s %9s %11s %8s %8s %8s\n", "batch",
              "step", "threads", "step ms", "cpu ms", "GFLOP/s", "FMA GFLOP/s",
              "% peak", "x ref", "x 1 thr");
  std::vector<std::string> names = {"reference"};
  for (const std::string &isa : levels)
    names.push_back("cpu/" + isa);
  for (size_t b = 0; b < attn::bench::prefillBatches().size(); ++b)
    for (const std::string &name : names)
      for (unsigned threads : {1u, 2u}) {
        std::optional<Row> row = findRow(rowName(name, b, threads));
        if (!row)
          continue;
        std::optional<Row> ref = findRow(rowName("reference", b, threads));
        std::optional<Row> one = findRow(rowName(name, b, 1));
        std::printf("%-16s %-18s %7u %10.1f %10.1f %9.2f %11.1f %7.2f%%",
                    attn::bench::prefillBatches()[b].name, name.c_str(),
                    threads, row->stepSeconds * 1e3, row->cpuSeconds * 1e3,
                    row->flops / 1e9, row->fmaPeak / 1e9,
                    row->fmaPeak > 0 ? 100 * row->flops / row->fmaPeak : 0.0);
        if (ref)
          std::printf(" %7.2fx", ref->stepSeconds / row->stepSeconds);
        else
          std::printf(" %8s", "-");
        if (one)
          std::printf(" %7.2fx", one->stepSeconds / row->stepSeconds);
        std::printf("\n");
      }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> levels = attn::bench::hostCpuIsaLevels();
  if (levels.empty()) {
    std::fprintf(stderr, "this host runs no cpu ISA level\n");
    return 1;
  }
  int64_t numBatches =
      static_cast<int64_t>(attn::bench::prefillBatches().size());
  benchmark::RegisterBenchmark("BM_PrefillReference", BM_PrefillReference)
      ->ArgNames({"batch", "threads"})
      ->ArgsProduct({benchmark::CreateDenseRange(0, numBatches - 1, 1), {1, 2}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  for (const std::string &isa : levels)
    for (size_t batch = 0; batch < attn::bench::prefillBatches().size();
         ++batch)
      for (unsigned threads : {1u, 2u})
        benchmark::RegisterBenchmark(
            ("BM_PrefillCpu/" + isa + "/batch:" + std::to_string(batch) +
             "/threads:" + std::to_string(threads))
                .c_str(),
            [=](benchmark::State &state) {
              runPrefillCpu(state, isa, batch, threads);
            })
            ->Unit(benchmark::kMillisecond)
            ->UseManualTime();

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  printSummary(levels);
  return 0;
}
