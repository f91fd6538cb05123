//===- StepLog.h - What a recorded step allocated and enqueued -*- C++ -*-===//
//
// Internal to PlanDevice (Device.cpp) and RecordedStep (RecordedStep.cpp):
// while a step is recorded, the device's allocations, the buffers the host
// writes and the launches and copies are logged; while it is replayed, the
// same calls are matched against the log instead of running.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_STEPLOG_H
#define ATTN_RUNTIME_STEPLOG_H

#include "runtime/device/Device.h"

#include <array>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace attn::runtime {

/// A launch (kernel set) or a copy (no kernel; args = {src, dst}) of a step.
struct StepWork {
  std::string kernel;
  std::array<uint32_t, 3> grid = {0, 0, 0};
  std::array<int64_t, 3> block = {0, 0, 0};
  std::vector<BufferView> args;
};

struct PlanDevice::StepLog {
  enum class Mode {
    /// The step's host side runs; its device work is recorded.
    Recording,
    /// The step's host side runs again; allocations return the recorded
    /// buffers and device work is matched against the recorded work.
    Replaying,
  };
  Mode mode = Mode::Recording;
  std::vector<std::shared_ptr<DeviceBuffer>> allocations;
  /// The allocations the host wrote while the step was recorded.
  std::set<const DeviceBuffer *> hostWritten;
  std::vector<StepWork> work;
  size_t nextAllocation = 0;
  size_t nextWork = 0;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_STEPLOG_H
