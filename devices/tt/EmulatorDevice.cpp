//===- EmulatorDevice.cpp - The host emulator as a TT device -------------===//
#include "devices/tt/EmulatorDevice.h"

#include <algorithm>

namespace attn::tt {

namespace {

/// The emulator's form of a program: its kernels as host entry points.
struct EmulatedKernels final : LoadedKernels {
  explicit EmulatedKernels(const EmulatorDevice *owner)
      : LoadedKernels(owner) {}
  ProgramSpec spec;
};

} // namespace

EmulatorDevice::EmulatorDevice(Arch arch, unsigned parallelCores)
    : arch_(arch), parallelCores_(parallelCores),
      dram_(std::make_unique<Device>(arch)) {}

EmulatorDevice::~EmulatorDevice() = default;

std::string EmulatorDevice::name() const {
  return std::string("tt:emulator (") + toString(arch_) + ")";
}

uint32_t EmulatorDevice::numDramBanks() const { return dram_->numBanks(); }

Result<Buffer> EmulatorDevice::createBuffer(uint32_t pageSize,
                                            uint32_t numPages) {
  if (pageSize == 0)
    return errorf(name(), ": a DRAM buffer needs a non-zero page size");
  ++live_;
  // Space for one page at least, so that every buffer has its own address.
  Buffer b = dram_->allocate(pageSize, std::max<uint32_t>(numPages, 1));
  b.numPages = numPages;
  return b;
}

void EmulatorDevice::releaseBuffer(const Buffer &buffer) {
  // The DRAM model allocates upwards, gives back the last buffer, and
  // starts over once nothing is live.
  dram_->release(buffer);
  if (live_ > 0 && --live_ == 0)
    dram_ = std::make_unique<Device>(arch_);
}

Status EmulatorDevice::writeBuffer(const Buffer &buffer, const void *data) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  for (uint32_t p = 0; p < buffer.numPages; ++p)
    dram_->writePage(buffer, p, bytes + size_t(p) * buffer.pageSize);
  return Status::ok();
}

Status EmulatorDevice::readBuffer(const Buffer &buffer, void *data) {
  auto *bytes = static_cast<uint8_t *>(data);
  for (uint32_t p = 0; p < buffer.numPages; ++p)
    dram_->readPage(buffer, p, bytes + size_t(p) * buffer.pageSize);
  return Status::ok();
}

Result<std::shared_ptr<const LoadedKernels>>
EmulatorDevice::loadKernels(const ProgramDescription &d) {
  auto loaded = std::make_shared<EmulatedKernels>(this);
  loaded->spec.circularBuffers = d.circularBuffers;
  for (const KernelDescription &kd : d.kernels) {
    auto entry = compiler_.load(d.dir + "/" + kd.source, kd.kind, d.arch,
                                kd.compileTimeArgs);
    if (!entry)
      return entry.status();
    KernelSpec ks;
    ks.name = kd.name;
    ks.kind = kd.kind;
    ks.entry = *entry;
    ks.fp32DestAccEn = kd.fp32DestAccEn;
    loaded->spec.kernels.push_back(std::move(ks));
  }
  return std::shared_ptr<const LoadedKernels>(std::move(loaded));
}

Status EmulatorDevice::run(const Program &program,
                           const std::vector<LaunchArgs> &launches) {
  if (!program.kernels || program.kernels->owner != this)
    return errorf("program '", program.description.name, "' was not loaded on ",
                  name());
  if (program.description.arch != arch_)
    return errorf("program '", program.description.name, "' was built for ",
                  toString(program.description.arch), ", the device is ",
                  name());
  const auto &spec =
      static_cast<const EmulatedKernels &>(*program.kernels).spec;
  for (const LaunchArgs &launch : launches)
    ATTN_RETURN_IF_ERROR(runProgram(*dram_, spec, launch, parallelCores_));
  return Status::ok();
}

} // namespace attn::tt
