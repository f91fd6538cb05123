//===- Kernels.h - The TT programs attn's ops become -----------*- C++ -*-===//
//
// Shared by the kernel builders of convert-attn-to-ttkernel: the static
// configuration of an op (AttentionConfig), the circular buffers, and the
// compile-time and runtime argument slots each program's kernels and host
// agree on. devices/tt/AttentionOps.cpp is the host side of the
// same contract (it reads the argument names from program.json).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_KERNELS_H
#define ATTN_LOWERING_ATTNTOTT_KERNELS_H

#include "lowering/AttnToTT/ProgramDescription.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::attn::tt {

/// -1e30 as f32: the mask value of invisible keys and the starting running
/// max. Finite, so a row whose first key tile is fully masked gets a finite
/// (bogus) state that the first visible key rescales by exp(-1e30 - m) = 0.
constexpr float kNegBig = -1e30f;

uint32_t floatBits(float f);

/// The static description of an op the kernels are built for.
struct AttentionConfig {
  std::string op;
  int64_t numHeads = 0, numKvHeads = 0, headSize = 0, valueSize = 0;
  int64_t blockSize = 0;
  /// Cache parts per block: 2 (key, value) paged, 1 for MLA's latent rows.
  int64_t kvParts = 2;
  TTDataFormat format = TTDataFormat::Float16_b;
  /// The host cache's layout ("nhd" or "hnd"), which the host converts from
  /// and to the tiled device cache; the kernels see only tiles.
  std::string layout = "nhd";
  bool causal = true;
  int64_t windowLeft = -1, windowRight = -1;
  double softCap = 0;
  bool sinks = false;
  bool alibi = false;
  double scale = 1;
  int64_t kvLoraRank = 0;
  /// reshape_and_cache of MLA: the two source widths (key = L, value = P).
  int64_t keyWidth = 0, valueWidth = 0;
  /// mla_decode: the key-tile ranges each request's work is split into
  /// (1: none); merge programs: the partial states they combine.
  int64_t numKvSplits = 1;
  int64_t numStates = 0;
  TTArch arch = defaultTTArch();

  int64_t esz() const { return elementBytes(format); }
  int64_t tileBytes() const { return 1024 * esz(); }
  /// Tiles across a key (value) row. A head size that is not a multiple of
  /// the 32-wide tile is padded with zero columns in the device layout;
  /// Q K^T sums them as zeros and no output column reads them.
  int64_t dkTiles() const { return (headSize + 31) / 32; }
  int64_t dvTiles() const { return (valueSize + 31) / 32; }
  int64_t blocksPerTile() const { return std::max<int64_t>(1, 32 / blockSize); }
  int64_t tilesPerBlock() const { return std::max<int64_t>(1, blockSize / 32); }
  /// The distance between consecutive pages of a bank, for pages of `bytes`.
  int64_t pageStride(int64_t bytes) const {
    return (bytes + arch.dramReadAlignment - 1) / arch.dramReadAlignment *
           arch.dramReadAlignment;
  }
  /// One f32 per query head (sinks, ALiBi slopes, a token's lse row) as a
  /// circular-buffer page: padded to the DRAM read alignment, so that every
  /// page of a buffer of several starts congruent with the DRAM page read
  /// into it (the NOC requires it; 16-byte pages put the second page of
  /// sinks and slopes off by 16 for 1-4 and 9-12 heads).
  int64_t headVectorBytes() const { return pageStride(numHeads * 4); }
  /// The dtype name of program.json's params ("bf16", "f16", "f32").
  StringRef dtypeName() const;
};

/// Rows move between row-major memory and face-ordered tiles in pieces of
/// up to 16 elements (a face row); head sizes must be multiples of this
/// many elements, so that every piece is a whole number of 16-byte L1
/// words in 16-bit formats.
constexpr int64_t kRowGranule = 8;

/// Block-table rows are read in chunks of this many entries (256 bytes, a
/// multiple of every DRAM alignment); the host pads each row's page to a
/// multiple of it.
constexpr int64_t kBlockTableChunk = 64;

//===--- Attention (paged_attention, mla_decode) --------------------------===//

