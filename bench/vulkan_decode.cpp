//===- vulkan_decode.cpp - Vulkan decode throughput vs the reference ------===//
//
// One decode step at Llama-3-8B's attention shape (H = 32, G = 8, D = 128,
// bf16, NHD, 16-token blocks), scaled to run in seconds on a CPU and to fit
// lavapipe's 128 MiB storage-buffer limit: 8 requests with 2048 tokens each
// (one new), 64 MiB of K and V. Both benchmarks run the same problem in the
// same process, so their ratio holds even on a loaded machine:
//
//  - BM_DecodeReference: reference/ops pagedAttention on 2 threads
//    (lavapipe's default on this 2-core machine is 2 as well; set
//    LP_NUM_THREADS to change it);
//  - BM_DecodeVulkan: the compiled plan on the first Vulkan device (lavapipe
//    here), timed from its first launch until the last one finished (the
//    upload of the inputs and the read-back are not counted; wall_ms, the
//    whole runPlan, says what they add).
//
// kv_GB/s is the K and V bytes the step must read (seq_len * G * D * 2 * 2
// per request) over the time of one step. The Vulkan result is checked
// against the reference (vLLM's bf16 tolerance) before anything is timed.
//
//===----------------------------------------------------------------------===//
#include "bench/DecodeStep.h"
#include "compiler/Compile.h"
#include "compiler/Variant.h"
#include "reference/ops/Compare.h"
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/ops/Random.h"
#include "runtime/PlanRunner.h"
#include "runtime/executors/vulkan/VulkanPlanDevice.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>

namespace {

constexpr int kThreads = 2;

const attn::Problem &decodeStep() {
  static const attn::Problem problem = attn::bench::makeDecodeStep(8);
  return problem;
}

attn::Result<attn::AttentionOutput> runReference(const attn::Problem &p) {
  attn::PagedAttentionParams params;
  params.scale = p.scale;
  return attn::pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                              p.queryStartLoc, nullptr, nullptr, params);
}

void setCounters(benchmark::State &state, double seconds) {
  double perStep = seconds / static_cast<double>(state.iterations());
  state.counters["kv_GB/s"] =
      static_cast<double>(attn::bench::kvBytes(decodeStep())) / perStep / 1e9;
  state.counters["step_ms"] = perStep * 1e3;
}

void BM_DecodeReference(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  attn::setReferenceThreadCount(kThreads);
  double seconds = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    attn::Result<attn::AttentionOutput> out = runReference(p);
    seconds += std::chrono::duration<double>(
                   std::chrono::steady_clock::now() - start)
                   .count();
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->out.data());
  }
  setCounters(state, seconds);
  attn::setReferenceThreadCount(0);
}

/// The compiled decode step on a Vulkan device.
struct VulkanStep {
  std::unique_ptr<attn::VulkanPlanDevice> device;
  attn::runtime::Plan plan;
  std::string error;
};

/// The compiled step with `subgroups` subgroups per attention workgroup,
/// made once per value.
VulkanStep &vulkanStep(int64_t subgroups) {
  static std::map<int64_t, VulkanStep> steps;
  auto [it, fresh] = steps.try_emplace(subgroups);
  if (!fresh)
    return it->second;
  it->second = [subgroups] {
    VulkanStep s;
    attn::Result<std::unique_ptr<attn::VulkanPlanDevice>> device =
        attn::VulkanPlanDevice::create();
    if (!device) {
      s.error = "no Vulkan device: " + device.message();
      return s;
    }
    s.device = std::move(*device);
    int64_t subgroupSize = s.device->device().info().subgroupSize;

    mlir::DialectRegistry registry;
    mlir::attn::registerCompilerDialects(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::Expected<mlir::attn::Variant> variant = mlir::attn::parseVariant(
        "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
        "block_size=16,dtype=bf16,layout=nhd");
    mlir::OpBuilder builder(&context);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(builder.getUnknownLoc());
    if (!variant) {
      s.error = llvm::toString(variant.takeError());
      return s;
    }
    if (llvm::Error err = mlir::attn::buildVariant(*variant, *module)) {
      s.error = llvm::toString(std::move(err));
      return s;
    }
    mlir::attn::CompileOptions options;
    options.targets = {"spirv"};
    options.subgroupSize = subgroupSize;
    options.attentionSubgroups = subgroups;
    mlir::FailureOr<mlir::attn::CompiledModule> compiled =
        mlir::attn::compileModule(*module, options);
    if (mlir::failed(compiled) || compiled->plans.size() != 1) {
      s.error = "cannot compile the variant";
      return s;
    }
    for (const mlir::attn::CompiledKernel &k : compiled->kernels) {
      if (attn::Status st = s.device->addKernel(k.symbol, k.bytes,
                                                k.entryPoint, k.launchJson);
          !st) {
        s.error = st.message();
        return s;
      }
    }
    s.plan = compiled->plans.front();
    return s;
  }();
  return it->second;
}

void BM_DecodeVulkan(benchmark::State &state) {
  const attn::Problem &p = decodeStep();
  VulkanStep &step = vulkanStep(state.range(0));
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
    attn::setReferenceThreadCount(kThreads);
    attn::Result<attn::AttentionOutput> want = runReference(p);
    attn::setReferenceThreadCount(0);
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

  double kernelSeconds = 0, wallSeconds = 0;
  for (auto _ : state) {
    attn::runtime::PlanRunStats stats;
    auto start = std::chrono::steady_clock::now();
    attn::Result<std::vector<attn::Tensor>> out =
        attn::runtime::runPlan(step.plan, *step.device, inputs, &stats);
    double wall = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    state.SetIterationTime(stats.kernelSeconds);
    kernelSeconds += stats.kernelSeconds;
    wallSeconds += wall;
  }
  setCounters(state, kernelSeconds);
  state.counters["wall_ms"] =
      wallSeconds / static_cast<double>(state.iterations()) * 1e3;
  state.SetLabel(std::string(step.device->name()));
}

} // namespace

BENCHMARK(BM_DecodeReference)->Unit(benchmark::kMillisecond)->UseRealTime();
// The argument: subgroups per attention workgroup (convert-attn-to-gpu's
// attention-subgroups; 4 is the default).
BENCHMARK(BM_DecodeVulkan)
    ->ArgName("subgroups")
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

BENCHMARK_MAIN();
