//===- RecordedStep.cpp - A step's device work, recorded once and replayed ===//

#include "runtime/device/RecordedStep.h"

#include "runtime/device/StepLog.h"

namespace attn::runtime {

RecordedStep::RecordedStep(PlanDevice &device) : device_(device) {}
RecordedStep::~RecordedStep() = default;

Result<std::unique_ptr<RecordedStep>>
RecordedStep::record(PlanDevice &device, const Step &step) {
  // Another thread's work must not land in the recording.
  std::lock_guard<std::recursive_mutex> lock(device.mutex());
  if (!device.canRecord())
    return errorf(device.name(), " does not record steps for replay");
  if (device.step_)
    return errorf(device.name(), " is already recording or replaying a step");
  std::unique_ptr<RecordedStep> recorded(new RecordedStep(device));
  recorded->log_ = std::make_unique<PlanDevice::StepLog>();
  ATTN_RETURN_IF_ERROR(device.beginRecording());
  device.step_ = recorded->log_.get();
  Status s = step();
  device.step_ = nullptr;
  // The scratch buffers of the step: allocated by it, never written by the
  // host. Each replay zeroes them first.
  std::vector<BufferView> zeroFirst;
  for (const std::shared_ptr<DeviceBuffer> &b : recorded->log_->allocations)
    if (!recorded->log_->hostWritten.count(b.get()))
      zeroFirst.push_back({b.get(), 0, b->size()});
  Result<std::unique_ptr<RecordedWork>> work =
      device.endRecording(std::move(zeroFirst));
  if (!s)
    return errorf("recording a step on ", device.name(), ": ", s.message());
  if (!work)
    return work.status();
  recorded->work_ = std::move(*work);
  return recorded;
}

Status RecordedStep::replay(const Step &step) {
  std::lock_guard<std::recursive_mutex> lock(device_.mutex());
  if (device_.step_)
    return errorf(device_.name(), " is already recording or replaying a step");
  PlanDevice::StepLog &log = *log_;
  log.mode = PlanDevice::StepLog::Mode::Replaying;
  log.nextAllocation = 0;
  log.nextWork = 0;
  device_.step_ = &log;
  Status s = step();
  device_.step_ = nullptr;
  if (!s)
    return errorf("replaying a step on ", device_.name(), ": ", s.message());
  if (log.nextAllocation != log.allocations.size() ||
      log.nextWork != log.work.size())
    return errorf("replaying a step on ", device_.name(), ": the step made ",
                  log.nextAllocation, " allocations and ", log.nextWork,
                  " launches and copies; the recorded one ",
                  log.allocations.size(), " and ", log.work.size());
  return device_.replayRecording(*work_);
}

size_t RecordedStep::workItems() const { return log_->work.size(); }
size_t RecordedStep::allocations() const { return log_->allocations.size(); }

} // namespace attn::runtime
