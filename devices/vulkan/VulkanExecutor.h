//===- VulkanExecutor.h - Run attn's SPIR-V kernels on a Vulkan device ---===//
//
// Runs the compute kernels that attn's SPIR-V lowering produces on whatever
// Vulkan device the machine has: Mesa's lavapipe on the CPU in CI, a GPU
// elsewhere. libvulkan is loaded at run time, so this library links neither
// libvulkan nor MLIR, and its header needs no Vulkan headers.
//
// Kernel ABI (the one upstream MLIR's GPU->SPIR-V conversion emits, which
// attn's lowering follows; see README.md next to this file):
//  - each `gpu.func` argument i becomes a storage buffer at descriptor set 0,
//    binding i: memrefs as `{ T data[]; }`, scalars (f32, i32, f16, index...)
//    as a one-member block `{ T value; }`. So a scalar argument is passed by
//    uploading its bytes into a small buffer of its own and binding it at its
//    argument's index like any tensor;
//  - push constants are not produced by the upstream conversion (it would
//    decorate a PushConstant variable with a binding, which Vulkan forbids);
//    a kernel may still declare a push-constant range for lowerings that emit
//    one block at offset 0, and dispatch() pushes the bytes given;
//  - or, for kernels lowered with attn-spirv-buffer-addresses (what attn's
//    bundles carry, KernelDesc::buffersByAddress), argument i is the 64-bit
//    device address of its buffer (plus its range's offset) at push-constant
//    offset 8 i, which the executor pushes itself: no descriptor set, and no
//    maxStorageBufferRange limit on what a kernel reaches;
//  - the workgroup size is fixed in the module (LocalSize, from
//    `spirv.entry_point_abi<workgroup_size = [x, y, z]>`); dispatch() takes
//    the number of workgroups.
//
// Everything reports failure as a Status: a missing loader or device, a
// malformed blob, a missing entry point, a wrong number of buffers.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANEXECUTOR_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANEXECUTOR_H

#include "core/Status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attn::vulkan {

namespace detail {
struct VulkanContext;
struct VulkanBufferState;
struct VulkanKernelState;
struct VulkanRecordingState;
struct VulkanAccess;
} // namespace detail

enum class ValidationMode {
  /// No layers.
  Off,
  /// VK_LAYER_KHRONOS_validation when installed, silently none otherwise.
  IfAvailable,
  /// VK_LAYER_KHRONOS_validation or an error.
  Required,
};

struct VulkanOptions {
  /// The loader to dlopen.
  std::string loaderLibrary = "libvulkan.so.1";
  ValidationMode validation = ValidationMode::Off;
  /// Index into vkEnumeratePhysicalDevices; by default the first discrete
  /// GPU, else integrated, virtual, then CPU device with a compute queue.
  std::optional<uint32_t> deviceIndex;
  /// Contents of a pipeline cache saved with pipelineCacheData(); the driver
  /// ignores data from another device or driver version.
  std::vector<uint8_t> pipelineCacheData;
  /// How long a submission may run before it is reported as hung.
  uint64_t timeoutNs = 60ull * 1000 * 1000 * 1000;
};

/// What the lowering cares about in a device, for logs and for choosing
/// kernel variants.
struct VulkanDeviceInfo {
  uint32_t index = 0;
  std::string name;
  /// "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu" or "other".
  std::string type;
  std::string driver;
  uint32_t vendorId = 0;
  uint32_t deviceId = 0;
  /// "1.3.230".
  std::string apiVersion;
  bool hasComputeQueue = false;

  uint32_t subgroupSize = 0;
  /// With subgroup size control (Vulkan 1.3 or VK_EXT_subgroup_size_control);
  /// both equal subgroupSize otherwise.
  uint32_t minSubgroupSize = 0;
  uint32_t maxSubgroupSize = 0;
  /// "basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative",
  /// "clustered", "quad" when supported in compute shaders.
  std::vector<std::string> subgroupOperations;

