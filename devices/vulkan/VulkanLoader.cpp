//===- VulkanLoader.cpp - libvulkan loaded at run time -------------------===//

#include "devices/vulkan/VulkanLoader.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace attn::vulkan {
namespace {

/// dlopen handles by library name. The loader is never closed: drivers
/// register process-exit hooks, and unloading them under a live process is a
/// known source of crashes.
void *openLibrary(const std::string &name) {
  static std::mutex mutex;
  static std::map<std::string, void *> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(name);
  if (it != handles.end())
    return it->second;
  void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle)
    handles.emplace(name, handle);
  return handle;
}

} // namespace

Status VulkanFunctions::loadGlobal(const std::string &libraryName) {
  void *library = openLibrary(libraryName);
  if (!library)
    return errorf("no Vulkan loader (", libraryName, ") found");
  vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
  if (!vkGetInstanceProcAddr)
    return errorf(libraryName, " has no vkGetInstanceProcAddr");
  // Absent in Vulkan 1.0 loaders; the caller treats null as 1.0.
  vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
#define ATTN_VK_LOAD(name)                                                     \
  name = reinterpret_cast<PFN_##name>(                                         \
      vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));                           \
  if (!name)                                                                   \
    return Status::error("the Vulkan loader lacks " #name);
  ATTN_VK_GLOBAL_FUNCTIONS(ATTN_VK_LOAD)
#undef ATTN_VK_LOAD
  return Status::ok();
}

Status VulkanFunctions::loadInstance(VkInstance instance) {
#define ATTN_VK_LOAD(name)                                                     \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name)); \
  if (!name)                                                                   \
    return Status::error("the Vulkan instance lacks " #name);
  ATTN_VK_INSTANCE_FUNCTIONS(ATTN_VK_LOAD)
#undef ATTN_VK_LOAD
  vkCreateDebugUtilsMessengerEXT =
      reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  vkDestroyDebugUtilsMessengerEXT =
      reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  return Status::ok();
}

Status VulkanFunctions::loadDevice(VkDevice device) {
#define ATTN_VK_LOAD(name)                                                     \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));     \
  if (!name)                                                                   \
    return Status::error("the Vulkan device lacks " #name);
  ATTN_VK_DEVICE_FUNCTIONS(ATTN_VK_LOAD)
#undef ATTN_VK_LOAD
  return Status::ok();
}

const char *toString(VkResult result) {
  switch (result) {
#define ATTN_VK_CASE(r)                                                        \
  case r:                                                                      \
    return #r;
    ATTN_VK_CASE(VK_SUCCESS)
    ATTN_VK_CASE(VK_NOT_READY)
    ATTN_VK_CASE(VK_TIMEOUT)
    ATTN_VK_CASE(VK_INCOMPLETE)
    ATTN_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    ATTN_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ATTN_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    ATTN_VK_CASE(VK_ERROR_DEVICE_LOST)
    ATTN_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    ATTN_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    ATTN_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    ATTN_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    ATTN_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    ATTN_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    ATTN_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ATTN_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    ATTN_VK_CASE(VK_ERROR_UNKNOWN)
    ATTN_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    ATTN_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    ATTN_VK_CASE(VK_ERROR_FRAGMENTATION)
    ATTN_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
    ATTN_VK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef ATTN_VK_CASE
  default:
    return "VK_ERROR_(unrecognised)";
  }
}

Status checkVk(VkResult result, const char *what) {
  if (result == VK_SUCCESS)
    return Status::ok();
  return errorf(what, " failed: ", toString(result), " (", int(result), ")");
}

} // namespace attn::vulkan
