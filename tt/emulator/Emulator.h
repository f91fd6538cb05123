//===- Emulator.h - A host emulator of a Tenstorrent device --------------===//
//
// Runs TT-Metalium programs (reader / compute / writer kernels per core,
// circular buffers in L1, interleaved DRAM buffers) on the host, with the
// semantics of the kernel API subset in include/attn_tt_api.h:
//
//  - Tiles are 32x32 elements stored as four 16x16 faces (face 0: rows 0-15,
//    columns 0-15; face 1: rows 0-15, columns 16-31; faces 2 and 3 the same
//    for rows 16-31), each face row-major, in the circular buffer's data
//    format (Float32 or Float16_b).
//  - Circular buffers block: cb_reserve_back waits for free pages,
//    cb_wait_front for pushed ones; every kernel of a core runs on its own
//    thread, so producers and consumers really interleave.
//  - Compute works on 16 destination tiles held in fp32; unpacking reads the
//    buffer's format exactly; packing rounds to the buffer's format (nearest
//    even for Float16_b). With fp32_dest_acc_en off, every result written to
//    the destination is rounded to bf16 first, as a 16-bit destination does.
//    Destination registers read as zero after tile_regs_acquire.
//  - DRAM is NUM_DRAM_BANKS banks; page i of an interleaved buffer lives in
//    bank i % NUM_DRAM_BANKS at base + (i / NUM_DRAM_BANKS) * aligned page.
//  - NOC transfers complete immediately; barriers only check ordering.
//
// Deadlocks are detected, not waited out: when every live thread of a core is
// blocked on a circular buffer, the run fails with a message naming each
// blocked kernel, its buffer and operation.
//
// Not modelled: TF32 source registers of the matrix unit (the emulator
// multiplies fp32 values), the SFPU's approximations (exp, log, reciprocal and
// tanh are the C library's), NOC timing and multicast.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_EMULATOR_H
#define ATTN_RUNTIME_EXECUTORS_TT_EMULATOR_H

#include "reference/ops/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::tt {

constexpr uint32_t kTileRows = 32;
constexpr uint32_t kTileElements = 32 * 32;
constexpr uint32_t kNumDramBanks = 12;
constexpr uint32_t kNumCircularBuffers = 32;
/// Bytes of L1 per core (Wormhole).
constexpr uint32_t kL1Size = 1464 * 1024;
/// Page alignment of interleaved DRAM buffers.
constexpr uint32_t kDramAlignment = 32;

enum class DataFormat { Float32, Float16_b };

/// Bytes per element of a data format.
uint32_t elementSize(DataFormat format);
/// "Float32" / "Float16_b", TT-Metalium's spelling.
Result<DataFormat> parseDataFormat(const std::string &name);

/// Position of element (row, col) of a tile in face order.
constexpr uint32_t faceOffset(uint32_t row, uint32_t col) {
  return ((row / 16) * 2 + col / 16) * 256 + (row % 16) * 16 + col % 16;
}

/// An interleaved DRAM buffer.
struct Buffer {
  uint32_t address = 0;
  uint32_t pageSize = 0;
  uint32_t numPages = 0;
};

/// The DRAM of one device: banks that interleaved buffers stripe over.
class Device {
public:
  Device();
  /// Allocates `numPages` pages of `pageSize` bytes, zero-filled.
  Buffer allocate(uint32_t pageSize, uint32_t numPages);
  /// Copies whole pages between host memory and a buffer.
  void writePage(const Buffer &buffer, uint32_t page, const void *data);
  void readPage(const Buffer &buffer, uint32_t page, void *data) const;
  /// Host pointer of `size` bytes at `address` in `bank`, or null when out of
  /// bounds.
  uint8_t *resolve(uint32_t bank, uint32_t address, uint32_t size);

private:
  uint32_t next_;
  std::vector<std::vector<uint8_t>> banks_;
};

enum class KernelKind { Reader, Writer, Compute };
/// "reader" / "writer" / "compute".
const char *toString(KernelKind kind);

/// What a kernel runs: kernel_main of a loaded kernel, or any host function
/// that uses the API (tests).
using KernelEntry = std::function<void()>;

struct CircularBufferSpec {
  uint32_t id = 0;
  uint32_t numPages = 0;
  uint32_t pageSize = 0;
  DataFormat format = DataFormat::Float16_b;
};

struct KernelSpec {
  std::string name;
  KernelKind kind = KernelKind::Reader;
  KernelEntry entry;
  /// Compute only: fp32 destination registers.
  bool fp32DestAccEn = true;
};

struct ProgramSpec {
  std::vector<CircularBufferSpec> circularBuffers;
  std::vector<KernelSpec> kernels;
};

/// Runs `program` on `runtimeArgs.size()` cores; runtimeArgs[core][kernel] are
/// the runtime arguments of each kernel on each core. Up to `parallelCores`
/// cores run at a time (0: the host's thread count); cores do not
/// communicate, so the result does not depend on it. Fails with the first
/// core's error (a deadlock, an out-of-bounds access, a bad buffer id).
Status runProgram(Device &device, const ProgramSpec &program,
                  const std::vector<std::vector<std::vector<uint32_t>>>
                      &runtimeArgs,
                  unsigned parallelCores = 0);

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_EMULATOR_H
