//===- PagedParts.cpp - The pieces paged_attention's kernels share --------===//
//
// Declared in PagedAttention.h: the request search, the cache addressing,
// visibility, the score math and the launch's inputs, which the per-token
// kernel (PagedAttention.cpp), the tiled kernels (PagedPrefill.cpp,
// PagedPrefillMatrix.cpp) and merge_states use. They live apart from every
// kernel so that no kernel's file calls back into another's.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::findRequest(KernelBuilder &b, Value qsl, Value t,
                              Value numReqs) {
  Type idx = b.getIndexType();
  auto loop = b.create<scf::WhileOp>(
      TypeRange{idx, idx}, ValueRange{b.idx(0), numReqs},
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        KernelBuilder w(loc, nested, b.options);
        Value more = w.cmpi(arith::CmpIPredicate::sgt, w.subi(args[1], args[0]),
                            w.idx(1));
        w.create<scf::ConditionOp>(more, args);
      },
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        KernelBuilder w(loc, nested, b.options);
        Value mid = w.divui(w.addi(args[0], args[1]), w.idx(2));
        Value startsBefore =
            w.cmpi(arith::CmpIPredicate::sle, w.loadIndex(qsl, mid), t);
        w.create<scf::YieldOp>(
            ValueRange{w.select(startsBefore, mid, args[0]),
                       w.select(startsBefore, args[1], mid)});
      });
  return loop.getResult(0);
}

Value mlir::attn::cacheRowStart(KernelBuilder &b, const PagedConfig &c,
                                int64_t part, Value block, Value offset,
                                Value g) {
  Value blockPart = b.addi(b.muli(block, b.idx(2)), b.idx(part));
  Value row =
      c.nhd
          ? b.addi(b.muli(b.addi(b.muli(blockPart, b.idx(c.blockSize)), offset),
                          b.idx(c.numKvHeads)),
                   g)
          : b.addi(b.muli(b.addi(b.muli(blockPart, b.idx(c.numKvHeads)), g),
                          b.idx(c.blockSize)),
                   offset);
  return b.muli(row, b.idx(c.headSize));
}

Value mlir::attn::lookupBlock(KernelBuilder &b, int64_t blockSize,
                              Value blockTable, Value tableRow,
                              Value lastColumn, Value lastBlock, Value j) {
  // seq_len beyond M * B is rejected before launch; the clamps keep every
  // read inside the table and the cache regardless.
  Value column =
      b.create<arith::MinUIOp>(b.divui(j, b.idx(blockSize)), lastColumn);
  Value raw = b.loadIndex(blockTable, b.addi(tableRow, column));
  return b.create<arith::MinUIOp>(raw, lastBlock);
}

std::pair<Value, Value> mlir::attn::visibleKeys(KernelBuilder &b,
                                                const PagedConfig &c, Value pos,
                                                Value seqLen) {
  // Windows reach 2^31 - 1 and cross-attention positions are negative, so
  // pos - window_left and pos + window_right + 1 may leave i32 (SPIR-V's
  // index): each window end is taken only where it is inside [0, seqLen),
  // which the compare finds without forming the sum.
  using P = arith::CmpIPredicate;
  Value lo = b.idx(0), hi = seqLen;
  if (c.causal)
    hi = b.minsi(hi, b.addi(pos, b.idx(1)));
  if (c.windowLeft >= 0) {
    Value wl = b.idx(c.windowLeft);
    lo = b.select(b.cmpi(P::sgt, pos, wl), b.subi(pos, wl), lo);
  }
  if (!c.causal && c.windowRight >= 0) {
    // Keys after pos: seqLen - 1 - pos = q_len - 1 - i, small.
    Value wr = b.idx(c.windowRight);
    Value after = b.subi(b.subi(seqLen, pos), b.idx(1));
    hi = b.select(b.cmpi(P::slt, wr, after),
                  b.addi(b.addi(pos, wr), b.idx(1)), hi);
  }
  return {lo, hi};
}

Value mlir::attn::keyDistance(KernelBuilder &b, Value j, Value pos) {
  return indexToF32(b, b.subi(j, pos));
}

Value mlir::attn::indexToF32(KernelBuilder &b, Value v) {
  return b.create<arith::SIToFPOp>(
      b.getF32Type(), b.create<arith::IndexCastOp>(b.getI32Type(), v));
}

Value ScoreMath::queryScale(KernelBuilder &b) const {
  return b.f32(capped() ? c.scale : c.scale * kLog2E);
}

std::pair<Value, Value> ScoreMath::rowScales(KernelBuilder &b, Value kScales,
                                             Value vScales, Value g) const {
  Value query = queryScale(b);
  if (Value kScale = b.loadScale(kScales, c.kScaleCount, g))
    query = b.mulf(query, kScale);
  return {query, b.loadScale(vScales, c.vScaleCount, g)};
}

Value ScoreMath::slope(KernelBuilder &b, Value alibi, Value h) const {
  return b.mulf(b.loadF32(alibi, h), b.f32(kLog2E));
}

Value ScoreMath::score(KernelBuilder &b, Value dot, Value slope,
                       Value dist) const {
  // FlashAttention-2's order: the soft cap, then the bias -slope * |j - p|.
  Value s = dot;
  if (capped())
    s = b.mulf(b.f32(c.softCap * kLog2E),
               b.tanhF32(b.mulf(s, b.f32(1.0 / c.softCap))));
  if (slope)
    s = b.fma(slope, b.create<arith::NegFOp>(b.create<math::AbsFOp>(dist)), s);
  return s;
}

void mlir::attn::boundPagedInputs(HostLaunch &launch) {
  using namespace ::attn::abi;
  // A request r < num_reqs (at least one: a token's search starts at
  // request 0) reads query_start_loc[r + 1], seq_lens[r] and its block
  // table row r * M + column, the column clamped to M - 1; a block
  // entry is clamped to num_blocks - 1, so both must be at least 1.
  launch.boundRows(Arg::QueryStartLoc, {paramOf(kPagedNumReqs)}, 1, 1);
  launch.boundRows(Arg::SeqLens, {paramOf(kPagedNumReqs)}, 0, 1);
  launch.bound(Arg::BlockTable,
               {paramOf(kPagedNumReqs), paramOf(kPagedMaxBlocksPerReq)}, 1, 0,
               1);
  launch.boundRows(Arg::Cache, {paramOf(kPagedNumBlocks)}, 0, 1);
  launch.boundRows(Arg::Query, {paramOf(kPagedNumTokens)});
}

void mlir::attn::addPagedInputs(HostLaunch &launch, PagedAttentionOp op,
                                MetadataOp metadata, bool withSinks) {
  launch.addBuffer(Arg::Query, op.getQuery());
  launch.addBuffer(Arg::Cache, op.getKvCache());
  launch.addBuffer(Arg::QueryStartLoc, metadata.getQueryStartLoc());
  launch.addBuffer(Arg::SeqLens, metadata.getSeqLens());
  launch.addBuffer(Arg::BlockTable, metadata.getBlockTable());
  if (Value alibi = op.getAlibiSlopes())
    launch.addBuffer(Arg::AlibiSlopes, alibi);
  if (withSinks)
    launch.addBuffer(Arg::Sinks, op.getSinks());
  if (Value kScale = op.getKScale())
    launch.addBuffer(Arg::KScale, kScale);
  if (Value vScale = op.getVScale())
    launch.addBuffer(Arg::VScale, vScale);
}
