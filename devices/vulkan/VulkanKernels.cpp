//===- VulkanKernels.cpp - Kernel checks, layouts and pipelines -----------===//
//
// VulkanDevice::createKernel: the SPIR-V module checked against its
// KernelDesc and the device (version, entry point, bindings, buffer ABI,
// capabilities, subgroup size), then its layouts and its compute pipeline,
// built through the device's pipeline cache.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanExecutor.h"

#include "devices/vulkan/SpirvReflection.h"
#include "devices/vulkan/VulkanState.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace attn::vulkan {

using detail::VulkanContext;
using detail::VulkanKernelState;

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

} // namespace attn::vulkan
