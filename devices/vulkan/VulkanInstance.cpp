//===- VulkanExecutor.cpp - Run attn's SPIR-V kernels on a Vulkan device -===//

#include "devices/vulkan/VulkanExecutor.h"

#include "devices/vulkan/SpirvReflection.h"
#include "devices/vulkan/VulkanState.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <utility>

namespace attn {
// The state structs are in VulkanState.h.

using detail::beginCommands;
using detail::recordBarrierFromEarlierWork;
using detail::recordBarrierToHost;
using detail::submitAndWait;
using detail::VulkanBufferState;
using detail::VulkanContext;
using detail::VulkanKernelState;

namespace {


constexpr const char *kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr uint32_t kRequestedApiVersion = VK_API_VERSION_1_3;

std::string versionString(uint32_t v) {
  std::ostringstream os;
  os << VK_API_VERSION_MAJOR(v) << '.' << VK_API_VERSION_MINOR(v) << '.'
     << VK_API_VERSION_PATCH(v);
  return os.str();
}

const char *deviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return "discrete-gpu";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return "integrated-gpu";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return "virtual-gpu";
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return "cpu";
  default:
    return "other";
  }
}

/// Lower is preferred.
int deviceTypeRank(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return 0;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return 1;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return 3;
  default:
    return 4;
  }
}

VKAPI_ATTR VkBool32 VKAPI_CALL collectValidationMessage(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *userData) {
  auto *context = static_cast<VulkanContext *>(userData);
  std::string message =
      severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: "
                                                                : "warning: ";
  message += data && data->pMessage ? data->pMessage : "(no message)";
  std::lock_guard<std::mutex> lock(context->messagesMutex);
  context->messages.push_back(std::move(message));
  return VK_FALSE;
}

/// Which promoted structs and extensions a physical device has.
struct DeviceSupport {
  uint32_t apiVersion = 0;
  std::vector<std::string> extensions;

  bool has(const char *extension) const {
    return std::find(extensions.begin(), extensions.end(), extension) !=
           extensions.end();
  }
  bool core(uint32_t version) const { return apiVersion >= version; }
  bool storage8() const {
    return core(VK_API_VERSION_1_2) || has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  }
  bool float16Int8() const {
    return core(VK_API_VERSION_1_2) ||
           has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  }
  bool subgroupTypes() const {
    return core(VK_API_VERSION_1_2) ||
           has(VK_KHR_SHADER_SUBGROUP_EXTENDED_TYPES_EXTENSION_NAME);
  }
  bool memoryModel() const {
    return core(VK_API_VERSION_1_2) ||
           has(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
  }
  bool sizeControl() const {
    return core(VK_API_VERSION_1_3) ||
           has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  bool bufferAddress() const {
    return core(VK_API_VERSION_1_2) ||
           has(VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME);
  }
};

/// The feature structs the executor reads and enables, chained from a
/// VkPhysicalDeviceFeatures2. Holds pointers into itself: not copyable.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 core = makeVk<VkPhysicalDeviceFeatures2>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  VkPhysicalDevice16BitStorageFeatures storage16 =
      makeVk<VkPhysicalDevice16BitStorageFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  VkPhysicalDevice8BitStorageFeatures storage8 =
      makeVk<VkPhysicalDevice8BitStorageFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  VkPhysicalDeviceShaderFloat16Int8Features float16Int8 =
      makeVk<VkPhysicalDeviceShaderFloat16Int8Features>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures subgroupTypes = makeVk<
      VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES);
  VkPhysicalDeviceVulkanMemoryModelFeatures memoryModel =
      makeVk<VkPhysicalDeviceVulkanMemoryModelFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
  VkPhysicalDeviceSubgroupSizeControlFeatures sizeControl =
      makeVk<VkPhysicalDeviceSubgroupSizeControlFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
  VkPhysicalDeviceBufferDeviceAddressFeatures bufferAddress =
      makeVk<VkPhysicalDeviceBufferDeviceAddressFeatures>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES);

  explicit FeatureChain(const DeviceSupport &support) {
    void **next = &core.pNext;
    auto append = [&next](auto &s) {
      *next = &s;
      next = &s.pNext;
    };
    append(storage16);
    if (support.storage8())
      append(storage8);
    if (support.float16Int8())
      append(float16Int8);
    if (support.subgroupTypes())
      append(subgroupTypes);
    if (support.memoryModel())
      append(memoryModel);
    if (support.sizeControl())
      append(sizeControl);
    if (support.bufferAddress())
      append(bufferAddress);
  }
  FeatureChain(const FeatureChain &) = delete;
  FeatureChain &operator=(const FeatureChain &) = delete;
};

/// A physical device as the selection sees it.
struct Candidate {
  VkPhysicalDevice device = VK_NULL_HANDLE;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  VulkanDeviceInfo info;
  DeviceSupport support;
  std::optional<uint32_t> computeFamily;
  uint32_t timestampValidBits = 0;
  bool usable() const {
    return computeFamily.has_value() && support.core(VK_API_VERSION_1_1);
  }
};

/// The device's extensions, and its compute queue family: any, one with
/// timestamps first.
void queryQueues(const VulkanFunctions &vk, VkPhysicalDevice device,
                 Candidate &c) {
  uint32_t extensionCount = 0;
  vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &extensionCount,
                                          nullptr);
  std::vector<VkExtensionProperties> extensions(extensionCount);
  vk.vkEnumerateDeviceExtensionProperties(device, nullptr, &extensionCount,
                                          extensions.data());
  for (const VkExtensionProperties &e : extensions)
    c.support.extensions.emplace_back(e.extensionName);

  uint32_t familyCount = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &familyCount, nullptr);
  std::vector<VkQueueFamilyProperties> families(familyCount);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(device, &familyCount,
                                              families.data());
  for (uint32_t f = 0; f < familyCount; ++f) {
    if (!(families[f].queueFlags & VK_QUEUE_COMPUTE_BIT))
      continue;
    if (!c.computeFamily ||
        (c.timestampValidBits == 0 && families[f].timestampValidBits > 0)) {
      c.computeFamily = f;
      c.timestampValidBits = families[f].timestampValidBits;
    }
  }
}

