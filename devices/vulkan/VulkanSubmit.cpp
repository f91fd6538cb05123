//===- VulkanSubmit.cpp - Commands, submissions and recordings -----------===//
//
// Everything a VulkanDevice puts on its queue goes through here: a list of
// VulkanCommands is checked, given descriptor sets, recorded into a command
// buffer with a barrier between consecutive commands, and either submitted
// once (submit, run, copy) or kept for replay (record, replay).
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/VulkanState.h"

#include <algorithm>
#include <chrono>

namespace attn::vulkan {
namespace detail {

namespace {

/// A global memory barrier: everything the executor orders is buffers.
void recordBarrier(const VulkanContext &context, VkCommandBuffer cmd,
                   VkPipelineStageFlags srcStage, VkAccessFlags srcAccess,
                   VkPipelineStageFlags dstStage, VkAccessFlags dstAccess) {
  VkMemoryBarrier barrier =
      makeVk<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = srcAccess;
  barrier.dstAccessMask = dstAccess;
  context.vk.vkCmdPipelineBarrier(cmd, srcStage, dstStage, 0, 1, &barrier, 0,
                                  nullptr, 0, nullptr);
}

constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkAccessFlags kWorkWrites =
    VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
constexpr VkAccessFlags kWorkAccesses =
    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;

} // namespace

Result<double> submitAndWait(VulkanContext &context, VkCommandBuffer cmd) {
  const VulkanFunctions &vk = context.vk;
  ATTN_RETURN_IF_ERROR(checkVk(
      vk.vkResetFences(context.device, 1, &context.fence), "vkResetFences"));
  VkSubmitInfo submit = makeVk<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  auto start = std::chrono::steady_clock::now();
  VkResult result = vk.vkQueueSubmit(context.queue, 1, &submit, context.fence);
  if (result == VK_SUCCESS)
    result = vk.vkWaitForFences(context.device, 1, &context.fence, VK_TRUE,
                                context.timeoutNs);
  auto end = std::chrono::steady_clock::now();
  if (result == VK_TIMEOUT) {
    context.lostReason = errorf("a Vulkan submission did not finish within ",
                                context.timeoutNs / 1e9,
                                " s; the device is unusable from now on")
                             .message();
    return Status::error(*context.lostReason);
  }
  if (result == VK_ERROR_DEVICE_LOST) {
    context.lostReason =
        "the Vulkan device was lost (VK_ERROR_DEVICE_LOST); it is unusable "
        "from now on";
    return Status::error(*context.lostReason);
  }
  ATTN_RETURN_IF_ERROR(checkVk(result, "vkQueueSubmit / vkWaitForFences"));
  return std::chrono::duration<double>(end - start).count();
}

void recordBarrierBetweenCommands(const VulkanContext &context,
                                  VkCommandBuffer cmd) {
  recordBarrier(context, cmd, kWorkStages, kWorkWrites, kWorkStages,
                kWorkAccesses);
}

void recordBarrierFromEarlierWork(const VulkanContext &context,
                                  VkCommandBuffer cmd) {
  recordBarrier(context, cmd, kWorkStages, kWorkWrites, kWorkStages,
                kWorkAccesses);
}

void recordBarrierToHost(const VulkanContext &context, VkCommandBuffer cmd) {
  recordBarrier(context, cmd, kWorkStages, kWorkWrites,
                VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

Status beginCommands(VulkanContext &context) {
  if (context.lostReason)
    return Status::error(*context.lostReason);
  const VulkanFunctions &vk = context.vk;
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkResetCommandBuffer(context.commandBuffer, 0),
              "vkResetCommandBuffer"));
  VkCommandBufferBeginInfo begin = makeVk<VkCommandBufferBeginInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  return checkVk(vk.vkBeginCommandBuffer(context.commandBuffer, &begin),
                 "vkBeginCommandBuffer");
}

Result<double> submitAndWait(VulkanContext &context) {
  ATTN_RETURN_IF_ERROR(
      checkVk(context.vk.vkEndCommandBuffer(context.commandBuffer),
              "vkEndCommandBuffer"));
  return submitAndWait(context, context.commandBuffer);
}

VulkanRecordingState::~VulkanRecordingState() {
  std::lock_guard<std::mutex> lock(context->submitMutex);
  if (commandBuffer)
    context->vk.vkFreeCommandBuffers(context->device, context->commandPool, 1,
                                     &commandBuffer);
  context->destroy(context->vk.vkDestroyDescriptorPool, descriptorPool);
}

} // namespace detail

using detail::VulkanContext;
using detail::VulkanKernelState;

namespace {
detail::VulkanBufferState &stateOf(const VulkanBuffer &b) {
  return detail::VulkanAccess::state(b);
}
VulkanKernelState &stateOf(const VulkanKernel &k) {
  return detail::VulkanAccess::state(k);
}
} // namespace

//===----------------------------------------------------------------------===//
// VulkanCommand
//===----------------------------------------------------------------------===//

VulkanCommand VulkanCommand::launch(DispatchDesc desc) {
  VulkanCommand c;
  c.kind = Kind::Dispatch;
  c.dispatch = std::move(desc);
  return c;
}

VulkanCommand VulkanCommand::copy(const VulkanBuffer &src, uint64_t srcOffset,
                                  const VulkanBuffer &dst, uint64_t dstOffset,
                                  uint64_t bytes) {
  VulkanCommand c;
  c.kind = Kind::Copy;
  c.src = &src;
  c.dst = &dst;
  c.srcOffset = srcOffset;
  c.dstOffset = dstOffset;
  c.bytes = bytes;
  return c;
}

VulkanCommand VulkanCommand::zero(const VulkanBuffer &dst, uint64_t offset,
                                  uint64_t bytes) {
  VulkanCommand c;
  c.kind = Kind::Zero;
  c.dst = &dst;
  c.dstOffset = offset;
  c.bytes = bytes;
  return c;
}

VulkanCommand VulkanCommand::update(const VulkanBuffer &dst, uint64_t offset,
                                    std::vector<uint8_t> data) {
  VulkanCommand c;
  c.kind = Kind::Update;
  c.dst = &dst;
  c.dstOffset = offset;
  c.bytes = data.size();
  c.data = std::move(data);
  return c;
}

//===----------------------------------------------------------------------===//
// Checking and recording
//===----------------------------------------------------------------------===//

namespace {

Status checkDispatch(const std::shared_ptr<VulkanContext> &self,
                     const DispatchDesc &desc, size_t index) {
  const VulkanDeviceInfo &info = self->info;
  if (!desc.kernel)
    return errorf("dispatch ", index, " has no kernel");
  const VulkanKernelState &kernel = stateOf(*desc.kernel);
  if (kernel.context != self)
    return errorf("kernel '", kernel.entryPoint,
                  "' belongs to another VulkanDevice");
  if (desc.buffers.size() != kernel.numBuffers)
    return errorf("kernel '", kernel.entryPoint, "' takes ", kernel.numBuffers,
                  " buffers (set 0, one binding per kernel argument), got ",
                  desc.buffers.size());
  if (!desc.ranges.empty() && desc.ranges.size() != desc.buffers.size())
    return errorf("kernel '", kernel.entryPoint, "': ", desc.ranges.size(),
                  " ranges for ", desc.buffers.size(), " buffers");
  for (size_t i = 0; i < desc.buffers.size(); ++i) {
    if (!desc.buffers[i])
      return errorf("kernel '", kernel.entryPoint, "': buffer ", i,
                    " is null");
    if (stateOf(*desc.buffers[i]).context != self)
      return errorf("kernel '", kernel.entryPoint, "': buffer ", i,
                    " belongs to another VulkanDevice");
    uint64_t size = desc.buffers[i]->size();
    BufferRange r = desc.ranges.empty() ? BufferRange{0, size} : desc.ranges[i];
    if (r.offset > size || r.size > size - r.offset || r.size == 0)
      return errorf("kernel '", kernel.entryPoint, "': binding ", i, " shows ",
                    r.size, " bytes at ", r.offset, " of a buffer of ", size);
    // An address has neither a binding's offset alignment nor its range.
    if (kernel.buffersByAddress)
      continue;
    if (r.offset % info.minStorageBufferOffsetAlignment != 0)
      return errorf("kernel '", kernel.entryPoint, "': binding ", i,
                    " starts at byte ", r.offset, ", not a multiple of the "
                    "device's storage buffer offset alignment ",
                    info.minStorageBufferOffsetAlignment);
    if (r.size > info.maxStorageBufferRange)
      return errorf("kernel '", kernel.entryPoint, "': binding ", i, " shows ",
                    r.size, " bytes, more than the device's storage buffer "
                    "range of ", info.maxStorageBufferRange);
  }
  if (kernel.buffersByAddress && !desc.pushConstants.empty())
    return errorf("kernel '", kernel.entryPoint, "' takes its buffers by "
                  "address in its push constants; got push constants too");
  if (!kernel.buffersByAddress &&
      desc.pushConstants.size() != kernel.pushConstantBytes)
    return errorf("kernel '", kernel.entryPoint, "' takes ",
                  kernel.pushConstantBytes, " bytes of push constants, got ",
                  desc.pushConstants.size());
  for (int i = 0; i < 3; ++i)
    if (desc.groups[i] > info.maxWorkgroupCount[i])
      return errorf("kernel '", kernel.entryPoint, "': ", desc.groups[i],
                    " workgroups in dimension ", i, " exceed the device's ",
                    info.maxWorkgroupCount[i]);
  return Status::ok();
}

/// `bytes` bytes at `offset` of `buffer` (a VulkanBuffer of this device).
Status checkTransferRange(const std::shared_ptr<VulkanContext> &self,
                          const VulkanBuffer *buffer, uint64_t offset,
                          uint64_t bytes, const char *what) {
  if (!buffer)
    return errorf("a ", what, " without a buffer");
  if (stateOf(*buffer).context != self)
    return errorf("a ", what, " on a buffer of another VulkanDevice");
  if (offset > buffer->size() || bytes > buffer->size() - offset)
    return errorf("a ", what, " of ", bytes, " bytes at offset ", offset,
                  " is outside a buffer of ", buffer->size(), " bytes");
  return Status::ok();
}

Status checkCommand(const std::shared_ptr<VulkanContext> &self,
                    const VulkanCommand &c, size_t index) {
  using Kind = VulkanCommand::Kind;
  switch (c.kind) {
  case Kind::Dispatch:
    return checkDispatch(self, c.dispatch, index);
  case Kind::Copy:
    ATTN_RETURN_IF_ERROR(
        checkTransferRange(self, c.src, c.srcOffset, c.bytes, "copy"));
    return checkTransferRange(self, c.dst, c.dstOffset, c.bytes, "copy");
  case Kind::Zero:
    if (c.dstOffset % 4 || c.bytes % 4)
      return errorf("a zero fill of ", c.bytes, " bytes at offset ",
                    c.dstOffset, ": both must be multiples of 4");
    return checkTransferRange(self, c.dst, c.dstOffset, c.bytes, "zero fill");
  case Kind::Update:
    if (c.dstOffset % 4 || c.data.size() % 4 ||
        c.data.size() > kMaxVulkanUpdateBytes)
      return errorf("an update of ", c.data.size(), " bytes at offset ",
                    c.dstOffset, ": both must be multiples of 4 and the "
                    "size at most ", kMaxVulkanUpdateBytes);
    return checkTransferRange(self, c.dst, c.dstOffset, c.data.size(),
                              "update");
  }
  return Status::ok();
}

/// A descriptor pool holding `sets` sets of `buffers` storage buffers in
/// all, at least.
Result<VkDescriptorPool> createDescriptorPool(const VulkanContext &context,
                                              uint32_t sets,
                                              uint32_t buffers) {
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            std::max(buffers, 1u)};
  VkDescriptorPoolCreateInfo poolInfo = makeVk<VkDescriptorPoolCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  poolInfo.maxSets = std::max(sets, 1u);
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  ATTN_RETURN_IF_ERROR(checkVk(
      context.vk.vkCreateDescriptorPool(context.device, &poolInfo, nullptr,
                                        &pool),
      "vkCreateDescriptorPool"));
  return pool;
}

/// The shared descriptor pool, reset, with room for `sets` and `buffers`.
/// Caller holds submitMutex.
Result<VkDescriptorPool> sharedDescriptorPool(VulkanContext &context,
                                              uint32_t sets,
                                              uint32_t buffers) {
  const VulkanFunctions &vk = context.vk;
  if (context.descriptorPool && sets <= context.descriptorPoolSets &&
      buffers <= context.descriptorPoolBuffers) {
    ATTN_RETURN_IF_ERROR(checkVk(
        vk.vkResetDescriptorPool(context.device, context.descriptorPool, 0),
        "vkResetDescriptorPool"));
    return context.descriptorPool;
  }
  if (context.descriptorPool)
    vk.vkDestroyDescriptorPool(context.device, context.descriptorPool,
                               nullptr);
  context.descriptorPool = VK_NULL_HANDLE;
  context.descriptorPoolSets = 0;
  context.descriptorPoolBuffers = 0;
  uint32_t grownSets = std::max({sets, 2 * context.descriptorPoolSets, 16u});
  uint32_t grownBuffers =
      std::max({buffers, 2 * context.descriptorPoolBuffers, 64u});
  Result<VkDescriptorPool> pool =
      createDescriptorPool(context, grownSets, grownBuffers);
  if (!pool)
    return pool;
  context.descriptorPool = *pool;
  context.descriptorPoolSets = grownSets;
  context.descriptorPoolBuffers = grownBuffers;
  return *pool;
}

/// How many descriptor sets and storage-buffer descriptors `commands` bind.
std::pair<uint32_t, uint32_t>
countDescriptors(std::span<const VulkanCommand> commands) {
  uint32_t sets = 0, buffers = 0;
  for (const VulkanCommand &c : commands)
    if (c.kind == VulkanCommand::Kind::Dispatch &&
        !stateOf(*c.dispatch.kernel).buffersByAddress) {
      ++sets;
      buffers += c.dispatch.kernel->numBuffers();
    }
  return {sets, buffers};
}

/// One descriptor set per dispatch of `commands` from `pool` (null for
/// commands that bind none).
Result<std::vector<VkDescriptorSet>>
writeDescriptorSets(const VulkanContext &context, VkDescriptorPool pool,
                    std::span<const VulkanCommand> commands) {
  const VulkanFunctions &vk = context.vk;
  std::vector<VkDescriptorSet> sets(commands.size(), VK_NULL_HANDLE);
  for (size_t d = 0; d < commands.size(); ++d) {
    if (commands[d].kind != VulkanCommand::Kind::Dispatch)
      continue;
    const DispatchDesc &desc = commands[d].dispatch;
    const VulkanKernelState &kernel = stateOf(*desc.kernel);
    if (kernel.numBuffers == 0 || kernel.buffersByAddress)
      continue;
    VkDescriptorSetAllocateInfo allocInfo = makeVk<VkDescriptorSetAllocateInfo>(
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocInfo.descriptorPool = pool;
    allocInfo.descriptorSetCount = 1;
    allocInfo.pSetLayouts = &kernel.setLayout;
    ATTN_RETURN_IF_ERROR(checkVk(
        vk.vkAllocateDescriptorSets(context.device, &allocInfo, &sets[d]),
        "vkAllocateDescriptorSets"));
    std::vector<VkDescriptorBufferInfo> bufferInfos(kernel.numBuffers);
    std::vector<VkWriteDescriptorSet> writes(kernel.numBuffers);
    for (uint32_t i = 0; i < kernel.numBuffers; ++i) {
      bufferInfos[i] = {stateOf(*desc.buffers[i]).buffer, 0, VK_WHOLE_SIZE};
      if (!desc.ranges.empty())
        bufferInfos[i] = {stateOf(*desc.buffers[i]).buffer,
                          desc.ranges[i].offset, desc.ranges[i].size};
      writes[i] =
          makeVk<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[i].dstSet = sets[d];
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &bufferInfos[i];
    }
    vk.vkUpdateDescriptorSets(context.device, kernel.numBuffers, writes.data(),
                              0, nullptr);
  }
  return sets;
}

void recordCommand(const VulkanContext &context, VkCommandBuffer cmd,
                   const VulkanCommand &c, VkDescriptorSet set) {
  const VulkanFunctions &vk = context.vk;
  switch (c.kind) {
  case VulkanCommand::Kind::Dispatch: {
    const DispatchDesc &desc = c.dispatch;
    const VulkanKernelState &kernel = stateOf(*desc.kernel);
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipeline);
    if (set)
      vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                                 kernel.pipelineLayout, 0, 1, &set, 0,
                                 nullptr);
    if (kernel.buffersByAddress) {
      // Recorded into the command buffer, so a replay reaches the same
      // buffers at the same offsets.
      std::vector<VkDeviceAddress> addresses(desc.buffers.size());
      for (size_t i = 0; i < desc.buffers.size(); ++i)
        addresses[i] = stateOf(*desc.buffers[i]).address +
                       (desc.ranges.empty() ? 0 : desc.ranges[i].offset);
      if (!addresses.empty())
        vk.vkCmdPushConstants(cmd, kernel.pipelineLayout,
                              VK_SHADER_STAGE_COMPUTE_BIT, 0,
                              kernel.pushConstantBytes, addresses.data());
    } else if (kernel.pushConstantBytes) {
      vk.vkCmdPushConstants(cmd, kernel.pipelineLayout,
                            VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            kernel.pushConstantBytes,
                            desc.pushConstants.data());
    }
    vk.vkCmdDispatch(cmd, desc.groups[0], desc.groups[1], desc.groups[2]);
    return;
  }
  case VulkanCommand::Kind::Copy: {
    if (c.bytes == 0)
      return;
    VkBufferCopy region{c.srcOffset, c.dstOffset, c.bytes};
    vk.vkCmdCopyBuffer(cmd, stateOf(*c.src).buffer, stateOf(*c.dst).buffer, 1,
                       &region);
    return;
  }
  case VulkanCommand::Kind::Zero:
    if (c.bytes)
      vk.vkCmdFillBuffer(cmd, stateOf(*c.dst).buffer, c.dstOffset, c.bytes, 0);
    return;
  case VulkanCommand::Kind::Update:
    if (!c.data.empty())
      vk.vkCmdUpdateBuffer(cmd, stateOf(*c.dst).buffer, c.dstOffset,
                           c.data.size(), c.data.data());
    return;
  }
}

