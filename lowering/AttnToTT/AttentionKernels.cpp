//===- AttentionKernels.cpp - Paged attention as TT reader/compute/writer ===//
//
// A work unit is up to 32 query rows of one request and kv head, a row being
// (query token, head of the group), so a decode packs a GQA group into one
// tile as sdpa_decode does. The reader stages each query row in L1 and
// gathers it into tiles, reads the request's block-table row in aligned
// chunks, assembles each 32-key tile of K and V from the cache blocks, and
// builds an additive mask tile (and an ALiBi bias tile); the compute kernel
// runs the online softmax on tiles; the writer stores output rows and, from
// a staging slot congruent with the destination, each lse value. Every NOC
// transfer pairs addresses that agree modulo the architecture's alignment
// (see devices/tt/emulator/Emulator.h), which is what the staging is for.
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/ComputeBuilder.h"
#include "lowering/AttnToTT/KernelBuilder.h"
#include "lowering/AttnToTT/Kernels.h"

#include <cstring>

namespace mlir::attn::tt {

using arith::CmpIPredicate;

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

StringRef AttentionConfig::dtypeName() const {
  switch (format) {
  case TTDataFormat::Float32:
    return "f32";
  case TTDataFormat::Float16_b:
    return "bf16";
  case TTDataFormat::Float16:
    return "f16";
  }
  return "";
}

const StringRef kAttnRuntimeArgs[kRtUnits] = {
    "q_addr",     "kv_addr",    "bt_addr",        "bt_page_stride",
    "out_addr",   "lse_addr",   "sinks_addr",     "alibi_addr",
    "num_dram_banks", "num_units"};
const StringRef kAttnUnitArgs[kNumUnitArgs] = {
    "req",     "kv_head",       "row_begin",    "num_rows", "q_start",
    "context", "seq_len",       "kt_begin",     "kt_end",   "key_begin",
    "key_end", "out_page_base", "lse_page_base"};

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
  v[kCtBlocksPerTile] = c.blocksPerTile();
  v[kCtTilesPerBlock] = c.tilesPerBlock();
  v[kCtKvParts] = c.kvParts;
  v[kCtTileBytes] = c.tileBytes();
  v[kCtQPageStride] = c.pageStride(c.headSize * c.esz());
  v[kCtOutPageStride] = c.pageStride(c.valueSize * c.esz());
  v[kCtLsePageStride] = c.headVectorBytes();
  v[kCtHeadPageStride] = c.headVectorBytes();
  return v;
}

void declareAttentionBuffers(ProgramDescriptionBuilder &desc,
                             const AttentionConfig &cfg) {
  int64_t tb = cfg.tileBytes();
  TTDataFormat fmt = cfg.format;
  const TTDataFormat f32 = TTDataFormat::Float32;
  desc.cb(kCbQ, "q", cfg.dkTiles(), tb, fmt);
  desc.cb(kCbK, "k", 2 * cfg.dkTiles(), tb, fmt);
  desc.cb(kCbV, "v", 2 * cfg.dvTiles(), tb, fmt);
  desc.cb(kCbMask, "mask", 2, 4096, f32);
  desc.cb(kCbInit, "init", 2, 4096, f32);
  desc.cb(kCbScaler, "scaler", 1, 4096, f32);
  desc.cb(kCbBlockTable, "block_table_chunk", 1, kBlockTableChunk * 4, f32);
  desc.cb(kCbStage, "q_stage", 1, cfg.headSize * cfg.esz(), fmt);
  desc.cb(kCbHeadParams, "head_params", 2, cfg.headVectorBytes(), f32);
  desc.cb(kCbLseStage, "lse_stage", 1, 32 * 16, f32);
  if (cfg.alibi)
    desc.cb(kCbBias, "alibi_bias", 2, 4096, f32);
  desc.cb(kCbOut, "out", cfg.dvTiles(), tb, fmt);
  desc.cb(kCbLse, "lse", 1, 4096, f32);
  desc.cb(kCbS, "scores", 1, 4096, f32);
  desc.cb(kCbM, "max", 2, 4096, f32);
  desc.cb(kCbL, "sum", 2, 4096, f32);
  desc.cb(kCbAlpha, "alpha", 1, 4096, f32);
  desc.cb(kCbP, "probs", 1, tb, fmt);
  desc.cb(kCbAcc, "acc", 2 * cfg.dvTiles(), 4096, f32);
  if (fmt != f32)
    desc.cb(kCbPSum, "probs_f32", 1, 4096, f32);
  desc.cb(kCbRowSum, "row_sum", 1, 4096, f32);
}

