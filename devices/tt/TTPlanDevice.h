//===- TTPlanDevice.h - TT programs behind a PlanDevice --------*- C++ -*-===//
//
// Runs the plans attn-compile writes for target tt (compiler/TTPlanBuilder.h)
// on any TTDevice, so that BundleExecutor serves a TT bundle as it serves a
// GPU one:
//
//   EmulatorDevice emu(Arch::WormholeB0);          // or MetalDevice::open(0)
//   TTPlanDevice device(emu);
//   BundleExecutor executor(*bundle, "tt", device);
//
// Plan buffers are staged in host memory (runtime/device/HostMemory.h) in the
// runtime's layouts (the vLLM cache layouts, row-major queries); a Launch
// names a program and passes its dynamic sizes as its grid (see
// TTPlanBuilder.h for each op's operands). Every operand a launch reads or
// writes lives in DRAM, in the layout the kernels read (AttentionOps.h), as
// an image of its region of the plan buffer that stays between launches:
// the KV cache tilized, the rest in row pages. A launch reuses an image that
// is current (a cache, a previous launch's output, a query two launches
// read), uploads one the host has changed, and leaves what it writes
// (outputs, lse, the cache rows reshape_and_cache adds) in DRAM. The host
// copy of a region is brought up to date (untilized, for the cache) only
// when the host reads it, writes part of it, copies it, or a launch needs
// it on the host (metadata) or in another layout. So a serving step moves
// the host's writes (new tokens, metadata) down and nothing back. The memory
// is therefore not the host's to hand out (memorySpace() is Opaque, as
// Vulkan's). device().transfers() counts what crossed to and from DRAM.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H

#include "devices/tt/AttentionOps.h"
#include "devices/tt/TTDevice.h"
#include "runtime/device/HostMemory.h"
#include "runtime/device/KernelSymbols.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attn::tt {

class TTPlanDevice final : public runtime::HostMemoryDevice {
public:
  /// Runs on `device`, which must outlive this.
  explicit TTPlanDevice(TTDevice &device);
  /// Runs on `device`, which it keeps.
  explicit TTPlanDevice(std::unique_ptr<TTDevice> device);

  std::string_view name() const override { return name_; }
  TTDevice &device() { return device_; }

  /// Loads the program folder `dir` (and its merge program) as what Launch
  /// ops naming `symbol` run; with loadNow false, when it first launches
  /// (its files may still be being written).
  Status addProgram(const std::string &symbol, const std::string &dir,
                    bool loadNow = true);
  /// Given a program's program.json kernel of `bundle`, checks every file
  /// of the program (its merge program included) against the manifest's
  /// hashes and loads the program's folder; the program's other files load
  /// with it. Executors of several bundles may share the device: loading the
  /// same program under a symbol again is a no-op, another one an error
  /// (runtime/device/KernelSymbols.h).
  Status loadKernelCode(const runtime::Bundle &bundle,
                    const runtime::BundleKernel &kernel,
                    std::string_view bytes) override;
  /// The programs loaded so far, by symbol.
  const std::map<std::string, Program> &programs() const { return programs_; }

  /// Its buffers are device memory that the host only stages.
  runtime::MemorySpace memorySpace() const override {
    return runtime::MemorySpace::Opaque;
  }
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  adopt(void *address, uint64_t bytes, std::function<void()> release) override;
  ~TTPlanDevice() override;

protected:
  Result<std::shared_ptr<runtime::DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override;
  Status writeBytes(runtime::DeviceBuffer &buffer, uint64_t offset,
                    const void *data, uint64_t bytes) override;
  Status readBytes(const runtime::DeviceBuffer &buffer, uint64_t offset,
                   void *data, uint64_t bytes) override;
  Status enqueueCopy(const runtime::BufferView &src,
                     const runtime::BufferView &dst) override;
  /// Runs the program to completion.
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &block,
                       std::span<const runtime::BufferView> args) override;

private:
  /// How a region of a plan buffer is laid out in DRAM: row pages, or a KV
  /// cache of `shape` in `layout`, tiled.
  struct Form {
    RowPages rows;
    std::optional<TiledCache> tiles;
    std::vector<int64_t> shape;
    KvLayout layout = KvLayout::NHD;
    uint64_t hostBytes() const;
    bool operator==(const Form &) const = default;
  };
  /// The region [offset, offset + form.hostBytes()) of a plan buffer in
  /// DRAM.
  struct Image {
    Buffer buffer;
    uint64_t offset = 0;
    Form form;
    /// DRAM holds writes the host copy lacks, or the reverse.
    bool deviceNewer = false, hostNewer = false;
    bool overlaps(uint64_t begin, uint64_t bytes) const {
      return begin < offset + form.hostBytes() && offset < begin + bytes;
    }
  };
  /// A plan buffer and its regions in DRAM (disjoint).
  struct Resident {
    std::weak_ptr<runtime::DeviceBuffer> owner;
    std::vector<Image> images;
  };
  /// What a launch does with an operand.
  enum class Use { Read, Write, Update };
  /// The DRAM of `view` as `form` for a launch that `use`s it: the image
  /// kept from earlier, or a new one (uploaded from the host copy unless
  /// the launch writes all of it). Images it displaces are synced first.
  Result<Buffer> onDevice(const runtime::BufferView &view, const Form &form,
                          Use use);
  /// Brings the host copy of [offset, offset + bytes) of `buffer` up to date.
  Status syncHost(const runtime::DeviceBuffer *buffer, uint64_t offset,
                  uint64_t bytes);
  /// Marks the images over [offset, offset + bytes) older than the host.
  void hostChanged(const runtime::DeviceBuffer *buffer, uint64_t offset,
                   uint64_t bytes);
  /// Gives the image's DRAM back (after the launch, during one).
  void release(const Image &image);
  /// The host copy of operand `view` as a tensor, brought up to date.
  Result<Tensor> hostTensor(const runtime::BufferView &view, DType dtype,
                            std::vector<int64_t> shape, const char *what);
  /// Forgets the buffers the plan has dropped, releasing their images.
  void sweep();
  /// Runs the op of `program` on the operands `args`.
  Status launchOp(const Program &program, const ProgramShape &s,
                  const std::array<uint32_t, 3> &grid,
                  std::span<const runtime::BufferView> args);
  std::map<const runtime::DeviceBuffer *, Resident> resident_;

  std::unique_ptr<TTDevice> owned_;
  TTDevice &device_;
  std::string name_;
  std::map<std::string, Program> programs_;
  /// Programs added to load at their first launch: symbol -> folder.
  std::map<std::string, std::string> pending_;
  runtime::KernelSymbols symbols_;
  /// Released when the running launch ends: an operand's image that a
  /// later operand displaced.
  bool launching_ = false;
  std::vector<Buffer> retired_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H
