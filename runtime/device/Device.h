//===- Device.h - Device memory, tensors on it, and its queue --*- C++ -*-===//
//
// The runtime's model of a device, what a serving engine keeps its KV cache
// and activations in:
//
//  - DeviceBuffer: an allocation in the device's memory.
//  - DeviceTensor: a dense tensor in a buffer (buffer, byte offset, dtype,
//    shape, strides), as the engine passes them to forward.
//  - PlanDevice: the device. It allocates zero-filled buffers, and has one
//    in-order queue: launches and device-to-device copies are enqueued;
//    write() (host to device) is ordered after the work enqueued before it;
//    read() (device to host) waits for that work; synchronize() waits for
//    everything. Transfers between host and device are counted, so tests can
//    assert what crossed (transfers()).
//
// The CPU device is the same model over host memory: its buffers are the
// host's, and hostAddress() lets the CPU executor and DLPack use them with
// no copy. Devices whose memory has addresses a framework understands (the
// host's, CUDA's) also adopt memory allocated elsewhere (adopt()).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_DEVICE_H
#define ATTN_RUNTIME_DEVICE_H

#include "core/DType.h"
#include "core/LaunchBounds.h"
#include "core/Status.h"
#include "core/Tensor.h"

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

struct Bundle;
struct BundleKernel;
class PlanDevice;
struct StepWork;

/// What the plan runner checks a launch of a loaded kernel against.
struct KernelContract {
  /// The bundle target of the kernel ("spirv", "tt", ...).
  std::string target;
  /// The relations of its launch facts; absent when they declare none.
  std::optional<LaunchBounds> bounds;
};

/// A device allocation. Devices subclass it; everything else passes it on.
class DeviceBuffer {
public:
  virtual ~DeviceBuffer() = default;
  virtual uint64_t size() const = 0;
};

/// `bytes` bytes of a buffer from `offset`: what a kernel argument binds.
struct BufferView {
  DeviceBuffer *buffer = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A dense tensor in device memory.
struct DeviceTensor {
  PlanDevice *device = nullptr;
  std::shared_ptr<DeviceBuffer> buffer;
  /// Where element 0 is, in bytes from the buffer's start.
  uint64_t offset = 0;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// In elements, per dimension; empty: row-major (C order).
  std::vector<int64_t> strides;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t dim(int64_t i) const { return shape[i]; }
  /// False for a default-constructed tensor (no buffer).
  bool defined() const { return buffer != nullptr; }
  int64_t numElements() const;
  uint64_t numBytes() const;
  /// Row-major, whatever `strides` says.
  bool isContiguous() const;
  /// The bytes the tensor covers, for a kernel argument.
  BufferView view() const { return {buffer.get(), offset, numBytes()}; }
  /// The first `rows` rows (dimension 0) of a contiguous tensor.
  DeviceTensor leadingRows(int64_t rows) const;
  /// "[4, 32, 128] bf16" (and its strides when not contiguous).
  std::string describe() const;
};

/// The subgroup sizes a device runs kernels at. Kernels that reduce across
/// a subgroup compute wrong results at another size, so bundles carry one
/// build per size and the runtime takes the one the device runs.
struct SubgroupSizes {
  /// The size a kernel gets without asking; 0: the device has no subgroups
  /// a kernel depends on (a host device), and runs every build.
  int64_t native = 0;
  /// The sizes a kernel may pin (Vulkan's subgroup size control, powers of
  /// two); both `native` when it cannot.
  int64_t min = 0, max = 0;

  bool canRun(int64_t size) const {
    return native == 0 || size == native || (size >= min && size <= max);
  }
  /// "8", or "8 (can pin 4 to 32)".
  std::string describe() const;
};

/// What a device's buffer addresses are (PlanDevice::address).
enum class MemorySpace { Host, Cuda, Opaque };

/// What crossed between host and device, since the last reset.
struct TransferStats {
  uint64_t bytesToDevice = 0;
  uint64_t bytesToHost = 0;
  int64_t writes = 0;
  int64_t reads = 0;
};

/// Work a device recorded to replay (RecordedStep, runtime/device/RecordedStep.h):
/// a Vulkan command buffer, a CUDA graph.
class RecordedWork {
public:
  virtual ~RecordedWork() = default;
};

/// A device as the runtime drives it. See the file comment for the queue.
class PlanDevice {
public:
  PlanDevice();
  virtual ~PlanDevice();
  virtual std::string_view name() const = 0;
  /// The subgroup sizes its kernels may be built for.
  virtual SubgroupSizes subgroupSizes() const { return {}; }

