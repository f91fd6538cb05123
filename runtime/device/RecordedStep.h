//===- RecordedStep.h - A step's device work, recorded once and replayed -===//
//
// What CUDA graphs give vLLM: the launches of one step for a padded batch
// (every layer's forward) are recorded once, then replayed each step after
// the metadata has been written in place.
//
//   auto step = [&]() -> Status {        // the same tensors every time
//     for (auto &layer : layers)
//       ATTN_RETURN_IF_ERROR(layer->impl->forward(..., *metadata, out));
//     return Status::ok();
//   };
//   auto recorded = RecordedStep::record(device, step).value();
//   // each step: build `metadata` for the padded batch, then
//   recorded->replay(step);            // results are complete on return
//
// record() runs the step's host side (checks, staging, plan evaluation)
// with the device recording: buffers are allocated and the host's writes
// land in them, but launches and copies are recorded, not run (a Vulkan
// command buffer of its own). replay() runs the host side again with the
// device replaying: every allocation returns the buffer recorded at its
// place, so the step's metadata is written in place into the persistent
// staging buffers; every launch and copy is matched against the recording
// (same kernel, grid and buffers) instead of being enqueued. Only when all
// of them match is the recorded work submitted, after zeroing the step's
// scratch buffers (those the host does not write), as fresh allocations
// would be. So a replay computes what a fresh run of the step would, bit for
// bit, or fails saying where the step differs from the recording (another
// batch shape, other tensors); nothing runs then.
//
// The metadata is still checked on the host at every replay (forward does
// it), so a replay with bad metadata fails before anything runs. Which
// batches a backend may replay is its builder's getCudagraphSupport on the
// device (AttentionMetadataBuilder, runtime/host/MetadataBuilder.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_RECORDEDSTEP_H
#define ATTN_RUNTIME_RECORDEDSTEP_H

#include "runtime/device/Device.h"

#include <functional>
#include <memory>

namespace attn::runtime {

class RecordedStep {
public:
  using Step = std::function<Status()>;

  /// Records the device work of `step` on `device` (which must
  /// canRecord()). An error from the step, or a read or wait inside it,
  /// fails the recording.
  static Result<std::unique_ptr<RecordedStep>> record(PlanDevice &device,
                                                      const Step &step);
  ~RecordedStep();

  /// Runs `step`'s host side against the recording, then the recorded work
  /// on the device, and waits for it.
  Status replay(const Step &step);

  /// Launches and copies the recording holds.
  size_t workItems() const;
  /// Buffers the step allocated (staging, scratch, results).
  size_t allocations() const;

private:
  RecordedStep(PlanDevice &device);

  PlanDevice &device_;
  std::unique_ptr<PlanDevice::StepLog> log_;
  std::unique_ptr<RecordedWork> work_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_RECORDEDSTEP_H