enum AttnCb : int64_t {
  kCbQ = 0,
  kCbK = 1,
  kCbV = 2,
  kCbMask = 3,
  kCbInit = 4,
  kCbScaler = 5,
  kCbBlockTable = 6,
  kCbStage = 7,
  kCbHeadParams = 8,
  kCbBias = 9,
  kCbLseStage = 10,
  kCbOut = 16,
  kCbLse = 17,
  kCbS = 24,
  kCbM = 25,
  kCbL = 26,
  kCbAlpha = 27,
  kCbP = 28,
  kCbAcc = 29,
  kCbPSum = 30,
  kCbRowSum = 31,
};

/// Compile-time argument slots of the attention kernels.
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
  kCtKvParts,
  kCtTileBytes,
  kCtQPageStride,
  kCtOutPageStride,
  kCtLsePageStride,
  kCtHeadPageStride,
  kNumAttnCt
};

SmallVector<int64_t> attentionCompileTimeArgs(const AttentionConfig &c);

/// Runtime arguments of the attention kernels: named leading arguments, then
/// the core's work units.
enum AttnRt : int64_t {
  kRtQ,
  kRtKv,
  kRtBt,
  kRtBtPageStride,
  kRtOut,
  kRtLse,
  kRtSinks,
  kRtAlibi,
  kRtNumBanks,
  kRtNumUnits,
  kRtUnits
};
extern const StringRef kAttnRuntimeArgs[kRtUnits];

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
  /// The keys some row of the unit sees, [key_begin, key_end): the reader
  /// zeros the tile rows of the others.
  kUKeyBegin,
  kUKeyEnd,
  /// Where the unit's rows go: page offsets into the out and lse buffers
  /// (0, or a split's partial-state slice for split-KV decode).
  kUOutPageBase,
  kULsePageBase,
  kNumUnitArgs
};
extern const StringRef kAttnUnitArgs[kNumUnitArgs];

class ComputeBuilder;

class KernelBuilder;

/// Rows of `width` elements held across face-ordered 32x32 tiles at L1
/// `base`, `tileBytes` apart, of `esz`-byte elements; columns from `width`
/// to the end of the last tile are padding.
struct TiledRows {
  Value base, tileBytes, esz;
  int64_t width;
};
/// Calls `piece(col, elements)` for the pieces a row of `width` elements
/// moves in: 16 elements (half a tile row) from each multiple of 16, the
/// last piece shorter when `width` is not a multiple of 16.
void forEachRowPiece(KernelBuilder &kb, int64_t width,
                     llvm::function_ref<void(Value col, Value elements)> piece);
/// The L1 address of element (row, col) of `rows`.
Value tiledAddress(KernelBuilder &kb, const TiledRows &rows, Value row,
                   Value col);
/// Copies row-major row `src` (L1) into row `row` of `rows` over the NOC,
/// piece by piece, and zeros its padding columns.
void gatherRow(KernelBuilder &kb, const TiledRows &rows, Value row, Value src);
/// Zeros columns [from, end of the last tile) of row `row` of `rows`
/// (`from` a multiple of kRowGranule).
void zeroRowColumns(KernelBuilder &kb, const TiledRows &rows, Value row,
                    int64_t from);

/// The buffers of a softmax's last step (attention and merge programs).
struct NormalizeBuffers {
  int64_t sum, max, acc, recip, out, lse;
};
/// out = acc / sum, tile by tile over `dvTiles`, and lse = max + log(sum),
/// with `recip` as scratch. Pops acc; sum and max stay at their fronts.
void buildNormalize(ComputeBuilder &cb, const NormalizeBuffers &buffers,
                    Value dvTiles);

/// Where a writer's output rows come from and go (attention and merge
/// programs): the tiles, and the interleaved DRAM buffer at `outBase` with
/// pages `outStride` apart over `banks` banks.
struct OutRows {
  TiledRows tiles;
  Value outBase, outStride, banks;
};
/// Writes the `tiles.width` columns of row `row` of the output tiles to
/// DRAM page `page`, a piece per write (padding columns stay behind).
/// `source`, when given, may replace a write's L1 address: it gets the
/// write's first column and that address.
void writeOutRow(KernelBuilder &kb, const OutRows &rows, Value row, Value page,
                 llvm::function_ref<Value(Value col, Value src)> source = {});

