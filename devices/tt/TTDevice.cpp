//===- TTDevice.cpp - What attn's TT host code needs of a device ---------===//
#include "devices/tt/TTDevice.h"

namespace attn::tt {

TTDevice::~TTDevice() = default;

ScopedBuffers::~ScopedBuffers() {
  for (const Buffer &b : buffers_)
    device_.releaseBuffer(b);
}

Result<Buffer> ScopedBuffers::create(uint32_t pageSize, uint32_t numPages) {
  Result<Buffer> b = device_.createBuffer(pageSize, numPages);
  if (b)
    buffers_.push_back(*b);
  return b;
}

Result<Buffer> ScopedBuffers::upload(const void *data, uint32_t pageSize,
                                     uint32_t numPages) {
  Result<Buffer> b = create(pageSize, numPages);
  if (!b)
    return b;
  ATTN_RETURN_IF_ERROR(device_.write(*b, data));
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
