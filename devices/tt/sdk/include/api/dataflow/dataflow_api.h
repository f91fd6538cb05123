//===- api/dataflow/dataflow_api.h ------------------------------------------===//
//
// attn's declaration of this TT-Metalium header (tt-metal d5f9bc4a43).
// The subset of TT-Metalium's data movement kernel API that attn's kernels
// and the emulator's tests use, with the SDK's names, parameter lists,
// default arguments, template parameters and const members (see
// devices/tt/sdk/README.md for where each was read). Bodies forward to
// internal/attn_tt_device.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "api/compile_time_args.h"
#include "internal/attn_tt_device.h"

#if defined(ARCH_BLACKHOLE)
#define NOC_MAX_BURST_SIZE 16384
#else
#define NOC_MAX_BURST_SIZE 8192
#endif
#define NOC_UNICAST_WRITE_VC 1

/// The NOC this RISC issues on by default: a constant of the kernel's build
/// (the host defines NOC_INDEX per kernel), a variable of the firmware's.
#if defined(KERNEL_BUILD)
constexpr uint8_t noc_index = NOC_INDEX;
#else
extern uint8_t noc_index;
#endif

//===--- Runtime arguments -------------------------------------------------===//

template <typename T> FORCE_INLINE T get_arg_val(int arg_idx) {
  static_assert("Error: only 4B args are supported" && sizeof(T) == 4);
  uint32_t bits = attn_tt_device::runtime_arg(arg_idx);
  return *reinterpret_cast<T *>(&bits);
}

template <typename T> FORCE_INLINE T get_common_arg_val(int arg_idx) {
  static_assert("Error: only 4B args are supported" && sizeof(T) == 4);
  uint32_t bits = attn_tt_device::common_runtime_arg(arg_idx);
  return *reinterpret_cast<T *>(&bits);
}

//===--- Circular buffers --------------------------------------------------===//

FORCE_INLINE void cb_push_back(const int32_t operand, const int32_t num_pages) {
  attn_tt_device::cb_push_back(operand, num_pages);
}
FORCE_INLINE void cb_pop_front(int32_t operand, int32_t num_pages) {
  attn_tt_device::cb_pop_front(operand, num_pages);
}
FORCE_INLINE void cb_reserve_back(int32_t operand, int32_t num_pages) {
  attn_tt_device::cb_reserve_back(operand, num_pages);
}
FORCE_INLINE void cb_wait_front(int32_t operand, int32_t num_pages) {
  attn_tt_device::cb_wait_front(operand, num_pages);
}
FORCE_INLINE uint32_t get_write_ptr(uint32_t operand) {
  return attn_tt_device::cb_write_ptr(operand);
}
FORCE_INLINE uint32_t get_read_ptr(uint32_t operand) {
  return attn_tt_device::cb_read_ptr(operand);
}

//===--- NOC addresses -----------------------------------------------------===//

/// The NOC address of `bank_address_offset` in DRAM (or L1) bank `bank_id`;
/// the bank's own offset is added, as the firmware's tables do.
template <bool DRAM>
inline uint64_t get_noc_addr_from_bank_id(uint32_t bank_id,
                                          uint32_t bank_address_offset,
                                          uint8_t noc = noc_index) {
  static_assert(DRAM, "attn's declarations model DRAM banks only");
  return attn_tt_device::dram_bank_noc_addr(bank_id, bank_address_offset, noc);
}

/// The NOC address of `addr` in this core's L1.
FORCE_INLINE std::uint64_t get_noc_addr(std::uint32_t addr,
                                        uint8_t noc = noc_index) {
  return attn_tt_device::local_noc_addr(addr, noc);
}

namespace interleaved_addr_gen {
template <bool DRAM> FORCE_INLINE constexpr uint32_t get_allocator_alignment() {
#if defined(ARCH_BLACKHOLE)
  return DRAM ? 64 : 16;
#else
  return DRAM ? 32 : 16;
#endif
}
} // namespace interleaved_addr_gen

FORCE_INLINE constexpr uint32_t align_power_of_2(uint32_t addr,
                                                 uint32_t alignment) {
  return (addr + alignment - 1) & ~(alignment - 1);
}

/// Pages of an interleaved buffer: page i in bank i % banks. page_size is
/// const, so the struct is aggregate-initialised ({base, page_size}).
template <bool DRAM> struct InterleavedAddrGen {
  static constexpr bool is_dram = DRAM;
  uint32_t bank_base_address;
  const uint32_t page_size;
  const uint32_t aligned_page_size = align_power_of_2(
      page_size, interleaved_addr_gen::get_allocator_alignment<DRAM>());

  FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id,
                                          const uintptr_t offset = 0,
                                          uint8_t noc = noc_index) const {
    return attn_tt_device::interleaved_noc_addr(
        DRAM, bank_base_address, aligned_page_size, id, uint32_t(offset), noc);
  }
};

/// Any address generator: the last parameter only removes this overload
/// where `addrgen.get_noc_addr()` is ill-formed, as in the SDK.
template <typename AddrGen>
FORCE_INLINE uint64_t
get_noc_addr(const uint32_t id, const AddrGen &addrgen, uint32_t offset = 0,
             uint8_t noc = noc_index,
             decltype(addrgen.get_noc_addr()) *resolver = nullptr) {
  return addrgen.get_noc_addr(id, offset, noc);
}

template <bool DRAM>
FORCE_INLINE std::uint64_t get_noc_addr(const uint32_t id,
                                        const InterleavedAddrGen<DRAM> &s,
                                        uint32_t offset = 0,
                                        uint8_t noc = noc_index) {
  return s.get_noc_addr(id, offset, noc);
}

//===--- NOC transfers -----------------------------------------------------===//

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
          bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr,
                           uint32_t size, uint8_t noc = noc_index,
                           uint32_t read_req_vc = NOC_UNICAST_WRITE_VC) {
  attn_tt_device::noc_read(src_noc_addr, dst_local_l1_addr, size, noc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1,
          bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr,
                            uint32_t size, uint8_t noc = noc_index,
                            uint32_t vc = NOC_UNICAST_WRITE_VC) {
  attn_tt_device::noc_write(src_local_l1_addr, dst_noc_addr, size, noc);
}

FORCE_INLINE void noc_async_read_barrier(uint8_t noc = noc_index) {
  attn_tt_device::noc_read_barrier(noc);
}

FORCE_INLINE void noc_async_write_barrier(uint8_t noc = noc_index) {
  attn_tt_device::noc_write_barrier(noc);
}
