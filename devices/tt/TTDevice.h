//===- TTDevice.h - What attn's TT host code needs of a device -*- C++ -*-===//
//
// The device interface under devices/tt/AttentionOps.h: DRAM
// buffers, interleaved page by page over the banks as TT-Metalium's
// InterleavedBufferConfig lays them out, and programs (program.json with its
// kernels) run as a sequence of launches with per-core runtime arguments.
//
// Two devices implement it:
//   EmulatorDevice (EmulatorDevice.h)  the host emulator of devices/tt/emulator;
//   MetalDevice (metal/MetalDevice.h)  a Tenstorrent card through
//                                      TT-Metalium's host API, built only when
//                                      the SDK is found.
//
// TTPlanDevice (TTPlanDevice.h) puts any of them behind the runtime's
// PlanDevice, so bundles run on TT through BundleExecutor like on the GPUs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_TTDEVICE_H
#define ATTN_RUNTIME_EXECUTORS_TT_TTDEVICE_H

#include "devices/tt/Program.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::tt {

/// Bytes copied between the host and a device's DRAM (write() and read()).
struct DramTransfers {
  uint64_t bytesToDevice = 0;
  uint64_t bytesToHost = 0;
  int64_t writes = 0;
  int64_t reads = 0;
};

class TTDevice {
public:
  virtual ~TTDevice();

  /// "tt:emulator (wormhole_b0)", "tt:metal device 0 (blackhole)".
  virtual std::string name() const = 0;
  virtual Arch arch() const = 0;
  virtual uint32_t numDramBanks() const = 0;

  /// A zero-filled DRAM buffer of `numPages` pages of `pageSize` bytes. Its
  /// address and aligned page size are what kernels are given.
  virtual Result<Buffer> createBuffer(uint32_t pageSize, uint32_t numPages) = 0;
  /// Gives a buffer back; its address may be reused.
  virtual void releaseBuffer(const Buffer &buffer) = 0;
  /// A new buffer holding `numPages` pages of `pageSize` bytes from `data`,
  /// written as write() does (and counted so); released again if that
  /// fails.
  Result<Buffer> upload(const void *data, uint32_t pageSize, uint32_t numPages);
  /// Whole-buffer copies: numPages * pageSize bytes, page p at byte
  /// p * pageSize, counted in transfers().
  Status write(const Buffer &buffer, const void *data);
  Status read(const Buffer &buffer, void *data);
  /// What write() and read() moved since the last reset.
  const DramTransfers &transfers() const { return transfers_; }
  void resetTransfers() { transfers_ = {}; }

  /// Makes the kernels of `description` runnable on this device (the
  /// emulator builds them into the host process; the SDK compiles them when
  /// a launch first needs them).
  virtual Result<std::shared_ptr<const LoadedKernels>>
  loadKernels(const ProgramDescription &description) = 0;
  /// Runs `launches` of `program` one after the other and waits for the
  /// last. program.kernels must come from this device's loadKernels.
  virtual Status run(const Program &program,
                     const std::vector<LaunchArgs> &launches) = 0;

protected:
  /// The buffer upload() fills: written whole at once, so it need not be
  /// cleared first. createBuffer's by default.
  virtual Result<Buffer> allocateBuffer(uint32_t pageSize, uint32_t numPages);
  /// What write() and read() do.
  virtual Status writeBuffer(const Buffer &buffer, const void *data) = 0;
  virtual Status readBuffer(const Buffer &buffer, void *data) = 0;

private:
  DramTransfers transfers_;
};

/// Buffers created on a device for one operation, released together.
class ScopedBuffers {
public:
  explicit ScopedBuffers(TTDevice &device) : device_(device) {}
  ~ScopedBuffers();
  ScopedBuffers(const ScopedBuffers &) = delete;
  ScopedBuffers &operator=(const ScopedBuffers &) = delete;

  TTDevice &device() { return device_; }
  /// A new buffer, zero-filled.
  Result<Buffer> create(uint32_t pageSize, uint32_t numPages);
  /// A new buffer holding `numPages` pages of `pageSize` bytes from `data`.
  Result<Buffer> upload(const void *data, uint32_t pageSize, uint32_t numPages);

private:
  TTDevice &device_;
  std::vector<Buffer> buffers_;
};

/// Loads the program folder `dir` (and its merge program) onto `device`.
Result<Program> loadProgram(const std::string &dir, TTDevice &device);

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_TTDEVICE_H