  /// A zero-filled buffer of at least `bytes` bytes.
  Result<std::shared_ptr<DeviceBuffer>> allocate(uint64_t bytes);
  /// Copies `bytes` bytes from host memory at `data` into `buffer` at
  /// `offset`, after the work enqueued before it.
  Status write(DeviceBuffer &buffer, uint64_t offset, const void *data,
               uint64_t bytes);
  /// Copies `bytes` bytes of `buffer` at `offset` into host memory at `data`,
  /// once the work enqueued before it is done.
  Status read(const DeviceBuffer &buffer, uint64_t offset, void *data,
              uint64_t bytes);
  /// Enqueues a copy from `src` to `dst` (of src.bytes bytes) on the device.
  Status copy(const BufferView &src, const BufferView &dst);
  /// Enqueues `kernel` on `grid` workgroups of `block` invocations with
  /// `args` as its arguments. Launches are ordered: a launch sees the writes
  /// of the ones before it.
  Status launch(std::string_view kernel, const std::array<uint32_t, 3> &grid,
                const std::array<int64_t, 3> &block,
                std::span<const BufferView> args);
  /// Waits for everything enqueued so far.
  Status synchronize();

  /// Whether this device runs `kernel` at all (a cpu kernel of an ISA level
  /// the host has). A bundle may hold one symbol's kernel several times
  /// (a cpu kernel per ISA level): executors load those the device runs,
  /// and the device launches the best of them. Default: every kernel.
  virtual bool runsKernel(const BundleKernel &kernel) const { return true; }
  /// Makes `kernel` of `bundle` (its file's `bytes`, already checked against
  /// its hash) launchable under kernel.symbol, and keeps the bounds of its
  /// launch facts (core/LaunchBounds.h) for the plan runner. Loading the
  /// kernel a symbol already has is a no-op; another one is an error
  /// (KernelSymbols.h).
  Status loadKernel(const Bundle &bundle, const BundleKernel &kernel,
                    std::string_view bytes);
  /// What a launch of the kernel under `symbol` must keep: its target and
  /// the bounds its launch facts declare; null when no kernel was loaded
  /// under it.
  const KernelContract *kernelContract(std::string_view symbol) const;

  /// What address() returns: host pointers (host-memory devices), CUDA
  /// device pointers, or nothing a framework could use (Opaque: Vulkan,
  /// Metal, TT). Tensors are exchanged with other frameworks by address
  /// (runtime/DLPack.h).
  virtual MemorySpace memorySpace() const { return MemorySpace::Opaque; }
  /// The device's index among the devices of its memory space (CUDA's
  /// ordinal; 0 for the host).
  virtual int ordinal() const { return 0; }
  /// The address of `buffer`'s first byte in memorySpace(); null when
  /// opaque.
  virtual void *address(DeviceBuffer &buffer) { return nullptr; }
  /// address() when the device's memory is the host's, else null.
  void *hostAddress(DeviceBuffer &buffer) {
    return memorySpace() == MemorySpace::Host ? address(buffer) : nullptr;
  }
  /// A buffer over `bytes` bytes of memory in memorySpace() at `address`
  /// that someone else allocated (a framework's tensor): the device never
  /// frees it, and runs `release` when the last tensor on it is dropped.
  /// An error on opaque devices.
  virtual Result<std::shared_ptr<DeviceBuffer>>
  adopt(void *address, uint64_t bytes, std::function<void()> release);

  /// Whether the device records work to replay (RecordedStep).
  virtual bool canRecord() const { return false; }
  /// The device's lock. A session may be driven from several threads: each
  /// unit of work that must not interleave with another thread's (a
  /// layer's forward, creating a layer, allocating, synchronizing, a
  /// recorded step) holds it for its whole length (DESIGN.md "Threads").
  /// Recursive: a unit may call others.
  std::recursive_mutex &mutex() const { return mutex_; }
  /// Whether a RecordedStep is recording or replaying a step on it now:
  /// work done on the host then (the reference ops) would not be replayed.
  bool inRecordedStep() const { return step_ != nullptr; }
  /// Seconds the device spent on the work it has finished, by its own
  /// clock (Vulkan timestamps); 0 when it keeps none. For benchmarks.
  virtual double deviceSeconds() const { return 0; }

