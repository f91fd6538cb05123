//===- HostMemory.h - Devices whose memory is the host's -------*- C++ -*-===//
//
// A PlanDevice over host memory: buffers are zero-filled byte arrays (on
// Linux, those of 2 MiB or more are anonymous mappings aligned to and
// advised for transparent huge pages, for kernels that read a paged KV
// cache a row here and there), writes, reads and copies are memcpy, and
// address() hands the memory out, so the CPU executor and DLPack use it without
// a copy; adopt() takes host memory someone else allocated. Launches run to
// completion, so synchronize() has nothing to wait for. The CPU device, the
// TT plan device (whose launches move their operands to the card) and the
// tests' devices are HostMemoryDevices that say what a launch does.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_HOSTMEMORY_H
#define ATTN_RUNTIME_HOSTMEMORY_H

#include "runtime/device/Device.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace attn::runtime {

class HostBuffer final : public DeviceBuffer {
public:
  /// An empty buffer; create() makes one of a size.
  HostBuffer() = default;
  ~HostBuffer() override;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  /// A zero-filled buffer (see the file comment for large ones), or an
  /// error when the host is out of memory.
  static Result<std::shared_ptr<HostBuffer>> create(uint64_t bytes);
  /// A buffer over `bytes` bytes at `data` that someone else owns;
  /// `release` runs when the buffer goes.
  static std::shared_ptr<HostBuffer> adopt(void *data, uint64_t bytes,
                                           std::function<void()> release);
  uint64_t size() const override {
    return external_ ? externalBytes_ : bytes_.size();
  }
  uint8_t *data() { return external_ ? external_ : bytes_.data(); }
  const uint8_t *data() const {
    return external_ ? external_ : bytes_.data();
  }

private:
  std::vector<uint8_t> bytes_;
  uint8_t *external_ = nullptr;
  uint64_t externalBytes_ = 0;
  std::function<void()> release_;
};

class HostMemoryDevice : public PlanDevice {
public:
  MemorySpace memorySpace() const override { return MemorySpace::Host; }
  void *address(DeviceBuffer &buffer) override;
  Result<std::shared_ptr<DeviceBuffer>>
  adopt(void *address, uint64_t bytes, std::function<void()> release) override;

  /// The host bytes `view` shows (of a HostBuffer).
  static uint8_t *bytesOf(const BufferView &view);

protected:
  Result<std::shared_ptr<DeviceBuffer>> allocateBuffer(uint64_t bytes) override;
  Status enqueueCopy(const BufferView &src, const BufferView &dst) override;
  Status finishWork() override { return Status::ok(); }
  Status writeBytes(DeviceBuffer &buffer, uint64_t offset, const void *data,
                    uint64_t bytes) override;
  Status readBytes(const DeviceBuffer &buffer, uint64_t offset, void *data,
                   uint64_t bytes) override;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOSTMEMORY_H
