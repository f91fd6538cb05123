//===- MergeKernels.cpp - Merging attention states on TT -----------------===//
//
// merge_states and the reduce step of split-KV decode: S partial states
// (out_s, lse_s) of the same rows become
//   m = max_s lse_s, w_s = exp(lse_s - m), out = sum_s w_s out_s / sum_s w_s,
//   lse = m + log(sum_s w_s).
// A work unit is 32 rows, a row being one (token, head). The reader gathers
// each state's rows into tiles (through a staging page, so transfers stay
// congruent) and its lse values into column 0 of an f32 tile (-inf and
// +inf, an empty state either way, as -1e30, so a row whose states are all
// empty stays finite; an empty state's rows as zeros); compute runs the
// formula on tiles; the writer stores the rows, and for rows whose every
// state was empty (m = -1e30) writes out = 0 and lse = -inf, as the
// reference defines.
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/ComputeBuilder.h"
#include "lowering/AttnToTT/KernelBuilder.h"
#include "lowering/AttnToTT/Kernels.h"

namespace mlir::attn::tt {

using arith::CmpIPredicate;

const StringRef kMergeRuntimeArgs[kMrUnits] = {
    "partial_out_addr", "partial_lse_addr", "out_addr",  "lse_addr",
    "num_tokens",       "num_dram_banks",   "num_units"};
const StringRef kMergeUnitArgs[kNumMergeUnitArgs] = {"row_begin", "num_rows"};

SmallVector<int64_t> mergeCompileTimeArgs(const AttentionConfig &c) {
  SmallVector<int64_t> ct(kNumMergeCt, 0);
  ct[kMcHeads] = c.numHeads;
  ct[kMcDvTiles] = c.dvTiles();
  ct[kMcElemSize] = c.esz();
  ct[kMcTileBytes] = c.tileBytes();
  ct[kMcOutPageStride] = c.pageStride(c.valueSize * c.esz());
  ct[kMcLsePageStride] = c.headVectorBytes();
  ct[kMcNumStates] = c.numStates;
  ct[kMcNegBigBits] = floatBits(kNegBig);
  ct[kMcNegInfBits] = 0xff800000u;
  return ct;
}

void declareMergeBuffers(ProgramDescriptionBuilder &desc,
                         const AttentionConfig &cfg) {
  int64_t tb = cfg.tileBytes();
  int64_t rowBytes = cfg.valueSize * cfg.esz();
  int64_t lseBytes = cfg.headVectorBytes();
  const TTDataFormat f32 = TTDataFormat::Float32;
  desc.cb(kCbMergeIn, "partial_out", 2 * cfg.dvTiles(), tb, cfg.format);
  desc.cb(kCbMergeLseIn, "partial_lse", cfg.numStates, 4096, f32);
  desc.cb(kCbMergeStage, "row_stage", 1, rowBytes, cfg.format);
  desc.cb(kCbMergeLseStage, "lse_page_stage", 1, lseBytes, f32);
  desc.cb(kCbMergeWriterStage, "lse_stage", 1, 32 * 16, f32);
  desc.cb(kCbMergeZero, "zero_row", 1, rowBytes, cfg.format);
  desc.cb(kCbMergeOut, "out", cfg.dvTiles(), tb, cfg.format);
  desc.cb(kCbMergeLseOut, "lse", 1, 4096, f32);
  desc.cb(kCbMergeMaxOut, "max_out", 1, 4096, f32);
  desc.cb(kCbMergeMax, "max", 1, 4096, f32);
  desc.cb(kCbMergeWeight, "weight", 1, 4096, f32);
  desc.cb(kCbMergeSum, "weight_sum", 2, 4096, f32);
  desc.cb(kCbMergeAcc, "acc", 2 * cfg.dvTiles(), 4096, f32);
  desc.cb(kCbMergeRecip, "recip", 1, 4096, f32);
}

namespace {

struct MergeUnitFields {
  Value rowBegin, numRows;
};

/// The compile-time arguments both merge data movers read first, in order:
/// the row shape and the strides of the out and lse pages.
struct MergeSizes {
  Value heads, dvTiles, esz, tileBytes, outStride, lseStride;
};

MergeSizes readMergeSizes(KernelBuilder &kb) {
  return {
      kb.compileTimeArg(kMcHeads),         kb.compileTimeArg(kMcDvTiles),
      kb.compileTimeArg(kMcElemSize),      kb.compileTimeArg(kMcTileBytes),
      kb.compileTimeArg(kMcOutPageStride), kb.compileTimeArg(kMcLsePageStride)};
}

MergeUnitFields readMergeUnit(KernelBuilder &kb, Value unit) {
  Value base = kb.add(kb.mul(unit, kNumMergeUnitArgs), kMrUnits);
  return {kb.runtimeArg(kb.add(base, kMuRowBegin)),
          kb.runtimeArg(kb.add(base, kMuNumRows))};
}

/// Whether the f32 `bits` are an infinity: an empty state's lse, either
/// sign (vLLM's merge_attn_states.cu).
Value isInfinity(KernelBuilder &kb, Value bits) {
  return kb.cmp(CmpIPredicate::eq, kb.andI(bits, kb.c(0x7fffffff)),
                kb.c(0x7f800000));
}

} // namespace

void buildMergeReader(OpBuilder &b, Location loc, const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  auto [heads, dvTiles, esz, tileBytes, outStride, lseStride] =
      readMergeSizes(kb);
  Value states = kb.compileTimeArg(kMcNumStates);
  Value negBig = kb.compileTimeArg(kMcNegBigBits);
  Value outBase = kb.runtimeArg(kMrPartialOut);
  Value lseBase = kb.runtimeArg(kMrPartialLse);
  Value tokens = kb.runtimeArg(kMrNumTokens);
  Value banks = kb.runtimeArg(kMrNumBanks);
  Value numUnits = kb.runtimeArg(kMrNumUnits);
  Value zero = kb.c(0);
  Value stagePtr = kb.getWritePtr(kCbMergeStage);
  Value lseStagePtr = kb.getWritePtr(kCbMergeLseStage);
  Value lseBytes = kb.c(cfg.headVectorBytes());

  kb.forLoop(0, numUnits, [&](Value unit) {
    MergeUnitFields u = readMergeUnit(kb, unit);
    // Every state's lse first: the max comes before any weight.
    kb.forLoop(0, states, [&](Value s) {
      kb.cbReserveBack(kCbMergeLseIn, kb.c(1));
      Value tile = kb.getWritePtr(kCbMergeLseIn);
      kb.forLoop(0, kb.c(32), [&](Value row) {
        Value at = kb.faceOffset(row, zero);
        kb.ifThenElse(
            kb.cmp(CmpIPredicate::slt, row, u.numRows),
            [&] {
              Value r = kb.add(u.rowBegin, row);
              Value page = kb.add(kb.mul(s, tokens), kb.div(r, heads));
              kb.nocAsyncRead(
                  kb.dramPageAddr(lseBase, lseStride, banks, page, zero),
                  lseStagePtr, lseBytes);
              kb.nocAsyncReadBarrier();
              Value bits = kb.loadL1Word(lseStagePtr, kb.rem(r, heads));
              kb.storeL1Word(tile, at,
                             kb.select(isInfinity(kb, bits), negBig, bits));
            },
            [&] { kb.storeL1Word(tile, at, negBig); });
      });
      kb.cbPushBack(kCbMergeLseIn, kb.c(1));
    });
    // Then each state's rows, gathered into face order. The row of an
    // empty state becomes zeros: its weight is 0, but 0 times a NaN or an
    // inf in its out would still reach the sum.
    kb.forLoop(0, states, [&](Value s) {
      kb.cbReserveBack(kCbMergeIn, dvTiles);
      Value tiles = kb.getWritePtr(kCbMergeIn);
      kb.forLoop(0, u.numRows, [&](Value row) {
        Value r = kb.add(u.rowBegin, row);
        kb.nocAsyncRead(
            kb.dramPageAddr(lseBase, lseStride, banks,
                            kb.add(kb.mul(s, tokens), kb.div(r, heads)), zero),
            lseStagePtr, lseBytes);
        Value page = kb.add(kb.mul(kb.mul(s, tokens), heads), r);
        kb.nocAsyncRead(kb.dramPageAddr(outBase, outStride, banks, page, zero),
                        stagePtr, kb.mul(kb.c(cfg.valueSize), esz));
        kb.nocAsyncReadBarrier();
        Value empty =
            isInfinity(kb, kb.loadL1Word(lseStagePtr, kb.rem(r, heads)));
        TiledRows in{tiles, tileBytes, esz, cfg.valueSize};
        kb.ifThenElse(
            empty, [&] { zeroRowColumns(kb, in, row, 0); },
            [&] { gatherRow(kb, in, row, stagePtr); });
        kb.nocAsyncReadBarrier();
      });
      kb.cbPushBack(kCbMergeIn, dvTiles);
    });
  });
}

void buildMergeCompute(OpBuilder &b, Location loc, const AttentionConfig &cfg,
                       const ProgramDescriptionBuilder &program) {
  KernelBuilder kb(b, loc);
  ComputeBuilder cb(kb, program);
  Value dvTiles = kb.compileTimeArg(kMcDvTiles);
  Value states = kb.compileTimeArg(kMcNumStates);
  Value numUnits = kb.runtimeArg(kMrNumUnits);
  Value c0 = kb.c(0), c1 = kb.c(1);

  cb.hwStartup(SrcOrder::Regular, kCbMergeLseIn, kCbMergeLseIn, kCbMergeMax);
  cb.forLoop(0, numUnits, [&](Value) {
    kb.cbWaitFront(kCbMergeLseIn, states);
    // m = max_s lse_s.
    cb.section({kCbMergeMax, kCbMergeMaxOut}, [&] {
      cb.copy(kCbMergeLseIn, c0, c0);
      cb.forLoop(1, states, [&](Value s) {
        cb.copy(kCbMergeLseIn, s, c1);
        cb.binaryMax(c0, c1, c0);
      });
    });
    kb.cbWaitFront(kCbMergeMax, c1);
    // Weight sum and accumulator start at 0.
    cb.acquire();
    cb.commit();
    cb.wait();
    kb.cbReserveBack(kCbMergeSum, c1);
    cb.pack(c0, kCbMergeSum);
    kb.cbPushBack(kCbMergeSum, c1);
    kb.cbReserveBack(kCbMergeAcc, dvTiles);
    cb.forLoop(0, dvTiles, [&](Value) { cb.pack(c0, kCbMergeAcc); });
    kb.cbPushBack(kCbMergeAcc, dvTiles);
    cb.release();

    cb.forLoop(0, states, [&](Value s) {
      // w_s = exp(lse_s - m); sum += w_s.
      cb.section({kCbMergeWeight}, [&] {
        cb.binary(BinaryOp::Sub, kCbMergeLseIn, kCbMergeMax, s, c0, c0);
        cb.exp(c0);
      });
      kb.cbWaitFront(kCbMergeWeight, c1);
      kb.cbWaitFront(kCbMergeSum, c1);
      cb.section({kCbMergeSum}, [&] {
        cb.copy(kCbMergeWeight, c0, c0);
        cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, kCbMergeSum, c0, c0);
      });
      kb.cbPopFront(kCbMergeSum, c1);
      // acc += w_s out_s, one value tile at a time.
      kb.cbWaitFront(kCbMergeIn, dvTiles);
      kb.cbWaitFront(kCbMergeAcc, dvTiles);
      cb.sections(dvTiles, kCbMergeAcc, [&](Value dt) {
        cb.binaryBcastCols(BinaryOp::Mul, kCbMergeIn, kCbMergeWeight, dt, c0,
                           c0);
        cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, kCbMergeAcc, dt, c0);
      });
      kb.cbPopFront(kCbMergeAcc, dvTiles);
      kb.cbPopFront(kCbMergeIn, dvTiles);
      kb.cbPopFront(kCbMergeWeight, c1);
    });

    // out = acc / sum; lse = m + log(sum).
    buildNormalize(cb,
                   {kCbMergeSum, kCbMergeMax, kCbMergeAcc, kCbMergeRecip,
                    kCbMergeOut, kCbMergeLseOut},
                   dvTiles);
    kb.cbPopFront(kCbMergeSum, c1);
    kb.cbPopFront(kCbMergeMax, c1);
    kb.cbPopFront(kCbMergeLseIn, states);
  });
}

