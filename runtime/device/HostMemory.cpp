//===- HostMemory.cpp - Devices whose memory is the host's ----------------===//

#include "runtime/device/HostMemory.h"

#include "core/MemoryBudget.h"

#include <cstdint>
#include <cstring>
#include <new>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace attn::runtime {

#ifdef __linux__
/// Linux's transparent huge pages: 2 MiB on x86-64 and on AArch64 with 4 KiB
/// base pages.
constexpr uint64_t kHugePageBytes = uint64_t(2) << 20;

/// A zero-filled mapping of `bytes` (at least kHugePageBytes) aligned to a
/// huge page and advised to use them, or null. Kernels read a paged KV
/// cache a row here and there (one kv head's row of each token's): with
/// 4 KiB pages nearly every row is a TLB miss.
static std::shared_ptr<HostBuffer> mapHugePages(uint64_t bytes) {
  uint64_t mapped = bytes + kHugePageBytes;
  void *base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return nullptr;
  uintptr_t start = (reinterpret_cast<uintptr_t>(base) + kHugePageBytes - 1) &
                    ~(kHugePageBytes - 1);
  auto *data = reinterpret_cast<uint8_t *>(start);
  // Advice only: a kernel without transparent huge pages keeps 4 KiB pages.
  (void)madvise(data, bytes, MADV_HUGEPAGE);
  return HostBuffer::adopt(data, bytes,
                           [base, mapped] { munmap(base, mapped); });
}
#endif

Result<std::shared_ptr<HostBuffer>> HostBuffer::create(uint64_t bytes) {
  if (bytes > kMaxTensorBytes)
    return errorf("a host buffer of ", bytes, " bytes exceeds the limit of ",
                  kMaxTensorBytes);
  ATTN_RETURN_IF_ERROR(checkHostMemory(bytes, "a host buffer"));
#ifdef __linux__
  if (bytes >= kHugePageBytes) {
    if (std::shared_ptr<HostBuffer> buffer = mapHugePages(bytes))
      return buffer;
    return errorf("out of host memory for a buffer of ", bytes, " bytes");
  }
#endif
  try {
    auto buffer = std::make_shared<HostBuffer>();
    buffer->bytes_.assign(static_cast<size_t>(bytes), 0);
    return buffer;
  } catch (const std::bad_alloc &) {
    return errorf("out of host memory for a buffer of ", bytes, " bytes");
  }
}

Result<std::shared_ptr<DeviceBuffer>>
HostMemoryDevice::allocateBuffer(uint64_t bytes) {
  Result<std::shared_ptr<HostBuffer>> buffer = HostBuffer::create(bytes);
  if (!buffer)
    return buffer.status();
  return std::shared_ptr<DeviceBuffer>(std::move(*buffer));
}

uint8_t *HostMemoryDevice::bytesOf(const BufferView &view) {
  return static_cast<HostBuffer *>(view.buffer)->data() + view.offset;
}

HostBuffer::~HostBuffer() {
  if (release_)
    release_();
}

std::shared_ptr<HostBuffer> HostBuffer::adopt(void *data, uint64_t bytes,
                                              std::function<void()> release) {
  auto buffer = std::make_shared<HostBuffer>();
  buffer->external_ = static_cast<uint8_t *>(data);
  buffer->externalBytes_ = bytes;
  buffer->release_ = std::move(release);
  return buffer;
}

Result<std::shared_ptr<DeviceBuffer>>
HostMemoryDevice::adopt(void *address, uint64_t bytes,
                        std::function<void()> release) {
  if (!address && bytes)
    return errorf(name(), ": adopting ", bytes, " bytes at a null address");
  return std::shared_ptr<DeviceBuffer>(
      HostBuffer::adopt(address, bytes, std::move(release)));
}

void *HostMemoryDevice::address(DeviceBuffer &buffer) {
  return static_cast<HostBuffer &>(buffer).data();
}

Status HostMemoryDevice::enqueueCopy(const BufferView &src,
                                     const BufferView &dst) {
  if (dst.bytes < src.bytes)
    return errorf(name(), ": a copy of ", src.bytes, " bytes into ",
                  dst.bytes);
  if (src.offset > src.buffer->size() ||
      src.bytes > src.buffer->size() - src.offset ||
      dst.offset > dst.buffer->size() ||
      src.bytes > dst.buffer->size() - dst.offset)
    return errorf(name(), ": a copy outside its buffers");
  if (src.bytes)
    std::memmove(bytesOf(dst), bytesOf(src), src.bytes);
  return Status::ok();
}

Status HostMemoryDevice::writeBytes(DeviceBuffer &buffer, uint64_t offset,
                                    const void *data, uint64_t bytes) {
  std::memcpy(static_cast<HostBuffer &>(buffer).data() + offset, data, bytes);
  return Status::ok();
}

Status HostMemoryDevice::readBytes(const DeviceBuffer &buffer, uint64_t offset,
                                   void *data, uint64_t bytes) {
  std::memcpy(data, static_cast<const HostBuffer &>(buffer).data() + offset,
              bytes);
  return Status::ok();
}

} // namespace attn::runtime