  const TransferStats &transfers() const { return transfers_; }
  void resetTransfers() { transfers_ = {}; }

protected:
  /// Keeps the bounds (core/LaunchBounds.h) of `launchJson`, the launch
  /// facts of a kernel of `target` made launchable under `symbol`: what
  /// loadKernel does, and what a device's own way to add a kernel does
  /// (Vulkan's, CUDA's, Metal's addKernel, TT's addProgram), so that every
  /// launch the runner checks has them. An error for malformed bounds, or
  /// other bounds than the symbol has.
  Status keepLaunchBounds(std::string_view symbol, std::string_view target,
                          std::string_view launchJson);
  /// The same with bounds already read.
  Status keepLaunchBounds(std::string_view symbol, std::string_view target,
                          std::optional<LaunchBounds> bounds);
  /// What loadKernel does for the device's kind of kernel.
  virtual Status loadKernelCode(const Bundle &bundle,
                                const BundleKernel &kernel,
                                std::string_view bytes) = 0;
  /// What the public methods do once they have checked their arguments,
  /// counted transfers and, while a step is recorded or replayed, kept or
  /// matched its allocations and work (RecordedStep).
  virtual Result<std::shared_ptr<DeviceBuffer>>
  allocateBuffer(uint64_t bytes) = 0;
  virtual Status writeBytes(DeviceBuffer &buffer, uint64_t offset,
                            const void *data, uint64_t bytes) = 0;
  virtual Status readBytes(const DeviceBuffer &buffer, uint64_t offset,
                           void *data, uint64_t bytes) = 0;
  virtual Status enqueueCopy(const BufferView &src, const BufferView &dst) = 0;
  virtual Status finishWork() = 0;
  virtual Status enqueueLaunch(std::string_view kernel,
                               const std::array<uint32_t, 3> &grid,
                               const std::array<int64_t, 3> &block,
                               std::span<const BufferView> args) = 0;

  /// Recording, on devices that canRecord(). Between beginRecording() and
  /// endRecording(), enqueueLaunch and enqueueCopy record their work
  /// instead of running it, while writeBytes writes at once (into buffers
  /// no recorded work has run on yet). endRecording returns the work, to
  /// run with replayRecording as often as asked; each replay first zeroes
  /// `zeroFirst` (the buffers the step allocated and the host does not
  /// write), as fresh allocations would be.
  virtual Status beginRecording();
  virtual Result<std::unique_ptr<RecordedWork>>
  endRecording(std::vector<BufferView> zeroFirst);
  virtual Status replayRecording(const RecordedWork &work);

private:
  friend class RecordedStep;
  struct StepLog;
  /// Logs (recording) or matches (replaying) one launch or copy of a step.
  Status logWork(StepWork work);
  TransferStats transfers_;
  mutable std::recursive_mutex mutex_;
  /// Set while a RecordedStep records or replays a step on this device.
  StepLog *step_ = nullptr;
  /// By symbol: what loadKernel kept of each kernel's launch facts.
  std::map<std::string, KernelContract, std::less<>> contracts_;
};

/// A zero-filled tensor of `shape` on `device`.
Result<DeviceTensor> allocateTensor(PlanDevice &device, DType dtype,
                                    std::vector<int64_t> shape);
/// A new device tensor holding a copy of `host`.
Result<DeviceTensor> toDevice(PlanDevice &device, const Tensor &host);
/// Writes `host` into `dst` (same dtype and element count, contiguous).
Status upload(const Tensor &host, const DeviceTensor &dst);
/// A host copy of `src` (contiguous); waits for the work before it.
Result<Tensor> toHost(const DeviceTensor &src);
/// A host tensor over `t`'s memory when its device's memory is the host's
/// (Tensor::wrap, no copy), else an error.
Result<Tensor> hostView(const DeviceTensor &t);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_DEVICE_H
