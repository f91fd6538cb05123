//===- AttnToTTKernel.cpp - attn ops to TT-Metalium kernels --------------===//
//
// Each attn op becomes a program: a nested module carrying the host
// description (`ttk.program`) and one function per kernel. See Passes.td for
// the structure and runtime/executors/tt/AttentionOps.h for the data layouts
// the kernels read.
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/Passes.h"

#include "dialect/AttnOps.h"
#include "lowering/AttnToTT/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

#include "mlir/Pass/Pass.h"

namespace mlir::attn {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_CONVERTATTNTOTTKERNEL
#define GEN_PASS_REGISTRATION
#include "lowering/AttnToTT/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::tt;
using arith::CmpIPredicate;

namespace {

//===----------------------------------------------------------------------===//
// Circular buffers (ids as TT-Metalium's CBIndex: inputs from 0, outputs from
// 16, intermediates from 24)
//===----------------------------------------------------------------------===//

enum Cb : int64_t {
  kCbQ = 0,
  kCbK = 1,
  kCbV = 2,
  kCbMask = 3,
  kCbInit = 4,
  kCbScaler = 5,
  kCbScratch = 6,
  kCbOut = 16,
  kCbLse = 17,
  kCbS = 24,
  kCbM = 25,
  kCbL = 26,
  kCbAlpha = 27,
  kCbP = 28,
  kCbAcc = 29,
  kCbPSum = 30,
};

// reshape_and_cache
enum RcCb : int64_t { kCbSlot = 0, kCbRows = 1 };

/// -1e30 as f32: the mask value of invisible keys and the starting running
/// max. Finite, so a row whose first key tile is fully masked gets a finite
/// (bogus) state that the first visible key rescales by exp(-1e30 - m) = 0.
constexpr float kNegBig = -1e30f;

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The static description of an attention op the kernels are built for.
struct AttentionConfig {
  std::string op;
  int64_t numHeads, numKvHeads, headSize, valueSize, blockSize, kvParts;
  bool isF32;
  bool causal;
  int64_t windowLeft, windowRight;
  double softCap;
  bool sinks;
  double scale;
  int64_t kvLoraRank = 0;

  int64_t esz() const { return isF32 ? 4 : 2; }
  int64_t tileBytes() const { return 1024 * esz(); }
  int64_t dkTiles() const { return headSize / 32; }
  int64_t dvTiles() const { return valueSize / 32; }
  StringRef format() const { return isF32 ? "Float32" : "Float16_b"; }
};

// Compile-time argument slots of the attention kernels.
enum AttnCt : int64_t {
  kCtDkTiles,
  kCtDvTiles,
  kCtBlockSize,
  kCtHeads,
  kCtKvHeads,
  kCtHeadsPerGroup,
  kCtElemSize,
  kCtScaleBits,
  kCtNegBigBits,
  kCtOneBits,
  kCtWindowLeft,
  kCtWindowRight,
  kCtCapBits,
  kCtInvCapBits,
  kCtBlocksPerTile,
  kCtTilesPerBlock,
  kCtRowsPerRead,
  kCtKvParts,
  kCtTileBytes,
  kNumAttnCt
};

SmallVector<int64_t> attentionCompileTimeArgs(const AttentionConfig &c) {
  SmallVector<int64_t> v(kNumAttnCt, 0);
  v[kCtDkTiles] = c.dkTiles();
  v[kCtDvTiles] = c.dvTiles();
  v[kCtBlockSize] = c.blockSize;
  v[kCtHeads] = c.numHeads;
  v[kCtKvHeads] = c.numKvHeads;
  v[kCtHeadsPerGroup] = c.numHeads / c.numKvHeads;
  v[kCtElemSize] = c.esz();
  v[kCtScaleBits] = floatBits(float(c.scale));
  v[kCtNegBigBits] = floatBits(kNegBig);
  v[kCtOneBits] = floatBits(1.0f);
  v[kCtWindowLeft] = uint32_t(int32_t(c.windowLeft));
  v[kCtWindowRight] = uint32_t(int32_t(c.windowRight));
  v[kCtCapBits] = c.softCap > 0 ? floatBits(float(c.softCap)) : 0;
  v[kCtInvCapBits] = c.softCap > 0 ? floatBits(float(1.0 / c.softCap)) : 0;
  v[kCtBlocksPerTile] = std::max<int64_t>(1, 32 / c.blockSize);
  v[kCtTilesPerBlock] = std::max<int64_t>(1, c.blockSize / 32);
  v[kCtRowsPerRead] = std::min<int64_t>(32, c.blockSize);
  v[kCtKvParts] = c.kvParts;
  v[kCtTileBytes] = c.tileBytes();
  return v;
}

// Runtime arguments of the attention kernels: named leading arguments, then
// the core's work units.
const char *const kAttnRuntimeArgs[] = {"q_addr",   "kv_addr",    "bt_addr",
                                        "out_addr", "lse_addr",   "sinks_addr",
                                        "bt_cols",  "num_units"};
const char *const kAttnUnitArgs[] = {"req",     "kv_head", "row_begin",
                                     "num_rows", "q_start", "context",
                                     "seq_len", "kt_begin", "kt_end"};
enum AttnRt : int64_t {
  kRtQ,
  kRtKv,
  kRtBt,
  kRtOut,
  kRtLse,
  kRtSinks,
  kRtBtCols,
  kRtNumUnits,
  kRtUnits
};
enum AttnUnit : int64_t {
  kUReq,
  kUKvHead,
  kURowBegin,
  kUNumRows,
  kUQStart,
  kUContext,
  kUSeqLen,
  kUKtBegin,
  kUKtEnd,
  kNumUnitArgs
};

/// The fields of work unit `unit`, read from the runtime arguments.
struct Unit {
  Value fields[kNumUnitArgs];
  Value operator[](AttnUnit f) const { return fields[f]; }
};

Unit readUnit(KernelBuilder &kb, Value unit) {
  Unit u;
  Value base = kb.add(kb.mul(unit, kNumUnitArgs), kRtUnits);
  for (int64_t f = 0; f < kNumUnitArgs; ++f)
    u.fields[f] = kb.runtimeArg(kb.add(base, f));
  return u;
}

/// Creates `func.func @name()` marked with its thread kind and returns a
/// builder positioned in its body.
func::FuncOp createKernel(OpBuilder &b, Location loc, StringRef name,
                          StringRef thread) {
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
  fn->setAttr("ttk.thread", b.getStringAttr(thread));
  Block *entry = fn.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return fn;
}

/// Rows of a unit map to (query token, head): row r of the request is token
/// r / hpg and head kv_head * hpg + r % hpg.
struct RowInfo {
  Value token, head, position;
};
RowInfo rowInfo(KernelBuilder &kb, const Unit &u, Value row, Value hpg) {
  Value global = kb.add(u[kURowBegin], row);
  Value i = kb.div(global, hpg);
  RowInfo info;
  info.token = kb.add(u[kUQStart], i);
  info.head = kb.add(kb.mul(u[kUKvHead], hpg), kb.rem(global, hpg));
  info.position = kb.add(u[kUContext], i);
  return info;
}

//===----------------------------------------------------------------------===//
// Attention kernels
//===----------------------------------------------------------------------===//

void buildAttentionReader(OpBuilder &b, Location loc,
                          const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  Value dkTiles = kb.compileTimeArg(kCtDkTiles);
  Value dvTiles = kb.compileTimeArg(kCtDvTiles);
  Value blockSize = kb.compileTimeArg(kCtBlockSize);
  Value heads = kb.compileTimeArg(kCtHeads);
  Value kvHeads = kb.compileTimeArg(kCtKvHeads);
  Value hpg = kb.compileTimeArg(kCtHeadsPerGroup);
  Value esz = kb.compileTimeArg(kCtElemSize);
  Value negBig = kb.compileTimeArg(kCtNegBigBits);
  Value one = kb.compileTimeArg(kCtOneBits);
  Value blocksPerTile = kb.compileTimeArg(kCtBlocksPerTile);
  Value tilesPerBlock = kb.compileTimeArg(kCtTilesPerBlock);
  Value rowsPerRead = kb.compileTimeArg(kCtRowsPerRead);
  Value kvParts = kb.compileTimeArg(kCtKvParts);
  Value tileBytes = kb.compileTimeArg(kCtTileBytes);

  Value qGen = kb.dramAddrGen(kb.runtimeArg(kRtQ),
                              kb.mul(kb.mul(dkTiles, 32), esz));
  Value kvGen = kb.dramAddrGen(kb.runtimeArg(kRtKv), tileBytes);
  Value btGen =
      kb.dramAddrGen(kb.runtimeArg(kRtBt), kb.mul(kb.runtimeArg(kRtBtCols), 4));
  Value sinkGen = kb.dramAddrGen(kb.runtimeArg(kRtSinks), kb.mul(heads, 4));
  Value numUnits = kb.runtimeArg(kRtNumUnits);
  Value zero = kb.c(0);
  Value halfRowBytes = kb.mul(esz, 16);

  // The reduce scaler: a tile of ones, pushed once.
  kb.cbReserveBack(kCbScaler, kb.c(1));
  Value scalerPtr = kb.getWritePtr(kCbScaler);
  kb.forLoop(0, kb.c(1024),
             [&](Value i) { kb.storeL1Word(scalerPtr, i, one); });
  kb.cbPushBack(kCbScaler, kb.c(1));
  Value scratch = kb.getWritePtr(kCbScratch);

  kb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);