namespace {

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

} // namespace

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

namespace {

/// The reader kernel: per work unit the query tile and the starting
/// softmax state, then per key tile the block-table chunk, the key and
/// value tiles and the mask (and ALiBi bias) tile.
class AttentionReader {
public:
  AttentionReader(OpBuilder &b, Location loc, const AttentionConfig &cfg);

  void build();

private:
  /// The reduce scaler, a tile of ones, pushed once.
  void pushScaler();
  /// A per-head parameter page (sinks, ALiBi slopes), read whole into L1
  /// once; returns where.
  Value readHeadPage(AttnRt arg);
  /// The unit's query rows: each row page is read whole into the stage,
  /// then its half rows are copied into face order within L1.
  void readQueryTile(const Unit &u);
  /// The starting softmax state: running max (column 0 of tile 0) and sum
  /// (column 0 of tile 1); with sinks the sink is a first key of value 0.
  void pushInitialState(const Unit &u);
  /// The block-table chunk holding key tile `kt`'s blocks (one chunk: a
  /// tile spans at most 32 / B consecutive entries, which divides 64);
  /// returns the chunk's index.
  Value readBlockTableChunk(const Unit &u, Value kt);
  /// Key and value tiles of key tile `kt`: 32 / rows_per_read reads per
  /// tile and part.
  void readKeyValueTiles(const Unit &u, Value kt, Value chunk);
  /// Rows [keyRow, keyRow + rows_per_read) of `numTiles` tiles of cache
  /// part `part` (0 keys, kvParts - 1 values) into the tiles at `basePtr`.
  void readPart(const Unit &u, Value part, Value numTiles, Value basePtr,
                Value group, Value rowTile, Value tileRow, Value keyRow);
  /// Zeros rows [firstRow, endRow) of the `numTiles` tiles at `basePtr`.
  void zeroRows(Value basePtr, Value numTiles, Value firstRow, Value endRow);
  /// A row of the key tile, clamped to [0, 32].
  Value clampToTile(Value row);
  /// The additive mask of key tile `kt` (0 where key j is visible to the
  /// row, -1e30 elsewhere) and the ALiBi bias -slope[h] * |j - p|.
  void buildMask(const Unit &u, Value kt);

