//===- vulkan_prefill.cpp - Prefill throughput on Vulkan vs the reference -===//
//
// Causal prefill batches at Llama-3-8B's attention shape (H 32, G 8, D 128,
// bf16, NHD, 16-token blocks), each run four ways in the same process:
//
//  - BM_PrefillReference: reference/ops pagedAttention on 2 threads;
//  - BM_PrefillVulkan/<batch>/kernel:0 "tiled": the variant as compiled for
//    this device, the tiled FlashAttention-2 kernel taking the prefills and
//    the per-token kernel the decodes;
//  - kernel:1 "per_token": the same with --tiled-prefill=false, the
//    per-token kernel taking every request;
//  - kernel:2 "per_token_before": the per-token kernel as it was compiled
//    before the tiled kernel (scalar loads, the GPU lane budget of 128;
//    buffers by device address, as its earlier figures were measured), the
//    yardstick the tiled kernel is measured against.
//
// Batches: 1 x 2048 and 4 x 512 prefills, and a mixed step of 48 decodes
// with 511 cached tokens each and 2 prefills of 512 (the decodes' context is
// kept at 512 so the cache stays under lavapipe's 128 MiB storage-buffer
// limit; 2048 would need 384 MiB). GFLOP/s counts 4 * H * D FLOPs per
// visible (query, key) pair over the wall time of a step (Vulkan: from the
// plan's first launch to its last one finished; upload and read-back not
// counted); cpu_s is the CPU time the process spent per step, all threads,
// which a loaded machine disturbs less. jit_s is how much longer the first
// run took (lavapipe compiles a kernel's code at its first launch). Every
// Vulkan result is checked against the reference (vLLM's bf16 tolerance)
// first. After the runs, one table gives each batch's figures and ratios.
//
//===----------------------------------------------------------------------===//
#include "bench/BatchStep.h"
#include "bench/VulkanStep.h"
#include "reference/testing/Compare.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>

namespace {

const char *const kSpec =
    "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
    "block_size=16,dtype=bf16,layout=nhd";

const char *const kKernelNames[] = {"tiled", "per_token", "per_token_before"};

attn::bench::VulkanStep &stepOf(int64_t kernel) {
  static std::map<int64_t, attn::bench::VulkanStep> steps;
  auto it = steps.find(kernel);
  if (it == steps.end())
    it = steps
             .emplace(kernel, attn::bench::makeVulkanStep(
                                  kSpec,
                                  [kernel](mlir::attn::CompileOptions &o) {
                                    o.tiledPrefill = kernel == 0;
                                    if (kernel == 2) {
                                      o.vectorLoadBytes = 0;
                                      o.laneRegisters = 128;
                                      o.spirv.abi = mlir::attn::SPIRVTargetOptions::
                                          Abi::Addresses;
                                    }
                                  }))
             .first;
  return it->second;
}

/// Figures per (batch, kernel), for the closing table.
struct Figures {
  double gflops = 0, cpuSeconds = 0;
};
std::map<std::pair<size_t, std::string>, Figures> &results() {
  static std::map<std::pair<size_t, std::string>, Figures> r;
  return r;
}

void record(benchmark::State &state, size_t batch, const std::string &kernel,
            double seconds, double cpuSeconds) {
  double perStep = seconds / static_cast<double>(state.iterations());
  double cpuPerStep = cpuSeconds / static_cast<double>(state.iterations());
  double gflops =
      attn::bench::causalFlops(attn::bench::prefillBatches()[batch].requests) /
      perStep / 1e9;
  state.counters["GFLOP/s"] = gflops;
  state.counters["step_ms"] = perStep * 1e3;
  state.counters["cpu_s"] = cpuPerStep;
  results()[{batch, kernel}] = {gflops, cpuPerStep};
}

void BM_PrefillReference(benchmark::State &state) {
  size_t batch = state.range(0);
  const attn::Problem &p = attn::bench::prefillProblem(batch);
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeReference(state, p, seconds))
    return;
  record(state, batch, "reference", seconds.wall, seconds.cpu);
  state.SetLabel(attn::bench::prefillBatches()[batch].name);
}

void BM_PrefillVulkan(benchmark::State &state) {
  size_t batch = state.range(0);
  int64_t kernel = state.range(1);
  const attn::Problem &p = attn::bench::prefillProblem(batch);
  attn::bench::VulkanStep &step = stepOf(kernel);
  if (!step.error.empty()) {
    state.SkipWithError(step.error.c_str());
    return;
  }
  const attn::Tensor inputs[] = {p.query, p.kvCache, p.blockTable, p.seqLens,
                                 p.queryStartLoc};
  {
    auto start = std::chrono::steady_clock::now();
    attn::Result<std::vector<attn::Tensor>> got =
        attn::runtime::runPlan(step.plan, *step.device, inputs);
    double first = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    std::string error;
    const attn::Tensor *want = attn::bench::prefillReference(batch, error);
    if (!got || !want) {
      state.SkipWithError(!got ? got.message().c_str() : error.c_str());
      return;
    }
    attn::Result<attn::TensorDiff> diff = attn::compareTensors(
        (*got)[0], *want, attn::defaultTolerance(want->dtype()));
    if (!diff || !diff->passed()) {
      state.SkipWithError("the Vulkan result does not match the reference");
      return;
    }
    if (step.firstRunExtraSeconds < 0) {
      start = std::chrono::steady_clock::now();
      if (!attn::runtime::runPlan(step.plan, *step.device, inputs)) {
        state.SkipWithError("the second run failed");
        return;
      }
      step.firstRunExtraSeconds =
          first - std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    }
  }
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timePlanRuns(state, step, inputs, seconds))
    return;
  record(state, batch, kKernelNames[kernel], seconds.kernel, seconds.cpu);
  state.counters["jit_s"] = step.firstRunExtraSeconds;
  state.SetLabel(std::string(attn::bench::prefillBatches()[batch].name) + " " +
                 kKernelNames[kernel] + " " + std::string(step.device->name()));
}

void printSummary() {
  std::printf("\nGFLOP/s (cpu s per step)\n%-16s %18s %18s %18s %18s\n",
              "batch", "tiled", "per_token", "per_token_before", "reference");
  for (size_t b = 0; b < attn::bench::prefillBatches().size(); ++b) {
    auto get = [&](const char *k) {
      auto it = results().find({b, k});
      return it == results().end() ? Figures() : it->second;
    };
    std::printf("%-16s", attn::bench::prefillBatches()[b].name);
    for (const char *k :
         {"tiled", "per_token", "per_token_before", "reference"})
      std::printf(" %9.2f (%6.2f)", get(k).gflops, get(k).cpuSeconds);
    Figures t = get("tiled");
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    // Issue 16's yardstick is today's per-token kernel; the other two say
    // how far the kernels have come.
    std::printf("\n%-16s tiled /", "");
    for (const char *k : {"per_token", "per_token_before", "reference"})
      std::printf(" %s %.2fx (cpu %.2fx)", k, ratio(t.gflops, get(k).gflops),
                  ratio(get(k).cpuSeconds, t.cpuSeconds));
    std::printf("\n");
  }
}

} // namespace

BENCHMARK(BM_PrefillReference)
    ->ArgName("batch")
    ->DenseRange(0, 2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// Arguments: the batch (0: 1x2048, 1: 4x512, 2: mixed) and the kernel (0:
// tiled, 1: per_token, 2: per_token_before).
BENCHMARK(BM_PrefillVulkan)
    ->ArgNames({"batch", "kernel"})
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  printSummary();
  return 0;
}