    // Query rows, gathered from row-major sticks into face order.
    kb.cbReserveBack(kCbQ, dkTiles);
    Value qPtr = kb.getWritePtr(kCbQ);
    kb.forLoop(0, u[kUNumRows], [&](Value row) {
      RowInfo info = rowInfo(kb, u, row, hpg);
      Value page = kb.add(kb.mul(info.token, heads), info.head);
      kb.forLoop(0, dkTiles, [&](Value dt) {
        kb.forLoop(0, kb.c(2), [&](Value half) {
          Value col = kb.add(kb.mul(dt, 32), kb.mul(half, 16));
          Value src = kb.nocAddr(page, qGen, kb.mul(col, esz));
          Value dst = kb.add(
              kb.add(qPtr, kb.mul(dt, tileBytes)),
              kb.mul(kb.faceOffset(row, kb.mul(half, 16)), esz));
          kb.nocAsyncRead(src, dst, halfRowBytes);
        });
      });
    });
    kb.nocAsyncReadBarrier();
    kb.cbPushBack(kCbQ, dkTiles);

    // Starting softmax state: running max (column 0 of tile 0) and sum
    // (column 0 of tile 1); with sinks the sink is a first key of value 0.
    kb.cbReserveBack(kCbInit, kb.c(2));
    Value initPtr = kb.getWritePtr(kCbInit);
    kb.forLoop(0, kb.c(32), [&](Value row) {
      Value at = kb.faceOffset(row, zero);
      Value sumAt = kb.add(at, 1024);
      if (!cfg.sinks) {
        kb.storeL1Word(initPtr, at, negBig);
        kb.storeL1Word(initPtr, sumAt, zero);
        return;
      }
      kb.ifThenElse(
          kb.cmp(CmpIPredicate::slt, row, u[kUNumRows]),
          [&] {
            RowInfo info = rowInfo(kb, u, row, hpg);
            kb.nocAsyncRead(kb.nocAddr(zero, sinkGen, kb.mul(info.head, 4)),
                            scratch, kb.c(4));
            kb.nocAsyncReadBarrier();
            kb.storeL1Word(initPtr, at, kb.loadL1Word(scratch, zero));
            kb.storeL1Word(initPtr, sumAt, one);
          },
          [&] {
            kb.storeL1Word(initPtr, at, negBig);
            kb.storeL1Word(initPtr, sumAt, zero);
          });
    });
    kb.cbPushBack(kCbInit, kb.c(2));

