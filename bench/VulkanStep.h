//===- VulkanStep.h - A variant compiled for the Vulkan device --*- C++ -*-===//
//
// What the Vulkan benchmarks share: compile one `attn-compile --variant`
// spec in process (CompileSpec.h) for the first Vulkan device (its subgroup
// size, and the lane-register budget it suggests), load its kernels and keep
// its plan; time a plan's run from its first launch to the last one
// finished (the reference and the timing loops are StepTiming.h's).
// Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_VULKANSTEP_H
#define ATTN_BENCH_VULKANSTEP_H

#include "bench/CompileSpec.h"
#include "bench/StepTiming.h"
#include "devices/vulkan/VulkanPlanDevice.h"
#include "runtime/device/PlanRunner.h"

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <span>
#include <string>

namespace attn::bench {

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

  mlir::attn::CompileOptions options =
      mlir::attn::CompileOptions::forDevice(subgroupSize, info.type == "cpu");
  options.targets = {::attn::Target::SPIRV};
  if (adjust)
    adjust(options);
  std::optional<mlir::attn::CompiledModule> compiled =
      compileSpec(spec, options, s.error);
  if (!compiled)
    return s;
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
