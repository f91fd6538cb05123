//===- CudaPlanDevice.h - Runs plans on an NVIDIA GPU ----------*- C++ -*-===//
//
// The CUDA executor behind the plan runner (runtime/device/PlanRunner.h): the
// driver API loaded with dlopen (no link against libcuda), device 0's
// primary context, one stream, PTX kernels JIT-compiled by the driver with
// cuModuleLoadDataEx. A plan's Launch of kernel symbol S runs the PTX kernel
// registered under S with its buffers passed as memref descriptors
// (devices/cuda/CudaKernelABI.h); a recorded step is a CUDA graph.
//
// Without a driver or a GPU, create() returns an error saying so; nothing
// crashes. Does not include cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_CUDA_CUDAPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_CUDA_CUDAPLANDEVICE_H

#include "runtime/executor/BundleExecutor.h"
#include "runtime/device/PlanRunner.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace attn::cuda {

struct CudaOptions {
  /// The driver library to dlopen.
  std::string driverLibrary = "libcuda.so.1";
  /// Which device (cuDeviceGet ordinal).
  int device = 0;
};

struct CudaDeviceInfo {
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  uint64_t totalMemory = 0;
  /// 2 x memory clock x bus width, from the device attributes; 0 when the
  /// driver does not report them.
  double peakBandwidthGBps = 0.0;
  int driverVersion = 0;

  /// "sm_90" for compute capability 9.0: what to compile PTX for.
  std::string chip() const;
};

class CudaPlanDevice final : public runtime::PlanDevice {
public:
  static Result<std::unique_ptr<CudaPlanDevice>>
  create(const CudaOptions &options = {});
  ~CudaPlanDevice() override;

  const CudaDeviceInfo &info() const;

  /// JIT-compiles the PTX of one kernel (entry `entryPoint`) and makes it
  /// launchable as `symbol`; `launchJson` holds its launch facts. Compiler
  /// errors of the driver's JIT come back in the Status.
  Status addKernel(const std::string &symbol, std::string_view ptx,
                   const std::string &entryPoint,
                   const std::string &launchJson);
  bool hasKernel(std::string_view symbol) const;

  /// Benchmarking: with `repeats` > 0 every launch runs once and then
  /// `repeats` more times between two events, and timings() gets the mean
  /// time of one run of each kernel. Kernels of attn plans are idempotent
  /// (they write their outputs from their inputs only), so repeating them
  /// does not change results.
  void setTimedRepeats(int repeats);
  struct KernelTiming {
    int64_t launches = 0;
    /// Sum over launches of the mean time of one run.
    double milliseconds = 0.0;
  };
  const std::map<std::string, KernelTiming, std::less<>> &timings() const;
  void clearTimings();

  std::string_view name() const override;
  /// PTX for a chip this GPU runs (ptxRunsOn: the same SM or an older one,
  /// which the driver JIT-compiles for this one).
  bool runsKernel(const runtime::BundleKernel &kernel) const override;
  /// PTX kernels of a bundle. A symbol may have PTX for several chips: the
  /// device loads only the newest it runs (bestPtxChip) and takes the
  /// others as loaded, so the driver compiles one PTX per symbol.
  Status loadKernelCode(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;
  /// Buffers are CUDA device pointers of the device's primary context.
  runtime::MemorySpace memorySpace() const override {
    return runtime::MemorySpace::Cuda;
  }
  int ordinal() const override;
  /// The buffer's CUdeviceptr.
  void *address(runtime::DeviceBuffer &buffer) override;
  /// Memory another framework allocated on this device (a device pointer
  /// of the same context, e.g. PyTorch's caching allocator).
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  adopt(void *address, uint64_t bytes,
        std::function<void()> release) override;
  /// Steps are recorded as CUDA graphs (RecordedStep): built node by node
  /// from the step's launches and copies, not captured from the stream, so
  /// the synchronous writes of a step's metadata never meet a capture.
  bool canRecord() const override { return true; }
  /// NVIDIA GPUs run warps of 32.
  runtime::SubgroupSizes subgroupSizes() const override {
    return {32, 32, 32};
  }

  struct Impl;

protected:
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override;
  /// On the device's stream, after the launches before it.
  Status enqueueCopy(const runtime::BufferView &src,
                     const runtime::BufferView &dst) override;
  /// Enqueued on the device's stream.
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;
  Status finishWork() override;
  /// cuMemcpyHtoD / DtoH: ordered with the stream's work (a blocking
  /// stream), and done with the host memory when they return.
  Status writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                    const void *data, uint64_t bytes) override;
  Status readBytes(const runtime::DeviceBuffer &buffer, uint64_t offset,
                   void *data, uint64_t bytes) override;
  Status beginRecording() override;
  Result<std::unique_ptr<runtime::RecordedWork>>
  endRecording(std::vector<runtime::BufferView> zeroFirst) override;
  /// Launches the graph on the device's stream and waits for it.
  Status replayRecording(const runtime::RecordedWork &work) override;

private:
  explicit CudaPlanDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace attn::cuda

#endif // ATTN_RUNTIME_EXECUTORS_CUDA_CUDAPLANDEVICE_H