    kb.forLoop(u[kUKtBegin], u[kUKtEnd], [&](Value kt) {
      // Key and value tiles: 32 / rows_per_read reads per tile, each through
      // the block table.
      kb.cbReserveBack(kCbK, dkTiles);
      kb.cbReserveBack(kCbV, dvTiles);
      Value kPtr = kb.getWritePtr(kCbK);
      Value vPtr = kb.getWritePtr(kCbV);
      Value vPart = kb.sub(kvParts, kb.c(1));
      kb.forLoop(0, kb.div(kb.c(32), rowsPerRead), [&](Value sub) {
        Value pos = kb.add(kb.mul(kt, 32), kb.mul(sub, rowsPerRead));
        kb.ifThen(kb.cmp(CmpIPredicate::slt, pos, u[kUSeqLen]), [&] {
          Value index = kb.div(pos, blockSize);
          kb.nocAsyncRead(kb.nocAddr(u[kUReq], btGen, kb.mul(index, 4)),
                          scratch, kb.c(4));
          kb.nocAsyncReadBarrier();
          Value block = kb.loadL1Word(scratch, zero);
          Value group = kb.div(block, blocksPerTile);
          Value rowInGroup =
              kb.add(kb.mul(kb.rem(block, blocksPerTile), blockSize),
                     kb.rem(pos, blockSize));
          Value rowTile = kb.div(rowInGroup, 32);
          Value srcOffset = kb.mul(kb.mul(kb.rem(rowInGroup, 32), 32), esz);
          Value dstOffset = kb.mul(kb.mul(kb.mul(sub, rowsPerRead), 32), esz);
          Value bytes = kb.mul(kb.mul(rowsPerRead, 32), esz);
          auto readPart = [&](Value part, Value numTiles, Value basePtr) {
            kb.forLoop(0, numTiles, [&](Value dt) {
              Value page = kb.add(
                  kb.mul(kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(group,
                                                                   kvParts),
                                                            part),
                                                     kvHeads),
                                              u[kUKvHead]),
                                       tilesPerBlock),
                                rowTile),
                         dkTiles),
                  dt);
              kb.nocAsyncRead(
                  kb.nocAddr(page, kvGen, srcOffset),
                  kb.add(kb.add(basePtr, kb.mul(dt, tileBytes)), dstOffset),
                  bytes);
            });
          };
          readPart(zero, dkTiles, kPtr);
          readPart(vPart, dvTiles, vPtr);
        });
      });
      kb.nocAsyncReadBarrier();
      kb.cbPushBack(kCbK, dkTiles);

      // Additive mask: 0 where key j is visible to the row, -1e30 elsewhere.
      kb.cbReserveBack(kCbMask, kb.c(1));
      Value maskPtr = kb.getWritePtr(kCbMask);
      kb.forLoop(0, kb.c(32), [&](Value row) {
        RowInfo info = rowInfo(kb, u, row, hpg);
        Value p = info.position;
        Value rowValid = kb.cmp(CmpIPredicate::slt, row, u[kUNumRows]);
        kb.forLoop(0, kb.c(32), [&](Value col) {
          Value j = kb.add(kb.mul(kt, 32), col);
          Value visible =
              kb.andI(rowValid, kb.cmp(CmpIPredicate::slt, j, u[kUSeqLen]));
          if (cfg.causal)
            visible = kb.andI(visible, kb.cmp(CmpIPredicate::sle, j, p));
          if (cfg.windowLeft >= 0) {
            Value wl = kb.compileTimeArg(kCtWindowLeft);
            visible = kb.andI(
                visible, kb.cmp(CmpIPredicate::sge, j, kb.sub(p, wl)));
          }
          if (!cfg.causal && cfg.windowRight >= 0) {
            Value wr = kb.compileTimeArg(kCtWindowRight);
            visible = kb.andI(
                visible, kb.cmp(CmpIPredicate::sle, j, kb.add(p, wr)));
          }
          kb.storeL1Word(maskPtr, kb.faceOffset(row, col),
                         kb.select(visible, zero, negBig));
        });
      });
      kb.cbPushBack(kCbMask, kb.c(1));
      kb.cbPushBack(kCbV, dvTiles);
    });
  });
}

/// One tile_regs_acquire .. release section that packs destination tile 0
/// into `outCb` (reserving and pushing one page).
void packSection(KernelBuilder &kb, int64_t outCb,
                 llvm::function_ref<void()> math) {
  kb.call("tile_regs_acquire", {});
  math();
  kb.call("tile_regs_commit", {});
  kb.call("tile_regs_wait", {});
  kb.cbReserveBack(outCb, kb.c(1));
  kb.call("pack_reconfig_data_format", kb.c(outCb));
  kb.call("pack_tile", {kb.c(0), kb.c(outCb)});
  kb.cbPushBack(outCb, kb.c(1));
  kb.call("tile_regs_release", {});
}

