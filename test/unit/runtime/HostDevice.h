//===- HostDevice.h - A PlanDevice whose kernels are C++ callbacks -*- C++ -*-//
//
// Host memory (runtime/HostMemory.h) with kernels that are host functions
// registered by symbol, so plans and the executors that run them are tested
// without a GPU. The device counts allocations and records every launch
// and every kernel load.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
#define ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H

#include "runtime/Bundle.h"
#include "runtime/HostMemory.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::runtime::test {

/// The elements a kernel argument shows, as T.
template <typename T> T *hostData(const BufferView &view) {
  return reinterpret_cast<T *>(HostMemoryDevice::bytesOf(view));
}

using HostKernel = std::function<void(const std::array<uint32_t, 3> &grid,
                                      std::span<const BufferView> args)>;

class HostDevice : public HostMemoryDevice {
public:
  std::string_view name() const override { return "host"; }
  Result<std::shared_ptr<DeviceBuffer>> allocate(uint64_t bytes) override {
    ++allocations;
    return HostMemoryDevice::allocate(bytes);
  }
  Status launch(std::string_view kernel, const std::array<uint32_t, 3> &grid,
                const std::array<int64_t, 3> &,
                std::span<const BufferView> args) override {
    auto it = kernels.find(std::string(kernel));
    if (it == kernels.end())
      return errorf("no kernel ", kernel);
    it->second(grid, args);
    launched.push_back(std::string(kernel));
    return Status::ok();
  }
  /// A test's kernel files hold the name of a `library` kernel: loading
  /// one makes that kernel launchable under the file's symbol.
  Status loadKernel(const Bundle &, const BundleKernel &kernel,
                    std::string_view bytes) override {
    auto it = library.find(std::string(bytes));
    if (it == library.end())
      return errorf("not a kernel: ", bytes);
    loaded.push_back(kernel.symbol);
    kernels[kernel.symbol] = it->second;
    return Status::ok();
  }

  /// What the kernel files of a test bundle "contain", by file bytes.
  std::map<std::string, HostKernel> library;
  /// Launchable kernels, by symbol.
  std::map<std::string, HostKernel> kernels;
  std::vector<std::string> launched;
  std::vector<std::string> loaded;
  int allocations = 0;
};

} // namespace attn::runtime::test

#endif // ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
