//===- VulkanInstance.cpp - Instance, device choice and creation ----------===//
//
// VulkanDevice::create: the instance (with the validation layer when asked),
// every physical device queried for what VulkanDeviceInfo reports, the one
// chosen, and its logical device with every feature kernels may use enabled.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanExecutor.h"

#include "devices/vulkan/VulkanState.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <sstream>
#include <utility>

namespace attn::vulkan {

using detail::VulkanContext;

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

} // namespace

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

} // namespace attn::vulkan