void buildAttentionCompute(OpBuilder &b, Location loc,
                           const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  Value dkTiles = kb.compileTimeArg(kCtDkTiles);
  Value dvTiles = kb.compileTimeArg(kCtDvTiles);
  Value scaleBits = kb.compileTimeArg(kCtScaleBits);
  Value numUnits = kb.runtimeArg(kRtNumUnits);
  Value c0 = kb.c(0), c1 = kb.c(1), c2 = kb.c(2);
  Attribute maxRow[] = {kb.opaque("PoolType::MAX"),
                        kb.opaque("ReduceDim::REDUCE_ROW")};
  Attribute sumRow[] = {kb.opaque("PoolType::SUM"),
                        kb.opaque("ReduceDim::REDUCE_ROW")};
  Attribute addDest[] = {kb.opaque("EltwiseBinaryType::ELWADD"),
                         kb.opaque("EltwiseBinaryReuseDestType::DEST_TO_SRCA")};

  kb.call("mm_init", {kb.c(kCbQ), kb.c(kCbK), kb.c(kCbS)});
  kb.cbWaitFront(kCbScaler, c1);

  kb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);
    kb.cbWaitFront(kCbQ, dkTiles);

    // Running max and sum from the reader's starting state; acc = 0.
    kb.cbWaitFront(kCbInit, c2);
    kb.call("copy_tile_to_dst_init_short", kb.c(kCbInit));
    packSection(kb, kCbM, [&] { kb.call("copy_tile", {kb.c(kCbInit), c0, c0}); });
    packSection(kb, kCbL, [&] { kb.call("copy_tile", {kb.c(kCbInit), c1, c0}); });
    kb.cbPopFront(kCbInit, c2);
    kb.call("tile_regs_acquire", {});
    kb.call("tile_regs_commit", {});
    kb.call("tile_regs_wait", {});
    kb.cbReserveBack(kCbAcc, dvTiles);
    kb.forLoop(0, dvTiles,
               [&](Value) { kb.call("pack_tile", {c0, kb.c(kCbAcc)}); });
    kb.cbPushBack(kCbAcc, dvTiles);
    kb.call("tile_regs_release", {});

    kb.forLoop(u[kUKtBegin], u[kUKtEnd], [&](Value) {
      // S = scale * Q K^T (soft-capped) + mask.
      kb.cbWaitFront(kCbK, dkTiles);
      kb.cbWaitFront(kCbMask, c1);
      packSection(kb, kCbS, [&] {
        kb.call("mm_init_short", {kb.c(kCbQ), kb.c(kCbK), c1});
        kb.forLoop(0, dkTiles, [&](Value dt) {
          kb.call("matmul_tiles", {kb.c(kCbQ), kb.c(kCbK), dt, dt, c0, c1});
        });
        kb.call("binop_with_scalar_tile_init", {});
        kb.call("mul_unary_tile", {c0, scaleBits});
        if (cfg.softCap > 0) {
          kb.call("mul_unary_tile", {c0, kb.compileTimeArg(kCtInvCapBits)});
          kb.call("tanh_tile_init", {});
          kb.call("tanh_tile", c0);
          kb.call("mul_unary_tile", {c0, kb.compileTimeArg(kCtCapBits)});
        }
        kb.call("binary_dest_reuse_tiles_init", kb.c(kCbMask), false,
                addDest);
        kb.call("binary_dest_reuse_tiles", {kb.c(kCbMask), c0, c0}, false,
                addDest);
      });
      kb.cbPopFront(kCbK, dkTiles);
      kb.cbPopFront(kCbMask, c1);
      kb.cbWaitFront(kCbS, c1);

      // m_new = max(m_old, rowmax(S)), behind m_old in cb_m.
      packSection(kb, kCbM, [&] {
        kb.call("copy_tile_to_dst_init_short", kb.c(kCbM));
        kb.call("copy_tile", {kb.c(kCbM), c0, c0});
        kb.call("reduce_init", {kb.c(kCbS), kb.c(kCbScaler), kb.c(kCbM)},
                false, maxRow);
        kb.call("reduce_tile", {kb.c(kCbS), kb.c(kCbScaler), c0, c0, c0},
                false, maxRow);
        kb.call("reduce_uninit", {});
      });
      kb.cbWaitFront(kCbM, c2);
      // alpha = exp(m_old - m_new); P = exp(S - m_new).
      packSection(kb, kCbAlpha, [&] {
        kb.call("sub_tiles_init", {kb.c(kCbM), kb.c(kCbM)});
        kb.call("sub_tiles", {kb.c(kCbM), kb.c(kCbM), c0, c1, c0});
        kb.call("exp_tile_init", {});
        kb.call("exp_tile", c0);
      });
      // P is packed twice from the same destination tile: in the program's
      // format for P V, and (bf16 programs) unrounded in f32 for the row sum,
      // so l and lse see the exact exp values, not bf16-rounded ones.
      int64_t sumCb = cfg.isF32 ? kCbP : kCbPSum;
      kb.call("tile_regs_acquire", {});
      kb.call("sub_bcast_cols_init_short", {kb.c(kCbS), kb.c(kCbM)});
      kb.call("sub_tiles_bcast_cols", {kb.c(kCbS), kb.c(kCbM), c0, c1, c0});
      kb.call("exp_tile_init", {});
      kb.call("exp_tile", c0);
      kb.call("tile_regs_commit", {});
      kb.call("tile_regs_wait", {});
      SmallVector<int64_t, 2> pCbs = {kCbP};
      if (sumCb != kCbP)
        pCbs.push_back(sumCb);
      for (int64_t cb : pCbs) {
        kb.cbReserveBack(cb, c1);
        kb.call("pack_reconfig_data_format", kb.c(cb));
        kb.call("pack_tile", {c0, kb.c(cb)});
        kb.cbPushBack(cb, c1);
      }
      kb.call("tile_regs_release", {});
      kb.cbPopFront(kCbS, c1);
      kb.cbPopFront(kCbM, c1);
      kb.cbWaitFront(kCbAlpha, c1);
      kb.cbWaitFront(kCbP, c1);

      // l = alpha * l + rowsum(P), in f32.
      kb.cbWaitFront(kCbL, c1);
      if (sumCb != kCbP)
        kb.cbWaitFront(sumCb, c1);
      packSection(kb, kCbL, [&] {
        kb.call("mul_tiles_init", {kb.c(kCbL), kb.c(kCbAlpha)});
        kb.call("mul_tiles", {kb.c(kCbL), kb.c(kCbAlpha), c0, c0, c0});
        kb.call("reduce_init", {kb.c(sumCb), kb.c(kCbScaler), kb.c(kCbL)},
                false, sumRow);
        kb.call("reduce_tile", {kb.c(sumCb), kb.c(kCbScaler), c0, c0, c0},
                false, sumRow);
        kb.call("reduce_uninit", {});
      });
      kb.cbPopFront(kCbL, c1);
      if (sumCb != kCbP)
        kb.cbPopFront(sumCb, c1);

      // acc = alpha * acc + P V, one value tile at a time.
      kb.cbWaitFront(kCbV, dvTiles);
      kb.cbWaitFront(kCbAcc, dvTiles);
      kb.cbReserveBack(kCbAcc, dvTiles);
      kb.forLoop(0, dvTiles, [&](Value dt) {
        kb.call("tile_regs_acquire", {});
        kb.call("mul_bcast_cols_init_short", {kb.c(kCbAcc), kb.c(kCbAlpha)});
        kb.call("mul_tiles_bcast_cols",
                {kb.c(kCbAcc), kb.c(kCbAlpha), dt, c0, c0});
        kb.call("mm_init_short", {kb.c(kCbP), kb.c(kCbV), c0});
        kb.call("matmul_tiles", {kb.c(kCbP), kb.c(kCbV), c0, dt, c0, c0});
        kb.call("tile_regs_commit", {});
        kb.call("tile_regs_wait", {});
        kb.call("pack_reconfig_data_format", kb.c(kCbAcc));
        kb.call("pack_tile", {c0, kb.c(kCbAcc)});
        kb.call("tile_regs_release", {});
      });
      kb.cbPushBack(kCbAcc, dvTiles);
      kb.cbPopFront(kCbAcc, dvTiles);
      kb.cbPopFront(kCbV, dvTiles);
      kb.cbPopFront(kCbP, c1);
      kb.cbPopFront(kCbAlpha, c1);
    });

    // out = acc / l; lse = m + log(l).
    kb.cbWaitFront(kCbL, c1);
    packSection(kb, kCbAlpha, [&] {
      kb.call("copy_tile_to_dst_init_short", kb.c(kCbL));
      kb.call("copy_tile", {kb.c(kCbL), c0, c0});
      kb.call("recip_tile_init", {});
      kb.call("recip_tile", c0);
    });
    kb.cbWaitFront(kCbAlpha, c1);
    kb.cbWaitFront(kCbAcc, dvTiles);
    kb.cbReserveBack(kCbOut, dvTiles);
    kb.forLoop(0, dvTiles, [&](Value dt) {
      kb.call("tile_regs_acquire", {});
      kb.call("mul_bcast_cols_init_short", {kb.c(kCbAcc), kb.c(kCbAlpha)});
      kb.call("mul_tiles_bcast_cols",
              {kb.c(kCbAcc), kb.c(kCbAlpha), dt, c0, c0});
      kb.call("tile_regs_commit", {});
      kb.call("tile_regs_wait", {});
      kb.call("pack_reconfig_data_format", kb.c(kCbOut));
      kb.call("pack_tile", {c0, kb.c(kCbOut)});
      kb.call("tile_regs_release", {});
    });
    kb.cbPushBack(kCbOut, dvTiles);
    kb.cbPopFront(kCbAlpha, c1);
    kb.cbPopFront(kCbAcc, dvTiles);
    kb.cbWaitFront(kCbM, c1);
    packSection(kb, kCbLse, [&] {
      kb.call("copy_tile_to_dst_init_short", kb.c(kCbL));
      kb.call("copy_tile", {kb.c(kCbL), c0, c0});
      kb.call("log_tile_init", {});
      kb.call("log_tile", c0);
      kb.call("binary_dest_reuse_tiles_init", kb.c(kCbM), false, addDest);
      kb.call("binary_dest_reuse_tiles", {kb.c(kCbM), c0, c0}, false,
              addDest);
    });
    kb.cbPopFront(kCbL, c1);
    kb.cbPopFront(kCbM, c1);
    kb.cbPopFront(kCbQ, dkTiles);
  });
}

