//===- PlanRunner.h - Runs a plan on a device ------------------*- C++ -*-===//
//
// Executes a Plan (runtime/bundle/Plan.h) on a PlanDevice (runtime/device/Device.h) over
// tensors already on the device: evaluates sizes, allocates scratch and
// params buffers, and enqueues the kernel launches in order. Nothing is
// copied to or from the host but the params (a few integers per launch);
// results stay on the device. Every device (Vulkan, CUDA, Metal, TT, the
// CPU's host memory) runs a bundle's host program through this one runner.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PLANRUNNER_H
#define ATTN_RUNTIME_PLANRUNNER_H

#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/device/Device.h"
#include "runtime/bundle/Plan.h"

#include <cstdint>
#include <span>
#include <vector>

namespace attn::runtime {

/// What a run measured, for benchmarks.
struct PlanRunStats {
  int64_t launches = 0;
  /// Wall time from the first launch to the end of the run, in seconds
  /// (after synchronize() when the run waited for the device).
  double kernelSeconds = 0.0;
};

/// Checks `args` against the plan's argument types (count, dtype, rank,
/// static dims; device tensors must be on `device` and contiguous), then
/// enqueues the plan's work on `device`. The results are device tensors:
/// a result the plan writes in place (a cache) is that argument; others are
/// buffers the run allocated. Nothing waits for the device.
Result<std::vector<DeviceTensor>> runPlan(const Plan &plan, PlanDevice &device,
                                          std::span<const DeviceTensor> args,
                                          PlanRunStats *stats = nullptr);

/// The same from host tensors, for tools and tests: uploads `inputs` into
/// new buffers, runs, waits and reads the results back.
Result<std::vector<Tensor>> runPlan(const Plan &plan, PlanDevice &device,
                                    std::span<const Tensor> inputs,
                                    PlanRunStats *stats = nullptr);

/// The type check runPlan starts with, on host tensors (what a host checks
/// before it uploads) or on device tensors.
Status checkPlanInputs(const Plan &plan, std::span<const Tensor> inputs);
Status checkPlanInputs(const Plan &plan, std::span<const DeviceTensor> args);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PLANRUNNER_H
