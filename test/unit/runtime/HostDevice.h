//===- HostDevice.h - A PlanDevice whose kernels are C++ callbacks -*- C++ -*-//
//
// Host memory (runtime/device/HostMemory.h) with kernels that are host functions
// registered by symbol, so plans and the executors that run them are tested
// without a GPU. The device counts allocations and records every launch
// and every kernel load.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
#define ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H

#include "runtime/bundle/Bundle.h"
#include "runtime/device/HostMemory.h"

#include <algorithm>
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
  /// A test's kernel files hold the name of a `library` kernel: loading
  /// one makes that kernel launchable under the file's symbol.
  Status loadKernelCode(const Bundle &, const BundleKernel &kernel,
                    std::string_view bytes) override {
    auto it = library.find(std::string(bytes));
    if (it == library.end())
      return errorf("not a kernel: ", bytes);
    loaded.push_back(kernel.symbol);
    kernels[kernel.symbol] = it->second;
    return Status::ok();
  }
  bool canRecord() const override { return recordable; }

  /// Makes `kernel` launchable under `symbol` as a bundle's kernel of
  /// target spirv with `launchJson` as its launch facts would be.
  Status addKernel(const std::string &symbol, HostKernel kernel,
                   std::string launchJson = kNoBoundsFacts) {
    library[symbol] = std::move(kernel);
    BundleKernel k{symbol, "spirv", "", "", "", std::move(launchJson)};
    return loadKernel(Bundle{}, k, symbol);
  }
  /// Launch facts that declare no relation: a test kernel that reads only
  /// what its test gives it.
  static constexpr const char *kNoBoundsFacts =
      R"({"bounds":{"params":[],"arguments":[],"checks":[]}})";

  /// What the kernel files of a test bundle "contain", by file bytes.
  std::map<std::string, HostKernel> library;
  /// Launchable kernels, by symbol.
  std::map<std::string, HostKernel> kernels;
  std::vector<std::string> launched;
  std::vector<std::string> loaded;
  int allocations = 0;
  /// Whether it records steps (RecordedStep), and how often it replayed.
  bool recordable = true;
  int replays = 0;

protected:
  Result<std::shared_ptr<DeviceBuffer>> allocateBuffer(uint64_t bytes) override {
    ++allocations;
    return HostMemoryDevice::allocateBuffer(bytes);
  }
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &,
                       std::span<const BufferView> args) override {
    if (recording_) {
      recorded_.push_back({std::string(kernel), grid, {args.begin(), args.end()}});
      return Status::ok();
    }
    return run(kernel, grid, args);
  }
  Status enqueueCopy(const BufferView &src, const BufferView &dst) override {
    if (recording_) {
      recorded_.push_back({"", {}, {src, dst}});
      return Status::ok();
    }
    return HostMemoryDevice::enqueueCopy(src, dst);
  }
  Status beginRecording() override {
    recording_ = true;
    recorded_.clear();
    return Status::ok();
  }
  Result<std::unique_ptr<RecordedWork>>
  endRecording(std::vector<BufferView> zeroFirst) override {
    recording_ = false;
    auto work = std::make_unique<Recorded>();
    work->ops = std::move(recorded_);
    work->zeroFirst = std::move(zeroFirst);
    return std::unique_ptr<RecordedWork>(std::move(work));
  }
  Status replayRecording(const RecordedWork &work) override {
    const auto &recorded = static_cast<const Recorded &>(work);
    for (const BufferView &z : recorded.zeroFirst)
      std::fill_n(bytesOf(z), z.bytes, 0);
    for (const Op &op : recorded.ops)
      ATTN_RETURN_IF_ERROR(op.kernel.empty()
                               ? HostMemoryDevice::enqueueCopy(op.args[0],
                                                               op.args[1])
                               : run(op.kernel, op.grid, op.args));
    ++replays;
    return Status::ok();
  }

private:
  struct Op {
    std::string kernel;
    std::array<uint32_t, 3> grid;
    std::vector<BufferView> args;
  };
  struct Recorded : RecordedWork {
    std::vector<Op> ops;
    std::vector<BufferView> zeroFirst;
  };

  Status run(std::string_view kernel, const std::array<uint32_t, 3> &grid,
             std::span<const BufferView> args) {
    auto it = kernels.find(std::string(kernel));
    if (it == kernels.end())
      return errorf("no kernel ", kernel);
    it->second(grid, args);
    launched.push_back(std::string(kernel));
    return Status::ok();
  }

  bool recording_ = false;
  std::vector<Op> recorded_;
};

} // namespace attn::runtime::test

#endif // ATTN_TEST_UNIT_RUNTIME_HOSTDEVICE_H
