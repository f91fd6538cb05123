//===- CacheKernels.cpp - reshape_and_cache as TT reader / writer --------===//
//
// The reader fetches a token's slot and its source rows (the token's key and
// value head rows of a paged cache, or kv_c and k_pe of the MLA latent
// cache) whole into L1; the writer scatters each piece of up to 16 elements
// (half a tile row) into its place in the tiled cache (see
// devices/tt/AttentionOps.h).
// Whole rows and half rows keep every transfer's L1 and DRAM addresses
// congruent modulo the NOC alignment.
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/KernelBuilder.h"
#include "lowering/AttnToTT/Kernels.h"

namespace mlir::attn::tt {

using arith::CmpIPredicate;

const StringRef kCacheRuntimeArgs[kRcUnits] = {
    "key_addr", "value_addr", "slot_addr", "kv_addr", "num_dram_banks",
    "num_units"};
const StringRef kCacheUnitArgs[1] = {"token"};

SmallVector<int64_t> cacheCompileTimeArgs(const AttentionConfig &c) {
  SmallVector<int64_t> ct(kNumRcCt, 0);
  ct[kRcKvHeads] = c.numKvHeads;
  ct[kRcKeyWidth] = c.keyWidth;
  ct[kRcValueWidth] = c.valueWidth;
  ct[kRcDTiles] = c.dkTiles();
  ct[kRcBlockSize] = c.blockSize;
  ct[kRcElemSize] = c.esz();
  ct[kRcBlocksPerTile] = c.blocksPerTile();
  ct[kRcTilesPerBlock] = c.tilesPerBlock();
  ct[kRcTileBytes] = c.tileBytes();
  ct[kRcKvParts] = c.kvParts;
  ct[kRcKeyPageStride] = c.pageStride(c.keyWidth * c.esz());
  ct[kRcValuePageStride] = c.pageStride(c.valueWidth * c.esz());
  ct[kRcSlotPageStride] = c.pageStride(8);
  return ct;
}

namespace {
/// A page of the rows buffer: the wider source row, padded to the DRAM read
/// alignment so that every page takes a DRAM read congruently.
int64_t rowPageBytes(const AttentionConfig &cfg) {
  return cfg.pageStride(std::max(cfg.keyWidth, cfg.valueWidth) * cfg.esz());
}
} // namespace

void declareCacheBuffers(ProgramDescriptionBuilder &desc,
                         const AttentionConfig &cfg) {
  desc.cb(kCbSlot, "slot", 2, cfg.pageStride(8), TTDataFormat::Float32);
  desc.cb(kCbRows, "rows", 4 * cfg.numKvHeads, rowPageBytes(cfg), cfg.format);
}

void buildCacheReader(OpBuilder &b, Location loc, const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  Value kvHeads = kb.compileTimeArg(kRcKvHeads);
  Value esz = kb.compileTimeArg(kRcElemSize);
  Value keyBytes = kb.mul(kb.compileTimeArg(kRcKeyWidth), esz);
  Value valueBytes = kb.mul(kb.compileTimeArg(kRcValueWidth), esz);
  Value keyStride = kb.compileTimeArg(kRcKeyPageStride);
  Value valueStride = kb.compileTimeArg(kRcValuePageStride);
  Value slotStride = kb.compileTimeArg(kRcSlotPageStride);
  Value keyBase = kb.runtimeArg(kRcKey);
  Value valueBase = kb.runtimeArg(kRcValue);
  Value slotBase = kb.runtimeArg(kRcSlot);
  Value banks = kb.runtimeArg(kRcNumBanks);
  Value numUnits = kb.runtimeArg(kRcNumUnits);
  Value zero = kb.c(0);
  kb.forLoop(0, numUnits, [&](Value unit) {
    Value token = kb.runtimeArg(kb.add(unit, kRcUnits));
    kb.cbReserveBack(kCbSlot, kb.c(1));
    Value slotPtr = kb.getWritePtr(kCbSlot);
    kb.nocAsyncRead(kb.dramPageAddr(slotBase, slotStride, banks, token, zero),
                    slotPtr, kb.c(8));
    kb.nocAsyncReadBarrier();
    // The slot is an i64; a negative one (padding) has a negative high word.
    Value slotHigh = kb.loadL1Word(slotPtr, kb.c(1));
    kb.cbPushBack(kCbSlot, kb.c(1));
    kb.ifThen(kb.cmp(CmpIPredicate::sge, slotHigh, zero), [&] {
      // Key rows in pages [0, G), value rows in [G, 2G).
      Value rows = kb.mul(kvHeads, 2);
      kb.cbReserveBack(kCbRows, rows);
      Value rowPtr = kb.getWritePtr(kCbRows);
      Value pageBytes = kb.c(rowPageBytes(cfg));
      kb.forLoop(0, kvHeads, [&](Value g) {
        Value page = kb.add(kb.mul(token, kvHeads), g);
        kb.nocAsyncRead(kb.dramPageAddr(keyBase, keyStride, banks, page, zero),
                        kb.add(rowPtr, kb.mul(g, pageBytes)), keyBytes);
        kb.nocAsyncRead(
            kb.dramPageAddr(valueBase, valueStride, banks, page, zero),
            kb.add(rowPtr, kb.mul(kb.add(g, kvHeads), pageBytes)), valueBytes);
      });
      kb.nocAsyncReadBarrier();
      kb.cbPushBack(kCbRows, rows);
    });
  });
}

void buildCacheWriter(OpBuilder &b, Location loc, const AttentionConfig &cfg) {
  KernelBuilder kb(b, loc);
  Value kvHeads = kb.compileTimeArg(kRcKvHeads);
  Value keyWidth = kb.compileTimeArg(kRcKeyWidth);
  Value dTiles = kb.compileTimeArg(kRcDTiles);
  Value blockSize = kb.compileTimeArg(kRcBlockSize);
  Value esz = kb.compileTimeArg(kRcElemSize);
  Value blocksPerTile = kb.compileTimeArg(kRcBlocksPerTile);
  Value tilesPerBlock = kb.compileTimeArg(kRcTilesPerBlock);
  Value tileBytes = kb.compileTimeArg(kRcTileBytes);
  Value parts = kb.compileTimeArg(kRcKvParts);
  Value kvBase = kb.runtimeArg(kRcKv);
  Value banks = kb.runtimeArg(kRcNumBanks);
  Value numUnits = kb.runtimeArg(kRcNumUnits);
  Value zero = kb.c(0);
  Value pageBytes = kb.c(rowPageBytes(cfg));
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
      kb.forLoop(0, parts, [&](Value part) {
        kb.forLoop(0, kvHeads, [&](Value g) {
          Value keyRow = kb.add(rowPtr, kb.mul(g, pageBytes));
          Value valueRow = kb.add(rowPtr, kb.mul(kb.add(g, kvHeads),
                                                 pageBytes));
          // The row's columns only: the tiles' padding columns keep the
          // zeros they were created with (devices/tt/AttentionOps.h).
          forEachRowPiece(kb, cfg.headSize, [&](Value c, Value elements) {
            Value dt = kb.div(c, 32);
            Value page = kb.add(
                kb.mul(kb.add(kb.mul(kb.add(kb.mul(kb.add(kb.mul(group, parts),
                                                          part),
                                                   kvHeads),
                                            g),
                                     tilesPerBlock),
                              rowTile),
                       dTiles),
                dt);
            Value from;
            if (cfg.kvParts == 2) {
              // Part 0 is the key row, part 1 the value row.
              from = kb.add(kb.select(kb.cmp(CmpIPredicate::eq, part, zero),
                                      keyRow, valueRow),
                            kb.mul(c, esz));
            } else {
              // The latent row is concat(kv_c, k_pe).
              Value inKey = kb.cmp(CmpIPredicate::slt, c, keyWidth);
              from =
                  kb.select(inKey, kb.add(keyRow, kb.mul(c, esz)),
                            kb.add(valueRow, kb.mul(kb.sub(c, keyWidth), esz)));
            }
            Value to = kb.dramPageAddr(
                kvBase, tileBytes, banks, page,
                kb.mul(kb.faceOffset(tileRow, kb.rem(c, 32)), esz));
            kb.nocAsyncWrite(from, to, kb.mul(elements, esz));
          });
        });
      });
      kb.nocAsyncWriteBarrier();
      kb.cbPopFront(kCbRows, rows);
    });
  });
}

} // namespace mlir::attn::tt
