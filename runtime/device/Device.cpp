//===- Device.cpp - Device memory, tensors on it, and its queue -----------===//

#include "runtime/device/Device.h"

#include "runtime/bundle/Bundle.h"
#include "runtime/device/StepLog.h"

#include <algorithm>

namespace attn::runtime {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Status checkRange(const PlanDevice &device, const DeviceBuffer &buffer,
                  uint64_t offset, uint64_t bytes, const char *what) {
  if (offset > buffer.size() || bytes > buffer.size() - offset)
    return errorf(device.name(), ": ", what, " of ", bytes, " bytes at offset ",
                  offset, " is outside a buffer of ", buffer.size(), " bytes");
  return Status::ok();
}

} // namespace

int64_t DeviceTensor::numElements() const {
  Result<uint64_t> bytes = tensorBytes(dtype, shape);
  return bytes ? static_cast<int64_t>(*bytes / byteWidth(dtype)) : 0;
}

uint64_t DeviceTensor::numBytes() const {
  Result<uint64_t> bytes = tensorBytes(dtype, shape);
  return bytes ? *bytes : 0;
}

bool DeviceTensor::isContiguous() const {
  if (strides.empty())
    return true;
  if (strides.size() != shape.size())
    return false;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    // A dimension of one element may have any stride.
    if (shape[i] != 1 && strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

DeviceTensor DeviceTensor::leadingRows(int64_t rows) const {
  DeviceTensor t = *this;
  t.shape[0] = rows;
  t.strides.clear();
  return t;
}

std::string DeviceTensor::describe() const {
  std::string s = shapeText(shape) + " " + std::string(toString(dtype));
  if (!isContiguous())
    s += " strides " + shapeText(strides);
  return s;
}

std::string SubgroupSizes::describe() const {
  if (native == 0)
    return "any";
  std::string text = std::to_string(native);
  if (min != native || max != native)
    text += " (can pin " + std::to_string(min) + " to " + std::to_string(max) +
            ")";
  return text;
}

PlanDevice::PlanDevice() = default;
PlanDevice::~PlanDevice() = default;

Result<std::shared_ptr<DeviceBuffer>> PlanDevice::allocate(uint64_t bytes) {
  if (step_ && step_->mode == StepLog::Mode::Replaying) {
    if (step_->nextAllocation == step_->allocations.size())
      return errorf("the step allocates more buffers than the recorded one (",
                    step_->allocations.size(), ")");
    std::shared_ptr<DeviceBuffer> buffer =
        step_->allocations[step_->nextAllocation++];
    if (buffer->size() < bytes)
      return errorf("allocation #", step_->nextAllocation - 1, " of the step ",
                    "is ", bytes, " bytes; the recorded one was ",
                    buffer->size());
    return buffer;
  }
  Result<std::shared_ptr<DeviceBuffer>> buffer = allocateBuffer(bytes);
  if (buffer && step_)
    step_->allocations.push_back(*buffer);
  return buffer;
}

Status PlanDevice::write(DeviceBuffer &buffer, uint64_t offset,
                         const void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(checkRange(*this, buffer, offset, bytes, "a write"));
  if (bytes == 0)
    return Status::ok();
  transfers_.bytesToDevice += bytes;
  ++transfers_.writes;
  if (step_ && step_->mode == StepLog::Mode::Recording)
    step_->hostWritten.insert(&buffer);
  if (step_ && step_->mode == StepLog::Mode::Replaying &&
      !step_->hostWritten.count(&buffer))
    for (const std::shared_ptr<DeviceBuffer> &b : step_->allocations)
      if (b.get() == &buffer)
        return errorf("the step writes a buffer it allocated that the host "
                      "did not write when it was recorded (its scratch, "
                      "which a replay zeroes)");
  return writeBytes(buffer, offset, data, bytes);
}

Status PlanDevice::read(const DeviceBuffer &buffer, uint64_t offset,
                        void *data, uint64_t bytes) {
  if (step_)
    return errorf(name(), ": a recorded step cannot read device memory (its "
                  "work runs only when it is replayed)");
  ATTN_RETURN_IF_ERROR(checkRange(*this, buffer, offset, bytes, "a read"));
  if (bytes == 0)
    return synchronize();
  transfers_.bytesToHost += bytes;
  ++transfers_.reads;
  return readBytes(buffer, offset, data, bytes);
}

namespace {

bool sameView(const BufferView &a, const BufferView &b) {
  return a.buffer == b.buffer && a.offset == b.offset && a.bytes == b.bytes;
}

/// Why `got` is not `want`, the work item #index of a recorded step; ok
/// when it is.
Status matchWork(const StepWork &want,
                 const StepWork &got, size_t index) {
  std::string what = want.kernel.empty() ? "copy" : "launch of " + want.kernel;
  if (got.kernel != want.kernel)
    return errorf("work #", index, " of the step is ",
                  got.kernel.empty() ? "a copy" : "a launch of " + got.kernel,
                  "; the recorded step has a ", what, " there");
  if (got.grid != want.grid || got.block != want.block)
    return errorf("work #", index, " of the step (", what, ") has another ",
                  "grid or workgroup size than when it was recorded");
  if (got.args.size() != want.args.size())
    return errorf("work #", index, " of the step (", what, ") has ",
                  got.args.size(), " arguments; the recorded one had ",
                  want.args.size());
  for (size_t i = 0; i < got.args.size(); ++i)
    if (!sameView(got.args[i], want.args[i]))
      return errorf("argument #", i, " of work #", index, " of the step (",
                    what, ") is another buffer or range than when it was "
                    "recorded (a replayed step must run on the same tensors)");
  return Status::ok();
}

} // namespace

Status PlanDevice::logWork(StepWork work) {
  if (step_->mode == StepLog::Mode::Recording) {
    step_->work.push_back(std::move(work));
    return Status::ok();
  }
  if (step_->nextWork == step_->work.size())
    return errorf("the step enqueues more work than the recorded one (",
                  step_->work.size(), " launches and copies)");
  size_t index = step_->nextWork++;
  return matchWork(step_->work[index], work, index);
}

Status PlanDevice::copy(const BufferView &src, const BufferView &dst) {
  if (!src.buffer || !dst.buffer)
    return errorf(name(), ": a copy without a buffer");
  ATTN_RETURN_IF_ERROR(
      checkRange(*this, *src.buffer, src.offset, src.bytes, "a copy's source"));
  ATTN_RETURN_IF_ERROR(checkRange(*this, *dst.buffer, dst.offset, src.bytes,
                                  "a copy's destination"));
  if (step_) {
    ATTN_RETURN_IF_ERROR(logWork({"", {0, 0, 0}, {0, 0, 0}, {src, dst}}));
    if (step_->mode == StepLog::Mode::Replaying)
      return Status::ok();
  }
  return enqueueCopy(src, dst);
}

Status PlanDevice::launch(std::string_view kernel,
                          const std::array<uint32_t, 3> &grid,
                          const std::array<int64_t, 3> &block,
                          std::span<const BufferView> args) {
  if (step_) {
    ATTN_RETURN_IF_ERROR(logWork(
        {std::string(kernel), grid, block, {args.begin(), args.end()}}));
    if (step_->mode == StepLog::Mode::Replaying)
      return Status::ok();
  }
  return enqueueLaunch(kernel, grid, block, args);
}

Status PlanDevice::keepLaunchBounds(std::string_view symbol,
                                    std::string_view target,
                                    std::string_view launchJson) {
  if (target == "tt")
    return keepLaunchBounds(symbol, target, std::nullopt);
  Result<std::optional<LaunchBounds>> bounds =
      readLaunchBoundsMember(launchJson);
  if (!bounds)
    return errorf(name(), ": kernel ", symbol, ": ", bounds.message());
  return keepLaunchBounds(symbol, target, std::move(*bounds));
}

Status PlanDevice::keepLaunchBounds(std::string_view symbol,
                                    std::string_view target,
                                    std::optional<LaunchBounds> bounds) {
  KernelContract contract{std::string(target), std::move(bounds)};
  auto known = contracts_.find(symbol);
  if (known == contracts_.end()) {
    contracts_.emplace(std::string(symbol), std::move(contract));
    return Status::ok();
  }
  if (known->second.target != contract.target ||
      known->second.bounds != contract.bounds)
    return errorf(name(), " already has a kernel under the symbol ", symbol,
                  " with other launch bounds");
  return Status::ok();
}

Status PlanDevice::loadKernel(const Bundle &bundle, const BundleKernel &kernel,
                              std::string_view bytes) {
  ATTN_RETURN_IF_ERROR(
      keepLaunchBounds(kernel.symbol, kernel.target, kernel.launchJson));
  return loadKernelCode(bundle, kernel, bytes);
}

const KernelContract *PlanDevice::kernelContract(std::string_view symbol) const {
  auto it = contracts_.find(symbol);
  return it == contracts_.end() ? nullptr : &it->second;
}

Status PlanDevice::synchronize() {
  if (step_)
    return errorf(name(), ": a recorded step cannot wait for the device (its "
                  "work runs only when it is replayed)");
  return finishWork();
}

Result<std::shared_ptr<DeviceBuffer>>
PlanDevice::adopt(void *, uint64_t, std::function<void()>) {
  return errorf(name(), "'s memory has no address another framework could "
                "share, so it adopts none");
}

Status PlanDevice::beginRecording() {
  return errorf(name(), " does not record work for replay");
}

Result<std::unique_ptr<RecordedWork>>
PlanDevice::endRecording(std::vector<BufferView>) {
  return errorf(name(), " does not record work for replay");
}

Status PlanDevice::replayRecording(const RecordedWork &) {
  return errorf(name(), " does not record work for replay");
}

Result<DeviceTensor> allocateTensor(PlanDevice &device, DType dtype,
                                    std::vector<int64_t> shape) {
  Result<uint64_t> bytes = tensorBytes(dtype, shape);
  if (!bytes)
    return bytes.status();
  // Devices have no empty buffers; a tensor of no elements still gets one.
  Result<std::shared_ptr<DeviceBuffer>> buffer =
      device.allocate(std::max<uint64_t>(*bytes, 4));
  if (!buffer)
    return errorf("allocating a ", toString(dtype), " tensor ",
                  shapeText(shape), " on ", device.name(), ": ",
                  buffer.message());
  DeviceTensor t;
  t.device = &device;
  t.buffer = std::move(*buffer);
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

Status upload(const Tensor &host, const DeviceTensor &dst) {
  if (!dst.device || !dst.buffer)
    return Status::error("upload into a tensor that is on no device");
  if (!dst.isContiguous())
    return errorf("upload into ", dst.describe(), ": not contiguous");
  if (host.dtype() != dst.dtype || host.numBytes() != dst.numBytes())
    return errorf("upload of ", host.describe(), " into ", dst.describe());
  return dst.device->write(*dst.buffer, dst.offset, host.data(),
                           host.numBytes());
}

Result<DeviceTensor> toDevice(PlanDevice &device, const Tensor &host) {
  Result<DeviceTensor> t = allocateTensor(device, host.dtype(), host.shape());
  if (!t)
    return t;
  ATTN_RETURN_IF_ERROR(upload(host, *t));
  return t;
}

Result<Tensor> toHost(const DeviceTensor &src) {
  if (!src.device || !src.buffer)
    return Status::error("reading a tensor that is on no device");
  if (!src.isContiguous())
    return errorf("reading ", src.describe(), ": not contiguous");
  Result<Tensor> t = Tensor::create(src.dtype, src.shape);
  if (!t)
    return t;
  ATTN_RETURN_IF_ERROR(
      src.device->read(*src.buffer, src.offset, t->data(), t->numBytes()));
  return t;
}

Result<Tensor> hostView(const DeviceTensor &t) {
  if (!t.device || !t.buffer)
    return Status::error("a tensor that is on no device");
  if (!t.isContiguous())
    return errorf(t.describe(), " is not contiguous");
  void *base = t.device->hostAddress(*t.buffer);
  if (!base)
    return errorf(t.describe(), ": the device's memory is not the host's");
  if (t.offset > t.buffer->size() || t.numBytes() > t.buffer->size() - t.offset)
    return errorf(t.describe(), " reaches past its buffer of ",
                  t.buffer->size(), " bytes");
  return Tensor::wrap(t.dtype, t.shape, static_cast<uint8_t *>(base) + t.offset);
}

} // namespace attn::runtime