void buildAttentionWriter(OpBuilder &b, Location loc,
                          const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  Value dvTiles = kb.compileTimeArg(kCtDvTiles);
  Value heads = kb.compileTimeArg(kCtHeads);
  Value hpg = kb.compileTimeArg(kCtHeadsPerGroup);
  Value esz = kb.compileTimeArg(kCtElemSize);
  Value tileBytes = kb.compileTimeArg(kCtTileBytes);
  Value outGen = kb.dramAddrGen(kb.runtimeArg(kRtOut),
                                kb.mul(kb.mul(dvTiles, 32), esz));
  Value lseGen = kb.dramAddrGen(kb.runtimeArg(kRtLse), kb.mul(heads, 4));
  Value numUnits = kb.runtimeArg(kRtNumUnits);
  Value halfRowBytes = kb.mul(esz, 16);

  kb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);
    kb.cbWaitFront(kCbOut, dvTiles);
    kb.cbWaitFront(kCbLse, kb.c(1));
    Value outPtr = kb.getReadPtr(kCbOut);
    Value lsePtr = kb.getReadPtr(kCbLse);
    kb.forLoop(0, u[kUNumRows], [&](Value row) {
      RowInfo info = rowInfo(kb, u, row, hpg);
      Value page = kb.add(kb.mul(info.token, heads), info.head);
      kb.forLoop(0, dvTiles, [&](Value dt) {
        kb.forLoop(0, kb.c(2), [&](Value half) {
          Value col = kb.add(kb.mul(dt, 32), kb.mul(half, 16));
          Value src = kb.add(
              kb.add(outPtr, kb.mul(dt, tileBytes)),
              kb.mul(kb.faceOffset(row, kb.mul(half, 16)), esz));
          kb.nocAsyncWrite(src, kb.nocAddr(page, outGen, kb.mul(col, esz)),
                           halfRowBytes);
        });
      });
      Value lseSrc =
          kb.add(lsePtr, kb.mul(kb.faceOffset(row, kb.c(0)), kb.c(4)));
      kb.nocAsyncWrite(lseSrc,
                       kb.nocAddr(info.token, lseGen, kb.mul(info.head, 4)),
                       kb.c(4));
    });
    kb.nocAsyncWriteBarrier();
    kb.cbPopFront(kCbOut, dvTiles);
    kb.cbPopFront(kCbLse, kb.c(1));
  });
}

//===----------------------------------------------------------------------===//
// reshape_and_cache kernels: the reader fetches a token's slot and key/value
// rows, the writer scatters each row into its place in the tiled cache.
//===----------------------------------------------------------------------===//

enum RcCt : int64_t {
  kRcKvHeads,
  kRcHeadSize,
  kRcDTiles,
  kRcBlockSize,
  kRcElemSize,
  kRcBlocksPerTile,
  kRcTilesPerBlock,
  kRcTileBytes,
  kNumRcCt
};
const char *const kRcRuntimeArgs[] = {"key_addr", "value_addr", "slot_addr",
                                      "kv_addr", "num_units"};
const char *const kRcUnitArgs[] = {"token"};
enum RcRt : int64_t { kRcKey, kRcValue, kRcSlot, kRcKv, kRcNumUnits, kRcUnits };

void buildCacheReader(OpBuilder &b, Location loc) {
  KernelBuilder kb(b, loc);
  Value kvHeads = kb.compileTimeArg(kRcKvHeads);
  Value headSize = kb.compileTimeArg(kRcHeadSize);
  Value esz = kb.compileTimeArg(kRcElemSize);
  Value rowBytes = kb.mul(headSize, esz);
  Value keyGen = kb.dramAddrGen(kb.runtimeArg(kRcKey), rowBytes);
  Value valueGen = kb.dramAddrGen(kb.runtimeArg(kRcValue), rowBytes);
  Value slotGen = kb.dramAddrGen(kb.runtimeArg(kRcSlot), kb.c(8));
  Value numUnits = kb.runtimeArg(kRcNumUnits);
  Value zero = kb.c(0);
  kb.forLoop(0, numUnits, [&](Value unit) {
    Value token = kb.runtimeArg(kb.add(unit, kRcUnits));
    kb.cbReserveBack(kCbSlot, kb.c(1));
    Value slotPtr = kb.getWritePtr(kCbSlot);
    kb.nocAsyncRead(kb.nocAddr(token, slotGen, zero), slotPtr, kb.c(8));
    kb.nocAsyncReadBarrier();
    // The slot is an i64; a negative one (padding) has a negative high word.
    Value slotHigh = kb.loadL1Word(slotPtr, kb.c(1));
    kb.cbPushBack(kCbSlot, kb.c(1));
    kb.ifThen(kb.cmp(CmpIPredicate::sge, slotHigh, zero), [&] {
      Value rows = kb.mul(kvHeads, 2);
      kb.cbReserveBack(kCbRows, rows);
      Value rowPtr = kb.getWritePtr(kCbRows);
      kb.forLoop(0, kvHeads, [&](Value g) {
        Value page = kb.add(kb.mul(token, kvHeads), g);
        kb.nocAsyncRead(kb.nocAddr(page, keyGen, zero),
                        kb.add(rowPtr, kb.mul(g, rowBytes)), rowBytes);
        kb.nocAsyncRead(kb.nocAddr(page, valueGen, zero),
                        kb.add(rowPtr, kb.mul(kb.add(g, kvHeads), rowBytes)),
                        rowBytes);
      });
      kb.nocAsyncReadBarrier();
      kb.cbPushBack(kCbRows, rows);
    });
  });
}

