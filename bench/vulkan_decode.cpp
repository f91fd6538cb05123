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
//    GPU budget of 128 values per lane, buffers by device address); K = 1
//    is the kernel as compiled for this device today (16-byte loads, the
//    device's lane budget) in both ABI forms, as bundles carry it, so the
//    device launches the descriptor-binding form, which this problem's
//    64 MiB cache allows (the bound_launches and addressed_launches
//    counters say which ran); K = 2 is K = 1 in the binding form only and
//    K = 3 in the device-address form only (SPIRVTargetOptions::Abi), the
//    form any tensor past the device's storage-buffer range takes;
//  - BM_DecodeVulkanFp8/subgroups:W/kernel:K: the same step over an fp8
//    (e4m3) cache holding the bf16 cache quantized with k_scale = v_scale =
//    1/256 (kv_cache_dtype=fp8, half the bytes to read), checked against
//    the reference over the same fp8 cache; its ratio to
//    BM_DecodeVulkan/subgroups:W/kernel:K is what the fp8 cache buys.
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
#include "reference/testing/Compare.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <tuple>

namespace {

const attn::Problem &decodeStep() {
  static const attn::Problem problem = attn::bench::makeDecodeStep(8);
  return problem;
}

const attn::bench::Fp8Step &fp8DecodeStep() {
  static const attn::bench::Fp8Step step =
      attn::bench::makeFp8Step(decodeStep());
  return step;
}

void setCounters(benchmark::State &state, const attn::Problem &p,
                 double seconds, double cpuSeconds) {
  double perStep = seconds / static_cast<double>(state.iterations());
  state.counters["kv_GB/s"] =
      static_cast<double>(attn::bench::kvBytes(p)) / perStep / 1e9;
  state.counters["step_ms"] = perStep * 1e3;
  state.counters["cpu_ms"] =
      cpuSeconds / static_cast<double>(state.iterations()) * 1e3;
}

void BM_DecodeReference(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeReference(state, p, seconds))
    return;
  setCounters(state, p, seconds.wall, seconds.cpu);
}

/// The compiled step with `subgroups` subgroups per attention workgroup, as
/// compiled for `kernel` (see the file comment), over a bf16 or an fp8
/// cache, made once per triple.
attn::bench::VulkanStep &vulkanStep(int64_t subgroups, int64_t kernel,
                                    bool fp8) {
  static std::map<std::tuple<int64_t, int64_t, bool>, attn::bench::VulkanStep>
      steps;
  auto key = std::make_tuple(subgroups, kernel, fp8);
  auto it = steps.find(key);
  if (it == steps.end())
    it = steps
             .emplace(key,
                      attn::bench::makeVulkanStep(
                          std::string("op=paged_attention,num_heads=32,"
                                      "num_kv_heads=8,head_size=128,"
                                      "block_size=16,dtype=bf16,layout=nhd") +
                              (fp8 ? ",kv_cache_dtype=fp8" : ""),
                          [=](mlir::attn::CompileOptions &o) {
                            o.attentionSubgroups = subgroups;
                            using Abi = mlir::attn::SPIRVTargetOptions::Abi;
                            if (kernel == 0) {
                              o.vectorLoadBytes = 0;
                              o.laneRegisters = 128;
                            }
                            if (kernel == 0 || kernel == 3)
                              o.spirv.abi = Abi::Addresses;
                            if (kernel == 2)
                              o.spirv.abi = Abi::Bindings;
                          }))
             .first;
  return it->second;
}

/// Times the step of `state`'s arguments over `p`'s cache (fp8 with
/// `scales`), after checking it against the reference.
void runDecodeVulkan(benchmark::State &state, const attn::Problem &p,
                     const attn::Tensor *scales) {
  attn::bench::VulkanStep &step =
      vulkanStep(state.range(0), state.range(1), scales != nullptr);
  if (!step.error.empty()) {
    state.SkipWithError(step.error.c_str());
    return;
  }
  std::vector<attn::Tensor> inputs = {p.query, p.kvCache, p.blockTable,
                                      p.seqLens, p.queryStartLoc};
  if (scales)
    inputs.insert(inputs.end(), {scales[0], scales[1]});

  // Right first: the same tolerance attn-diff uses for bf16.
  {
    attn::Result<std::vector<attn::Tensor>> got =
        attn::runtime::runPlan(step.plan, *step.device, inputs);
    attn::Result<attn::AttentionOutput> want =
        attn::bench::runReference(p, {scales, scales ? scales + 1 : nullptr});
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

  uint64_t bound = step.device->boundLaunches();
  uint64_t addressed = step.device->addressedLaunches();
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timePlanRuns(state, step, inputs, seconds))
    return;
  setCounters(state, p, seconds.kernel, seconds.cpu);
  state.counters["wall_ms"] =
      seconds.wall / static_cast<double>(state.iterations()) * 1e3;
  state.counters["bound_launches"] =
      static_cast<double>(step.device->boundLaunches() - bound);
  state.counters["addressed_launches"] =
      static_cast<double>(step.device->addressedLaunches() - addressed);
  state.SetLabel(std::string(step.device->name()));
}

void BM_DecodeVulkan(benchmark::State &state) {
  runDecodeVulkan(state, decodeStep(), /*scales=*/nullptr);
}

void BM_DecodeVulkanFp8(benchmark::State &state) {
  const attn::bench::Fp8Step &fp8 = fp8DecodeStep();
  const attn::Tensor scales[] = {fp8.kScale, fp8.vScale};
  runDecodeVulkan(state, fp8.problem, scales);
}

} // namespace

BENCHMARK(BM_DecodeReference)->Unit(benchmark::kMillisecond)->UseRealTime();
// The arguments: subgroups per attention workgroup (convert-attn-to-gpu's
// attention-subgroups; 4 is the default) and the kernel (0: before, 1: now
// as bundles carry it, 2: now by binding only, 3: now by address only).
BENCHMARK(BM_DecodeVulkan)
    ->ArgNames({"subgroups", "kernel"})
    ->ArgsProduct({{1, 4}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
// The fp8 cache beside today's kernels (1: both forms, 3: addresses only).
BENCHMARK(BM_DecodeVulkanFp8)
    ->ArgNames({"subgroups", "kernel"})
    ->ArgsProduct({{4}, {1, 3}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

BENCHMARK_MAIN();
