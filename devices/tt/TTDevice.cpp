//===- TTDevice.cpp - What attn's TT host code needs of a device ---------===//
#include "devices/tt/TTDevice.h"

namespace attn::tt {

TTDevice::~TTDevice() = default;

Status TTDevice::write(const Buffer &buffer, const void *data) {
  ATTN_RETURN_IF_ERROR(writeBuffer(buffer, data));
  transfers_.bytesToDevice += uint64_t(buffer.numPages) * buffer.pageSize;
  ++transfers_.writes;
  return Status::ok();
}

Status TTDevice::read(const Buffer &buffer, void *data) {
  ATTN_RETURN_IF_ERROR(readBuffer(buffer, data));
  transfers_.bytesToHost += uint64_t(buffer.numPages) * buffer.pageSize;
  ++transfers_.reads;
  return Status::ok();
}

Result<Buffer> TTDevice::upload(const void *data, uint32_t pageSize,
                                uint32_t numPages) {
  Result<Buffer> b = allocateBuffer(pageSize, numPages);
  if (!b)
    return b;
  if (Status s = write(*b, data); !s.isOk()) {
    releaseBuffer(*b);
    return s;
  }
  return b;
}

Result<Buffer> TTDevice::allocateBuffer(uint32_t pageSize, uint32_t numPages) {
  return createBuffer(pageSize, numPages);
}

ScopedBuffers::~ScopedBuffers() {
  // Newest first, so that a device that allocates upwards reuses the space.
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it)
    device_.releaseBuffer(*it);
}

Result<Buffer> ScopedBuffers::create(uint32_t pageSize, uint32_t numPages) {
  Result<Buffer> b = device_.createBuffer(pageSize, numPages);
  if (b)
    buffers_.push_back(*b);
  return b;
}

Result<Buffer> ScopedBuffers::upload(const void *data, uint32_t pageSize,
                                     uint32_t numPages) {
  Result<Buffer> b = device_.upload(data, pageSize, numPages);
  if (b)
    buffers_.push_back(*b);
  return b;
}

Result<Program> loadProgram(const std::string &dir, TTDevice &device) {
  auto description = loadProgramDescription(dir);
  if (!description)
    return description.status();
  if (description->arch != device.arch())
    return errorf(dir, ": the program was built for ",
                  toString(description->arch), ", the device is ",
                  device.name());
  auto kernels = device.loadKernels(*description);
  if (!kernels)
    return kernels.status();
  Program p;
  p.description = std::move(*description);
  p.kernels = std::move(*kernels);
  if (!p.description.mergeProgram.empty()) {
    auto merge = loadProgram(mergeProgramDir(dir, p.description), device);
    if (!merge)
      return errorf(dir, ": its merge program: ", merge.message());
    p.merge = std::make_shared<const Program>(std::move(*merge));
  }
  return p;
}

} // namespace attn::tt
