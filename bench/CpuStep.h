//===- CpuStep.h - A variant compiled for the CPU device --------*- C++ -*-===//
//
// What the CPU benchmarks share: compile one `attn-compile --variant` spec
// in process (CompileSpec.h) for target cpu at one ISA level, load its
// kernels into a CPU device of their own (a device runs the widest level
// it loaded, so one level per device), keep the plan, and time the plan's
// runs on inputs uploaded once. Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_CPUSTEP_H
#define ATTN_BENCH_CPUSTEP_H

#include "bench/CompileSpec.h"
#include "bench/StepTiming.h"
#include "core/CpuKernel.h"
#include "devices/cpu/CpuPlanDevice.h"
#include "reference/testing/Compare.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/PlanRunner.h"

#include <benchmark/benchmark.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attn::bench {

/// The names of the ISA levels this host runs, narrowest first.
inline std::vector<std::string> hostCpuIsaLevels() {
  std::vector<std::string> names;
  for (const CpuIsaLevel &level : cpuIsaLevels())
    if (hostRunsCpuIsa(level))
      names.emplace_back(level.name);
  return names;
}

/// A compiled step on a CPU device of its own.
struct CpuStep {
  std::unique_ptr<cpu::CpuPlanDevice> device;
  runtime::Plan plan;
  std::string error;
};

/// Compiles `spec` for target cpu at ISA level `isa` and loads its kernels
/// into a new CPU device, as attn-run --backend cpu does.
inline CpuStep makeCpuStep(const std::string &spec, const std::string &isa) {
  CpuStep s;
  Result<std::unique_ptr<cpu::CpuPlanDevice>> device =
      cpu::CpuPlanDevice::create({.threads = 1});
  if (!device) {
    s.error = device.message();
    return s;
  }
  s.device = std::move(*device);
  mlir::attn::CompileOptions options =
      mlir::attn::CompileOptions::forDevice(/*subgroupSize=*/1,
                                            /*cpuDevice=*/true);
  options.targets = {::attn::Target::CPU};
  options.cpu.isaLevels = {isa};
  std::optional<mlir::attn::CompiledModule> compiled =
      compileSpec(spec, options, s.error);
  if (!compiled)
    return s;
  runtime::Bundle none;
  for (const mlir::attn::CompiledKernel &k : compiled->kernels) {
    runtime::BundleKernel kernel;
    kernel.symbol = k.symbol;
    kernel.target = k.target;
    kernel.entryPoint = k.entryPoint;
    kernel.launchJson = k.launchJson;
    if (Status st = s.device->loadKernel(none, kernel, k.bytes); !st) {
      s.error = st.message();
      return s;
    }
  }
  s.plan = compiled->plans.front();
  return s;
}

/// Copies of `inputs` on `device`, made once so that timed runs read the
/// cache where the kernels find it, as a serving step does.
inline Result<std::vector<runtime::DeviceTensor>>
uploadInputs(runtime::PlanDevice &device, std::span<const Tensor> inputs) {
  std::vector<runtime::DeviceTensor> out;
  for (const Tensor &t : inputs) {
    Result<runtime::DeviceTensor> d = runtime::toDevice(device, t);
    if (!d)
      return d.status();
    out.push_back(std::move(*d));
  }
  return out;
}

/// Runs `step`'s plan on `args` once and copies its first result to the
/// host: for checks.
inline Result<Tensor>
runCpuStepOnce(CpuStep &step, std::span<const runtime::DeviceTensor> args) {
  Result<std::vector<runtime::DeviceTensor>> out =
      runtime::runPlan(step.plan, *step.device, args);
  if (!out)
    return out.status();
  return runtime::toHost(out->front());
}

/// Times runs of `step`'s plan on `args` per iteration of `state` (the
/// kernels' time, first launch to last one done, each iteration's manual
/// time); false when a run failed.
inline bool timeCpuPlanRuns(benchmark::State &state, CpuStep &step,
                            std::span<const runtime::DeviceTensor> args,
                            StepSeconds &seconds) {
  auto run = [&] {
    runtime::PlanRunStats stats;
    Result<std::vector<runtime::DeviceTensor>> out =
        runtime::runPlan(step.plan, *step.device, args, &stats);
    if (out) {
      state.SetIterationTime(stats.kernelSeconds);
      seconds.kernel += stats.kernelSeconds;
    }
    return out;
  };
  return timeIterations(state, seconds, run).isOk();
}

/// Whether `step`'s result on `args` is within the default tolerance of
/// the reference's `want` (null: `error` says why there is none); if not,
/// `state` is skipped with the reason.
inline bool matchesReference(benchmark::State &state, CpuStep &step,
                             std::span<const runtime::DeviceTensor> args,
                             const Tensor *want, const std::string &error) {
  Result<Tensor> got = runCpuStepOnce(step, args);
  if (!got || !want) {
    state.SkipWithError(!got ? got.message().c_str() : error.c_str());
    return false;
  }
  Result<TensorDiff> diff =
      compareTensors(*got, *want, defaultTolerance(want->dtype()));
  if (!diff || !diff->passed()) {
    state.SkipWithError("the cpu result does not match the reference");
    return false;
  }
  return true;
}

} // namespace attn::bench

#endif // ATTN_BENCH_CPUSTEP_H
