//===- attn_tt_api.h - The emulated TT-Metalium kernel API ---------------===//
//
// The subset of TT-Metalium's kernel API that attn's emitted kernels use,
// declared for the host emulator (runtime/executors/tt). Kernels include the
// usual TT-Metalium headers (dataflow_api.h, compute_kernel_api/...), which in
// this folder all lead here. Everything is implemented in
// libAttnTTEmulator.so; the kernel shared objects the emulator compiles
// resolve these symbols against it when they are loaded.
//
// This header is not a kernel: it is the emulated device's API surface.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TT_API_H
#define ATTN_TT_API_H

#include <cstdint>

#define tt_l1_ptr
#define ALWI inline __attribute__((always_inline))

// Compile-time arguments are baked in when the kernel is compiled, as
// TT-Metalium's JIT build does: -DKERNEL_COMPILE_TIME_ARGS=a,b,c.
#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS 0
#endif
constexpr uint32_t kernel_compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#define get_compile_time_arg_val(i) (kernel_compile_time_args[(i)])

//===----------------------------------------------------------------------===//
// Shared by every RISC: arguments and circular buffers
//===----------------------------------------------------------------------===//

uint32_t attn_tt_get_arg(uint32_t index);

template <typename T> ALWI T get_arg_val(int index) {
  return static_cast<T>(attn_tt_get_arg(static_cast<uint32_t>(index)));
}

void cb_reserve_back(int32_t cb, int32_t numTiles);
void cb_push_back(int32_t cb, int32_t numTiles);
void cb_wait_front(int32_t cb, int32_t numTiles);
void cb_pop_front(int32_t cb, int32_t numTiles);
uint32_t get_write_ptr(uint32_t cb);
uint32_t get_read_ptr(uint32_t cb);

//===----------------------------------------------------------------------===//
// Dataflow (BRISC / NCRISC)
//===----------------------------------------------------------------------===//

/// Interleaved buffer: page i lives in bank i % num_banks.
template <bool DRAM> struct InterleavedAddrGen {
  uint32_t bank_base_address;
  uint32_t page_size;
};

uint64_t attn_tt_interleaved_noc_addr(bool dram, uint32_t bankBase,
                                      uint32_t pageSize, uint32_t pageId,
                                      uint32_t offset);

template <bool DRAM>
ALWI uint64_t get_noc_addr(uint32_t id, const InterleavedAddrGen<DRAM> &s,
                           uint32_t offset = 0) {
  return attn_tt_interleaved_noc_addr(DRAM, s.bank_base_address, s.page_size,
                                      id, offset);
}

void noc_async_read(uint64_t srcNocAddr, uint32_t dstLocalL1Addr,
                    uint32_t size);
void noc_async_write(uint32_t srcLocalL1Addr, uint64_t dstNocAddr,
                     uint32_t size);
void noc_async_read_barrier();
void noc_async_write_barrier();

template <bool DRAM>
ALWI void noc_async_read_page(uint32_t id, const InterleavedAddrGen<DRAM> &s,
                              uint32_t dstLocalL1Addr, uint32_t offset = 0) {
  noc_async_read(get_noc_addr(id, s, offset), dstLocalL1Addr,
                 s.page_size - offset);
}

//===----------------------------------------------------------------------===//
// Compute (TRISCs, emulated as one thread)
//===----------------------------------------------------------------------===//

