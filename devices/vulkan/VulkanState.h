//===- VulkanState.h - The Vulkan objects behind the executor --*- C++ -*-===//
//
// Internal to the Vulkan executor: the state behind VulkanDevice,
// VulkanBuffer, VulkanKernel and VulkanRecording, and the submission helpers
// VulkanInstance.cpp (devices), VulkanMemory.cpp (buffers), VulkanKernels.cpp
// (pipelines) and VulkanSubmit.cpp (commands, recordings) share. Includes the
// Vulkan headers, so nothing outside devices/vulkan includes it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANSTATE_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANSTATE_H

#include "devices/vulkan/VulkanExecutor.h"
#include "devices/vulkan/VulkanLoader.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace attn::vulkan {

/// A zero-initialised Vulkan struct with its sType set.
template <typename T> T makeVk(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

namespace detail {

/// Everything that outlives a single call: the instance, the device, its
/// queue and the objects one synchronous submission reuses. Shared by the
/// VulkanDevice and every buffer and kernel made from it, so the last of them
/// to go destroys it.
struct VulkanContext {
  VulkanFunctions vk;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  uint32_t timestampValidBits = 0;
  VkPhysicalDeviceMemoryProperties memory{};
  VulkanDeviceInfo info;
  bool validation = false;
  uint64_t timeoutNs = 0;
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;

  /// Guards everything below: one submission at a time.
  std::mutex submitMutex;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  /// Two timestamps: before the first and after the last dispatch.
  VkQueryPool queryPool = VK_NULL_HANDLE;
  /// Reset before each submission; grown when a submission needs more.
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  uint32_t descriptorPoolSets = 0;
  uint32_t descriptorPoolBuffers = 0;
  /// Set once a submission hung or the device was lost; every later
  /// submission fails with it.
  std::optional<std::string> lostReason;

  std::mutex messagesMutex;
  std::vector<std::string> messages;

  VulkanContext() = default;
  VulkanContext(const VulkanContext &) = delete;
  VulkanContext &operator=(const VulkanContext &) = delete;
  ~VulkanContext();

  /// Destroys (or frees) `handle`, an object of this device, with
  /// `destroyFn` (vk.vkDestroyPipeline, ...) unless it is null.
  template <typename Handle>
  void destroy(void(VKAPI_PTR *destroyFn)(VkDevice, Handle,
                                          const VkAllocationCallbacks *),
               Handle handle) {
    if (handle)
      destroyFn(device, handle, nullptr);
  }
};

inline VulkanContext::~VulkanContext() {
  if (device) {
    // A hung submission may still be pending; waiting is all that is left.
    vk.vkDeviceWaitIdle(device);
    destroy(vk.vkDestroyDescriptorPool, descriptorPool);
    destroy(vk.vkDestroyQueryPool, queryPool);
    destroy(vk.vkDestroyFence, fence);
    destroy(vk.vkDestroyCommandPool, commandPool);
    destroy(vk.vkDestroyPipelineCache, pipelineCache);
    vk.vkDestroyDevice(device, nullptr);
  }
  if (messenger && vk.vkDestroyDebugUtilsMessengerEXT)
    vk.vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (instance)
    vk.vkDestroyInstance(instance, nullptr);
}

struct VulkanBufferState {
  std::shared_ptr<VulkanContext> context;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  /// Persistent host mapping of host-coherent memory; null when staged.
  void *mapped = nullptr;
  /// The device address, on devices with bufferDeviceAddress; else 0.
  VkDeviceAddress address = 0;

  ~VulkanBufferState() {
    context->destroy(context->vk.vkDestroyBuffer, buffer);
    // Freeing the memory also unmaps it.
    context->destroy(context->vk.vkFreeMemory, memory);
  }
};

struct VulkanKernelState {
  std::shared_ptr<VulkanContext> context;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::string entryPoint;
  uint32_t numBuffers = 0;
  uint32_t pushConstantBytes = 0;
  /// Buffers by device address in the push constants, not descriptors.
  bool buffersByAddress = false;
  std::optional<std::array<uint32_t, 3>> workgroupSize;

  ~VulkanKernelState() {
    context->destroy(context->vk.vkDestroyPipeline, pipeline);
    context->destroy(context->vk.vkDestroyPipelineLayout, pipelineLayout);
    context->destroy(context->vk.vkDestroyDescriptorSetLayout, setLayout);
  }
};


/// A recording's command buffer and the descriptor sets it binds.
struct VulkanRecordingState {
  std::shared_ptr<VulkanContext> context;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  size_t commands = 0;
  bool timestamps = false;

  ~VulkanRecordingState();
};

/// The state behind the executor's public classes, for the free functions
/// of VulkanSubmit.cpp (the classes befriend it).
struct VulkanAccess {
  static VulkanBufferState &state(const VulkanBuffer &b) { return *b.state_; }
  static VulkanKernelState &state(const VulkanKernel &k) { return *k.state_; }
};

/// Orders earlier transfers and dispatches (also from earlier submissions)
/// before what follows in `cmd`.
void recordBarrierFromEarlierWork(const VulkanContext &context,
                                  VkCommandBuffer cmd);
/// Orders the commands before it in `cmd` before those after it.
void recordBarrierBetweenCommands(const VulkanContext &context,
                                  VkCommandBuffer cmd);
/// Makes device writes visible to the host once the fence signals.
void recordBarrierToHost(const VulkanContext &context, VkCommandBuffer cmd);
/// Resets and begins the shared command buffer. Caller holds submitMutex.
Status beginCommands(VulkanContext &context);
/// Ends the shared command buffer, submits it and waits; returns the host
/// time it took. Caller holds submitMutex.
Result<double> submitAndWait(VulkanContext &context);
/// Submits `cmd` (ended) and waits for its fence; a hang or a lost device
/// makes the context unusable. Caller holds submitMutex.
Result<double> submitAndWait(VulkanContext &context, VkCommandBuffer cmd);

} // namespace detail
} // namespace attn::vulkan

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANSTATE_H