void buildMergeWriter(OpBuilder &b, Location loc, const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  auto [heads, dvTiles, esz, tileBytes, outStride, lseStride] =
      readMergeSizes(kb);
  Value negBig = kb.compileTimeArg(kMcNegBigBits);
  Value negInf = kb.compileTimeArg(kMcNegInfBits);
  Value outBase = kb.runtimeArg(kMrOut);
  Value lseBase = kb.runtimeArg(kMrLse);
  Value banks = kb.runtimeArg(kMrNumBanks);
  Value numUnits = kb.runtimeArg(kMrNumUnits);
  Value zero = kb.c(0);
  Value stagePtr = kb.getWritePtr(kCbMergeWriterStage);
  // The output row of a row whose states were all empty.
  Value zeroRow = kb.getWritePtr(kCbMergeZero);
  kb.forLoop(0, kb.c(cfg.valueSize * cfg.esz() / 4),
             [&](Value i) { kb.storeL1Word(zeroRow, i, zero); });

  kb.forLoop(0, numUnits, [&](Value unit) {
    MergeUnitFields u = readMergeUnit(kb, unit);
    kb.cbWaitFront(kCbMergeOut, dvTiles);
    kb.cbWaitFront(kCbMergeLseOut, kb.c(1));
    kb.cbWaitFront(kCbMergeMaxOut, kb.c(1));
    Value outPtr = kb.getReadPtr(kCbMergeOut);
    Value lsePtr = kb.getReadPtr(kCbMergeLseOut);
    Value maxPtr = kb.getReadPtr(kCbMergeMaxOut);
    OutRows rows{
        {outPtr, tileBytes, esz, cfg.valueSize}, outBase, outStride, banks};
    kb.forLoop(0, u.numRows, [&](Value row) {
      Value r = kb.add(u.rowBegin, row);
      Value at = kb.faceOffset(row, zero);
      Value empty =
          kb.cmp(CmpIPredicate::eq, kb.loadL1Word(maxPtr, at), negBig);
      writeOutRow(kb, rows, row, r, [&](Value col, Value src) {
        return kb.select(empty, kb.add(zeroRow, kb.mul(col, esz)), src);
      });
      // lse to byte 4 * head of the token's page, staged congruently.
      Value head = kb.rem(r, heads);
      Value word = kb.rem(head, 4);
      Value slot = kb.add(stagePtr, kb.mul(row, 16));
      kb.storeL1Word(slot, word,
                     kb.select(empty, negInf, kb.loadL1Word(lsePtr, at)));
      kb.nocAsyncWrite(kb.add(slot, kb.mul(word, 4)),
                       kb.dramPageAddr(lseBase, lseStride, banks,
                                       kb.div(r, heads), kb.mul(head, 4)),
                       kb.c(4));
    });
    kb.nocAsyncWriteBarrier();
    kb.cbPopFront(kCbMergeOut, dvTiles);
    kb.cbPopFront(kCbMergeLseOut, kb.c(1));
    kb.cbPopFront(kCbMergeMaxOut, kb.c(1));
  });
}

} // namespace mlir::attn::tt
