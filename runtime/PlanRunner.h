//===- PlanRunner.h - Runs a plan on a device ------------------*- C++ -*-===//
//
// Executes a Plan (runtime/Plan.h) against a PlanDevice: uploads the inputs,
// evaluates sizes, allocates scratch and params buffers, launches kernels in
// order and reads the results back. Devices (Vulkan, CUDA, Metal) implement
// PlanDevice; the runner is shared, so every device runs a bundle's host
// program the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PLANRUNNER_H
#define ATTN_RUNTIME_PLANRUNNER_H

#include "reference/ops/Status.h"
#include "reference/ops/Tensor.h"
#include "runtime/Plan.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// A device allocation. Devices subclass it; the runner only passes it back.
class DeviceBuffer {
public:
  virtual ~DeviceBuffer() = default;
  virtual uint64_t size() const = 0;
};

/// The subgroup sizes a device runs kernels at. Kernels that reduce across
/// a subgroup compute wrong results at another size, so bundles carry one
/// build per size and the runtime takes the one the device runs.
struct SubgroupSizes {
  /// The size a kernel gets without asking; 0: the device has no subgroups
  /// a kernel depends on (a host device), and runs every build.
  int64_t native = 0;
  /// The sizes a kernel may pin (Vulkan's subgroup size control, powers of
  /// two); both `native` when it cannot.
  int64_t min = 0, max = 0;

  bool canRun(int64_t size) const {
    return native == 0 || size == native || (size >= min && size <= max);
  }
  /// "8", or "8 (can pin 4 to 32)".
  std::string describe() const;
};

/// What the runner needs from a device. Kernels are referred to by the
/// symbol the plan's Launch ops carry; the device resolves them (typically
/// from a loaded bundle).
class PlanDevice {
public:
  virtual ~PlanDevice() = default;
  virtual std::string_view name() const = 0;
  /// A zero-filled buffer of at least `bytes` bytes.
  virtual Result<std::shared_ptr<DeviceBuffer>> allocate(uint64_t bytes) = 0;
  virtual Status write(DeviceBuffer &buffer, const void *data,
                       uint64_t bytes) = 0;
  virtual Status read(const DeviceBuffer &buffer, void *data,
                      uint64_t bytes) = 0;
  /// Runs `kernel` on `grid` workgroups of `block` invocations. Launches are
  /// ordered: a launch sees the writes of the ones before it.
  virtual Status launch(std::string_view kernel,
                        const std::array<uint32_t, 3> &grid,
                        const std::array<int64_t, 3> &block,
                        std::span<DeviceBuffer *const> args) = 0;
  /// Waits for every launch so far to finish.
  virtual Status finish() = 0;
  /// The subgroup sizes its kernels may be built for.
  virtual SubgroupSizes subgroupSizes() const { return {}; }
};

/// What a run measured, for benchmarks.
struct PlanRunStats {
  int64_t launches = 0;
  /// Wall time from the first launch to finish(), in seconds.
  double kernelSeconds = 0.0;
};

/// Checks `inputs` against the plan's argument types (count, dtype, rank,
/// static dims), runs the plan on `device`, and returns its results.
Result<std::vector<Tensor>> runPlan(const Plan &plan, PlanDevice &device,
                                    std::span<const Tensor> inputs,
                                    PlanRunStats *stats = nullptr);

/// The check runPlan starts with; also used by hosts before they upload.
Status checkPlanInputs(const Plan &plan, std::span<const Tensor> inputs);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PLANRUNNER_H