/// Records `commands` into `cmd` (begun): timestamps around them when the
/// queue has them, a barrier from earlier work, between consecutive
/// commands, and to the host at the end.
void recordCommands(const VulkanContext &context, VkCommandBuffer cmd,
                    std::span<const VulkanCommand> commands,
                    const std::vector<VkDescriptorSet> &sets) {
  const VulkanFunctions &vk = context.vk;
  bool timestamps = context.queryPool != VK_NULL_HANDLE;
  if (timestamps) {
    vk.vkCmdResetQueryPool(cmd, context.queryPool, 0, 2);
    vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                           context.queryPool, 0);
  }
  detail::recordBarrierFromEarlierWork(context, cmd);
  for (size_t i = 0; i < commands.size(); ++i) {
    if (i > 0)
      detail::recordBarrierBetweenCommands(context, cmd);
    recordCommand(context, cmd, commands[i], sets[i]);
  }
  detail::recordBarrierToHost(context, cmd);
  if (timestamps)
    vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                           context.queryPool, 1);
}

/// The timing of the submission that just finished.
DispatchTiming readTiming(const VulkanContext &context, double hostSeconds,
                          bool timestamps) {
  DispatchTiming timing;
  timing.hostSeconds = hostSeconds;
  if (!timestamps || !context.queryPool)
    return timing;
  uint64_t ticks[2] = {0, 0};
  VkResult result = context.vk.vkGetQueryPoolResults(
      context.device, context.queryPool, 0, 2, sizeof(ticks), ticks,
      sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (result == VK_SUCCESS) {
    uint64_t mask = context.timestampValidBits >= 64
                        ? ~0ull
                        : (1ull << context.timestampValidBits) - 1;
    uint64_t delta = (ticks[1] - ticks[0]) & mask;
    timing.deviceSeconds = delta * context.info.timestampPeriodNs * 1e-9;
  }
  return timing;
}

Status checkCommands(const std::shared_ptr<VulkanContext> &self,
                     std::span<const VulkanCommand> commands) {
  for (size_t i = 0; i < commands.size(); ++i)
    ATTN_RETURN_IF_ERROR(checkCommand(self, commands[i], i));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// VulkanDevice: submissions
//===----------------------------------------------------------------------===//

Result<DispatchTiming>
VulkanDevice::dispatch(const VulkanKernel &kernel,
                       const std::vector<const VulkanBuffer *> &buffers,
                       std::array<uint32_t, 3> groups,
                       std::span<const uint8_t> pushConstants) {
  DispatchDesc desc;
  desc.kernel = &kernel;
  desc.buffers = buffers;
  desc.groups = groups;
  desc.pushConstants.assign(pushConstants.begin(), pushConstants.end());
  return run(std::span<const DispatchDesc>(&desc, 1));
}

Result<DispatchTiming>
VulkanDevice::run(std::span<const DispatchDesc> dispatches) {
  std::vector<VulkanCommand> commands;
  commands.reserve(dispatches.size());
  for (const DispatchDesc &desc : dispatches)
    commands.push_back(VulkanCommand::launch(desc));
  return submit(commands);
}

Result<DispatchTiming>
VulkanDevice::submit(std::span<const VulkanCommand> commands) {
  ATTN_RETURN_IF_ERROR(checkCommands(context_, commands));
  if (commands.empty())
    return DispatchTiming{};
  VulkanContext &context = *context_;
  std::lock_guard<std::mutex> lock(context.submitMutex);
  if (context.lostReason)
    return Status::error(*context.lostReason);
  auto [numSets, numBuffers] = countDescriptors(commands);
  Result<VkDescriptorPool> pool =
      sharedDescriptorPool(context, numSets, numBuffers);
  if (!pool)
    return pool.status();
  Result<std::vector<VkDescriptorSet>> sets =
      writeDescriptorSets(context, *pool, commands);
  if (!sets)
    return sets.status();
  ATTN_RETURN_IF_ERROR(detail::beginCommands(context));
  recordCommands(context, context.commandBuffer, commands, *sets);
  Result<double> hostSeconds = detail::submitAndWait(context);
  if (!hostSeconds)
    return hostSeconds.status();
  return readTiming(context, *hostSeconds, /*timestamps=*/true);
}

Status VulkanDevice::check(const VulkanCommand &command) const {
  return checkCommand(context_, command, 0);
}

Result<std::unique_ptr<VulkanRecording>>
VulkanDevice::record(std::span<const VulkanCommand> commands) {
  ATTN_RETURN_IF_ERROR(checkCommands(context_, commands));
  VulkanContext &context = *context_;
  const VulkanFunctions &vk = context.vk;
  auto state = std::make_unique<detail::VulkanRecordingState>();
  state->context = context_;
  state->commands = commands.size();
  state->timestamps = context.queryPool != VK_NULL_HANDLE;
  auto [numSets, numBuffers] = countDescriptors(commands);
  Result<VkDescriptorPool> pool =
      createDescriptorPool(context, numSets, numBuffers);
  if (!pool)
    return pool.status();
  state->descriptorPool = *pool;
  Result<std::vector<VkDescriptorSet>> sets =
      writeDescriptorSets(context, *pool, commands);
  if (!sets)
    return sets.status();

  std::lock_guard<std::mutex> lock(context.submitMutex);
  if (context.lostReason)
    return Status::error(*context.lostReason);
  VkCommandBufferAllocateInfo allocInfo = makeVk<VkCommandBufferAllocateInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  allocInfo.commandPool = context.commandPool;
  allocInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocInfo.commandBufferCount = 1;
  ATTN_RETURN_IF_ERROR(checkVk(vk.vkAllocateCommandBuffers(
                                   context.device, &allocInfo,
                                   &state->commandBuffer),
                               "vkAllocateCommandBuffers"));
  // Replayed any number of times, so not one-time-submit.
  VkCommandBufferBeginInfo begin = makeVk<VkCommandBufferBeginInfo>(
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  ATTN_RETURN_IF_ERROR(
      checkVk(vk.vkBeginCommandBuffer(state->commandBuffer, &begin),
              "vkBeginCommandBuffer"));
  recordCommands(context, state->commandBuffer, commands, *sets);
  ATTN_RETURN_IF_ERROR(checkVk(vk.vkEndCommandBuffer(state->commandBuffer),
                               "vkEndCommandBuffer"));
  return std::unique_ptr<VulkanRecording>(new VulkanRecording(std::move(state)));
}

Result<DispatchTiming> VulkanDevice::replay(const VulkanRecording &recording) {
  detail::VulkanRecordingState &state = *recording.state_;
  if (state.context != context_)
    return Status::error("a recording of another VulkanDevice");
  VulkanContext &context = *context_;
  std::lock_guard<std::mutex> lock(context.submitMutex);
  if (context.lostReason)
    return Status::error(*context.lostReason);
  Result<double> hostSeconds =
      detail::submitAndWait(context, state.commandBuffer);
  if (!hostSeconds)
    return hostSeconds.status();
  return readTiming(context, *hostSeconds, state.timestamps);
}

Status VulkanDevice::copy(const VulkanBuffer &src, uint64_t srcOffset,
                          const VulkanBuffer &dst, uint64_t dstOffset,
                          uint64_t bytes) {
  VulkanCommand c = VulkanCommand::copy(src, srcOffset, dst, dstOffset, bytes);
  return submit(std::span<const VulkanCommand>(&c, 1)).status();
}

//===----------------------------------------------------------------------===//
// VulkanRecording
//===----------------------------------------------------------------------===//

VulkanRecording::VulkanRecording(
    std::unique_ptr<detail::VulkanRecordingState> state)
    : state_(std::move(state)) {}
VulkanRecording::~VulkanRecording() = default;

size_t VulkanRecording::size() const { return state_->commands; }

} // namespace attn::vulkan