  KernelBuilder kb;
  const AttentionConfig &cfg;
  Value dkTiles, dvTiles, blockSize, heads, kvHeads, hpg, esz, negBig, one,
      blocksPerTile, tilesPerBlock, kvParts, tileBytes, qStride, headStride;
  Value qBase, kvBase, btBase, btStride, banks, numUnits, zero, rowsPerRead;
  Value headBytes, sinksPtr, slopesPtr, btPtr, stagePtr, halfRowBytes;
};

AttentionReader::AttentionReader(OpBuilder &b, Location loc,
                                 const AttentionConfig &cfg)
    : kb(b, loc), cfg(cfg) {
  dkTiles = kb.compileTimeArg(kCtDkTiles);
  dvTiles = kb.compileTimeArg(kCtDvTiles);
  blockSize = kb.compileTimeArg(kCtBlockSize);
  heads = kb.compileTimeArg(kCtHeads);
  kvHeads = kb.compileTimeArg(kCtKvHeads);
  hpg = kb.compileTimeArg(kCtHeadsPerGroup);
  esz = kb.compileTimeArg(kCtElemSize);
  negBig = kb.compileTimeArg(kCtNegBigBits);
  one = kb.compileTimeArg(kCtOneBits);
  blocksPerTile = kb.compileTimeArg(kCtBlocksPerTile);
  tilesPerBlock = kb.compileTimeArg(kCtTilesPerBlock);
  kvParts = kb.compileTimeArg(kCtKvParts);
  tileBytes = kb.compileTimeArg(kCtTileBytes);
  qStride = kb.compileTimeArg(kCtQPageStride);
  headStride = kb.compileTimeArg(kCtHeadPageStride);

  qBase = kb.runtimeArg(kRtQ);
  kvBase = kb.runtimeArg(kRtKv);
  btBase = kb.runtimeArg(kRtBt);
  btStride = kb.runtimeArg(kRtBtPageStride);
  banks = kb.runtimeArg(kRtNumBanks);
  numUnits = kb.runtimeArg(kRtNumUnits);
  zero = kb.c(0);
  rowsPerRead = kb.c(std::min<int64_t>(cfg.blockSize, 32));
}

void AttentionReader::pushScaler() {
  kb.cbReserveBack(kCbScaler, kb.c(1));
  Value scalerPtr = kb.getWritePtr(kCbScaler);
  kb.forLoop(0, kb.c(1024),
             [&](Value i) { kb.storeL1Word(scalerPtr, i, one); });
  kb.cbPushBack(kCbScaler, kb.c(1));
}

Value AttentionReader::readHeadPage(AttnRt arg) {
  kb.cbReserveBack(kCbHeadParams, kb.c(1));
  Value ptr = kb.getWritePtr(kCbHeadParams);
  kb.nocAsyncRead(
      kb.dramPageAddr(kb.runtimeArg(arg), headStride, banks, zero, zero), ptr,
      headBytes);
  kb.nocAsyncReadBarrier();
  kb.cbPushBack(kCbHeadParams, kb.c(1));
  return ptr;
}

void AttentionReader::readQueryTile(const Unit &u) {
  kb.cbReserveBack(kCbQ, dkTiles);
  TiledRows q{kb.getWritePtr(kCbQ), tileBytes, esz, cfg.headSize};
  kb.forLoop(0, u[kUNumRows], [&](Value row) {
    RowInfo info = rowInfo(kb, u, row, hpg);
    Value page = kb.add(kb.mul(info.token, heads), info.head);
    kb.nocAsyncRead(kb.dramPageAddr(qBase, qStride, banks, page, zero),
                    stagePtr, kb.mul(kb.c(cfg.headSize), esz));
    kb.nocAsyncReadBarrier();
    gatherRow(kb, q, row, stagePtr);
    kb.nocAsyncReadBarrier();
  });
  kb.cbPushBack(kCbQ, dkTiles);
}

void AttentionReader::pushInitialState(const Unit &u) {
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
          kb.storeL1Word(initPtr, at, kb.loadL1Word(sinksPtr, info.head));
          kb.storeL1Word(initPtr, sumAt, one);
        },
        [&] {
          kb.storeL1Word(initPtr, at, negBig);
          kb.storeL1Word(initPtr, sumAt, zero);
        });
  });
  kb.cbPushBack(kCbInit, kb.c(2));
}

Value AttentionReader::readBlockTableChunk(const Unit &u, Value kt) {
  Value firstIndex = kb.div(kb.mul(kt, 32), blockSize);
  Value chunk = kb.div(firstIndex, kBlockTableChunk);
  kb.nocAsyncRead(kb.dramPageAddr(btBase, btStride, banks, u[kUReq],
                                  kb.mul(chunk, kBlockTableChunk * 4)),
                  btPtr, kb.c(kBlockTableChunk * 4));
  kb.nocAsyncReadBarrier();
  return chunk;
}

void AttentionReader::readPart(const Unit &u, Value part, Value numTiles,
                               Value basePtr, Value group, Value rowTile,
                               Value tileRow, Value keyRow) {
  kb.forLoop(0, numTiles, [&](Value dt) {
    Value page = kb.add(
        kb.mul(kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(group, kvParts),
                                                  part),
                                           kvHeads),
                                    u[kUKvHead]),
                             tilesPerBlock),
                      rowTile),
               dkTiles),
        dt);
    Value dstTile = kb.add(basePtr, kb.mul(dt, tileBytes));
    if (cfg.blockSize >= 16) {
      // Rows 0-15 are faces 0-1 and rows 16-31 faces 2-3, so 16 or 32 rows
      // from row 0 or 16 are contiguous bytes.
      Value rowBytes = kb.mul(esz, 32);
      kb.nocAsyncRead(kb.dramPageAddr(kvBase, tileBytes, banks, page,
                                      kb.mul(tileRow, rowBytes)),
                      kb.add(dstTile, kb.mul(keyRow, rowBytes)),
                      kb.mul(rowsPerRead, rowBytes));
      return;
    }
    // Fewer rows than a face: a piece of each face of the half.
    kb.forLoop(0, kb.c(2), [&](Value faceCol) {
      auto at = [&](Value r) {
        return kb.mul(kb.faceOffset(r, kb.mul(faceCol, 16)), esz);
      };
      kb.nocAsyncRead(
          kb.dramPageAddr(kvBase, tileBytes, banks, page, at(tileRow)),
          kb.add(dstTile, at(keyRow)), kb.mul(rowsPerRead, halfRowBytes));
    });
  });
}