enum class PoolType { SUM, AVG, MAX };
enum class ReduceDim { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class EltwiseBinaryType { ELWMUL, ELWDIV, ELWADD, ELWSUB };
enum class EltwiseBinaryReuseDestType { NONE, DEST_TO_SRCA, DEST_TO_SRCB };
enum class BroadcastType { NONE, ROW, COL, SCALAR };

void tile_regs_acquire();
void tile_regs_commit();
void tile_regs_wait();
void tile_regs_release();

// Hardware (re)configuration: no state to set up in the emulator, but the
// calls are kept so kernels have their device form.
ALWI void mm_init(uint32_t, uint32_t, uint32_t, uint32_t = 0) {}
ALWI void mm_init_short(uint32_t, uint32_t, uint32_t = 0) {}
ALWI void binary_op_init_common(uint32_t, uint32_t, uint32_t) {}
ALWI void copy_tile_to_dst_init_short(uint32_t, uint32_t = 0) {}
ALWI void copy_tile_init(uint32_t) {}
ALWI void add_tiles_init(uint32_t, uint32_t) {}
ALWI void sub_tiles_init(uint32_t, uint32_t) {}
ALWI void mul_tiles_init(uint32_t, uint32_t) {}
ALWI void add_bcast_cols_init_short(uint32_t, uint32_t) {}
ALWI void sub_bcast_cols_init_short(uint32_t, uint32_t) {}
ALWI void mul_bcast_cols_init_short(uint32_t, uint32_t) {}
ALWI void exp_tile_init() {}
ALWI void recip_tile_init() {}
ALWI void log_tile_init() {}
ALWI void tanh_tile_init() {}
ALWI void binop_with_scalar_tile_init() {}
ALWI void max_tile_init() {}
ALWI void pack_reconfig_data_format(uint32_t) {}
ALWI void reconfig_data_format(uint32_t, uint32_t) {}
template <PoolType P, ReduceDim D>
ALWI void reduce_init(uint32_t, uint32_t, uint32_t) {}
ALWI void reduce_uninit() {}
template <EltwiseBinaryType T, EltwiseBinaryReuseDestType R>
ALWI void binary_dest_reuse_tiles_init(uint32_t) {}

/// dst[idst] += in0[i0] x in1[i1] (in1 transposed when `transpose`).
void matmul_tiles(uint32_t in0Cb, uint32_t in1Cb, uint32_t in0Tile,
                  uint32_t in1Tile, uint32_t idst, uint32_t transpose);
void copy_tile(uint32_t cb, uint32_t tile, uint32_t idst);

void attn_tt_binary(EltwiseBinaryType type, BroadcastType bcast, uint32_t cb0,
                    uint32_t cb1, uint32_t tile0, uint32_t tile1,
                    uint32_t idst);
ALWI void add_tiles(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb,
                    uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWADD, BroadcastType::NONE, a, b, ta, tb,
                 d);
}
ALWI void sub_tiles(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb,
                    uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWSUB, BroadcastType::NONE, a, b, ta, tb,
                 d);
}
ALWI void mul_tiles(uint32_t a, uint32_t b, uint32_t ta, uint32_t tb,
                    uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWMUL, BroadcastType::NONE, a, b, ta, tb,
                 d);
}
ALWI void add_tiles_bcast_cols(uint32_t a, uint32_t b, uint32_t ta,
                               uint32_t tb, uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWADD, BroadcastType::COL, a, b, ta, tb,
                 d);
}
ALWI void sub_tiles_bcast_cols(uint32_t a, uint32_t b, uint32_t ta,
                               uint32_t tb, uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWSUB, BroadcastType::COL, a, b, ta, tb,
                 d);
}
ALWI void mul_tiles_bcast_cols(uint32_t a, uint32_t b, uint32_t ta,
                               uint32_t tb, uint32_t d) {
  attn_tt_binary(EltwiseBinaryType::ELWMUL, BroadcastType::COL, a, b, ta, tb,
                 d);
}

void attn_tt_binary_dest_reuse(EltwiseBinaryType type,
                               EltwiseBinaryReuseDestType reuse, uint32_t cb,
                               uint32_t tile, uint32_t idst);
template <EltwiseBinaryType T, EltwiseBinaryReuseDestType R>
ALWI void binary_dest_reuse_tiles(uint32_t cb, uint32_t tile, uint32_t idst) {
  attn_tt_binary_dest_reuse(T, R, cb, tile, idst);
}

void attn_tt_reduce(PoolType pool, ReduceDim dim, uint32_t cb,
                    uint32_t scalerCb, uint32_t tile, uint32_t scalerTile,
                    uint32_t idst);
template <PoolType P, ReduceDim D>
ALWI void reduce_tile(uint32_t cb, uint32_t scalerCb, uint32_t tile,
                      uint32_t scalerTile, uint32_t idst) {
  attn_tt_reduce(P, D, cb, scalerCb, tile, scalerTile, idst);
}

// SFPU ops on a destination tile.
void exp_tile(uint32_t idst);
void recip_tile(uint32_t idst);
void log_tile(uint32_t idst);
void tanh_tile(uint32_t idst);
/// dst[idst] *= bit_cast<float>(param).
void mul_unary_tile(uint32_t idst, uint32_t param);
/// dst[idst0] = max(dst[idst0], dst[idst1]).
void max_tile(uint32_t idst0, uint32_t idst1);

void attn_tt_pack_tile(uint32_t idst, uint32_t cb, bool outOfOrder,
                       uint32_t tileIndex);
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t idst, uint32_t cb, uint32_t tileIndex = 0) {
  attn_tt_pack_tile(idst, cb, out_of_order_output, tileIndex);
}

#endif // ATTN_TT_API_H