  uint32_t maxSharedMemoryBytes = 0;
  uint32_t maxWorkgroupInvocations = 0;
  std::array<uint32_t, 3> maxWorkgroupSize = {0, 0, 0};
  std::array<uint32_t, 3> maxWorkgroupCount = {0, 0, 0};
  uint32_t maxPushConstantsBytes = 0;
  uint64_t maxStorageBufferRange = 0;
  /// The largest single allocation (Vulkan 1.1's maintenance3 limit); 0
  /// when the device does not say.
  uint64_t maxMemoryAllocationSize = 0;
  /// A storage buffer bound at an offset needs the offset to be a multiple
  /// of this.
  uint64_t minStorageBufferOffsetAlignment = 1;
  /// Nanoseconds per timestamp tick; 0 when the compute queue has none.
  double timestampPeriodNs = 0;

  // Shader features, all enabled on the device when supported.
  bool shaderFloat16 = false;
  bool shaderFloat64 = false;
  bool shaderInt8 = false;
  bool shaderInt16 = false;
  bool shaderInt64 = false;
  bool storageBuffer8BitAccess = false;
  bool storageBuffer16BitAccess = false;
  bool storagePushConstant16 = false;
  /// Subgroup operations on f16 / i8 / i16 / i64 values.
  bool shaderSubgroupExtendedTypes = false;
  bool subgroupSizeControl = false;
  /// Pipelines may ask for full subgroups (every subgroup of a workgroup
  /// has all its invocations), which kernels that number subgroups need.
  bool computeFullSubgroups = false;
  bool vulkanMemoryModel = false;
  /// Buffers reachable by 64-bit device address (Vulkan 1.2 or
  /// VK_KHR_buffer_device_address), which kernels that take buffers by
  /// address need; such buffers may pass maxStorageBufferRange.
  bool bufferDeviceAddress = false;
};

/// Several lines, "name: value", for logs.
std::string describe(const VulkanDeviceInfo &info);

/// Where a buffer's memory lives.
enum class BufferMemory {
  /// Device-local memory, mapped for direct host access when the device
  /// offers it host-visible (CPU devices, integrated GPUs, resizable BAR),
  /// else copied through a staging buffer.
  Auto,
  /// Device-local memory always reached through a staging buffer, as on a
  /// discrete GPU. Lets tests cover that path on any device.
  DeviceLocalStaged,
};

/// A storage buffer. Reads and writes are synchronous.
class VulkanBuffer {
public:
  ~VulkanBuffer();
  VulkanBuffer(const VulkanBuffer &) = delete;
  VulkanBuffer &operator=(const VulkanBuffer &) = delete;

  uint64_t size() const;
  /// True when the host reads and writes the memory directly (no staging).
  bool isHostMapped() const;

  /// Copies `bytes` bytes from `src` into the buffer at `offset`.
  Status write(const void *src, uint64_t bytes, uint64_t offset = 0);
  /// Copies `bytes` bytes at `offset` of the buffer into `dst`.
  Status read(void *dst, uint64_t bytes, uint64_t offset = 0) const;

  template <typename T> Status write(std::span<const T> values) {
    return write(values.data(), values.size_bytes());
  }
  template <typename T> Status read(std::span<T> values) const {
    return read(values.data(), values.size_bytes());
  }

private:
  friend class VulkanDevice;
  friend struct detail::VulkanAccess;
  explicit VulkanBuffer(std::unique_ptr<detail::VulkanBufferState> state);
  std::unique_ptr<detail::VulkanBufferState> state_;
};

struct KernelDesc {
  /// SPIR-V words, as spirv::serialize or mlir-translate --serialize-spirv
  /// write them.
  std::vector<uint32_t> spirv;
  /// The OpEntryPoint name: the gpu.func's name.
  std::string entryPoint;
  /// Storage buffers at set 0, bindings 0..numBuffers-1. By default, as many
  /// as the module's highest binding + 1 (the kernel's argument count).
  std::optional<uint32_t> numBuffers;
  /// Size of the push-constant range at offset 0; 0 for none.
  uint32_t pushConstantBytes = 0;
  /// The kernel takes its numBuffers buffers (which must be given) by
  /// device address: push constants 8 i..8 i + 7 hold buffer i's. Needs the
  /// bufferDeviceAddress feature; pushConstantBytes stays 0.
  bool buffersByAddress = false;
  /// Pins the subgroup size (needs subgroup size control); 0 lets the driver
  /// choose.
  uint32_t requiredSubgroupSize = 0;
};

