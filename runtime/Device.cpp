//===- Device.cpp - Device memory, tensors on it, and its queue -----------===//

#include "runtime/Device.h"

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

Status PlanDevice::write(DeviceBuffer &buffer, uint64_t offset,
                         const void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(checkRange(*this, buffer, offset, bytes, "a write"));
  if (bytes == 0)
    return Status::ok();
  transfers_.bytesToDevice += bytes;
  ++transfers_.writes;
  return writeBytes(buffer, offset, data, bytes);
}

Status PlanDevice::read(const DeviceBuffer &buffer, uint64_t offset,
                        void *data, uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(checkRange(*this, buffer, offset, bytes, "a read"));
  if (bytes == 0)
    return synchronize();
  transfers_.bytesToHost += bytes;
  ++transfers_.reads;
  return readBytes(buffer, offset, data, bytes);
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