/// What Vulkan 1.0's properties say: names, versions and the limits.
void fillCoreInfo(const VkPhysicalDeviceProperties &props, uint32_t index,
                  Candidate &c) {
  VulkanDeviceInfo &info = c.info;
  info.index = index;
  info.name = props.deviceName;
  info.type = deviceTypeName(props.deviceType);
  info.vendorId = props.vendorID;
  info.deviceId = props.deviceID;
  info.apiVersion = versionString(props.apiVersion);
  info.hasComputeQueue = c.computeFamily.has_value();
  const VkPhysicalDeviceLimits &limits = props.limits;
  info.maxSharedMemoryBytes = limits.maxComputeSharedMemorySize;
  info.maxWorkgroupInvocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.maxWorkgroupSize[i] = limits.maxComputeWorkGroupSize[i];
    info.maxWorkgroupCount[i] = limits.maxComputeWorkGroupCount[i];
  }
  info.maxPushConstantsBytes = limits.maxPushConstantsSize;
  info.maxStorageBufferRange = limits.maxStorageBufferRange;
  info.minStorageBufferOffsetAlignment =
      std::max<uint64_t>(limits.minStorageBufferOffsetAlignment, 1);
  if (c.timestampValidBits > 0)
    info.timestampPeriodNs = limits.timestampPeriod;
}