void buildAttentionReader(OpBuilder &b, Location loc,
                          const AttentionConfig &cfg);
void buildAttentionCompute(OpBuilder &b, Location loc,
                           const AttentionConfig &cfg,
                           const ProgramDescriptionBuilder &program);
void buildAttentionWriter(OpBuilder &b, Location loc,
                          const AttentionConfig &cfg);
/// Declares the circular buffers of an attention program.
void declareAttentionBuffers(ProgramDescriptionBuilder &desc,
                             const AttentionConfig &cfg);

//===--- reshape_and_cache -------------------------------------------------===//

enum CacheCb : int64_t { kCbSlot = 0, kCbRows = 1 };

enum CacheCt : int64_t {
  kRcKvHeads,
  kRcKeyWidth,
  kRcValueWidth,
  kRcDTiles,
  kRcBlockSize,
  kRcElemSize,
  kRcBlocksPerTile,
  kRcTilesPerBlock,
  kRcTileBytes,
  kRcKvParts,
  kRcKeyPageStride,
  kRcValuePageStride,
  kRcSlotPageStride,
  kNumRcCt
};

enum CacheRt : int64_t {
  kRcKey,
  kRcValue,
  kRcSlot,
  kRcKv,
  kRcNumBanks,
  kRcNumUnits,
  kRcUnits
};
extern const StringRef kCacheRuntimeArgs[kRcUnits];
extern const StringRef kCacheUnitArgs[1];

SmallVector<int64_t> cacheCompileTimeArgs(const AttentionConfig &c);
void declareCacheBuffers(ProgramDescriptionBuilder &desc,
                         const AttentionConfig &cfg);
void buildCacheReader(OpBuilder &b, Location loc, const AttentionConfig &cfg);
void buildCacheWriter(OpBuilder &b, Location loc, const AttentionConfig &cfg);

//===--- Merging attention states (merge_states, split-KV decode) --------===//

enum MergeCb : int64_t {
  kCbMergeIn = 0,
  kCbMergeLseIn = 1,
  kCbMergeStage = 2,
  kCbMergeLseStage = 3,
  kCbMergeWriterStage = 4,
  kCbMergeZero = 5,
  kCbMergeOut = 16,
  kCbMergeLseOut = 17,
  kCbMergeMaxOut = 18,
  kCbMergeMax = 24,
  kCbMergeWeight = 25,
  kCbMergeSum = 26,
  kCbMergeAcc = 27,
  kCbMergeRecip = 28,
};

enum MergeCt : int64_t {
  kMcHeads,
  kMcDvTiles,
  kMcElemSize,
  kMcTileBytes,
  kMcOutPageStride,
  kMcLsePageStride,
  kMcNumStates,
  kMcNegBigBits,
  kMcNegInfBits,
  kNumMergeCt
};

/// Partial states lie in one buffer each for out and lse: state s of row r
/// (token t = r / H, head r % H) is out page s * T * H + r and lse page
/// s * T + t.
enum MergeRt : int64_t {
  kMrPartialOut,
  kMrPartialLse,
  kMrOut,
  kMrLse,
  kMrNumTokens,
  kMrNumBanks,
  kMrNumUnits,
  kMrUnits
};
extern const StringRef kMergeRuntimeArgs[kMrUnits];
enum MergeUnit : int64_t { kMuRowBegin, kMuNumRows, kNumMergeUnitArgs };
extern const StringRef kMergeUnitArgs[kNumMergeUnitArgs];

SmallVector<int64_t> mergeCompileTimeArgs(const AttentionConfig &c);
void declareMergeBuffers(ProgramDescriptionBuilder &desc,
                         const AttentionConfig &cfg);
void buildMergeReader(OpBuilder &b, Location loc, const AttentionConfig &cfg);
void buildMergeCompute(OpBuilder &b, Location loc, const AttentionConfig &cfg,
                       const ProgramDescriptionBuilder &program);
void buildMergeWriter(OpBuilder &b, Location loc, const AttentionConfig &cfg);

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_KERNELS_H
