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
// TTPlanBuilder.h for each op's operands). A launch puts its small operands
// (queries, new keys and values, metadata) in DRAM in the layouts the
// kernels read (AttentionOps.h), runs the program and brings its outputs
// back. The KV cache stays on the device: the first launch that reads a
// cache buffer tilizes it into DRAM, where it stays between launches;
// reshape_and_cache writes the new rows into those tiles; the host copy is
// brought up to date (untilized once) only when the host reads the buffer,
// writes part of it, or copies it, and a host write makes the next launch
// tilize again. The memory is therefore not the host's to hand out
// (memorySpace() is Opaque, as Vulkan's). device().transfers() counts what
// crossed to and from DRAM.
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
  Status loadKernel(const runtime::Bundle &bundle,
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
  /// A plan buffer, and the cache it holds tiled in DRAM once a launch
  /// has read it as one.
  struct Resident {
    std::weak_ptr<runtime::DeviceBuffer> owner;
    std::optional<DeviceCache> cache;
    /// Where the cache is in the buffer, and its host shape and layout.
    uint64_t offset = 0;
    DType dtype = DType::BF16;
    std::vector<int64_t> shape;
    KvLayout layout = KvLayout::NHD;
    /// The tiles hold writes the host copy lacks, or the reverse.
    bool deviceNewer = false, hostNewer = false;
  };
  /// Brings the host copy of `buffer` up to date with its tiles.
  Status syncHost(const runtime::DeviceBuffer *buffer);
  /// Marks the tiles of `buffer` (if any) older than its host copy.
  void hostChanged(const runtime::DeviceBuffer *buffer);
  /// Releases the tiles of `r`.
  void dropCache(Resident &r);
  /// The tiles of the cache `view` holds, for a program of shape `s`:
  /// kept from an earlier launch, or tilized now from the host copy.
  Result<const DeviceCache *> cacheOnDevice(const runtime::BufferView &view,
                                            const ProgramShape &s);
  /// Forgets the buffers the plan has dropped, releasing their tiles.
  void sweep();
  /// Runs the op of `program` on the operands `args` (the cache at
  /// `cacheArg`, or none when that is past them).
  Status launchOp(const Program &program, const ProgramShape &s,
                  const std::array<uint32_t, 3> &grid,
                  std::span<const runtime::BufferView> args, size_t cacheArg);
  std::map<const runtime::DeviceBuffer *, Resident> resident_;

  std::unique_ptr<TTDevice> owned_;
  TTDevice &device_;
  std::string name_;
  std::map<std::string, Program> programs_;
  /// Programs added to load at their first launch: symbol -> folder.
  std::map<std::string, std::string> pending_;
  runtime::KernelSymbols symbols_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_TTPLANDEVICE_H