void AttentionReader::readKeyValueTiles(const Unit &u, Value kt,
                                        Value chunk) {
  kb.cbReserveBack(kCbK, dkTiles);
  kb.cbReserveBack(kCbV, dvTiles);
  Value kPtr = kb.getWritePtr(kCbK);
  Value vPtr = kb.getWritePtr(kCbV);
  Value vPart = kb.sub(kvParts, kb.c(1));
  kb.forLoop(0, kb.div(kb.c(32), rowsPerRead), [&](Value sub) {
    Value keyRow = kb.mul(sub, rowsPerRead);
    Value pos = kb.add(kb.mul(kt, 32), keyRow);
    // Only reads that hold a key some row sees (key_end <= seq_len); the
    // read's end pos + rowsPerRead leaves i32 in the last tile of 2^31 - 1
    // keys, so the begin moves instead (key_begin >= 0).
    Value live = kb.andI(
        kb.cmp(CmpIPredicate::slt, pos, u[kUKeyEnd]),
        kb.cmp(CmpIPredicate::sgt, pos, kb.sub(u[kUKeyBegin], rowsPerRead)));
    kb.ifThen(live, [&] {
      Value index = kb.div(pos, blockSize);
      Value block = kb.loadL1Word(
          btPtr, kb.sub(index, kb.mul(chunk, kBlockTableChunk)));
      Value group = kb.div(block, blocksPerTile);
      Value rowInGroup =
          kb.add(kb.mul(kb.rem(block, blocksPerTile), blockSize),
                 kb.rem(pos, blockSize));
      Value rowTile = kb.div(rowInGroup, 32);
      Value tileRow = kb.rem(rowInGroup, 32);
      readPart(u, kb.c(0), dkTiles, kPtr, group, rowTile, tileRow, keyRow);
      readPart(u, vPart, dvTiles, vPtr, group, rowTile, tileRow, keyRow);
    });
  });
  kb.nocAsyncReadBarrier();
  // Rows of keys no row of the unit sees hold unread cache slots (a block's
  // unused tail, a block before the window that vLLM points at its null
  // block) or an earlier tile's rows: any bits, NaN and inf among them. The
  // additive mask and a zero probability would still carry a NaN (NaN +
  // -1e30 and 0 * NaN are NaN), so those rows are replaced by zeros. Keys
  // some row sees and another does not are live cache data: the mask is
  // enough for them.
  Value tileStart = kb.mul(kt, 32);
  Value liveBegin = clampToTile(kb.sub(u[kUKeyBegin], tileStart));
  Value liveEnd = clampToTile(kb.sub(u[kUKeyEnd], tileStart));
  for (auto [ptr, tiles] :
       {std::pair(kPtr, dkTiles), std::pair(vPtr, dvTiles)}) {
    zeroRows(ptr, tiles, zero, liveBegin);
    zeroRows(ptr, tiles, liveEnd, kb.c(32));
  }
  kb.cbPushBack(kCbK, dkTiles);
}

Value AttentionReader::clampToTile(Value row) {
  Value atLeast0 = kb.select(kb.cmp(CmpIPredicate::slt, row, zero), zero, row);
  Value rows = kb.c(32);
  return kb.select(kb.cmp(CmpIPredicate::sgt, atLeast0, rows), rows, atLeast0);
}

void AttentionReader::zeroRows(Value basePtr, Value numTiles, Value firstRow,
                               Value endRow) {
  Value halfRowWords = kb.div(halfRowBytes, 4);
  kb.forLoop(0, numTiles, [&](Value dt) {
    Value tile = kb.add(basePtr, kb.mul(dt, tileBytes));
    kb.forLoop(firstRow, endRow, [&](Value row) {
      kb.forLoop(0, kb.c(2), [&](Value half) {
        Value word0 =
            kb.div(kb.mul(kb.faceOffset(row, kb.mul(half, 16)), esz), 4);
        kb.forLoop(0, halfRowWords, [&](Value w) {
          kb.storeL1Word(tile, kb.add(word0, w), zero);
        });
      });
    });
  });
}

