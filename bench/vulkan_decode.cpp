//===- vulkan_decode.cpp - Vulkan decode throughput vs the reference ------===//
//
// One decode step at Llama-3-8B's attention shape (H = 32, G = 8, D = 128,
// bf16, NHD, 16-token blocks), scaled to run in seconds on a CPU and to fit
// lavapipe's 128 MiB storage-buffer limit: 8 requests with 2048 tokens each
// (one new), 64 MiB of K and V. Every benchmark runs the same problem in the
// same process, so their ratio holds even on a loaded machine:
//
//  - BM_DecodeReference: reference/ops pagedAttention on 2 threads
//    (lavapipe's default on this 2-core machine is 2 as well; set
//    LP_NUM_THREADS to change it);
//  - BM_DecodeVulkan/subgroups:W/kernel:K: the compiled plan on the first
//    Vulkan device (lavapipe here) with W subgroups per attention workgroup,
//    timed from its first launch until the last one finished (the upload of
//    the inputs and the read-back are not counted; wall_ms, the whole
//    runPlan, says what they add). K = 0 is the kernel as it was before
//    16-byte loads on SPIR-V and lane budgets by device (scalar loads, the
//    GPU budget of 128 values per lane); K = 1 is the kernel as compiled for
//    this device today (16-byte loads, the device's lane budget), its
//    buffers reached by device address; K = 2 is K = 1 with descriptor
//    bindings instead (CompileOptions::bufferAddresses false), which this
//    problem's 64 MiB cache allows.
//
// kv_GB/s is the K and V bytes the step must read (seq_len * G * D * 2 * 2
// per request) over the time of one step; cpu_ms the CPU time the process
// spent per step, all threads (for Vulkan the whole runPlan, upload and
// read-back included), steadier than wall time on a shared machine. The
// Vulkan result is checked against the reference (vLLM's bf16 tolerance)
// before anything is timed.
//
//===----------------------------------------------------------------------===//
#include "bench/DecodeStep.h"
#include "bench/VulkanStep.h"
#include "reference/ops/Compare.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>

namespace {

const attn::Problem &decodeStep() {
  static const attn::Problem problem = attn::bench::makeDecodeStep(8);
  return problem;
}

void setCounters(benchmark::State &state, double seconds,
                 double cpuSeconds) {
  double perStep = seconds / static_cast<double>(state.iterations());
  state.counters["kv_GB/s"] =
      static_cast<double>(attn::bench::kvBytes(decodeStep())) / perStep / 1e9;
  state.counters["step_ms"] = perStep * 1e3;
  state.counters["cpu_ms"] =
      cpuSeconds / static_cast<double>(state.iterations()) * 1e3;
}

void BM_DecodeReference(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  double seconds = 0, cpuSeconds = 0;
  for (auto _ : state) {
    attn::Result<attn::AttentionOutput> out =
        attn::bench::timedReference(p, seconds, cpuSeconds);
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->out.data());
  }
  setCounters(state, seconds, cpuSeconds);
}

/// The compiled step with `subgroups` subgroups per attention workgroup, as
/// compiled for `kernel` (see the file comment), made once per pair.
attn::bench::VulkanStep &vulkanStep(int64_t subgroups, int64_t kernel) {
  static std::map<std::pair<int64_t, int64_t>, attn::bench::VulkanStep> steps;
  auto key = std::make_pair(subgroups, kernel);
  auto it = steps.find(key);
  if (it == steps.end())
    it = steps
             .emplace(key,
                      attn::bench::makeVulkanStep(
                          "op=paged_attention,num_heads=32,num_kv_heads=8,"
                          "head_size=128,block_size=16,dtype=bf16,layout=nhd",
                          [=](mlir::attn::CompileOptions &o) {
                            o.attentionSubgroups = subgroups;
                            if (kernel == 0) {
                              o.vectorLoadBytes = 0;
                              o.laneRegisters = 128;
                            }
                            o.bufferAddresses = kernel != 2;
                          }))
             .first;
  return it->second;
}

void BM_DecodeVulkan(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  attn::bench::VulkanStep &step = vulkanStep(state.range(0), state.range(1));
  if (!step.error.empty()) {
    state.SkipWithError(step.error.c_str());
    return;
  }
  const attn::Tensor inputs[] = {p.query, p.kvCache, p.blockTable, p.seqLens,
                                 p.queryStartLoc};

  // Right first: the same tolerance attn-diff uses for bf16.
  {
    attn::Result<std::vector<attn::Tensor>> got =
        attn::runtime::runPlan(step.plan, *step.device, inputs);
    attn::Result<attn::AttentionOutput> want = attn::bench::runReference(p);
    if (!got || !want) {
      state.SkipWithError(!got ? got.message().c_str()
                               : want.message().c_str());
      return;
    }
    attn::Result<attn::TensorDiff> diff =
        attn::compareTensors((*got)[0], want->out,
                             attn::defaultTolerance(want->out.dtype()));
    if (!diff || !diff->passed()) {
      state.SkipWithError("the Vulkan result does not match the reference");
      return;
    }
  }

  double kernelSeconds = 0, wallSeconds = 0, cpuSeconds = 0;
  for (auto _ : state) {
    attn::runtime::PlanRunStats stats;
    auto start = std::chrono::steady_clock::now();
    double cpuStart = attn::bench::processCpuSeconds();
    attn::Result<std::vector<attn::Tensor>> out =
        attn::runtime::runPlan(step.plan, *step.device, inputs, &stats);
    double wall = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    cpuSeconds += attn::bench::processCpuSeconds() - cpuStart;
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    state.SetIterationTime(stats.kernelSeconds);
    kernelSeconds += stats.kernelSeconds;
    wallSeconds += wall;
  }
  setCounters(state, kernelSeconds, cpuSeconds);
  state.counters["wall_ms"] =
      wallSeconds / static_cast<double>(state.iterations()) * 1e3;
  state.SetLabel(std::string(step.device->name()));
}

} // namespace

BENCHMARK(BM_DecodeReference)->Unit(benchmark::kMillisecond)->UseRealTime();
// The arguments: subgroups per attention workgroup (convert-attn-to-gpu's
// attention-subgroups; 4 is the default) and the kernel (0: before, 1: now,
// 2: now with descriptor bindings).
BENCHMARK(BM_DecodeVulkan)
    ->ArgNames({"subgroups", "kernel"})
    ->ArgsProduct({{1, 4}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

BENCHMARK_MAIN();