void buildCacheWriter(OpBuilder &b, Location loc) {
  KernelBuilder kb(b, loc);
  Value kvHeads = kb.compileTimeArg(kRcKvHeads);
  Value headSize = kb.compileTimeArg(kRcHeadSize);
  Value dTiles = kb.compileTimeArg(kRcDTiles);
  Value blockSize = kb.compileTimeArg(kRcBlockSize);
  Value esz = kb.compileTimeArg(kRcElemSize);
  Value blocksPerTile = kb.compileTimeArg(kRcBlocksPerTile);
  Value tilesPerBlock = kb.compileTimeArg(kRcTilesPerBlock);
  Value tileBytes = kb.compileTimeArg(kRcTileBytes);
  Value rowBytes = kb.mul(headSize, esz);
  Value kvGen = kb.dramAddrGen(kb.runtimeArg(kRcKv), tileBytes);
  Value numUnits = kb.runtimeArg(kRcNumUnits);
  Value zero = kb.c(0);
  kb.forLoop(0, numUnits, [&](Value) {
    kb.cbWaitFront(kCbSlot, kb.c(1));
    Value slotPtr = kb.getReadPtr(kCbSlot);
    Value slot = kb.loadL1Word(slotPtr, zero);
    Value slotHigh = kb.loadL1Word(slotPtr, kb.c(1));
    kb.cbPopFront(kCbSlot, kb.c(1));
    kb.ifThen(kb.cmp(CmpIPredicate::sge, slotHigh, zero), [&] {
      Value rows = kb.mul(kvHeads, 2);
      kb.cbWaitFront(kCbRows, rows);
      Value rowPtr = kb.getReadPtr(kCbRows);
      Value block = kb.div(slot, blockSize);
      Value group = kb.div(block, blocksPerTile);
      Value rowInGroup = kb.add(kb.mul(kb.rem(block, blocksPerTile), blockSize),
                                kb.rem(slot, blockSize));
      Value rowTile = kb.div(rowInGroup, 32);
      Value tileRow = kb.rem(rowInGroup, 32);
      kb.forLoop(0, kb.c(2), [&](Value part) {
        kb.forLoop(0, kvHeads, [&](Value g) {
          Value src = kb.add(rowPtr, kb.mul(kb.add(kb.mul(part, kvHeads), g),
                                            rowBytes));
          kb.forLoop(0, dTiles, [&](Value dt) {
            Value page = kb.add(
                kb.mul(kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(group, 2),
                                                          part),
                                                   kvHeads),
                                            g),
                                     tilesPerBlock),
                              rowTile),
                       dTiles),
                dt);
            kb.forLoop(0, kb.c(2), [&](Value half) {
              Value col = kb.mul(half, 16);
              Value from =
                  kb.add(src, kb.mul(kb.add(kb.mul(dt, 32), col), esz));
              Value to = kb.nocAddr(
                  page, kvGen, kb.mul(kb.faceOffset(tileRow, col), esz));
              kb.nocAsyncWrite(from, to, kb.mul(esz, 16));
            });
          });
        });
      });
      kb.nocAsyncWriteBarrier();
      kb.cbPopFront(kCbRows, rows);
    });
  });
}

//===----------------------------------------------------------------------===//
// Program descriptions
//===----------------------------------------------------------------------===//

class ProgramDescriptionBuilder {
public:
  explicit ProgramDescriptionBuilder(Builder &b) : b(b) {}

  void cb(int64_t id, StringRef name, int64_t pages, int64_t pageSize,
          StringRef format) {
    cbs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("id", b.getI64IntegerAttr(id)),
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("num_pages", b.getI64IntegerAttr(pages)),
        b.getNamedAttr("page_size", b.getI64IntegerAttr(pageSize)),
        b.getNamedAttr("data_format", b.getStringAttr(format)),
    }));
  }

  void kernel(StringRef name, StringRef kind, StringRef processor,
              ArrayRef<int64_t> compileTimeArgs) {
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("kind", b.getStringAttr(kind)),
        b.getNamedAttr("processor", b.getStringAttr(processor)),
        b.getNamedAttr("source", b.getStringAttr((name + ".cpp").str())),
        b.getNamedAttr("compile_time_args",
                       b.getI64ArrayAttr(compileTimeArgs)),
    };
    if (kind == "compute") {
      attrs.push_back(b.getNamedAttr("math_fidelity", b.getStringAttr("HiFi4")));
      attrs.push_back(b.getNamedAttr("fp32_dest_acc_en", b.getBoolAttr(true)));
    }
    kernels.push_back(b.getDictionaryAttr(attrs));
  }

  DictionaryAttr build(StringRef name, StringRef op, DictionaryAttr params,
                       int64_t gridX, int64_t gridY,
                       ArrayRef<const char *> runtimeArgs,
                       ArrayRef<const char *> unitArgs) {
    auto strings = [&](ArrayRef<const char *> names) {
      SmallVector<Attribute> out;
      for (const char *n : names)
        out.push_back(b.getStringAttr(n));
      return b.getArrayAttr(out);
    };
    return b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("op", b.getStringAttr(op)),
        b.getNamedAttr("params", params),
        b.getNamedAttr(
            "core_grid",
            b.getDictionaryAttr({b.getNamedAttr("x", b.getI64IntegerAttr(gridX)),
                                 b.getNamedAttr("y",
                                                b.getI64IntegerAttr(gridY))})),
        b.getNamedAttr("circular_buffers", b.getArrayAttr(cbs)),
        b.getNamedAttr("kernels", b.getArrayAttr(kernels)),
        b.getNamedAttr("runtime_args", strings(runtimeArgs)),
        b.getNamedAttr("unit_args", strings(unitArgs)),
    });
  }