void AttentionReader::buildMask(const Unit &u, Value kt) {
  kb.cbReserveBack(kCbMask, kb.c(1));
  Value maskPtr = kb.getWritePtr(kCbMask);
  Value biasPtr;
  if (cfg.alibi) {
    kb.cbReserveBack(kCbBias, kb.c(1));
    biasPtr = kb.getWritePtr(kCbBias);
  }
  kb.forLoop(0, kb.c(32), [&](Value row) {
    RowInfo info = rowInfo(kb, u, row, hpg);
    Value p = info.position;
    Value rowValid = kb.cmp(CmpIPredicate::slt, row, u[kUNumRows]);
    Value slope;
    if (cfg.alibi)
      slope = kb.loadL1Float(slopesPtr,
                             kb.select(rowValid, info.head, kb.c(0)));
    kb.forLoop(0, kb.c(32), [&](Value col) {
      Value j = kb.add(kb.mul(kt, 32), col);
      // The windows compare the distance j - p (in (-seq_len, q_len]), never
      // p - window_left or p + window_right: windows reach 2^31 - 1 and
      // positions are negative under cross-attention, so those leave i32.
      Value dist = kb.sub(j, p);
      Value visible =
          kb.andI(rowValid, kb.cmp(CmpIPredicate::slt, j, u[kUSeqLen]));
      if (cfg.causal)
        visible = kb.andI(visible, kb.cmp(CmpIPredicate::sle, j, p));
      if (cfg.windowLeft >= 0) {
        Value wl = kb.compileTimeArg(kCtWindowLeft);
        visible = kb.andI(visible, kb.cmp(CmpIPredicate::sge, dist,
                                          kb.sub(zero, wl)));
      }
      if (!cfg.causal && cfg.windowRight >= 0) {
        Value wr = kb.compileTimeArg(kCtWindowRight);
        visible = kb.andI(visible, kb.cmp(CmpIPredicate::sle, dist, wr));
      }
      Value at = kb.faceOffset(row, col);
      kb.storeL1Word(maskPtr, at, kb.select(visible, zero, negBig));
      if (cfg.alibi) {
        // -slope * |j - p|, for non-causal rows too (FlashAttention-2).
        Value negAbs = kb.select(kb.cmp(CmpIPredicate::slt, dist, zero), dist,
                                 kb.sub(zero, dist));
        kb.storeL1Float(biasPtr, at, kb.mulF(slope, kb.toFloat(negAbs)));
      }
    });
  });
  kb.cbPushBack(kCbMask, kb.c(1));
  if (cfg.alibi)
    kb.cbPushBack(kCbBias, kb.c(1));
}

void AttentionReader::build() {
  pushScaler();
  headBytes = kb.c(cfg.headVectorBytes());
  if (cfg.sinks)
    sinksPtr = readHeadPage(kRtSinks);
  if (cfg.alibi)
    slopesPtr = readHeadPage(kRtAlibi);
  btPtr = kb.getWritePtr(kCbBlockTable);
  stagePtr = kb.getWritePtr(kCbStage);
  halfRowBytes = kb.mul(esz, 16);
  kb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);
    readQueryTile(u);
    pushInitialState(u);
    kb.forLoop(u[kUKtBegin], u[kUKtEnd], [&](Value kt) {
      Value chunk = readBlockTableChunk(u, kt);
      readKeyValueTiles(u, kt, chunk);
      buildMask(u, kt);
      kb.cbPushBack(kCbV, dvTiles);
    });
  });
}

} // namespace

void buildAttentionReader(OpBuilder &b, Location loc,
                          const AttentionConfig &cfg) {
  AttentionReader(b, loc, cfg).build();
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

void buildNormalize(ComputeBuilder &cb, const NormalizeBuffers &buffers,
                    Value dvTiles) {
  KernelBuilder &kb = cb.base();
  Value c0 = kb.c(0), c1 = kb.c(1);
  kb.cbWaitFront(buffers.sum, c1);
  cb.section({buffers.recip}, [&] {
    cb.copy(buffers.sum, c0, c0);
    cb.recip(c0);
  });
  kb.cbWaitFront(buffers.recip, c1);
  kb.cbWaitFront(buffers.acc, dvTiles);
  cb.sections(dvTiles, buffers.out, [&](Value dt) {
    cb.binaryBcastCols(BinaryOp::Mul, buffers.acc, buffers.recip, dt, c0, c0);
  });
  kb.cbPopFront(buffers.recip, c1);
  kb.cbPopFront(buffers.acc, dvTiles);
  kb.cbWaitFront(buffers.max, c1);
  cb.section({buffers.lse}, [&] {
    cb.copy(buffers.sum, c0, c0);
    cb.log(c0);
    cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, buffers.max, c0, c0);
  });
}

