//===- internal/attn_tt_device.h - What attn's SDK declarations call -----===//
//
// Not an SDK header. In TT-Metalium the kernel API is inline code over the
// low-level kernels (LLK) and the firmware's mailboxes; in attn's
// declarations of that API (this folder, pinned to the tt-metal commit
// below) the same functions forward to the device layer declared here. The
// host emulator (devices/tt/emulator) implements it; a syntax check of emitted
// kernels only needs the declarations. The compute side of this layer is internal/attn_tt_llk.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TT_SDK_INTERNAL_DEVICE_H
#define ATTN_TT_SDK_INTERNAL_DEVICE_H

#include <cstdint>

/// The tt-metal commit these declarations follow (main of 2026-08-20, the one
/// tt-mlir 19c86fca45 builds against).
#define ATTN_TT_METAL_COMMIT "d5f9bc4a43b1287523458f1af6a470c6b2adc180"

#ifndef FORCE_INLINE
#define FORCE_INLINE inline __attribute__((always_inline))
#endif
#define tt_l1_ptr
#define tt_reg_ptr

namespace attn_tt_device {

// Arguments and circular buffers (every RISC).
uint32_t runtime_arg(int index);
uint32_t common_runtime_arg(int index);
void cb_reserve_back(int32_t cb, int32_t pages);
void cb_push_back(int32_t cb, int32_t pages);
void cb_wait_front(int32_t cb, int32_t pages);
void cb_pop_front(int32_t cb, int32_t pages);
uint32_t cb_write_ptr(uint32_t cb);
uint32_t cb_read_ptr(uint32_t cb);

// NOC (data movement RISCs).
uint64_t dram_bank_noc_addr(uint32_t bank, uint32_t offset, uint8_t noc);
uint64_t local_noc_addr(uint32_t l1Addr, uint8_t noc);
uint64_t interleaved_noc_addr(bool dram, uint32_t base, uint32_t pageSize,
                              uint32_t page, uint32_t offset, uint8_t noc);
uint32_t allocator_alignment(bool dram);
void noc_read(uint64_t src, uint32_t dstL1, uint32_t size, uint8_t noc);
void noc_write(uint32_t srcL1, uint64_t dst, uint32_t size, uint8_t noc);
void noc_read_barrier(uint8_t noc);
void noc_write_barrier(uint8_t noc);

} // namespace attn_tt_device

#endif // ATTN_TT_SDK_INTERNAL_DEVICE_H