/// A compute pipeline built from one SPIR-V entry point.
class VulkanKernel {
public:
  ~VulkanKernel();
  VulkanKernel(const VulkanKernel &) = delete;
  VulkanKernel &operator=(const VulkanKernel &) = delete;

  const std::string &entryPoint() const;
  uint32_t numBuffers() const;
  uint32_t pushConstantBytes() const;
  /// The module's LocalSize for this entry point, when it has one.
  std::optional<std::array<uint32_t, 3>> workgroupSize() const;

private:
  friend class VulkanDevice;
  friend struct detail::VulkanAccess;
  explicit VulkanKernel(std::unique_ptr<detail::VulkanKernelState> state);
  std::unique_ptr<detail::VulkanKernelState> state_;
};

/// The part of a buffer a binding shows.
struct BufferRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// One kernel launch: buffers[i] is bound at set 0, binding i.
struct DispatchDesc {
  const VulkanKernel *kernel = nullptr;
  std::vector<const VulkanBuffer *> buffers;
  /// ranges[i]: what binding i shows of buffers[i]; empty: whole buffers.
  /// Offsets must be multiples of minStorageBufferOffsetAlignment.
  std::vector<BufferRange> ranges;
  /// Number of workgroups in x, y, z.
  std::array<uint32_t, 3> groups = {1, 1, 1};
  /// Exactly kernel->pushConstantBytes() bytes, or empty when that is 0 or
  /// the kernel takes its buffers by address (the executor pushes those).
  std::vector<uint8_t> pushConstants;
};

/// One command of a submission. Consecutive commands are ordered by a
/// memory barrier: each sees the writes of the ones before it.
struct VulkanCommand {
  enum class Kind {
    /// `dispatch`.
    Dispatch,
    /// `bytes` bytes of `src` at srcOffset to `dst` at dstOffset.
    Copy,
    /// `bytes` zero bytes into `dst` at dstOffset (both multiples of 4).
    Zero,
    /// `data` into `dst` at dstOffset: at most 65536 bytes, a multiple of 4
    /// at an offset that is one. The bytes are taken when the command is
    /// recorded (vkCmdUpdateBuffer), so a recording replays them as they
    /// were.
    Update,
  };
  Kind kind = Kind::Dispatch;
  DispatchDesc dispatch;
  const VulkanBuffer *src = nullptr;
  const VulkanBuffer *dst = nullptr;
  uint64_t srcOffset = 0;
  uint64_t dstOffset = 0;
  uint64_t bytes = 0;
  std::vector<uint8_t> data;

  static VulkanCommand launch(DispatchDesc desc);
  static VulkanCommand copy(const VulkanBuffer &src, uint64_t srcOffset,
                            const VulkanBuffer &dst, uint64_t dstOffset,
                            uint64_t bytes);
  static VulkanCommand zero(const VulkanBuffer &dst, uint64_t offset,
                            uint64_t bytes);
  static VulkanCommand update(const VulkanBuffer &dst, uint64_t offset,
                              std::vector<uint8_t> data);
};

/// The most bytes one VulkanCommand::Update carries (vkCmdUpdateBuffer's
/// limit).
inline constexpr uint64_t kMaxVulkanUpdateBytes = 65536;

struct DispatchTiming {
  /// Device time between timestamps written before the first and after the
  /// last dispatch; absent when the queue has no timestamps.
  std::optional<double> deviceSeconds;
  /// Host time from vkQueueSubmit to the fence signalling.
  double hostSeconds = 0;
  /// The device time when there is one, else the host time.
  double seconds() const { return deviceSeconds.value_or(hostSeconds); }
};

