//===- VulkanLoader.h - libvulkan loaded at run time ---------------------===//
//
// The executor never links libvulkan: it opens libvulkan.so.1 with dlopen and
// fetches every entry point it uses through vkGetInstanceProcAddr and
// vkGetDeviceProcAddr into a table, so one binary runs (and reports a clear
// error) on machines without Vulkan. Internal to the executor.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANLOADER_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANLOADER_H

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "core/Status.h"

#include <string>

namespace attn::vulkan {

// Functions fetched with a null instance.
#define ATTN_VK_GLOBAL_FUNCTIONS(X)                                            \
  X(vkEnumerateInstanceExtensionProperties)                                    \
  X(vkEnumerateInstanceLayerProperties)                                        \
  X(vkCreateInstance)

// Functions fetched with the instance.
#define ATTN_VK_INSTANCE_FUNCTIONS(X)                                          \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkGetPhysicalDeviceFeatures)                                               \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

// Functions fetched with the device.
#define ATTN_VK_DEVICE_FUNCTIONS(X)                                            \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkDeviceWaitIdle)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkUnmapMemory)                                                             \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreatePipelineCache)                                                     \
  X(vkDestroyPipelineCache)                                                    \
  X(vkGetPipelineCacheData)                                                    \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkResetDescriptorPool)                                                     \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkResetCommandBuffer)                                                      \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdPushConstants)                                                        \
  X(vkCmdDispatch)                                                             \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCmdFillBuffer)                                                           \
  X(vkCmdUpdateBuffer)                                                         \
  X(vkFreeCommandBuffers)                                                      \
  X(vkCmdResetQueryPool)                                                       \
  X(vkCmdWriteTimestamp)                                                       \
  X(vkCreateQueryPool)                                                         \
  X(vkDestroyQueryPool)                                                        \
  X(vkGetQueryPoolResults)                                                     \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkQueueSubmit)

/// The table of Vulkan entry points the executor calls.
struct VulkanFunctions {
#define ATTN_VK_MEMBER(name) PFN_##name name = nullptr;
  ATTN_VK_MEMBER(vkGetInstanceProcAddr)
  ATTN_VK_MEMBER(vkEnumerateInstanceVersion)
  ATTN_VK_GLOBAL_FUNCTIONS(ATTN_VK_MEMBER)
  ATTN_VK_INSTANCE_FUNCTIONS(ATTN_VK_MEMBER)
  ATTN_VK_DEVICE_FUNCTIONS(ATTN_VK_MEMBER)
  // Vulkan 1.2 or VK_KHR_buffer_device_address, present only when the
  // device has bufferDeviceAddress.
  ATTN_VK_MEMBER(vkGetBufferDeviceAddress)
  // VK_EXT_debug_utils, present only when validation is on.
  ATTN_VK_MEMBER(vkCreateDebugUtilsMessengerEXT)
  ATTN_VK_MEMBER(vkDestroyDebugUtilsMessengerEXT)
#undef ATTN_VK_MEMBER

  /// Opens the loader library (kept open for the life of the process) and
  /// fetches the global functions.
  Status loadGlobal(const std::string &libraryName);
  Status loadInstance(VkInstance instance);
  Status loadDevice(VkDevice device);
};

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY" and so on.
const char *toString(VkResult result);

/// Error Status "<what> failed: VK_ERROR_..." unless `result` is VK_SUCCESS.
Status checkVk(VkResult result, const char *what);

} // namespace attn::vulkan

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_VULKANLOADER_H
