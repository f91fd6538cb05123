//===- ComputeBuilder.h - TT compute kernels that keep the hardware state -*- C++ -*-===//
//
// Compute kernels on TT hardware run against state the kernel must keep
// right: the data formats the two unpackers (source A and B) and the packer
// are configured for, the last FPU init (which programs the unpackers and
// the math engine for one operation), the last SFPU init, and the packer
// edge masks reduce_init leaves. ComputeBuilder emits each tile operation
// with whatever reconfig_data_format_* / pack_reconfig_data_format / *_init /
// reduce_uninit it needs first, as hand-written TT kernels do, from a model
// of that state it tracks while building. Across a loop or branch boundary
// the state is unknown, so the first operation inside (and after) one
// configures everything it uses.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_COMPUTEBUILDER_H
#define ATTN_LOWERING_ATTNTOTT_COMPUTEBUILDER_H

#include "lowering/AttnToTT/KernelBuilder.h"
#include "lowering/AttnToTT/ProgramDescription.h"

#include <optional>

namespace mlir::attn::tt {

class ComputeBuilder {
public:
  ComputeBuilder(KernelBuilder &kb, const ProgramDescriptionBuilder &program)
      : kb(kb), program(program) {}

  KernelBuilder &base() { return kb; }

  /// compute_kernel_hw_startup<order>(in0, in1, out): the first call of the
  /// kernel. A kernel that multiplies starts in matmul's order
  /// (SrcOrder::Reverse), as tt-metal's matmul.h requires of matmul_init.
  void hwStartup(SrcOrder order, int64_t in0, int64_t in1, int64_t out);

  void acquire() { kb.call<TTFn::TileRegsAcquire>(); }
  void commit() { kb.call<TTFn::TileRegsCommit>(); }
  void wait() { kb.call<TTFn::TileRegsWait>(); }
  void release() { kb.call<TTFn::TileRegsRelease>(); }
  /// One DST section computing tile 0 with `math`, then packed into one new
  /// page of each buffer of `outs`.
  void section(ArrayRef<int64_t> outs, llvm::function_ref<void()> math);
  /// `count` DST sections, the i-th computing tile 0 with `math(i)` and
  /// packing it as page i of `count` pages reserved and then pushed in `out`.
  void sections(Value count, int64_t out,
                llvm::function_ref<void(Value)> math);

  //===--- FPU operations (tile of a buffer into DST) ----------------------===//
  /// DST[dst] = cb[tile], each 16x16 face transposed when `transposeFaces`.
  void copy(int64_t cb, Value tile, Value dst, bool transposeFaces = false);
  /// matmul_init(in0, in1, transposeIn1) with the source formats it needs,
  /// unless it is the last FPU init.
  void matmulInit(int64_t in0, int64_t in1, bool transposeIn1);
  /// DST[dst] += in0[t0] x in1[t1] (in1 transposed when `transposeIn1`).
  void matmul(int64_t in0, int64_t in1, Value t0, Value t1, Value dst,
              bool transposeIn1);
  /// DST[dst] = cb0[t0] op cb1[t1].
  void binary(BinaryOp op, int64_t cb0, int64_t cb1, Value t0, Value t1,
              Value dst);
  /// DST[dst] = cb0[t0] op column 0 of cb1[t1], broadcast over each row.
  void binaryBcastCols(BinaryOp op, int64_t cb0, int64_t cb1, Value t0,
                       Value t1, Value dst);
  /// DST[dst] = DST[dst] op cb[tile] (ToSrcA) or cb[tile] op DST[dst].
  void destReuse(BinaryOp op, ReuseDest reuse, int64_t cb, Value tile,
                 Value dst);
  /// Accumulates the reduction of cb[tile] (scaled by scaler[0]) into
  /// DST[dst]; `out` is the buffer the result is packed to.
  void reduce(PoolType pool, ReduceDim dim, int64_t cb, int64_t scaler,
              Value tile, Value dst, int64_t out);

  //===--- SFPU operations (on DST) -----------------------------------------===//
  void exp(Value dst) { sfpu(TTFn::ExpTileInit, TTFn::ExpTile, dst); }
  void recip(Value dst) { sfpu(TTFn::RecipTileInit, TTFn::RecipTile, dst); }
  void log(Value dst) { sfpu(TTFn::LogTileInit, TTFn::LogTile, dst); }
  void tanh(Value dst) { sfpu(TTFn::TanhTileInit, TTFn::TanhTile, dst); }
  /// DST[dst] *= bit_cast<float>(bits).
  void mulScalar(Value dst, Value bits);
  /// DST[out] = max(DST[a], DST[b]).
  void binaryMax(Value a, Value b, Value out);

  /// Packs DST[dst] into the next reserved page of `cb`.
  void pack(Value dst, int64_t cb);

  //===--- Control that forgets the tracked state ---------------------------===//
  void forLoop(Value lb, Value ub, llvm::function_ref<void(Value)> body);
  void forLoop(int64_t lb, Value ub, llvm::function_ref<void(Value)> body) {
    forLoop(kb.c(lb), ub, body);
  }
  void ifThen(Value cond, llvm::function_ref<void()> body);

private:
  /// The last FPU init: its function and operands.
  struct FpuInit {
    TTFn fn;
    int64_t a, b, extra;
    bool operator==(const FpuInit &o) const {
      return fn == o.fn && a == o.a && b == o.b && extra == o.extra;
    }
  };

  void forget();
  void srcA(int64_t cb);
  void srcB(int64_t cb);
  /// Emits `init` unless it is the last FPU init; `emitInit` emits it.
  void fpuInit(const FpuInit &init, llvm::function_ref<void()> emitInit);
  void sfpu(TTFn init, TTFn op, Value dst);

  KernelBuilder &kb;
  const ProgramDescriptionBuilder &program;
  std::optional<TTDataFormat> srcAFormat, srcBFormat, packFormat;
  std::optional<FpuInit> lastFpu;
  std::optional<TTFn> lastSfpu;
  /// Whether reduce_init's packer edge masks may be set (nullopt: unknown).
  std::optional<bool> reduceMasks = false;
};

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_COMPUTEBUILDER_H
