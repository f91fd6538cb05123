//===- internal/attn_tt_llk.h - The compute side of attn's device layer --===//
//
// Not an SDK header. It stands in for the low-level kernel (LLK) headers the
// compute API includes: in the SDK those declare the enumerations below in
// namespace ckernel, scoped (tt_llk_*/llk_lib/llk_defs.h), so a kernel
// names `EltwiseBinaryType::ELWADD`, never a bare `ELWADD`; they bring that
// namespace into the global one, which is why compute kernels call the API
// unqualified. The functions of namespace
// attn_tt_device are what attn's compute declarations forward to; the host
// emulator implements them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TT_SDK_INTERNAL_LLK_H
#define ATTN_TT_SDK_INTERNAL_LLK_H

#include "internal/attn_tt_device.h"

#define ALWI inline __attribute__((always_inline))

namespace ckernel {

enum class VectorMode : std::uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum class ReduceDim : std::uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class PoolType : std::uint8_t { SUM, AVG, MAX, MIN };
enum class EltwiseBinaryType : std::uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWLESS };
enum class EltwiseBinaryReuseDestType { NONE = 0, DEST_TO_SRCA = 1, DEST_TO_SRCB = 2 };
enum class BroadcastType : std::uint8_t { NONE = 0x0, COL = 0x1, ROW = 0x2, SCALAR = 0x3 };

/// The SFPU's registers and constants (the LLK's ckernel_instr_params.h);
/// the subset attn's declarations use.
struct p_sfpu {
  constexpr static uint32_t LREG0 = 0, LREG1 = 1, LREG2 = 2, LREG3 = 3,
                            LREG4 = 4, LREG5 = 5, LREG6 = 6, LREG7 = 7;
  constexpr static uint32_t LCONST_0_8373 = 8, LCONST_0 = 9, LCONST_1 = 10;
  constexpr static uint32_t kCONST_1_FP16B = 0x3F80, kCONST_1_FP16A = 0x3C00,
                            kCONST_0 = 0x0000;
};

} // namespace ckernel

namespace attn_tt_device {

/// Scalar operations of the SFPU on destination tiles.
enum class Sfpu : uint8_t { Exp, Recip, Log, Tanh, BinopWithScalar, BinaryMax };
/// The scalar operation of add/sub/mul/div_unary_tile.
enum class ScalarOp : uint8_t { Add, Sub, Mul, Div };

// Compute (the three TRISCs).
/// The start-up with source A from cb `srcA` and B from cb `srcB`;
/// `matmulOrder` when the kernel asked for SrcOrder::Reverse.
void hw_startup(uint32_t srcA, uint32_t srcB, uint32_t ocb, bool matmulOrder);
void reconfig_srca(uint32_t cb);
void reconfig_srcb(uint32_t cb);
void reconfig_pack(uint32_t cb);
void regs_acquire();
void regs_commit();
void regs_wait();
void regs_release();
void regs_acquire_dst();
void regs_release_dst();
void copy_init(uint32_t cb, uint32_t transpose, uint32_t transposeWithinFace);
void copy_tile(uint32_t cb, uint32_t tile, uint32_t idst);
void matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose);
void matmul_tiles(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1,
                  uint32_t idst);
void binary_init(ckernel::EltwiseBinaryType type,
                 ckernel::BroadcastType bcast, uint32_t icb0, uint32_t icb1);
void binary_tiles(ckernel::EltwiseBinaryType type,
                  ckernel::BroadcastType bcast, uint32_t icb0, uint32_t icb1,
                  uint32_t t0, uint32_t t1, uint32_t idst);
void dest_reuse_init(ckernel::EltwiseBinaryType type,
                     ckernel::EltwiseBinaryReuseDestType reuse, uint32_t icb);
void dest_reuse_tiles(ckernel::EltwiseBinaryType type,
                      ckernel::EltwiseBinaryReuseDestType reuse, uint32_t icb,
                      uint32_t tile, uint32_t idst);
void reduce_init(ckernel::PoolType pool, ckernel::ReduceDim dim, uint32_t icb,
                 uint32_t scaler, uint32_t ocb);
void reduce_tile(ckernel::PoolType pool, ckernel::ReduceDim dim, uint32_t icb,
                 uint32_t scaler, uint32_t tile, uint32_t scalerTile,
                 uint32_t idst);
void reduce_uninit();
void sfpu_init(Sfpu op);
void sfpu_unary(Sfpu op, uint32_t idst);
void sfpu_scalar(ScalarOp op, uint32_t idst, uint32_t bits);
void sfpu_binary_max(uint32_t idst0, uint32_t idst1, uint32_t odst);
void pack_tile(uint32_t idst, uint32_t cb, bool outOfOrder, uint32_t index);

} // namespace attn_tt_device

using namespace ckernel;

#endif // ATTN_TT_SDK_INTERNAL_LLK_H
