//===- VulkanPlanDevice.cpp - Runs plans on a Vulkan device --------------===//

#include "devices/vulkan/VulkanPlanDevice.h"

#include "core/LaunchFacts.h"
#include "runtime/bundle/Bundle.h"

#include <algorithm>
#include <cstring>

namespace attn::vulkan {

namespace {

class VulkanPlanBuffer : public runtime::DeviceBuffer,
                         public std::enable_shared_from_this<VulkanPlanBuffer> {
public:
  explicit VulkanPlanBuffer(std::unique_ptr<VulkanBuffer> buffer)
      : buffer(std::move(buffer)) {}
  uint64_t size() const override { return buffer->size(); }
  std::unique_ptr<VulkanBuffer> buffer;
};

VulkanBuffer &unwrap(runtime::DeviceBuffer &b) {
  return *static_cast<VulkanPlanBuffer &>(b).buffer;
}
const VulkanBuffer &unwrap(const runtime::DeviceBuffer &b) {
  return *static_cast<const VulkanPlanBuffer &>(b).buffer;
}

} // namespace

VulkanPlanDevice::VulkanPlanDevice(std::unique_ptr<VulkanDevice> device)
    : device_(std::move(device)), name_("vulkan:" + device_->info().name) {}

Result<std::unique_ptr<VulkanPlanDevice>>
VulkanPlanDevice::create(const VulkanOptions &options) {
  Result<std::unique_ptr<VulkanDevice>> device = VulkanDevice::create(options);
  if (!device)
    return device.status();
  return std::unique_ptr<VulkanPlanDevice>(
      new VulkanPlanDevice(std::move(*device)));
}

Status VulkanPlanDevice::addKernel(const std::string &symbol,
                                   std::vector<uint32_t> spirv,
                                   const std::string &entryPoint,
                                   uint32_t subgroupSize,
                                   std::optional<uint32_t> addressedBuffers) {
  LaunchFacts facts;
  facts.subgroupSize = subgroupSize;
  facts.addressedBuffers = addressedBuffers;
  return addKernelForm(symbol, std::move(spirv), entryPoint, std::move(facts));
}

Status VulkanPlanDevice::addKernelForm(const std::string &symbol,
                                       std::vector<uint32_t> spirv,
                                       const std::string &entryPoint,
                                       LaunchFacts facts) {
  const std::optional<uint32_t> &addressed = facts.addressedBuffers;
  std::string identity = std::to_string(facts.subgroupSize);
  if (addressed)
    identity += " buffer_address " + std::to_string(*addressed);
  std::string source = runtime::kernelSource(
      std::string_view(reinterpret_cast<const char *>(spirv.data()),
                       spirv.size() * sizeof(uint32_t)),
      entryPoint, identity);
  std::string formKey = symbol + (addressed ? " (by address)" : "");
  Result<bool> loaded = symbols_.isLoaded(name_, formKey, source);
  if (!loaded)
    return loaded.status();
  if (*loaded)
    return Status::ok();
  KernelDesc desc;
  desc.spirv = std::move(spirv);
  desc.entryPoint = entryPoint;
  if (addressed) {
    desc.buffersByAddress = true;
    desc.numBuffers = *addressed;
  }
  const VulkanDeviceInfo &info = device_->info();
  uint32_t subgroupSize = facts.subgroupSize;
  if (subgroupSize != 0 && subgroupSize != info.subgroupSize) {
    if (!info.subgroupSizeControl || subgroupSize < info.minSubgroupSize ||
        subgroupSize > info.maxSubgroupSize)
      return errorf("kernel ", symbol, " was compiled for subgroup size ",
                    subgroupSize, " but ", name_, " runs subgroups of ",
                    info.subgroupSize,
                    ": recompile with attn-compile --subgroup-size=",
                    info.subgroupSize);
    desc.requiredSubgroupSize = subgroupSize;
  }
  Result<std::unique_ptr<VulkanKernel>> kernel = device_->createKernel(desc);
  if (!kernel)
    return errorf("kernel ", symbol, ": ", kernel.message());
  KernelForms &forms = kernels_[symbol];
  (addressed ? forms.addressed : forms.bound) =
      LoadedKernel{std::move(*kernel), std::move(facts)};
  symbols_.record(formKey, std::move(source));
  return Status::ok();
}

runtime::SubgroupSizes VulkanPlanDevice::subgroupSizes() const {
  const VulkanDeviceInfo &info = device_->info();
  runtime::SubgroupSizes sizes;
  sizes.native = info.subgroupSize;
  sizes.min = info.subgroupSizeControl ? info.minSubgroupSize
                                       : info.subgroupSize;
  sizes.max = info.subgroupSizeControl ? info.maxSubgroupSize
                                       : info.subgroupSize;
  return sizes;
}

Status VulkanPlanDevice::loadKernelCode(const runtime::Bundle &,
                                    const runtime::BundleKernel &kernel,
                                    std::string_view bytes) {
  if (parseTarget(kernel.target) != Target::SPIRV)
    return errorf("kernel ", kernel.symbol, " is for target ", kernel.target,
                  "; ", name_, " runs ", toString(Target::SPIRV));
  return addKernel(kernel.symbol, bytes, kernel.entryPoint, kernel.launchJson);
}

Status VulkanPlanDevice::addKernel(const std::string &symbol,
                                   std::string_view bytes,
                                   const std::string &entryPoint,
                                   std::string_view launchJson) {
  if (bytes.size() % 4 != 0)
    return errorf("kernel ", symbol, " is ", bytes.size(),
                  " bytes, not a whole number of SPIR-V words");
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  Result<LaunchFacts> facts = readLaunchFacts(launchJson, Target::SPIRV);
  if (!facts)
    return errorf("kernel ", symbol, ": ", facts.message());
  ATTN_RETURN_IF_ERROR(keepLaunchBounds(symbol, "spirv", facts->bounds));
  return addKernelForm(symbol, std::move(words), entryPoint,
                       std::move(*facts));
}

Result<std::shared_ptr<runtime::DeviceBuffer>>
VulkanPlanDevice::allocateBuffer(uint64_t bytes) {
  // Plans rely on fresh buffers being zero (scratch accumulators, padding),
  // and the host may write a fresh buffer at once, so the zeros go in now:
  // by the host when it maps the memory (in chunks, so no host buffer as
  // large as the request is made), else by one fill on the device.
  uint64_t rounded = (std::max<uint64_t>(bytes, 4) + 3) / 4 * 4;
  Result<std::unique_ptr<VulkanBuffer>> buffer =
      device_->createBuffer(rounded);
  if (!buffer)
    return buffer.status();
  if ((*buffer)->isHostMapped()) {
    static const std::vector<uint8_t> kZeros(1 << 20, 0);
    for (uint64_t offset = 0; offset < rounded; offset += kZeros.size())
      ATTN_RETURN_IF_ERROR((*buffer)->write(
          kZeros.data(), std::min<uint64_t>(kZeros.size(), rounded - offset),
          offset));
  } else {
    VulkanCommand zero = VulkanCommand::zero(**buffer, 0, rounded);
    ATTN_RETURN_IF_ERROR(
        device_->submit(std::span<const VulkanCommand>(&zero, 1)).status());
  }
  return std::shared_ptr<runtime::DeviceBuffer>(
      std::make_shared<VulkanPlanBuffer>(std::move(*buffer)));
}

void VulkanPlanDevice::keepAlive(const runtime::DeviceBuffer *buffer) {
  auto &kept = recording_ ? recordedBuffers_ : pendingBuffers_;
  kept.push_back(
      const_cast<VulkanPlanBuffer *>(
          static_cast<const VulkanPlanBuffer *>(buffer))
          ->shared_from_this());
}

Status VulkanPlanDevice::enqueue(VulkanCommand command) {
  ATTN_RETURN_IF_ERROR(device_->check(command));
  commands().push_back(std::move(command));
  // A host that never waits still gets its work run, in batches.
  constexpr size_t kMaxPending = 4096;
  if (!recording_ && pending_.size() >= kMaxPending)
    return finishWork();
  return Status::ok();
}

Status VulkanPlanDevice::finishWork() {
  if (pending_.empty())
    return Status::ok();
  std::vector<VulkanCommand> commands = std::move(pending_);
  pending_.clear();
  Result<DispatchTiming> timing = device_->submit(commands);
  pendingBuffers_.clear();
  if (!timing)
    return timing.status();
  deviceSeconds_ += timing->deviceSeconds.value_or(0);
  return Status::ok();
}

Status VulkanPlanDevice::writeBytes(runtime::DeviceBuffer &buffer,
                                    uint64_t offset, const void *data,
                                    uint64_t bytes) {
  // Nothing queued (or a step being recorded, whose work has not run): the
  // buffer is the host's to write.
  constexpr uint64_t kMaxQueuedWrite = 4 * kMaxVulkanUpdateBytes;
  if (recording_ || pending_.empty() || bytes > kMaxQueuedWrite ||
      offset % 4 != 0 || bytes % 4 != 0) {
    ATTN_RETURN_IF_ERROR(finishWork());
    return unwrap(buffer).write(data, bytes, offset);
  }
  const auto *bytesIn = static_cast<const uint8_t *>(data);
  for (uint64_t done = 0; done < bytes; done += kMaxVulkanUpdateBytes) {
    uint64_t n = std::min(kMaxVulkanUpdateBytes, bytes - done);
    keepAlive(&buffer);
    ATTN_RETURN_IF_ERROR(enqueue(VulkanCommand::update(
        unwrap(buffer), offset + done,
        std::vector<uint8_t>(bytesIn + done, bytesIn + done + n))));
  }
  return Status::ok();
}

Status VulkanPlanDevice::readBytes(const runtime::DeviceBuffer &buffer,
                                   uint64_t offset, void *data,
                                   uint64_t bytes) {
  ATTN_RETURN_IF_ERROR(finishWork());
  return unwrap(buffer).read(data, bytes, offset);
}

Status VulkanPlanDevice::enqueueCopy(const runtime::BufferView &src,
                                     const runtime::BufferView &dst) {
  if (dst.bytes < src.bytes)
    return errorf(name_, ": a copy of ", src.bytes, " bytes into ", dst.bytes);
  keepAlive(src.buffer);
  keepAlive(dst.buffer);
  return enqueue(VulkanCommand::copy(unwrap(*src.buffer), src.offset,
                                     unwrap(*dst.buffer), dst.offset,
                                     src.bytes));
}

const VulkanPlanDevice::LoadedKernel &
VulkanPlanDevice::formFor(const KernelForms &forms,
                          std::span<const runtime::BufferView> args) const {
  if (!forms.bound.kernel)
    return forms.addressed;
  if (!forms.addressed.kernel)
    return forms.bound;
  const VulkanDeviceInfo &info = device_->info();
  for (const runtime::BufferView &view : args)
    if (view.offset % info.minStorageBufferOffsetAlignment != 0 ||
        std::max<uint64_t>(view.bytes, 4) > info.maxStorageBufferRange)
      return forms.addressed;
  return forms.bound;
}

Status VulkanPlanDevice::enqueueLaunch(
    std::string_view kernel, const std::array<uint32_t, 3> &grid,
    const std::array<int64_t, 3> &block,
    std::span<const runtime::BufferView> args) {
  auto it = kernels_.find(kernel);
  if (it == kernels_.end())
    return errorf("no kernel '", kernel, "' is loaded on ", name_);
  const LoadedKernel &form = formFor(it->second, args);
  if (std::optional<std::array<uint32_t, 3>> local =
          form.kernel->workgroupSize())
    for (int i = 0; i < 3; ++i)
      if (static_cast<int64_t>((*local)[i]) != block[i])
        return errorf("kernel '", kernel, "' was compiled for workgroup size ",
                      (*local)[0], "x", (*local)[1], "x", (*local)[2],
                      " but the plan launches ", block[0], "x", block[1], "x",
                      block[2]);
  std::vector<uint64_t> bytes;
  for (const runtime::BufferView &view : args)
    bytes.push_back(view.bytes);
  if (Status s = checkIndexRange(form.facts, Target::SPIRV, bytes); !s)
    return errorf("kernel '", kernel, "': ", s.message());
  DispatchDesc desc;
  desc.kernel = form.kernel.get();
  desc.groups = grid;
  for (const runtime::BufferView &view : args) {
    desc.buffers.push_back(&unwrap(*view.buffer));
    // Vulkan has no empty bindings; an empty tensor binds 4 bytes, which
    // its buffer has (allocateTensor allocates at least that).
    desc.ranges.push_back({view.offset, std::max<uint64_t>(view.bytes, 4)});
    keepAlive(view.buffer);
  }
  ATTN_RETURN_IF_ERROR(enqueue(VulkanCommand::launch(std::move(desc))));
  ++(form.facts.addressedBuffers ? addressedLaunches_ : boundLaunches_);
  return Status::ok();
}

namespace {

/// A recorded step: its command buffer and the buffers it names.
struct VulkanRecordedWork final : runtime::RecordedWork {
  std::unique_ptr<VulkanRecording> recording;
  std::vector<std::shared_ptr<runtime::DeviceBuffer>> buffers;
};

} // namespace

Status VulkanPlanDevice::beginRecording() {
  if (recording_)
    return errorf(name_, " is already recording a step");
  // What was queued runs first, so the host's writes while recording touch
  // buffers no work is using.
  ATTN_RETURN_IF_ERROR(finishWork());
  recording_ = true;
  recorded_.clear();
  recordedBuffers_.clear();
  return Status::ok();
}

Result<std::unique_ptr<runtime::RecordedWork>>
VulkanPlanDevice::endRecording(std::vector<runtime::BufferView> zeroFirst) {
  recording_ = false;
  auto work = std::make_unique<VulkanRecordedWork>();
  std::vector<VulkanCommand> commands;
  for (const runtime::BufferView &view : zeroFirst) {
    commands.push_back(
        VulkanCommand::zero(unwrap(*view.buffer), view.offset, view.bytes));
    work->buffers.push_back(
        static_cast<VulkanPlanBuffer *>(view.buffer)->shared_from_this());
  }
  for (VulkanCommand &c : recorded_)
    commands.push_back(std::move(c));
  recorded_.clear();
  Result<std::unique_ptr<VulkanRecording>> recording =
      device_->record(commands);
  if (!recording)
    return recording.status();
  work->recording = std::move(*recording);
  for (auto &b : recordedBuffers_)
    work->buffers.push_back(std::move(b));
  recordedBuffers_.clear();
  return std::unique_ptr<runtime::RecordedWork>(std::move(work));
}

Status VulkanPlanDevice::replayRecording(const runtime::RecordedWork &work) {
  ATTN_RETURN_IF_ERROR(finishWork());
  const auto &recorded = static_cast<const VulkanRecordedWork &>(work);
  Result<DispatchTiming> timing = device_->replay(*recorded.recording);
  if (!timing)
    return timing.status();
  deviceSeconds_ += timing->deviceSeconds.value_or(0);
  return Status::ok();
}

} // namespace attn::vulkan
