//===- VulkanMemory.cpp - Device memory and storage buffers ---------------===//
//
// Buffer allocation (a memory type by placement, device addresses, mapping)
// and VulkanBuffer's reads and writes, mapped or through a staging buffer.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanExecutor.h"

#include "devices/vulkan/VulkanState.h"

#include <cstring>
#include <mutex>
#include <utility>

namespace attn::vulkan {

using detail::beginCommands;
using detail::recordBarrierFromEarlierWork;
using detail::recordBarrierToHost;
using detail::submitAndWait;
using detail::VulkanBufferState;
using detail::VulkanContext;

namespace {

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

} // namespace attn::vulkan