namespace {

/// The compute kernel: per work unit the online softmax over its key
/// tiles, then out = acc / l and lse = m + log(l).
class AttentionCompute {
public:
  AttentionCompute(OpBuilder &b, Location loc, const AttentionConfig &cfg,
                   const ProgramDescriptionBuilder &program);

  void build();

private:
  /// Running max and sum from the reader's starting state; acc = 0.
  void startUnit();
  /// S = soft-capped scale * Q K^T (+ ALiBi bias) + mask.
  void scores();
  /// m_new = max(m_old, rowmax(S)), alpha = exp(m_old - m_new) and
  /// P = exp(S - m_new).
  void probabilities();
  /// l = alpha * l + rowsum(P).
  void sums();
  /// acc = alpha * acc + P V, one value tile at a time.
  void accumulate();

  KernelBuilder kb;
  ComputeBuilder cb;
  const AttentionConfig &cfg;
  Value dkTiles, dvTiles, scaleBits, numUnits, c0, c1, c2;
  bool f32;
  /// The row sums take P unrounded: from a second f32 pack in 16-bit
  /// programs.
  int64_t sumCb;
};

AttentionCompute::AttentionCompute(OpBuilder &b, Location loc,
                                   const AttentionConfig &cfg,
                                   const ProgramDescriptionBuilder &program)
    : kb(b, loc), cb(kb, program), cfg(cfg) {
  dkTiles = kb.compileTimeArg(kCtDkTiles);
  dvTiles = kb.compileTimeArg(kCtDvTiles);
  scaleBits = kb.compileTimeArg(kCtScaleBits);
  numUnits = kb.runtimeArg(kRtNumUnits);
  c0 = kb.c(0);
  c1 = kb.c(1);
  c2 = kb.c(2);
  f32 = cfg.format == TTDataFormat::Float32;
  sumCb = f32 ? kCbP : kCbPSum;
}

void AttentionCompute::startUnit() {
  kb.cbWaitFront(kCbInit, c2);
  cb.section({kCbM}, [&] { cb.copy(kCbInit, c0, c0); });
  cb.section({kCbL}, [&] { cb.copy(kCbInit, c1, c0); });
  kb.cbPopFront(kCbInit, c2);
  cb.acquire();
  cb.commit();
  cb.wait();
  kb.cbReserveBack(kCbAcc, dvTiles);
  cb.forLoop(0, dvTiles, [&](Value) { cb.pack(c0, kCbAcc); });
  kb.cbPushBack(kCbAcc, dvTiles);
  cb.release();
}

void AttentionCompute::scores() {
  kb.cbWaitFront(kCbK, dkTiles);
  kb.cbWaitFront(kCbMask, c1);
  if (cfg.alibi)
    kb.cbWaitFront(kCbBias, c1);
  cb.section({kCbS}, [&] {
    cb.forLoop(0, dkTiles, [&](Value dt) {
      cb.matmul(kCbQ, kCbK, dt, dt, c0, /*transposeIn1=*/true);
    });
    cb.mulScalar(c0, scaleBits);
    // FlashAttention-2's order: the soft cap, then the ALiBi bias.
    if (cfg.softCap > 0) {
      cb.mulScalar(c0, kb.compileTimeArg(kCtInvCapBits));
      cb.tanh(c0);
      cb.mulScalar(c0, kb.compileTimeArg(kCtCapBits));
    }
    if (cfg.alibi)
      cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, kCbBias, c0, c0);
    cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, kCbMask, c0, c0);
  });
  kb.cbPopFront(kCbK, dkTiles);
  kb.cbPopFront(kCbMask, c1);
  if (cfg.alibi)
    kb.cbPopFront(kCbBias, c1);
  kb.cbWaitFront(kCbS, c1);
}

