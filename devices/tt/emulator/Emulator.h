//===- Emulator.h - A host emulator of a Tenstorrent device --------------===//
//
// Runs TT-Metalium programs (reader / compute / writer kernels per core,
// circular buffers in L1, interleaved DRAM buffers) on the host. Kernels are
// compiled against attn's declarations of the SDK (devices/tt/sdk/include),
// whose bodies call the device layer this library implements.
//
// The device model, and the checks that make it as strict as the hardware
// where correctness depends on it (each one fails the run with a message
// naming the core, the kernel and the call):
//
//  - Tiles are 32x32 elements stored as four 16x16 faces (face 0: rows 0-15,
//    columns 0-15; face 1: rows 0-15, columns 16-31; faces 2 and 3 the same
//    for rows 16-31), each face row-major, in the circular buffer's data
//    format (Float32, Float16_b or Float16).
//  - Circular buffers block: cb_reserve_back waits for free pages,
//    cb_wait_front for pushed ones; every kernel of a core runs on its own
//    thread. When every live kernel of a core is blocked the run fails with
//    a deadlock report (kernel, buffer, operation).
//  - Unpacker and packer data formats are state, as on the device:
//    compute_kernel_hw_startup sets source A, source B and the packer from
//    three circular buffers, reconfig_data_format_srca / _srcb /
//    pack_reconfig_data_format change them, and a tile operation whose
//    source buffer's format differs from the configured one (or a pack into
//    a buffer of another format) fails: the device would misread the bytes.
//    Matmul unpacks in0 to source B and in1 to source A, and matmul_init
//    needs the kernel to have started in that order
//    (compute_kernel_hw_startup<SrcOrder::Reverse>), as tt-metal's matmul.h
//    requires: the start-up alone programs each source's tile geometry.
//  - Every FPU operation needs its own init since the last other init
//    (matmul_init, copy_tile_to_dst_init_short, add/sub/mul_init,
//    *_bcast_cols_init, *_reuse_dest_init, reduce_init);
//    every SFPU operation its own *_tile_init. reduce_init leaves packer
//    edge masks that only reduce_uninit clears; packing anything but a
//    reduction result while they are set fails.
//  - A row reduction accumulates into its destination tile in the layout
//    the device reduces in (each 16x16 face transposed), so the tile must be
//    empty (freshly acquired) or written by a copy with
//    transpose_within_16x16_face; accumulating into a tile in row layout
//    fails (it would mix layouts). The result lands in column 0.
//  - Destination registers: tile_regs_acquire / commit / wait / release in
//    that order; math only between acquire and commit, packing only between
//    wait and release; tiles read as zero after acquire; capacity 4 tiles
//    with fp32 accumulation and 8 with 16-bit (half-sync, as the SDK
//    configures compute kernels).
//  - NOC transfers are checked like the debug watcher's sanitizer: the L1
//    and the remote address must agree modulo the architecture's alignment
//    (DRAM reads 32 B on Wormhole, 64 B on Blackhole; DRAM writes and L1 16
//    B), be non-empty and lie inside the bank or the core's L1.
//  - The circular buffers of a program must fit a core's L1 above the
//    region the emulator reserves for firmware and kernel images, and a
//    kernel gets at most 341 runtime arguments.
//  - L1 starts each program filled with 0xFF bytes (NaN in f32, bf16 and
//    f16), not zeros: a card's L1 holds whatever the last program left, so
//    a kernel that computes on tile rows it never wrote must show it. The
//    arithmetic is IEEE f32, as the FPU's: NaN * 0 and NaN + -1e30 are NaN.
//
// Not modelled: TF32 source registers of the matrix unit (the emulator
// multiplies fp32 values), the SFPU's approximations (exp, log, reciprocal,
// tanh are the C library's), NOC timing, multicast, semaphores.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TT_EMULATOR_EMULATOR_H
#define ATTN_TT_EMULATOR_EMULATOR_H

#include "core/Status.h"
#include "core/TTProgram.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::tt {

constexpr uint32_t kTileRows = 32;
constexpr uint32_t kTileElements = 32 * 32;
constexpr uint32_t kNumCircularBuffers = 32;
/// Runtime arguments one kernel may get on one core (TT-Metalium's limit).
constexpr uint32_t kMaxRuntimeArgs = 341;

/// Destination tiles a compute kernel may use between tile_regs_acquire and
/// tile_regs_release (half-sync).
constexpr uint32_t dstCapacity(bool fp32DestAccEn) {
  return fp32DestAccEn ? 4 : 8;
}

/// Position of element (row, col) of a tile in face order.
constexpr uint32_t faceOffset(uint32_t row, uint32_t col) {
  return ((row / 16) * 2 + col / 16) * 256 + (row % 16) * 16 + col % 16;
}

/// An interleaved DRAM buffer: page i in bank i % banks, at address +
/// (i / banks) * alignedPageSize of that bank.
struct Buffer {
  uint32_t address = 0;
  uint32_t pageSize = 0;
  uint32_t alignedPageSize = 0;
  uint32_t numPages = 0;
};

/// The DRAM of one device.
class Device {
public:
  explicit Device(Arch arch = Arch::WormholeB0);
  Arch arch() const { return arch_; }
  uint32_t numBanks() const { return uint32_t(banks_.size()); }
  /// Allocates `numPages` pages of `pageSize` bytes, zero-filled, each page
  /// at the DRAM alignment of the architecture.
  Buffer allocate(uint32_t pageSize, uint32_t numPages);
  /// Gives back `buffer`'s space when it is the last allocated, so that
  /// buffers released in the reverse order of their allocation (those of a
  /// launch, above a cache that stays) reuse their DRAM.
  void release(const Buffer &buffer);
  /// Copies whole pages between host memory and a buffer.
  void writePage(const Buffer &buffer, uint32_t page, const void *data);
  void readPage(const Buffer &buffer, uint32_t page, void *data) const;
  /// Host pointer of `size` bytes at `address` in `bank`, or null when out of
  /// bounds.
  uint8_t *resolve(uint32_t bank, uint32_t address, uint32_t size);

private:
  Arch arch_;
  uint32_t next_;
  std::vector<std::vector<uint8_t>> banks_;
};

/// What a kernel runs: kernel_main of a loaded kernel, or any host function
/// that uses the API (tests).
using KernelEntry = std::function<void()>;

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

/// Runs `program` on `runtimeArgs.size()` cores of `device`;
/// runtimeArgs[core][kernel] are the runtime arguments of each kernel on each
/// core. Up to `parallelCores` cores run at a time (0: the host's thread
/// count); cores do not communicate, so the result does not depend on it.
/// Fails with the first core's error.
Status runProgram(Device &device, const ProgramSpec &program,
                  const std::vector<std::vector<std::vector<uint32_t>>>
                      &runtimeArgs,
                  unsigned parallelCores = 0);

} // namespace attn::tt

#endif // ATTN_TT_EMULATOR_EMULATOR_H
