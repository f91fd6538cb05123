//===- VulkanStep.h - A variant compiled for the Vulkan device --*- C++ -*-===//
//
// What the Vulkan benchmarks share: compile one `attn-compile --variant`
// spec in process for the first Vulkan device (its subgroup size, and the
// lane-register budget it suggests), load its kernels and keep its plan;
// time a plan's run from its first launch to the last one finished. Also
// the reference on a fixed thread count, and the timing loops of both.
// Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_VULKANSTEP_H
#define ATTN_BENCH_VULKANSTEP_H

#include "compiler/Compile.h"
#include "compiler/Variant.h"
#include "devices/vulkan/VulkanPlanDevice.h"
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "reference/testing/Random.h"
#include "runtime/device/PlanRunner.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace attn::bench {

/// Reference threads: lavapipe's default on this 2-core machine is 2 as
/// well (LP_NUM_THREADS changes it).
constexpr int kThreads = 2;

/// The paged-attention reference on `p` (causal, no knobs; an fp8 cache
/// with `scales`) on kThreads.
inline Result<AttentionOutput> runReference(const Problem &p,
                                            const KvCacheScales &scales = {}) {
  PagedAttentionParams params;
  params.scale = p.scale;
  setReferenceThreadCount(kThreads);
  Result<AttentionOutput> out =
      pagedAttention(p.query, p.kvCache, p.blockTable, p.seqLens,
                     p.queryStartLoc, nullptr, nullptr, params, scales);
  setReferenceThreadCount(0);
  return out;
}

/// CPU seconds this process has used, all threads (lavapipe's workers
/// too): on a machine shared with other work, CPU time per step is steadier
/// than wall time.
inline double processCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
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

/// Times runReference(p) per iteration of `state`; false when it failed.
inline bool timeReference(benchmark::State &state, const Problem &p,
                          StepSeconds &seconds) {
  auto run = [&] {
    Result<AttentionOutput> out = runReference(p);
    if (out)
      benchmark::DoNotOptimize(out->out.data());
    return out;
  };
  return timeIterations(state, seconds, run).isOk();
}

/// A compiled step on a Vulkan device: its plan, and the seconds of its
/// first run beyond a later one's (lavapipe compiles a kernel's code when
/// it first runs: the JIT time, filled in by the first benchmark to run it).
struct VulkanStep {
  std::unique_ptr<vulkan::VulkanPlanDevice> device;
  runtime::Plan plan;
  double firstRunExtraSeconds = -1;
  std::string error;
};

/// Compiles `spec` for the first Vulkan device; `adjust` may change the
/// compile options the device suggests.
inline VulkanStep
makeVulkanStep(const std::string &spec,
               const std::function<void(mlir::attn::CompileOptions &)>
                   &adjust = nullptr) {
  VulkanStep s;
  Result<std::unique_ptr<vulkan::VulkanPlanDevice>> device =
      vulkan::VulkanPlanDevice::create();
  if (!device) {
    s.error = "no Vulkan device: " + device.message();
    return s;
  }
  s.device = std::move(*device);
  const vulkan::VulkanDeviceInfo &info = s.device->device().info();
  int64_t subgroupSize = info.subgroupSize;

  mlir::DialectRegistry registry;
  mlir::attn::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  llvm::Expected<mlir::attn::Variant> variant =
      mlir::attn::parseVariant(spec);
  if (!variant) {
    s.error = llvm::toString(variant.takeError());
    return s;
  }
  mlir::OpBuilder builder(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(builder.getUnknownLoc());
  if (llvm::Error err = mlir::attn::buildVariant(*variant, *module)) {
    s.error = llvm::toString(std::move(err));
    return s;
  }
  mlir::attn::CompileOptions options =
      mlir::attn::CompileOptions::forDevice(subgroupSize, info.type == "cpu");
  options.targets = {::attn::Target::SPIRV};
  if (adjust)
    adjust(options);
  mlir::FailureOr<mlir::attn::CompiledModule> compiled =
      mlir::attn::compileModule(*module, options);
  if (mlir::failed(compiled) || compiled->plans.size() != 1) {
    s.error = "cannot compile the variant: " + diagnostics;
    return s;
  }
  for (const mlir::attn::CompiledKernel &k : compiled->kernels) {
    if (Status st = s.device->addKernel(k.symbol, k.bytes, k.entryPoint,
                                        k.launchJson);
        !st) {
      s.error = st.message();
      return s;
    }
  }
  s.plan = compiled->plans.front();
  return s;
}

/// Times runs of `step`'s plan on `inputs` per iteration of `state`, the
/// kernels' time each iteration's manual time; false when a run failed.
inline bool timePlanRuns(benchmark::State &state, VulkanStep &step,
                         std::span<const Tensor> inputs, StepSeconds &seconds) {
  auto run = [&] {
    runtime::PlanRunStats stats;
    Result<std::vector<Tensor>> out =
        runtime::runPlan(step.plan, *step.device, inputs, &stats);
    if (out) {
      state.SetIterationTime(stats.kernelSeconds);
      seconds.kernel += stats.kernelSeconds;
    }
    return out;
  };
  return timeIterations(state, seconds, run).isOk();
}

} // namespace attn::bench

#endif // ATTN_BENCH_VULKANSTEP_H