void AttentionCompute::probabilities() {
  // m_new lands behind m_old in cb_m: the row reduction accumulates into a
  // face-transposed copy of m_old.
  kb.cbWaitFront(kCbM, c1);
  cb.section({kCbM}, [&] {
    cb.copy(kCbM, c0, c0, /*transposeFaces=*/true);
    cb.reduce(PoolType::Max, ReduceDim::Row, kCbS, kCbScaler, c0, c0, kCbM);
  });
  kb.cbWaitFront(kCbM, c2);
  cb.section({kCbAlpha}, [&] {
    cb.binary(BinaryOp::Sub, kCbM, kCbM, c0, c1, c0);
    cb.exp(c0);
  });
  // P is packed in the program's format for P V and, in 16-bit programs,
  // unrounded in f32 for the row sum.
  cb.acquire();
  cb.binaryBcastCols(BinaryOp::Sub, kCbS, kCbM, c0, c1, c0);
  cb.exp(c0);
  cb.commit();
  cb.wait();
  for (int64_t out : f32 ? SmallVector<int64_t>{kCbP}
                         : SmallVector<int64_t>{kCbP, kCbPSum}) {
    kb.cbReserveBack(out, c1);
    cb.pack(c0, out);
    kb.cbPushBack(out, c1);
  }
  cb.release();
  kb.cbPopFront(kCbS, c1);
  kb.cbPopFront(kCbM, c1);
}

void AttentionCompute::sums() {
  // rowsum(P), reduced into an empty tile.
  kb.cbWaitFront(sumCb, c1);
  cb.section({kCbRowSum}, [&] {
    cb.reduce(PoolType::Sum, ReduceDim::Row, sumCb, kCbScaler, c0, c0,
              kCbRowSum);
  });
  if (sumCb != kCbP)
    kb.cbPopFront(sumCb, c1);
  kb.cbWaitFront(kCbAlpha, c1);
  kb.cbWaitFront(kCbL, c1);
  kb.cbWaitFront(kCbRowSum, c1);
  cb.section({kCbL}, [&] {
    cb.binary(BinaryOp::Mul, kCbL, kCbAlpha, c0, c0, c0);
    cb.destReuse(BinaryOp::Add, ReuseDest::ToSrcA, kCbRowSum, c0, c0);
  });
  kb.cbPopFront(kCbL, c1);
  kb.cbPopFront(kCbRowSum, c1);
}

void AttentionCompute::accumulate() {
  kb.cbWaitFront(kCbP, c1);
  kb.cbWaitFront(kCbV, dvTiles);
  kb.cbWaitFront(kCbAcc, dvTiles);
  cb.sections(dvTiles, kCbAcc, [&](Value dt) {
    cb.binaryBcastCols(BinaryOp::Mul, kCbAcc, kCbAlpha, dt, c0, c0);
    cb.matmul(kCbP, kCbV, c0, dt, c0, /*transposeIn1=*/false);
  });
  kb.cbPopFront(kCbAcc, dvTiles);
  kb.cbPopFront(kCbV, dvTiles);
  kb.cbPopFront(kCbP, c1);
  kb.cbPopFront(kCbAlpha, c1);
}

void AttentionCompute::build() {
  // The SDK's sequence for a kernel that multiplies (api/compute/matmul.h),
  // as ttnn's sdpa and sdpa_decode kernels start: the start-up in matmul's
  // source order for the first product's operands, then its init.
  cb.hwStartup(SrcOrder::Reverse, kCbQ, kCbK, kCbS);
  cb.matmulInit(kCbQ, kCbK, /*transposeIn1=*/true);
  kb.cbWaitFront(kCbScaler, c1);
  cb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);
    kb.cbWaitFront(kCbQ, dkTiles);
    startUnit();
    cb.forLoop(u[kUKtBegin], u[kUKtEnd], [&](Value) {
      scores();
      probabilities();
      sums();
      accumulate();
    });
    // out = acc / l; lse = m + log(l).
    buildNormalize(cb, {kCbL, kCbM, kCbAcc, kCbAlpha, kCbOut, kCbLse},
                   dvTiles);
    kb.cbPopFront(kCbL, c1);
    kb.cbPopFront(kCbM, c1);
    kb.cbPopFront(kCbQ, dkTiles);
  });
}

} // namespace