private:
  Builder &b;
  SmallVector<Attribute> cbs;
  SmallVector<Attribute> kernels;
};

DictionaryAttr attentionParams(Builder &b, const AttentionConfig &c) {
  return b.getDictionaryAttr({
      b.getNamedAttr("num_heads", b.getI64IntegerAttr(c.numHeads)),
      b.getNamedAttr("num_kv_heads", b.getI64IntegerAttr(c.numKvHeads)),
      b.getNamedAttr("head_size", b.getI64IntegerAttr(c.headSize)),
      b.getNamedAttr("value_size", b.getI64IntegerAttr(c.valueSize)),
      b.getNamedAttr("block_size", b.getI64IntegerAttr(c.blockSize)),
      b.getNamedAttr("kv_parts", b.getI64IntegerAttr(c.kvParts)),
      b.getNamedAttr("kv_lora_rank", b.getI64IntegerAttr(c.kvLoraRank)),
      b.getNamedAttr("dtype", b.getStringAttr(c.isF32 ? "f32" : "bf16")),
      b.getNamedAttr("scale", b.getF64FloatAttr(c.scale)),
      b.getNamedAttr("causal", b.getBoolAttr(c.causal)),
      b.getNamedAttr("window_left", b.getI64IntegerAttr(c.windowLeft)),
      b.getNamedAttr("window_right", b.getI64IntegerAttr(c.windowRight)),
      b.getNamedAttr("soft_cap", b.getF64FloatAttr(c.softCap)),
      b.getNamedAttr("sinks", b.getBoolAttr(c.sinks)),
  });
}

/// Builds the program module of an attention op.
void buildAttentionProgram(OpBuilder &b, Location loc, StringRef name,
                           const AttentionConfig &cfg, int64_t gridX,
                           int64_t gridY) {
  ProgramDescriptionBuilder desc(b);
  int64_t tb = cfg.tileBytes();
  StringRef fmt = cfg.format();
  desc.cb(kCbQ, "q", cfg.dkTiles(), tb, fmt);
  desc.cb(kCbK, "k", 2 * cfg.dkTiles(), tb, fmt);
  desc.cb(kCbV, "v", 2 * cfg.dvTiles(), tb, fmt);
  desc.cb(kCbMask, "mask", 2, 4096, "Float32");
  desc.cb(kCbInit, "init", 2, 4096, "Float32");
  desc.cb(kCbScaler, "scaler", 1, 4096, "Float32");
  desc.cb(kCbScratch, "scratch", 1, 32, "Float32");
  desc.cb(kCbOut, "out", cfg.dvTiles(), tb, fmt);
  desc.cb(kCbLse, "lse", 1, 4096, "Float32");
  desc.cb(kCbS, "scores", 1, 4096, "Float32");
  desc.cb(kCbM, "max", 2, 4096, "Float32");
  desc.cb(kCbL, "sum", 2, 4096, "Float32");
  desc.cb(kCbAlpha, "alpha", 1, 4096, "Float32");
  desc.cb(kCbP, "probs", 1, tb, fmt);
  desc.cb(kCbAcc, "acc", 2 * cfg.dvTiles(), 4096, "Float32");
  if (!cfg.isF32)
    desc.cb(kCbPSum, "probs_f32", 1, 4096, "Float32");
  SmallVector<int64_t> ct = attentionCompileTimeArgs(cfg);
  desc.kernel("reader", "reader", "riscv_1", ct);
  desc.kernel("compute", "compute", "trisc", ct);
  desc.kernel("writer", "writer", "riscv_0", ct);

  auto module = ModuleOp::create(b, loc, name);
  module->setAttr("ttk.program",
                  desc.build(name, cfg.op, attentionParams(b, cfg), gridX,
                             gridY, kAttnRuntimeArgs, kAttnUnitArgs));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  struct {
    const char *name;
    void (*build)(OpBuilder &, Location, const AttentionConfig &);
  } kernels[] = {{"reader", buildAttentionReader},
                 {"compute", buildAttentionCompute},
                 {"writer", buildAttentionWriter}};
  for (auto &k : kernels) {
    func::FuncOp fn = createKernel(b, loc, k.name, k.name);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(fn.getBody().front().getTerminator());
    k.build(b, loc, cfg);
  }
}

void buildCacheProgram(OpBuilder &b, Location loc, StringRef name,
                       const AttentionConfig &cfg, int64_t gridX,
                       int64_t gridY) {
  ProgramDescriptionBuilder desc(b);
  int64_t rowBytes = cfg.headSize * cfg.esz();
  desc.cb(kCbSlot, "slot", 2, 32, "Float32");
  desc.cb(kCbRows, "rows", 4 * cfg.numKvHeads, rowBytes, cfg.format());
  SmallVector<int64_t> ct(kNumRcCt, 0);
  ct[kRcKvHeads] = cfg.numKvHeads;
  ct[kRcHeadSize] = cfg.headSize;
  ct[kRcDTiles] = cfg.dkTiles();
  ct[kRcBlockSize] = cfg.blockSize;
  ct[kRcElemSize] = cfg.esz();
  ct[kRcBlocksPerTile] = std::max<int64_t>(1, 32 / cfg.blockSize);
  ct[kRcTilesPerBlock] = std::max<int64_t>(1, cfg.blockSize / 32);
  ct[kRcTileBytes] = cfg.tileBytes();
  desc.kernel("reader", "reader", "riscv_1", ct);
  desc.kernel("writer", "writer", "riscv_0", ct);

  auto module = ModuleOp::create(b, loc, name);
  module->setAttr("ttk.program",
                  desc.build(name, cfg.op, attentionParams(b, cfg), gridX,
                             gridY, kRcRuntimeArgs, kRcUnitArgs));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  func::FuncOp reader = createKernel(b, loc, "reader", "reader");
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(reader.getBody().front().getTerminator());
    buildCacheReader(b, loc);
  }
  func::FuncOp writer = createKernel(b, loc, "writer", "writer");
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPoint(writer.getBody().front().getTerminator());
  buildCacheWriter(b, loc);
}

//===----------------------------------------------------------------------===//
// Reading the static configuration off the ops
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> staticDims(Operation *op, Value v,
                                           StringRef name,
                                           ArrayRef<unsigned> needed) {
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped || !shaped.hasRank())
    return op->emitOpError() << "expects a ranked " << name;
  for (unsigned d : needed)
    if (shaped.isDynamicDim(d))
      return op->emitOpError()
             << "tt lowering needs a static dimension " << d << " of " << name;
  return SmallVector<int64_t>(shaped.getShape());
}