/// Vulkan 1.1's properties: driver, allocation limit, subgroup sizes and
/// the subgroup operations of compute shaders.
void querySubgroups(const VulkanFunctions &vk, VkPhysicalDevice device,
                    Candidate &c) {
  VulkanDeviceInfo &info = c.info;
  VkPhysicalDeviceProperties2 props2 = makeVk<VkPhysicalDeviceProperties2>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  VkPhysicalDeviceSubgroupProperties subgroup =
      makeVk<VkPhysicalDeviceSubgroupProperties>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  VkPhysicalDeviceSubgroupSizeControlProperties sizeControl =
      makeVk<VkPhysicalDeviceSubgroupSizeControlProperties>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
  VkPhysicalDeviceDriverProperties driver =
      makeVk<VkPhysicalDeviceDriverProperties>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
  VkPhysicalDeviceMaintenance3Properties maintenance3 =
      makeVk<VkPhysicalDeviceMaintenance3Properties>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  props2.pNext = &maintenance3;
  maintenance3.pNext = &subgroup;
  void **next = &subgroup.pNext;
  if (c.support.sizeControl()) {
    *next = &sizeControl;
    next = &sizeControl.pNext;
  }
  bool hasDriverProps = c.support.core(VK_API_VERSION_1_2) ||
                        c.support.has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (hasDriverProps)
    *next = &driver;
  vk.vkGetPhysicalDeviceProperties2(device, &props2);

  if (hasDriverProps)
    info.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  info.maxMemoryAllocationSize = maintenance3.maxMemoryAllocationSize;
  info.subgroupSize = subgroup.subgroupSize;
  info.minSubgroupSize = info.maxSubgroupSize = subgroup.subgroupSize;
  if (c.support.sizeControl() && sizeControl.minSubgroupSize > 0) {
    info.minSubgroupSize = sizeControl.minSubgroupSize;
    info.maxSubgroupSize = sizeControl.maxSubgroupSize;
  }
  if (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
    const std::pair<VkSubgroupFeatureFlagBits, const char *> ops[] = {
        {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
        {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
        {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
        {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
        {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
        {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
        {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
        {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"}};
    for (auto [bit, name] : ops)
      if (subgroup.supportedOperations & bit)
        info.subgroupOperations.emplace_back(name);
  }
}

/// The features the kernels may need, from the feature chain the device
/// supports.
void queryFeatures(const VulkanFunctions &vk, VkPhysicalDevice device,
                   Candidate &c) {
  VulkanDeviceInfo &info = c.info;
  FeatureChain features(c.support);
  vk.vkGetPhysicalDeviceFeatures2(device, &features.core);
  info.shaderFloat64 = features.core.features.shaderFloat64;
  info.shaderInt16 = features.core.features.shaderInt16;
  info.shaderInt64 = features.core.features.shaderInt64;
  info.storageBuffer16BitAccess = features.storage16.storageBuffer16BitAccess;
  info.storagePushConstant16 = features.storage16.storagePushConstant16;
  if (c.support.storage8())
    info.storageBuffer8BitAccess = features.storage8.storageBuffer8BitAccess;
  if (c.support.float16Int8()) {
    info.shaderFloat16 = features.float16Int8.shaderFloat16;
    info.shaderInt8 = features.float16Int8.shaderInt8;
  }
  if (c.support.subgroupTypes())
    info.shaderSubgroupExtendedTypes =
        features.subgroupTypes.shaderSubgroupExtendedTypes;
  if (c.support.memoryModel())
    info.vulkanMemoryModel = features.memoryModel.vulkanMemoryModel;
  if (c.support.sizeControl()) {
    info.subgroupSizeControl = features.sizeControl.subgroupSizeControl;
    info.computeFullSubgroups = features.sizeControl.computeFullSubgroups;
  }
  if (c.support.bufferAddress())
    info.bufferDeviceAddress = features.bufferAddress.bufferDeviceAddress;
}

Candidate queryCandidate(const VulkanFunctions &vk, VkPhysicalDevice device,
                         uint32_t index) {
  Candidate c;
  c.device = device;
  VkPhysicalDeviceProperties props{};
  vk.vkGetPhysicalDeviceProperties(device, &props);
  c.type = props.deviceType;
  c.support.apiVersion = std::min(props.apiVersion, kRequestedApiVersion);
  queryQueues(vk, device, c);
  fillCoreInfo(props, index, c);
  // Everything else needs Vulkan 1.1 queries.
  if (!c.support.core(VK_API_VERSION_1_1))
    return c;
  querySubgroups(vk, device, c);
  queryFeatures(vk, device, c);
  return c;
}

/// Loads the loader, creates the instance (with validation when asked) and
/// fills `context` up to the instance.
Status createInstance(VulkanContext &context, const VulkanOptions &options) {
  VulkanFunctions &vk = context.vk;
  ATTN_RETURN_IF_ERROR(vk.loadGlobal(options.loaderLibrary));

  uint32_t loaderVersion = VK_API_VERSION_1_0;
  if (vk.vkEnumerateInstanceVersion)
    vk.vkEnumerateInstanceVersion(&loaderVersion);
  if (loaderVersion < VK_API_VERSION_1_1)
    return errorf("the Vulkan loader is version ", versionString(loaderVersion),
                  "; 1.1 or newer is needed");

  std::vector<const char *> layers;
  if (options.validation != ValidationMode::Off) {
    uint32_t count = 0;
    vk.vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    vk.vkEnumerateInstanceLayerProperties(&count, available.data());
    for (const VkLayerProperties &l : available)
      if (std::strcmp(l.layerName, kValidationLayer) == 0)
        layers.push_back(kValidationLayer);
    if (layers.empty() && options.validation == ValidationMode::Required)
      return errorf("validation was required but ", kValidationLayer,
                    " is not installed");
  }
  context.validation = !layers.empty();

  std::vector<std::string> extensionNames;
  auto collectExtensions = [&](const char *layer) {
    uint32_t count = 0;
    vk.vkEnumerateInstanceExtensionProperties(layer, &count, nullptr);
    std::vector<VkExtensionProperties> available(count);
    vk.vkEnumerateInstanceExtensionProperties(layer, &count, available.data());
    for (const VkExtensionProperties &e : available)
      extensionNames.emplace_back(e.extensionName);
  };
  collectExtensions(nullptr);
  for (const char *layer : layers)
    collectExtensions(layer);
  auto hasExtension = [&](const char *name) {
    return std::find(extensionNames.begin(), extensionNames.end(), name) !=
           extensionNames.end();
  };

  std::vector<const char *> extensions;
  VkInstanceCreateInfo createInfo =
      makeVk<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  // Lists MoltenVK-style portability drivers too.
  if (hasExtension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    createInfo.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT messengerInfo =
      makeVk<VkDebugUtilsMessengerCreateInfoEXT>(
          VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  messengerInfo.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messengerInfo.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messengerInfo.pfnUserCallback = collectValidationMessage;
  messengerInfo.pUserData = &context;
  bool debugUtils =
      context.validation && hasExtension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (debugUtils) {
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    // Also reports what happens inside vkCreateInstance itself.
    createInfo.pNext = &messengerInfo;
  }

  VkApplicationInfo app =
      makeVk<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "attn";
  app.pEngineName = "attn";
  app.apiVersion = kRequestedApiVersion;
  createInfo.pApplicationInfo = &app;
  createInfo.enabledLayerCount = static_cast<uint32_t>(layers.size());
  createInfo.ppEnabledLayerNames = layers.data();
  createInfo.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  createInfo.ppEnabledExtensionNames = extensions.data();

  VkResult result =
      vk.vkCreateInstance(&createInfo, nullptr, &context.instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
    return Status::error(
        "no Vulkan physical device (vkCreateInstance: "
        "VK_ERROR_INCOMPATIBLE_DRIVER, no driver is installed)");
  ATTN_RETURN_IF_ERROR(checkVk(result, "vkCreateInstance"));
  ATTN_RETURN_IF_ERROR(vk.loadInstance(context.instance));

  if (debugUtils && vk.vkCreateDebugUtilsMessengerEXT)
    ATTN_RETURN_IF_ERROR(checkVk(
        vk.vkCreateDebugUtilsMessengerEXT(context.instance, &messengerInfo,
                                          nullptr, &context.messenger),
        "vkCreateDebugUtilsMessengerEXT"));
  return Status::ok();
}

Result<std::vector<Candidate>> listCandidates(VulkanContext &context) {
  const VulkanFunctions &vk = context.vk;
  uint32_t count = 0;
  VkResult result =
      vk.vkEnumeratePhysicalDevices(context.instance, &count, nullptr);
  if (result == VK_ERROR_INITIALIZATION_FAILED || count == 0)
    return Status::error("no Vulkan physical device");
  ATTN_RETURN_IF_ERROR(checkVk(result, "vkEnumeratePhysicalDevices"));
  std::vector<VkPhysicalDevice> devices(count);
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkEnumeratePhysicalDevices(context.instance, &count, devices.data()),
      "vkEnumeratePhysicalDevices"));
  std::vector<Candidate> candidates;
  for (uint32_t i = 0; i < count; ++i)
    candidates.push_back(queryCandidate(vk, devices[i], i));
  return candidates;
}

Result<Candidate> selectDevice(std::vector<Candidate> candidates,
                               const VulkanOptions &options) {
  if (options.deviceIndex) {
    uint32_t index = *options.deviceIndex;
    if (index >= candidates.size())
      return errorf("no Vulkan physical device ", index, " (there are ",
                    candidates.size(), ")");
    Candidate &c = candidates[index];
    if (!c.computeFamily)
      return errorf("Vulkan device ", index, " (", c.info.name,
                    ") has no compute queue");
    if (!c.usable())
      return errorf("Vulkan device ", index, " (", c.info.name,
                    ") supports Vulkan ", c.info.apiVersion,
                    "; 1.1 or newer is needed");
    return std::move(c);
  }
  // Prefer discrete over integrated, virtual and CPU devices; keep the
  // enumeration order among devices of one type.
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates)
    if (c.usable() &&
        (!best || deviceTypeRank(c.type) < deviceTypeRank(best->type)))
      best = &c;
  if (!best)
    return Status::error("no Vulkan physical device with a compute queue and "
                         "Vulkan 1.1");
  return *best;
}

/// Enables exactly the features the lowering may use, where supported.
void chooseFeatures(const VulkanFunctions &vk, const Candidate &chosen,
                    FeatureChain &enable) {
  const VulkanDeviceInfo &info = chosen.info;
  enable.core.features.shaderFloat64 = info.shaderFloat64;
  enable.core.features.shaderInt16 = info.shaderInt16;
  enable.core.features.shaderInt64 = info.shaderInt64;
  enable.storage16.storageBuffer16BitAccess = info.storageBuffer16BitAccess;
  enable.storage16.storagePushConstant16 = info.storagePushConstant16;
  {
    // Read the remaining booleans the info does not carry.
    FeatureChain supported(chosen.support);
    vk.vkGetPhysicalDeviceFeatures2(chosen.device, &supported.core);
    enable.storage16.uniformAndStorageBuffer16BitAccess =
        supported.storage16.uniformAndStorageBuffer16BitAccess;
    enable.storage8.storageBuffer8BitAccess =
        supported.storage8.storageBuffer8BitAccess;
    enable.storage8.uniformAndStorageBuffer8BitAccess =
        supported.storage8.uniformAndStorageBuffer8BitAccess;
    enable.storage8.storagePushConstant8 =
        supported.storage8.storagePushConstant8;
    enable.sizeControl.computeFullSubgroups =
        supported.sizeControl.computeFullSubgroups;
    enable.memoryModel.vulkanMemoryModelDeviceScope =
        supported.memoryModel.vulkanMemoryModelDeviceScope;
  }
  enable.float16Int8.shaderFloat16 = info.shaderFloat16;
  enable.float16Int8.shaderInt8 = info.shaderInt8;
  enable.subgroupTypes.shaderSubgroupExtendedTypes =
      info.shaderSubgroupExtendedTypes;
  enable.memoryModel.vulkanMemoryModel = info.vulkanMemoryModel;
  if (!info.vulkanMemoryModel)
    enable.memoryModel.vulkanMemoryModelDeviceScope = VK_FALSE;
  enable.sizeControl.subgroupSizeControl = info.subgroupSizeControl;
  enable.bufferAddress.bufferDeviceAddress = info.bufferDeviceAddress;
}

/// Extensions for what is not core in the device's version.
std::vector<const char *> deviceExtensions(const DeviceSupport &support) {
  std::vector<const char *> extensions;
  auto enableIfNotCore = [&](uint32_t coreVersion, const char *name) {
    if (!support.core(coreVersion) && support.has(name))
      extensions.push_back(name);
  };
  enableIfNotCore(VK_API_VERSION_1_2, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  enableIfNotCore(VK_API_VERSION_1_2,
                  VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  enableIfNotCore(VK_API_VERSION_1_2,
                  VK_KHR_SHADER_SUBGROUP_EXTENDED_TYPES_EXTENSION_NAME);
  enableIfNotCore(VK_API_VERSION_1_2,
                  VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
  enableIfNotCore(VK_API_VERSION_1_3,
                  VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  enableIfNotCore(VK_API_VERSION_1_2,
                  VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME);
  // The specification requires enabling it wherever it is exposed.
  if (support.has("VK_KHR_portability_subset"))
    extensions.push_back("VK_KHR_portability_subset");
  return extensions;
}

/// vkGetBufferDeviceAddress, core in 1.2, else the KHR name.
Status loadBufferDeviceAddress(VulkanContext &context) {
  auto load = [&](const char *name) {
    return reinterpret_cast<PFN_vkGetBufferDeviceAddress>(
        context.vk.vkGetDeviceProcAddr(context.device, name));
  };
  context.vk.vkGetBufferDeviceAddress = load("vkGetBufferDeviceAddress");
  if (!context.vk.vkGetBufferDeviceAddress)
    context.vk.vkGetBufferDeviceAddress = load("vkGetBufferDeviceAddressKHR");
  if (!context.vk.vkGetBufferDeviceAddress)
    return Status::error("the Vulkan device has bufferDeviceAddress but "
                         "lacks vkGetBufferDeviceAddress");
  return Status::ok();
}

/// What every submission uses: the pipeline cache (seeded from the
/// options), the command pool and its one command buffer, the fence, and
/// the timestamp query pool where the queue has timestamps.
Status createQueueObjects(VulkanContext &context,
                          const VulkanOptions &options) {
  const VulkanFunctions &vk = context.vk;
  VkPipelineCacheCreateInfo cacheInfo = makeVk<VkPipelineCacheCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  cacheInfo.initialDataSize = options.pipelineCacheData.size();
  cacheInfo.pInitialData = options.pipelineCacheData.data();
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkCreatePipelineCache(context.device, &cacheInfo, nullptr,
                                       &context.pipelineCache),
              "vkCreatePipelineCache"));

  VkCommandPoolCreateInfo poolInfo = makeVk<VkCommandPoolCreateInfo>(
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = context.queueFamily;
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkCreateCommandPool(context.device, &poolInfo, nullptr,
                                     &context.commandPool),
              "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo bufferInfo = makeVk<VkCommandBufferAllocateInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  bufferInfo.commandPool = context.commandPool;
  bufferInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  bufferInfo.commandBufferCount = 1;
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkAllocateCommandBuffers(context.device, &bufferInfo,
                                          &context.commandBuffer),
              "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fenceInfo =
      makeVk<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkCreateFence(context.device, &fenceInfo, nullptr, &context.fence),
      "vkCreateFence"));
  if (context.timestampValidBits == 0)
    return Status::ok();
  VkQueryPoolCreateInfo queryInfo =
      makeVk<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
  queryInfo.queryCount = 2;
  return checkVk(vk.vkCreateQueryPool(context.device, &queryInfo, nullptr,
                                      &context.queryPool),
                 "vkCreateQueryPool");
}

Status createDevice(VulkanContext &context, const Candidate &chosen,
                    const VulkanOptions &options) {
  const VulkanFunctions &vk = context.vk;
  const VulkanDeviceInfo &info = chosen.info;
  FeatureChain enable(chosen.support);
  chooseFeatures(vk, chosen, enable);
  std::vector<const char *> extensions = deviceExtensions(chosen.support);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo = makeVk<VkDeviceQueueCreateInfo>(
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queueInfo.queueFamilyIndex = *chosen.computeFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;

  VkDeviceCreateInfo createInfo =
      makeVk<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  createInfo.pNext = &enable.core;
  createInfo.queueCreateInfoCount = 1;
  createInfo.pQueueCreateInfos = &queueInfo;
  createInfo.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  createInfo.ppEnabledExtensionNames = extensions.data();
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkCreateDevice(chosen.device, &createInfo, nullptr, &context.device),
      "vkCreateDevice"));
  ATTN_RETURN_IF_ERROR(context.vk.loadDevice(context.device));
  if (info.bufferDeviceAddress)
    ATTN_RETURN_IF_ERROR(loadBufferDeviceAddress(context));

  context.physicalDevice = chosen.device;
  context.info = chosen.info;
  context.queueFamily = *chosen.computeFamily;
  context.timestampValidBits = chosen.timestampValidBits;
  context.timeoutNs = options.timeoutNs;
  vk.vkGetPhysicalDeviceMemoryProperties(chosen.device, &context.memory);
  vk.vkGetDeviceQueue(context.device, context.queueFamily, 0, &context.queue);
  return createQueueObjects(context, options);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

/// The first memory type allowed by `typeBits` that has all of `required`.
std::optional<uint32_t> findMemoryType(const VulkanContext &context,
                                       uint32_t typeBits,
                                       VkMemoryPropertyFlags required) {
  for (uint32_t i = 0; i < context.memory.memoryTypeCount; ++i)
    if ((typeBits & (1u << i)) &&
        (context.memory.memoryTypes[i].propertyFlags & required) == required)
      return i;
  return std::nullopt;
}

enum class Placement {
  /// Device-local, host-mapped when that memory is host-coherent.
  Auto,
  /// Device-local, never mapped: reached through staging copies.
  DeviceLocalOnly,
  /// Host-coherent and mapped: staging buffers.
  Staging,
};

Result<std::unique_ptr<VulkanBufferState>>
allocateBuffer(const std::shared_ptr<VulkanContext> &context, uint64_t bytes,
               Placement placement) {
  const VulkanFunctions &vk = context->vk;
  auto state = std::make_unique<VulkanBufferState>();
  state->context = context;
  state->size = bytes;

  VkBufferCreateInfo bufferInfo =
      makeVk<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bufferInfo.size = bytes;
  bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bool addressed = context->info.bufferDeviceAddress;
  if (addressed)
    bufferInfo.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkCreateBuffer(context->device, &bufferInfo, nullptr, &state->buffer),
      "vkCreateBuffer"));
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(context->device, state->buffer,
                                   &requirements);

  std::optional<uint32_t> type;
  bool map = false;
  switch (placement) {
  case Placement::Auto:
    // Drivers list their preferred types first: on a discrete GPU the first
    // device-local type is not host-visible (staging), on CPU devices,
    // integrated GPUs and resizable BAR it is (direct mapping).
    type = findMemoryType(*context, requirements.memoryTypeBits,
                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!type)
      type =
          findMemoryType(*context, requirements.memoryTypeBits, kHostCoherent);
    map = type && (context->memory.memoryTypes[*type].propertyFlags &
                   kHostCoherent) == kHostCoherent;
    break;
  case Placement::DeviceLocalOnly:
    type = findMemoryType(*context, requirements.memoryTypeBits,
                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    break;
  case Placement::Staging:
    type = findMemoryType(*context, requirements.memoryTypeBits,
                          kHostCoherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (!type)
      type =
          findMemoryType(*context, requirements.memoryTypeBits, kHostCoherent);
    map = true;
    break;
  }
  if (!type)
    return errorf("no Vulkan memory type fits a ", bytes, "-byte buffer");

  VkMemoryAllocateInfo allocInfo =
      makeVk<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  allocInfo.allocationSize = requirements.size;
  allocInfo.memoryTypeIndex = *type;
  VkMemoryAllocateFlagsInfo flagsInfo = makeVk<VkMemoryAllocateFlagsInfo>(
      VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO);
  flagsInfo.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  if (addressed)
    allocInfo.pNext = &flagsInfo;
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkAllocateMemory(context->device, &allocInfo, nullptr, &state->memory),
      "vkAllocateMemory"));
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkBindBufferMemory(context->device, state->buffer, state->memory, 0),
      "vkBindBufferMemory"));
  if (addressed) {
    VkBufferDeviceAddressInfo addressInfo = makeVk<VkBufferDeviceAddressInfo>(
        VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO);
    addressInfo.buffer = state->buffer;
    state->address = vk.vkGetBufferDeviceAddress(context->device, &addressInfo);
  }
  if (map)
    ATTN_RETURN_IF_ERROR(
        checkVk(vk.vkMapMemory(context->device, state->memory, 0, VK_WHOLE_SIZE,
                               0, &state->mapped),
                "vkMapMemory"));
  return state;
}

Status checkRange(const VulkanBufferState &state, uint64_t bytes,
                  uint64_t offset, const char *what) {
  if (offset > state.size || bytes > state.size - offset)
    return errorf(what, " of ", bytes, " bytes at offset ", offset,
                  " is outside the ", state.size, "-byte buffer");
  return Status::ok();
}

/// Copies between a staging buffer and `state` on the queue and waits.
Status stagedCopy(VulkanBufferState &state, VulkanBufferState &staging,
                  uint64_t bytes, uint64_t offset, bool toDevice) {
  VulkanContext &context = *state.context;
  std::lock_guard<std::mutex> lock(context.submitMutex);
  ATTN_RETURN_IF_ERROR(beginCommands(context));
  recordBarrierFromEarlierWork(context, context.commandBuffer);
  VkBufferCopy region{};
  region.size = bytes;
  if (toDevice) {
    region.dstOffset = offset;
    context.vk.vkCmdCopyBuffer(context.commandBuffer, staging.buffer,
                               state.buffer, 1, &region);
  } else {
    region.srcOffset = offset;
    context.vk.vkCmdCopyBuffer(context.commandBuffer, state.buffer,
                               staging.buffer, 1, &region);
  }
  recordBarrierToHost(context, context.commandBuffer);
  return submitAndWait(context).status();
}

} // namespace

//===----------------------------------------------------------------------===//
// VulkanBuffer
//===----------------------------------------------------------------------===//

VulkanBuffer::VulkanBuffer(std::unique_ptr<VulkanBufferState> state)
    : state_(std::move(state)) {}
VulkanBuffer::~VulkanBuffer() = default;

uint64_t VulkanBuffer::size() const { return state_->size; }
bool VulkanBuffer::isHostMapped() const { return state_->mapped != nullptr; }

Status VulkanBuffer::write(const void *src, uint64_t bytes, uint64_t offset) {
  ATTN_RETURN_IF_ERROR(checkRange(*state_, bytes, offset, "a write"));
  if (bytes == 0)
    return Status::ok();
  if (state_->mapped) {
    std::memcpy(static_cast<uint8_t *>(state_->mapped) + offset, src, bytes);
    return Status::ok();
  }
  auto staging = allocateBuffer(state_->context, bytes, Placement::Staging);
  if (!staging)
    return staging.status();
  std::memcpy((*staging)->mapped, src, bytes);
  return stagedCopy(*state_, **staging, bytes, offset, /*toDevice=*/true);
}

Status VulkanBuffer::read(void *dst, uint64_t bytes, uint64_t offset) const {
  ATTN_RETURN_IF_ERROR(checkRange(*state_, bytes, offset, "a read"));
  if (bytes == 0)
    return Status::ok();
  if (state_->mapped) {
    std::memcpy(dst, static_cast<const uint8_t *>(state_->mapped) + offset,
                bytes);
    return Status::ok();
  }
  auto staging = allocateBuffer(state_->context, bytes, Placement::Staging);
  if (!staging)
    return staging.status();
  ATTN_RETURN_IF_ERROR(
      stagedCopy(*state_, **staging, bytes, offset, /*toDevice=*/false));
  std::memcpy(dst, (*staging)->mapped, bytes);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// VulkanKernel
//===----------------------------------------------------------------------===//

VulkanKernel::VulkanKernel(std::unique_ptr<VulkanKernelState> state)
    : state_(std::move(state)) {}
VulkanKernel::~VulkanKernel() = default;

const std::string &VulkanKernel::entryPoint() const {
  return state_->entryPoint;
}
uint32_t VulkanKernel::numBuffers() const { return state_->numBuffers; }
uint32_t VulkanKernel::pushConstantBytes() const {
  return state_->pushConstantBytes;
}
std::optional<std::array<uint32_t, 3>> VulkanKernel::workgroupSize() const {
  return state_->workgroupSize;
}

//===----------------------------------------------------------------------===//
// VulkanDevice
//===----------------------------------------------------------------------===//

std::string describe(const VulkanDeviceInfo &info) {
  std::ostringstream os;
  auto yesNo = [](bool b) { return b ? "yes" : "no"; };
  os << "device " << info.index << ": " << info.name << " (" << info.type
     << ")\n";
  os << "  vendor:device          0x" << std::hex << info.vendorId << ":0x"
     << info.deviceId << std::dec << "\n";
  os << "  Vulkan                 " << info.apiVersion << "\n";
  if (!info.driver.empty())
    os << "  driver                 " << info.driver << "\n";
  os << "  compute queue          " << yesNo(info.hasComputeQueue) << "\n";
  os << "  subgroup size          " << info.subgroupSize << " (min "
     << info.minSubgroupSize << ", max " << info.maxSubgroupSize << ")\n";
  os << "  subgroup operations    ";
  for (size_t i = 0; i < info.subgroupOperations.size(); ++i)
    os << (i ? ", " : "") << info.subgroupOperations[i];
  os << "\n";
  os << "  shared memory          " << info.maxSharedMemoryBytes << " bytes\n";
  os << "  workgroup invocations  " << info.maxWorkgroupInvocations << "\n";
  os << "  workgroup size         " << info.maxWorkgroupSize[0] << " x "
     << info.maxWorkgroupSize[1] << " x " << info.maxWorkgroupSize[2] << "\n";
  os << "  workgroup count        " << info.maxWorkgroupCount[0] << " x "
     << info.maxWorkgroupCount[1] << " x " << info.maxWorkgroupCount[2] << "\n";
  os << "  push constants         " << info.maxPushConstantsBytes << " bytes\n";
  os << "  storage buffer range   " << info.maxStorageBufferRange << " bytes\n";
  os << "  largest allocation     " << info.maxMemoryAllocationSize << " bytes\n";
  os << "  timestamps             ";
  if (info.timestampPeriodNs > 0)
    os << info.timestampPeriodNs << " ns per tick\n";
  else
    os << "none\n";
  os << "  shaderFloat16          " << yesNo(info.shaderFloat16) << "\n";
  os << "  shaderFloat64          " << yesNo(info.shaderFloat64) << "\n";
  os << "  shaderInt8/16/64       " << yesNo(info.shaderInt8) << "/"
     << yesNo(info.shaderInt16) << "/" << yesNo(info.shaderInt64) << "\n";
  os << "  8/16-bit storage       " << yesNo(info.storageBuffer8BitAccess)
     << "/" << yesNo(info.storageBuffer16BitAccess) << "\n";
  os << "  16-bit push constants  " << yesNo(info.storagePushConstant16)
     << "\n";
  os << "  subgroup extended types " << yesNo(info.shaderSubgroupExtendedTypes)
     << "\n";
  os << "  subgroup size control  " << yesNo(info.subgroupSizeControl) << "\n";
  os << "  full subgroups         " << yesNo(info.computeFullSubgroups) << "\n";
  os << "  Vulkan memory model    " << yesNo(info.vulkanMemoryModel) << "\n";
  os << "  buffer device address  " << yesNo(info.bufferDeviceAddress) << "\n";
  return os.str();
}

VulkanDevice::VulkanDevice(std::shared_ptr<VulkanContext> context)
    : context_(std::move(context)) {}
VulkanDevice::~VulkanDevice() = default;

Result<std::vector<VulkanDeviceInfo>>
VulkanDevice::listPhysicalDevices(const VulkanOptions &options) {
  VulkanContext context;
  ATTN_RETURN_IF_ERROR(createInstance(context, options));
  auto candidates = listCandidates(context);
  if (!candidates)
    return candidates.status();
  std::vector<VulkanDeviceInfo> infos;
  for (Candidate &c : *candidates)
    infos.push_back(std::move(c.info));
  return infos;
}

Result<std::unique_ptr<VulkanDevice>>
VulkanDevice::create(const VulkanOptions &options) {
  auto context = std::make_shared<VulkanContext>();
  ATTN_RETURN_IF_ERROR(createInstance(*context, options));
  auto candidates = listCandidates(*context);
  if (!candidates)
    return candidates.status();
  auto chosen = selectDevice(std::move(*candidates), options);
  if (!chosen)
    return chosen.status();
  ATTN_RETURN_IF_ERROR(createDevice(*context, *chosen, options));
  return std::unique_ptr<VulkanDevice>(new VulkanDevice(std::move(context)));
}

const VulkanDeviceInfo &VulkanDevice::info() const { return context_->info; }

bool VulkanDevice::validationEnabled() const { return context_->validation; }

std::vector<std::string> VulkanDevice::takeValidationMessages() {
  std::lock_guard<std::mutex> lock(context_->messagesMutex);
  return std::exchange(context_->messages, {});
}

Result<std::unique_ptr<VulkanBuffer>>
VulkanDevice::createBuffer(uint64_t bytes, BufferMemory memory) {
  if (bytes == 0)
    return Status::error("a Vulkan buffer needs at least one byte");
  // Kernels reach a larger buffer only by its device address.
  if (!context_->info.bufferDeviceAddress &&
      bytes > context_->info.maxStorageBufferRange)
    return errorf("a ", bytes,
                  "-byte buffer exceeds the device's storage buffer range of ",
                  context_->info.maxStorageBufferRange,
                  " bytes, and the device has no bufferDeviceAddress");
  const uint64_t maxAllocation = context_->info.maxMemoryAllocationSize;
  if (maxAllocation && bytes > maxAllocation)
    return errorf("a ", bytes, "-byte buffer exceeds the device's largest "
                  "allocation of ", maxAllocation, " bytes");
  auto state = allocateBuffer(context_, bytes,
                              memory == BufferMemory::DeviceLocalStaged
                                  ? Placement::DeviceLocalOnly
                                  : Placement::Auto);
  if (!state)
    return state.status();
  return std::unique_ptr<VulkanBuffer>(new VulkanBuffer(std::move(*state)));
}

Result<std::unique_ptr<VulkanBuffer>>
VulkanDevice::createBuffer(const void *data, uint64_t bytes,
                           BufferMemory memory) {
  auto buffer = createBuffer(bytes, memory);
  if (!buffer)
    return buffer;
  ATTN_RETURN_IF_ERROR((*buffer)->write(data, bytes));
  return buffer;
}

namespace {

/// The highest SPIR-V version a Vulkan version consumes.
std::pair<uint32_t, uint32_t> maxSpirvVersion(const std::string &apiVersion) {
  int major = 1, minor = 0;
  std::sscanf(apiVersion.c_str(), "%d.%d", &major, &minor);
  if (major > 1 || minor >= 3)
    return {1, 6};
  if (minor == 2)
    return {1, 5};
  if (minor == 1)
    return {1, 3};
  return {1, 0};
}

/// Fails when the module declares a capability whose device feature is off.
Status checkCapabilities(const SpirvModuleInfo &module,
                         const VulkanDeviceInfo &info,
                         const std::string &entry) {
  auto hasOp = [&](const char *op) {
    return std::find(info.subgroupOperations.begin(),
                     info.subgroupOperations.end(),
                     op) != info.subgroupOperations.end();
  };
  struct Need {
    uint32_t capability;
    const char *capabilityName;
    bool supported;
    const char *feature;
  };
  using namespace spirv_cap;
  const Need needs[] = {
      {Float16, "Float16", info.shaderFloat16, "shaderFloat16"},
      {Float64, "Float64", info.shaderFloat64, "shaderFloat64"},
      {Int8, "Int8", info.shaderInt8, "shaderInt8"},
      {Int16, "Int16", info.shaderInt16, "shaderInt16"},
      {Int64, "Int64", info.shaderInt64, "shaderInt64"},
      {StorageBuffer16BitAccess, "StorageBuffer16BitAccess",
       info.storageBuffer16BitAccess, "storageBuffer16BitAccess"},
      {StoragePushConstant16, "StoragePushConstant16",
       info.storagePushConstant16, "storagePushConstant16"},
      {StorageBuffer8BitAccess, "StorageBuffer8BitAccess",
       info.storageBuffer8BitAccess, "storageBuffer8BitAccess"},
      {VulkanMemoryModel, "VulkanMemoryModel", info.vulkanMemoryModel,
       "vulkanMemoryModel"},
      {PhysicalStorageBufferAddresses, "PhysicalStorageBufferAddresses",
       info.bufferDeviceAddress, "bufferDeviceAddress"},
      // The executor enables VK_KHR_cooperative_matrix on no device (the
      // matrix-unit prefill kernel is compile-only), so such kernels are
      // refused here rather than by the driver's pipeline creation.
      {CooperativeMatrixKHR, "CooperativeMatrixKHR", false,
       "VK_KHR_cooperative_matrix, which this executor does not enable"},
      {GroupNonUniform, "GroupNonUniform", hasOp("basic"),
       "subgroup basic operations in compute"},
      {GroupNonUniformVote, "GroupNonUniformVote", hasOp("vote"),
       "subgroup vote operations"},
      {GroupNonUniformArithmetic, "GroupNonUniformArithmetic",
       hasOp("arithmetic"), "subgroup arithmetic operations"},
      {GroupNonUniformBallot, "GroupNonUniformBallot", hasOp("ballot"),
       "subgroup ballot operations"},
      {GroupNonUniformShuffle, "GroupNonUniformShuffle", hasOp("shuffle"),
       "subgroup shuffle operations"},
      {GroupNonUniformShuffleRelative, "GroupNonUniformShuffleRelative",
       hasOp("shuffle_relative"), "subgroup relative shuffle operations"},
      {GroupNonUniformClustered, "GroupNonUniformClustered", hasOp("clustered"),
       "subgroup clustered operations"},
      {GroupNonUniformQuad, "GroupNonUniformQuad", hasOp("quad"),
       "subgroup quad operations"},
  };
  for (const Need &need : needs)
    if (module.hasCapability(need.capability) && !need.supported)
      return errorf("kernel '", entry, "' needs SPIR-V capability ",
                    need.capabilityName, " but device '", info.name, "' lacks ",
                    need.feature);
  return Status::ok();
}

/// What createKernel learns from checking a kernel against the device.
struct KernelShape {
  const SpirvEntryPoint *entry = nullptr;
  uint32_t numBuffers = 0;
  /// Whether its entry point uses descriptor bindings.
  bool hasBindings = false;
  uint32_t pushConstantBytes = 0;
};

/// The kernel's entry point and buffers: numBuffers from the bindings
/// unless `desc` says, each binding a storage buffer of set 0.
Status checkBindings(const KernelDesc &desc, const SpirvModuleInfo &module,
                     KernelShape &shape) {
  shape.entry = module.findEntryPoint(desc.entryPoint);
  if (!shape.entry) {
    std::ostringstream names;
    for (size_t i = 0; i < module.entryPoints.size(); ++i)
      names << (i ? ", " : "") << module.entryPoints[i].name;
    return errorf(
        "SPIR-V module has no compute entry point '", desc.entryPoint,
        "' (it has: ", module.entryPoints.empty() ? "none" : names.str(), ")");
  }
  auto bindings = module.bindingsOf(*shape.entry);
  if (!bindings && !desc.numBuffers)
    return errorf("kernel '", desc.entryPoint,
                  "': cannot tell its bindings from a SPIR-V ",
                  module.versionMajor, ".", module.versionMinor,
                  " module with several entry points; set numBuffers");
  shape.numBuffers = desc.numBuffers.value_or(0);
  if (!bindings)
    return Status::ok();
  shape.hasBindings = !bindings->empty();
  constexpr uint32_t kStorageClassStorageBuffer = 12;
  uint32_t used = 0;
  for (const SpirvBinding &b : *bindings) {
    if (b.set != 0)
      return errorf("kernel '", desc.entryPoint, "' uses descriptor set ",
                    b.set, "; the executor binds set 0 only");
    if (b.storageClass != kStorageClassStorageBuffer)
      return errorf("kernel '", desc.entryPoint, "': binding ", b.binding,
                    " is not a storage buffer (storage class ",
                    b.storageClass, ")");
    used = std::max(used, b.binding + 1);
  }
  if (!desc.numBuffers)
    shape.numBuffers = used;
  else if (used > shape.numBuffers)
    return errorf("kernel '", desc.entryPoint, "' uses binding ", used - 1,
                  " but numBuffers is ", shape.numBuffers);
  return Status::ok();
}

/// How the buffers arrive (a kernel by device address needs the feature,
/// numBuffers and no bindings) and the push constants: the buffers'
/// addresses (8 bytes each) for such a kernel, else desc.pushConstantBytes;
/// within the device's limit.
Status checkBufferABI(const KernelDesc &desc, const SpirvModuleInfo &module,
                          const VulkanDeviceInfo &info, KernelShape &shape) {
  if (desc.buffersByAddress) {
    if (!info.bufferDeviceAddress)
      return errorf("kernel '", desc.entryPoint, "' takes its buffers by "
                    "device address, but device '", info.name,
                    "' lacks the bufferDeviceAddress feature");
    if (!desc.numBuffers)
      return errorf("kernel '", desc.entryPoint, "' takes its buffers by "
                    "device address; set numBuffers");
    if (shape.hasBindings)
      return errorf("kernel '", desc.entryPoint, "' takes its buffers by "
                    "device address but has descriptor bindings");
    if (desc.pushConstantBytes != 0)
      return errorf("kernel '", desc.entryPoint, "' takes its buffers by "
                    "device address, which fill its push constants");
  }
  uint32_t bytes =
      desc.buffersByAddress ? 8 * shape.numBuffers : desc.pushConstantBytes;
  if (bytes % 4 != 0)
    return errorf("push-constant size ", bytes, " is not a multiple of 4");
  if (bytes > info.maxPushConstantsBytes)
    return errorf("kernel '", desc.entryPoint, "': push-constant size ", bytes,
                  " exceeds the device's ", info.maxPushConstantsBytes,
                  " bytes");
  if (module.usesPushConstants && bytes == 0)
    return errorf("kernel '", desc.entryPoint,
                  "' reads push constants but pushConstantBytes is 0");
  shape.pushConstantBytes = bytes;
  return Status::ok();
}

/// Everything createKernel refuses before it creates a Vulkan object: the
/// SPIR-V version, the entry point, bindings, push constants, capabilities
/// and the required subgroup size.
Result<KernelShape> checkKernel(const KernelDesc &desc,
                                const SpirvModuleInfo &module,
                                const VulkanDeviceInfo &info) {
  auto [maxMajor, maxMinor] = maxSpirvVersion(info.apiVersion);
  if (module.versionMajor > maxMajor ||
      (module.versionMajor == maxMajor && module.versionMinor > maxMinor))
    return errorf("kernel '", desc.entryPoint, "' is SPIR-V ",
                  module.versionMajor, ".", module.versionMinor, " but Vulkan ",
                  info.apiVersion, " consumes at most ", maxMajor, ".",
                  maxMinor);
  KernelShape shape;
  ATTN_RETURN_IF_ERROR(checkBindings(desc, module, shape));
  ATTN_RETURN_IF_ERROR(checkBufferABI(desc, module, info, shape));
  ATTN_RETURN_IF_ERROR(checkCapabilities(module, info, desc.entryPoint));
  uint32_t required = desc.requiredSubgroupSize;
  if (required != 0) {
    if (!info.subgroupSizeControl)
      return errorf("kernel '", desc.entryPoint, "' requires subgroup size ",
                    required, " but the device has no subgroup size control");
    if ((required & (required - 1)) != 0 || required < info.minSubgroupSize ||
        required > info.maxSubgroupSize)
      return errorf("required subgroup size ", required,
                    " is not a power of two in [", info.minSubgroupSize, ", ",
                    info.maxSubgroupSize, "]");
  }
  return shape;
}

/// The descriptor set layout (a storage buffer per argument, none when the
/// buffers come by address) and the pipeline layout with its push
/// constants.
Status createLayouts(const VulkanContext &context, VulkanKernelState &state) {
  const VulkanFunctions &vk = context.vk;
  uint32_t numBindings = state.buffersByAddress ? 0 : state.numBuffers;
  std::vector<VkDescriptorSetLayoutBinding> layoutBindings(numBindings);
  for (uint32_t i = 0; i < numBindings; ++i) {
    layoutBindings[i].binding = i;
    layoutBindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    layoutBindings[i].descriptorCount = 1;
    layoutBindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo setInfo =
      makeVk<VkDescriptorSetLayoutCreateInfo>(
          VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  setInfo.bindingCount = numBindings;
  setInfo.pBindings = layoutBindings.data();
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkCreateDescriptorSetLayout(context.device, &setInfo, nullptr,
                                             &state.setLayout),
              "vkCreateDescriptorSetLayout"));

  VkPushConstantRange pushRange{VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                state.pushConstantBytes};
  VkPipelineLayoutCreateInfo layoutInfo = makeVk<VkPipelineLayoutCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &state.setLayout;
  layoutInfo.pushConstantRangeCount = state.pushConstantBytes ? 1 : 0;
  layoutInfo.pPushConstantRanges = &pushRange;
  return checkVk(vk.vkCreatePipelineLayout(context.device, &layoutInfo,
                                           nullptr, &state.pipelineLayout),
                 "vkCreatePipelineLayout");
}

/// The compute pipeline of `desc`'s SPIR-V for `state`'s layout and
/// workgroup size, through the context's pipeline cache.
Status createPipeline(const VulkanContext &context, const KernelDesc &desc,
                      VulkanKernelState &state) {
  const VulkanFunctions &vk = context.vk;
  const VulkanDeviceInfo &info = context.info;
  VkShaderModuleCreateInfo moduleInfo = makeVk<VkShaderModuleCreateInfo>(
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  moduleInfo.codeSize = desc.spirv.size() * sizeof(uint32_t);
  moduleInfo.pCode = desc.spirv.data();
  VkShaderModule shaderModule = VK_NULL_HANDLE;
  ATTN_RETURN_IF_ERROR(checkVk(vk.vkCreateShaderModule(context.device,
                                                       &moduleInfo, nullptr,
                                                       &shaderModule),
                               "vkCreateShaderModule"));

  uint32_t required = desc.requiredSubgroupSize;
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroupInfo = makeVk<
      VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO);
  subgroupInfo.requiredSubgroupSize = required;
  VkComputePipelineCreateInfo pipelineInfo =
      makeVk<VkComputePipelineCreateInfo>(
          VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  pipelineInfo.stage.sType =
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipelineInfo.stage.pNext = required ? &subgroupInfo : nullptr;
  // Kernels with several subgroups per workgroup number them and expect
  // each to be whole; ask for that where the device allows it (the
  // workgroup's x size must then be a multiple of the subgroup size, or of
  // the largest one when none is required).
  uint32_t fullMultiple = required ? required : info.maxSubgroupSize;
  const auto &workgroup = state.workgroupSize;
  if (info.computeFullSubgroups && workgroup && fullMultiple > 0 &&
      (*workgroup)[0] % fullMultiple == 0)
    pipelineInfo.stage.flags |=
        VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipelineInfo.stage.module = shaderModule;
  pipelineInfo.stage.pName = desc.entryPoint.c_str();
  pipelineInfo.layout = state.pipelineLayout;
  VkResult result =
      vk.vkCreateComputePipelines(context.device, context.pipelineCache, 1,
                                  &pipelineInfo, nullptr, &state.pipeline);
  // The pipeline keeps what it needs of the module.
  vk.vkDestroyShaderModule(context.device, shaderModule, nullptr);
  if (result != VK_SUCCESS)
    return errorf("kernel '", desc.entryPoint,
                  "': ", checkVk(result, "vkCreateComputePipelines").message());
  return Status::ok();
}

} // namespace

Result<std::unique_ptr<VulkanKernel>>
VulkanDevice::createKernel(const KernelDesc &desc) {
  auto reflected = reflectSpirv(desc.spirv);
  if (!reflected)
    return errorf("kernel '", desc.entryPoint, "': ", reflected.message());
  Result<KernelShape> shape = checkKernel(desc, *reflected, context_->info);
  if (!shape)
    return shape.status();
  auto state = std::make_unique<VulkanKernelState>();
  state->context = context_;
  state->entryPoint = desc.entryPoint;
  state->numBuffers = shape->numBuffers;
  state->pushConstantBytes = shape->pushConstantBytes;
  state->buffersByAddress = desc.buffersByAddress;
  state->workgroupSize = shape->entry->workgroupSize;
  ATTN_RETURN_IF_ERROR(createLayouts(*context_, *state));
  ATTN_RETURN_IF_ERROR(createPipeline(*context_, desc, *state));
  return std::unique_ptr<VulkanKernel>(new VulkanKernel(std::move(state)));
}

Result<std::vector<uint8_t>> VulkanDevice::pipelineCacheData() const {
  const VulkanFunctions &vk = context_->vk;
  size_t size = 0;
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkGetPipelineCacheData(
                  context_->device, context_->pipelineCache, &size, nullptr),
              "vkGetPipelineCacheData"));
  std::vector<uint8_t> data(size);
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkGetPipelineCacheData(context_->device, context_->pipelineCache,
                                &size, data.data()),
      "vkGetPipelineCacheData"));
  data.resize(size);
  return data;
}

} // namespace attn