void buildAttentionCompute(OpBuilder &b, Location loc,
                           const AttentionConfig &cfg,
                           const ProgramDescriptionBuilder &program) {
  AttentionCompute(b, loc, cfg, program).build();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void forEachRowPiece(KernelBuilder &kb, int64_t width,
                     llvm::function_ref<void(Value, Value)> piece) {
  if (int64_t whole = width / 16)
    kb.forLoop(0, kb.c(whole),
               [&](Value i) { piece(kb.mul(i, 16), kb.c(16)); });
  if (int64_t rest = width % 16)
    piece(kb.c(width - rest), kb.c(rest));
}

Value tiledAddress(KernelBuilder &kb, const TiledRows &rows, Value row,
                   Value col) {
  Value tile = kb.add(rows.base, kb.mul(kb.div(col, 32), rows.tileBytes));
  return kb.add(tile, kb.mul(kb.faceOffset(row, kb.rem(col, 32)), rows.esz));
}

void gatherRow(KernelBuilder &kb, const TiledRows &rows, Value row, Value src) {
  forEachRowPiece(kb, rows.width, [&](Value col, Value elements) {
    kb.nocAsyncRead(kb.localNocAddr(kb.add(src, kb.mul(col, rows.esz))),
                    tiledAddress(kb, rows, row, col),
                    kb.mul(elements, rows.esz));
  });
  zeroRowColumns(kb, rows, row, rows.width);
}

void zeroRowColumns(KernelBuilder &kb, const TiledRows &rows, Value row,
                    int64_t from) {
  int64_t end = (rows.width + 31) / 32 * 32;
  // A face row's 16 elements are contiguous in L1: the rest of the face
  // row `from` falls in, then whole face rows.
  auto zeroPiece = [&](Value col, Value elements) {
    Value at = tiledAddress(kb, rows, row, col);
    kb.forLoop(0, kb.div(kb.mul(elements, rows.esz), 4),
               [&](Value w) { kb.storeL1Word(at, w, kb.c(0)); });
  };
  int64_t col = from;
  if (col % 16 != 0 && col < end) {
    zeroPiece(kb.c(col), kb.c(16 - col % 16));
    col += 16 - col % 16;
  }
  if (col < end)
    kb.forLoop(kb.c(col / 16), kb.c(end / 16),
               [&](Value i) { zeroPiece(kb.mul(i, 16), kb.c(16)); });
}

void writeOutRow(KernelBuilder &kb, const OutRows &rows, Value row, Value page,
                 llvm::function_ref<Value(Value col, Value src)> source) {
  Value esz = rows.tiles.esz;
  forEachRowPiece(kb, rows.tiles.width, [&](Value col, Value elements) {
    Value src = tiledAddress(kb, rows.tiles, row, col);
    kb.nocAsyncWrite(source ? source(col, src) : src,
                     kb.dramPageAddr(rows.outBase, rows.outStride, rows.banks,
                                     page, kb.mul(col, esz)),
                     kb.mul(elements, esz));
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
  Value outStride = kb.compileTimeArg(kCtOutPageStride);
  Value lseStride = kb.compileTimeArg(kCtLsePageStride);
  Value outBase = kb.runtimeArg(kRtOut);
  Value lseBase = kb.runtimeArg(kRtLse);
  Value banks = kb.runtimeArg(kRtNumBanks);
  Value numUnits = kb.runtimeArg(kRtNumUnits);
  // One 16-byte staging slot per row for its lse value.
  Value stagePtr = kb.getWritePtr(kCbLseStage);

  kb.forLoop(0, numUnits, [&](Value unit) {
    Unit u = readUnit(kb, unit);
    kb.cbWaitFront(kCbOut, dvTiles);
    kb.cbWaitFront(kCbLse, kb.c(1));
    Value outPtr = kb.getReadPtr(kCbOut);
    Value lsePtr = kb.getReadPtr(kCbLse);
    OutRows rows{
        {outPtr, tileBytes, esz, cfg.valueSize}, outBase, outStride, banks};
    kb.forLoop(0, u[kUNumRows], [&](Value row) {
      RowInfo info = rowInfo(kb, u, row, hpg);
      Value page = kb.add(kb.add(kb.mul(info.token, heads), info.head),
                          u[kUOutPageBase]);
      writeOutRow(kb, rows, row, page);
      // The lse value goes to byte 4 * head of the token's page: stage it at
      // the same offset modulo 16 within the row's slot.
      Value word = kb.rem(info.head, 4);
      Value slot = kb.add(stagePtr, kb.mul(row, 16));
      kb.storeL1Word(slot, word,
                     kb.loadL1Word(lsePtr, kb.faceOffset(row, kb.c(0))));
      kb.nocAsyncWrite(kb.add(slot, kb.mul(word, 4)),
                       kb.dramPageAddr(lseBase, lseStride, banks,
                                       kb.add(info.token, u[kULsePageBase]),
                                       kb.mul(info.head, 4)),
                       kb.c(4));
    });
    kb.nocAsyncWriteBarrier();
    kb.cbPopFront(kCbOut, dvTiles);
    kb.cbPopFront(kCbLse, kb.c(1));
  });
}

} // namespace mlir::attn::tt