LogicalResult checkElementType(Operation *op, Value v, AttentionConfig &cfg) {
  Type t = cast<ShapedType>(v.getType()).getElementType();
  if (!t.isBF16() && !t.isF32())
    return op->emitOpError() << "tt lowering supports bf16 and f32, not " << t;
  cfg.isF32 = t.isF32();
  return success();
}

LogicalResult checkTileShape(Operation *op, const AttentionConfig &cfg) {
  if (cfg.headSize % 32 != 0 || cfg.valueSize % 32 != 0)
    return op->emitOpError()
           << "tt lowering needs head sizes that are multiples of 32, got "
           << cfg.headSize;
  int64_t bs = cfg.blockSize;
  if (bs % 16 != 0 || (32 % bs != 0 && bs % 32 != 0))
    return op->emitOpError()
           << "tt lowering needs block size 16, 32 or a multiple of 32, got "
           << bs;
  return success();
}

FailureOr<AttentionConfig> configure(PagedAttentionOp op) {
  AttentionConfig cfg;
  cfg.op = "paged_attention";
  if (op.getAlibiSlopes())
    return op.emitOpError() << "tt lowering does not support alibi";
  auto q = staticDims(op, op.getQuery(), "query", {1, 2});
  bool nhd = op.getLayout() == KVLayout::nhd;
  auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2, 3, 4});
  if (failed(q) || failed(kv) || failed(checkElementType(op, op.getQuery(), cfg)))
    return failure();
  cfg.numHeads = (*q)[1];
  cfg.headSize = cfg.valueSize = (*q)[2];
  cfg.blockSize = nhd ? (*kv)[2] : (*kv)[3];
  cfg.numKvHeads = nhd ? (*kv)[3] : (*kv)[2];
  cfg.kvParts = 2;
  auto md = op.getMetadata().getDefiningOp<MetadataOp>();
  if (!md)
    return op.emitOpError()
           << "tt lowering needs the metadata from an attn.metadata op";
  cfg.causal = md.getCausal();
  cfg.windowLeft = op.getWindowLeftValue();
  cfg.windowRight = op.getWindowRightValue();
  cfg.softCap = op.getSoftCap().convertToDouble();
  cfg.sinks = bool(op.getSinks());
  cfg.scale = op.getScale().convertToDouble();
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

FailureOr<AttentionConfig> configure(MlaDecodeOp op) {
  AttentionConfig cfg;
  cfg.op = "mla_decode";
  auto q = staticDims(op, op.getQ(), "q", {1, 2});
  auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2});
  if (failed(q) || failed(kv) || failed(checkElementType(op, op.getQ(), cfg)))
    return failure();
  cfg.numHeads = (*q)[1];
  cfg.numKvHeads = 1;
  cfg.headSize = (*q)[2];
  cfg.valueSize = op.getKvLoraRank();
  cfg.kvLoraRank = op.getKvLoraRank();
  cfg.blockSize = (*kv)[1];
  cfg.kvParts = 1;
  cfg.causal = false;
  cfg.windowLeft = cfg.windowRight = -1;
  cfg.softCap = 0;
  cfg.sinks = false;
  cfg.scale = op.getScale().convertToDouble();
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

FailureOr<AttentionConfig> configure(ReshapeAndCacheOp op) {
  AttentionConfig cfg;
  cfg.op = "reshape_and_cache";
  // The cache program moves [G, D] head rows of a paged cache; a latent row
  // is one [L + P] concatenation of two sources, which it has no reader for.
  if (op.isLatentCache())
    return op.emitOpError() << "tt lowering does not support the MLA latent "
                               "cache (rank-3 kv_cache); compile it for "
                               "spirv, ptx or msl";
  auto key = staticDims(op, op.getKey(), "key", {1, 2});
  bool nhd = *op.getLayout() == KVLayout::nhd;
  auto kv = staticDims(op, op.getKvCache(), "kv_cache", {1, 2, 3, 4});
  if (failed(key) || failed(kv) ||
      failed(checkElementType(op, op.getKey(), cfg)))
    return failure();
  cfg.numKvHeads = (*key)[1];
  cfg.numHeads = cfg.numKvHeads;
  cfg.headSize = cfg.valueSize = (*key)[2];
  cfg.blockSize = nhd ? (*kv)[2] : (*kv)[3];
  cfg.kvParts = 2;
  cfg.causal = false;
  cfg.windowLeft = cfg.windowRight = -1;
  cfg.softCap = 0;
  cfg.sinks = false;
  cfg.scale = 1.0;
  if (failed(checkTileShape(op, cfg)))
    return failure();
  return cfg;
}

struct ConvertAttnToTTKernelPass
    : public attn::impl::ConvertAttnToTTKernelBase<ConvertAttnToTTKernelPass> {
  using ConvertAttnToTTKernelBase::ConvertAttnToTTKernelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    SmallVector<func::FuncOp> hosts;
    bool failedAny = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      SmallVector<Operation *> ops;
      fn.walk([&](Operation *op) {
        if (isa<PagedAttentionOp, MlaDecodeOp, ReshapeAndCacheOp>(op))
          ops.push_back(op);
      });
      if (ops.empty())
        continue;
      hosts.push_back(fn);
      for (auto [i, op] : llvm::enumerate(ops)) {
        std::string name = fn.getName().str();
        if (ops.size() > 1)
          name += "_" + std::to_string(i);
        b.setInsertionPointToEnd(module.getBody());
        FailureOr<AttentionConfig> cfg =
            llvm::TypeSwitch<Operation *, FailureOr<AttentionConfig>>(op)
                .Case<PagedAttentionOp, MlaDecodeOp, ReshapeAndCacheOp>(
                    [](auto typed) { return configure(typed); });
        if (failed(cfg)) {
          failedAny = true;
          continue;
        }
        if (isa<ReshapeAndCacheOp>(op))
          buildCacheProgram(b, op->getLoc(), name, *cfg, gridX, gridY);
        else
          buildAttentionProgram(b, op->getLoc(), name, *cfg, gridX, gridY);
      }
    }
    if (failedAny)
      return signalPassFailure();
    for (func::FuncOp fn : hosts)
      fn.erase();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::attn::createConvertAttnToTTKernelPass() {
  return createConvertAttnToTTKernel();
}

void mlir::attn::registerAttnToTTLoweringPasses() { registerAttnToTTPasses(); }