/// Commands recorded once into a command buffer of their own, which
/// VulkanDevice::replay submits as often as asked: what a CUDA graph is to
/// CUDA. It keeps its descriptor sets; the buffers it names must outlive it
/// (their contents may change between replays: that is the point).
class VulkanRecording {
public:
  ~VulkanRecording();
  VulkanRecording(const VulkanRecording &) = delete;
  VulkanRecording &operator=(const VulkanRecording &) = delete;
  /// How many commands it replays.
  size_t size() const;

private:
  friend class VulkanDevice;
  explicit VulkanRecording(std::unique_ptr<detail::VulkanRecordingState> state);
  std::unique_ptr<detail::VulkanRecordingState> state_;
};

/// A logical device with one compute queue. Buffers and kernels it creates
/// keep its Vulkan objects alive, so they may outlive it. Submissions are
/// serialised by a mutex: the methods may be called from several threads.
class VulkanDevice {
public:
  /// Loads libvulkan, creates an instance and a device with every feature in
  /// VulkanDeviceInfo the device supports enabled. Fails with "no Vulkan
  /// loader (libvulkan.so.1) found" or "no Vulkan physical device" where
  /// there is none.
  static Result<std::unique_ptr<VulkanDevice>>
  create(const VulkanOptions &options = {});
  /// Every physical device, without creating a logical one.
  static Result<std::vector<VulkanDeviceInfo>>
  listPhysicalDevices(const VulkanOptions &options = {});

  ~VulkanDevice();
  VulkanDevice(const VulkanDevice &) = delete;
  VulkanDevice &operator=(const VulkanDevice &) = delete;

  const VulkanDeviceInfo &info() const;
  /// Whether VK_LAYER_KHRONOS_validation is active.
  bool validationEnabled() const;
  /// Warnings and errors the validation layer reported since the last call.
  std::vector<std::string> takeValidationMessages();

  Result<std::unique_ptr<VulkanBuffer>>
  createBuffer(uint64_t bytes, BufferMemory memory = BufferMemory::Auto);
  /// A buffer holding a copy of `bytes` bytes at `data`.
  Result<std::unique_ptr<VulkanBuffer>>
  createBuffer(const void *data, uint64_t bytes,
               BufferMemory memory = BufferMemory::Auto);

  /// Checks the blob (header, entry point, bindings against numBuffers,
  /// capabilities against device features) and builds the pipeline through
  /// the device's pipeline cache.
  Result<std::unique_ptr<VulkanKernel>> createKernel(const KernelDesc &desc);

  /// Records one dispatch, submits it and waits for it.
  Result<DispatchTiming>
  dispatch(const VulkanKernel &kernel,
           const std::vector<const VulkanBuffer *> &buffers,
           std::array<uint32_t, 3> groups,
           std::span<const uint8_t> pushConstants = {});
  /// Records the dispatches in order in one command buffer, with a memory
  /// barrier between consecutive ones, submits once and waits.
  Result<DispatchTiming> run(std::span<const DispatchDesc> dispatches);
  /// The same for any commands.
  Result<DispatchTiming> submit(std::span<const VulkanCommand> commands);
  /// What submit checks of one command (buffers of this device, ranges,
  /// alignment, workgroup counts), to report a bad command where it is made.
  Status check(const VulkanCommand &command) const;
  /// Checks and records `commands` (as submit would run them) into a
  /// command buffer of their own, for replay().
  Result<std::unique_ptr<VulkanRecording>>
  record(std::span<const VulkanCommand> commands);
  /// Submits a recording and waits for it.
  Result<DispatchTiming> replay(const VulkanRecording &recording);

  /// Copies `bytes` bytes of `src` at `srcOffset` to `dst` at `dstOffset` on
  /// the device, after the work submitted before; waits.
  Status copy(const VulkanBuffer &src, uint64_t srcOffset,
              const VulkanBuffer &dst, uint64_t dstOffset, uint64_t bytes);

  /// The pipeline cache's contents, to pass as
  /// VulkanOptions::pipelineCacheData next time.
  Result<std::vector<uint8_t>> pipelineCacheData() const;

private:
  explicit VulkanDevice(std::shared_ptr<detail::VulkanContext> context);
  std::shared_ptr<detail::VulkanContext> context_;
};

} // namespace attn::vulkan

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANEXECUTOR_H
