//===- MetalDevice.cpp - A Tenstorrent card as a TT device ---------------===//
#include "devices/tt/metal/MetalDevice.h"

#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>

#include <cstring>
#include <exception>
#include <filesystem>
#include <map>

namespace attn::tt {

namespace metal = ::tt::tt_metal;
namespace dist = ::tt::tt_metal::distributed;

struct MetalDevice::Impl {
  std::shared_ptr<dist::MeshDevice> mesh;
  int id = 0;
  Arch arch = Arch::WormholeB0;
  /// The SDK's buffers by address, alive until released.
  std::map<uint32_t, std::shared_ptr<dist::MeshBuffer>> buffers;
};

namespace {

/// A program's kernels as the SDK wants them: absolute source paths.
struct MetalKernels final : LoadedKernels {
  explicit MetalKernels(const MetalDevice *owner) : LoadedKernels(owner) {}
  ProgramDescription description;
  std::vector<std::string> sources;
};

::tt::DataFormat toMetal(DataFormat f) {
  switch (f) {
  case DataFormat::Float32:
    return ::tt::DataFormat::Float32;
  case DataFormat::Float16:
    return ::tt::DataFormat::Float16;
  case DataFormat::Float16_b:
    break;
  }
  return ::tt::DataFormat::Float16_b;
}

/// Runs `body`, turning what the SDK throws into an error naming `what`.
template <typename Body> Status guarded(const char *what, Body &&body) {
  try {
    body();
    return Status::ok();
  } catch (const std::exception &e) {
    return errorf("TT-Metalium: ", what, ": ", e.what());
  } catch (...) {
    return errorf("TT-Metalium: ", what, ": unknown exception");
  }
}

/// The logical cores of a launch: core c of program.json's numbering is
/// (c % gridX, c / gridX), as ranges of whole rows and the partial last row.
std::vector<CoreRange> coreRanges(size_t numCores, uint32_t gridX) {
  std::vector<CoreRange> ranges;
  size_t fullRows = numCores / gridX, rest = numCores % gridX;
  if (fullRows > 0)
    ranges.emplace_back(CoreCoord(0, 0), CoreCoord(gridX - 1, fullRows - 1));
  if (rest > 0)
    ranges.emplace_back(CoreCoord(0, fullRows), CoreCoord(rest - 1, fullRows));
  return ranges;
}

} // namespace

MetalDevice::MetalDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetalDevice::~MetalDevice() {
  if (!impl_->mesh)
    return;
  impl_->buffers.clear();
  (void)guarded("closing the device", [&] { impl_->mesh->close(); });
}

Result<std::unique_ptr<MetalDevice>> MetalDevice::open(int deviceId) {
  auto impl = std::make_unique<Impl>();
  impl->id = deviceId;
  Status opened = guarded("opening the device", [&] {
    impl->mesh = dist::MeshDevice::create_unit_mesh(deviceId);
  });
  if (!opened)
    return opened;
  switch (impl->mesh->arch()) {
  case ::tt::ARCH::WORMHOLE_B0:
    impl->arch = Arch::WormholeB0;
    break;
  case ::tt::ARCH::BLACKHOLE:
    impl->arch = Arch::Blackhole;
    break;
  default:
    impl->mesh->close();
    return errorf("TT device ", deviceId,
                  " is neither Wormhole B0 nor Blackhole; attn's kernels are "
                  "built for those");
  }
  return std::unique_ptr<MetalDevice>(new MetalDevice(std::move(impl)));
}

std::string MetalDevice::name() const {
  return "tt:metal device " + std::to_string(impl_->id) + " (" +
         toString(impl_->arch) + ")";
}

Arch MetalDevice::arch() const { return impl_->arch; }

uint32_t MetalDevice::numDramBanks() const {
  return uint32_t(impl_->mesh->num_dram_channels());
}

Result<Buffer> MetalDevice::allocateBuffer(uint32_t pageSize,
                                           uint32_t numPages) {
  if (pageSize == 0)
    return errorf(name(), ": a DRAM buffer needs a non-zero page size");
  std::shared_ptr<dist::MeshBuffer> b;
  uint64_t bytes = uint64_t(pageSize) * std::max<uint32_t>(numPages, 1);
  Status made = guarded("creating a DRAM buffer", [&] {
    dist::DeviceLocalBufferConfig local{.page_size = pageSize,
                                        .buffer_type = metal::BufferType::DRAM};
    dist::ReplicatedBufferConfig global{.size = bytes};
    b = dist::MeshBuffer::create(global, local, impl_->mesh.get());
  });
  if (!made)
    return made;
  Buffer out;
  out.address = uint32_t(b->address());
  out.pageSize = pageSize;
  uint32_t align = archParams(impl_->arch).dramReadAlignment;
  out.alignedPageSize = (pageSize + align - 1) / align * align;
  out.numPages = numPages;
  impl_->buffers[out.address] = std::move(b);
  return out;
}

Result<Buffer> MetalDevice::createBuffer(uint32_t pageSize, uint32_t numPages) {
  Result<Buffer> out = allocateBuffer(pageSize, numPages);
  if (!out)
    return out;
  // TTDevice promises zeros, and the padding columns of head sizes that are
  // not whole tiles rely on them. MeshBuffer::create only takes an address
  // from the allocator (tt-metal's mesh_buffer.cpp and
  // Buffer::allocate_impl write nothing to the device), so the space holds
  // whatever it last held until this one blocking write clears it. upload()
  // skips it: its write covers the whole buffer.
  std::shared_ptr<dist::MeshBuffer> &b = impl_->buffers[out->address];
  std::vector<uint8_t> zeros(size_t(b->size()), 0);
  Status cleared = guarded("clearing a DRAM buffer", [&] {
    dist::EnqueueWriteMeshBuffer(impl_->mesh->mesh_command_queue(), b, zeros,
                                 /*blocking=*/true);
  });
  if (!cleared) {
    releaseBuffer(*out);
    return cleared;
  }
  return out;
}

void MetalDevice::releaseBuffer(const Buffer &buffer) {
  impl_->buffers.erase(buffer.address);
}

Status MetalDevice::writeBuffer(const Buffer &buffer, const void *data) {
  auto it = impl_->buffers.find(buffer.address);
  if (it == impl_->buffers.end())
    return errorf(name(), ": no buffer at ", buffer.address);
  std::vector<uint8_t> src(size_t(it->second->size()), 0);
  std::memcpy(src.data(), data, size_t(buffer.numPages) * buffer.pageSize);
  return guarded("writing a DRAM buffer", [&] {
    dist::EnqueueWriteMeshBuffer(impl_->mesh->mesh_command_queue(), it->second,
                                 src, /*blocking=*/true);
  });
}

Status MetalDevice::readBuffer(const Buffer &buffer, void *data) {
  auto it = impl_->buffers.find(buffer.address);
  if (it == impl_->buffers.end())
    return errorf(name(), ": no buffer at ", buffer.address);
  std::vector<uint8_t> dst;
  ATTN_RETURN_IF_ERROR(guarded("reading a DRAM buffer", [&] {
    dist::EnqueueReadMeshBuffer(impl_->mesh->mesh_command_queue(), dst,
                                it->second, /*blocking=*/true);
  }));
  size_t bytes = size_t(buffer.numPages) * buffer.pageSize;
  if (dst.size() < bytes)
    return errorf(name(), ": read ", dst.size(), " bytes of a ", bytes,
                  "-byte buffer");
  std::memcpy(data, dst.data(), bytes);
  return Status::ok();
}

Result<std::shared_ptr<const LoadedKernels>>
MetalDevice::loadKernels(const ProgramDescription &description) {
  auto loaded = std::make_shared<MetalKernels>(this);
  loaded->description = description;
  for (const KernelDescription &k : description.kernels) {
    std::error_code ec;
    std::filesystem::path path =
        std::filesystem::absolute(description.dir + "/" + k.source, ec);
    if (ec || !std::filesystem::exists(path))
      return errorf(description.dir, ": no kernel source ", k.source);
    loaded->sources.push_back(path.string());
  }
  return std::shared_ptr<const LoadedKernels>(std::move(loaded));
}

Status MetalDevice::run(const Program &program,
                        const std::vector<LaunchArgs> &launches) {
  if (!program.kernels || program.kernels->owner != this)
    return errorf("program '", program.description.name, "' was not loaded on ",
                  name());
  const auto &k = static_cast<const MetalKernels &>(*program.kernels);
  const ProgramDescription &d = k.description;
  CoreCoord grid = impl_->mesh->compute_with_storage_grid_size();
  if (d.gridX > grid.x || d.gridY > grid.y)
    return errorf("program '", d.name, "' spreads over ", d.gridX, "x", d.gridY,
                  " cores, ", name(), " has ", grid.x, "x", grid.y);
  dist::MeshCommandQueue &queue = impl_->mesh->mesh_command_queue();
  // A workload must outlive its run: all stay alive until Finish.
  std::vector<dist::MeshWorkload> workloads;
  workloads.reserve(launches.size());
  for (const LaunchArgs &launch : launches) {
    std::vector<CoreRange> ranges = coreRanges(launch.size(), d.gridX);
    CoreRangeSet cores{ttsl::Span<const CoreRange>(ranges)};
    std::vector<CoreCoord> coreList;
    for (size_t c = 0; c < launch.size(); ++c)
      coreList.emplace_back(c % d.gridX, c / d.gridX);
    ATTN_RETURN_IF_ERROR(guarded("building and enqueueing a program", [&] {
      metal::Program p = metal::CreateProgram();
      for (const CircularBufferSpec &cb : d.circularBuffers) {
        uint8_t index = uint8_t(cb.id);
        metal::CircularBufferConfig config(cb.numPages * cb.pageSize,
                                           {{index, toMetal(cb.format)}});
        config.set_page_size(index, cb.pageSize);
        metal::CreateCircularBuffer(p, cores, config);
      }
      for (size_t i = 0; i < d.kernels.size(); ++i) {
        const KernelDescription &kd = d.kernels[i];
        metal::KernelHandle handle;
        if (kd.kind == KernelKind::Compute) {
          handle = metal::CreateKernel(
              p, k.sources[i], cores,
              metal::ComputeConfig{.math_fidelity = metal::MathFidelity::HiFi4,
                                   .fp32_dest_acc_en = kd.fp32DestAccEn,
                                   .math_approx_mode = false,
                                   .compile_args = kd.compileTimeArgs});
        } else {
          bool second = kd.processor == "riscv_1";
          handle = metal::CreateKernel(
              p, k.sources[i], cores,
              metal::DataMovementConfig{
                  .processor = second ? metal::DataMovementProcessor::RISCV_1
                                      : metal::DataMovementProcessor::RISCV_0,
                  .noc = second ? metal::NOC::RISCV_1_default
                                : metal::NOC::RISCV_0_default,
                  .compile_args = kd.compileTimeArgs});
        }
        std::vector<std::vector<uint32_t>> args;
        for (const auto &core : launch)
          args.push_back(core[i]);
        metal::SetRuntimeArgs(p, handle, coreList, args);
      }
      dist::MeshWorkload &workload = workloads.emplace_back();
      workload.add_program(dist::MeshCoordinateRange(impl_->mesh->shape()),
                           std::move(p));
      dist::EnqueueMeshWorkload(queue, workload, /*blocking=*/false);
    }));
  }
  return guarded("waiting for the command queue", [&] { dist::Finish(queue); });
}

} // namespace attn::tt
