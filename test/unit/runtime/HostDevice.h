//===- HostDevice.h - A PlanDevice whose kernels are C++ callbacks
//---------===//
//
// Buffers are byte vectors and kernels are host functions registered by
// symbol, so plans (and the executors that run them) are tested without a
// GPU. The device counts allocations and records every launch.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
#define ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H

#include "runtime/PlanRunner.h"

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::runtime::test {

class HostBuffer : public DeviceBuffer {
public:
  explicit HostBuffer(uint64_t n) : bytes(n, 0) {}
  uint64_t size() const override { return bytes.size(); }
  std::vector<uint8_t> bytes;
};

/// The elements of a HostBuffer as T.
template <typename T> T *hostData(DeviceBuffer *b) {
  return reinterpret_cast<T *>(static_cast<HostBuffer *>(b)->bytes.data());
}

using HostKernel = std::function<void(const std::array<uint32_t, 3> &grid,
                                      std::span<DeviceBuffer *const> args)>;

class HostDevice : public PlanDevice {
public:
  std::string_view name() const override { return "host"; }
  Result<std::shared_ptr<DeviceBuffer>> allocate(uint64_t bytes) override {
    ++allocations;
    return std::shared_ptr<DeviceBuffer>(std::make_shared<HostBuffer>(bytes));
  }
  Status write(DeviceBuffer &b, const void *data, uint64_t n) override {
    std::memcpy(static_cast<HostBuffer &>(b).bytes.data(), data, n);
    return Status::ok();
  }
  Status read(const DeviceBuffer &b, void *data, uint64_t n) override {
    std::memcpy(data, static_cast<const HostBuffer &>(b).bytes.data(), n);
    return Status::ok();
  }
  Status launch(std::string_view kernel, const std::array<uint32_t, 3> &grid,
                const std::array<int64_t, 3> &,
                std::span<DeviceBuffer *const> args) override {
    auto it = kernels.find(std::string(kernel));
    if (it == kernels.end())
      return errorf("no kernel ", kernel);
    it->second(grid, args);
    launched.push_back(std::string(kernel));
    return Status::ok();
  }
  Status finish() override { return Status::ok(); }

  std::map<std::string, HostKernel> kernels;
  std::vector<std::string> launched;
  int allocations = 0;
};

} // namespace attn::runtime::test

#endif // ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
