//===- AttentionOps.h - Host side of attn's TT programs ------------------===//
//
// What TT-Metalium host code (a program factory) does around attn's emitted
// kernels, on any TTDevice (TTDevice.h): put the operands in DRAM in the
// layout the kernels read, split the work into units over the core grid, set
// runtime arguments, run, and read the results back. Operands are reference
// tensors (core/Tensor.h); every buffer an operation creates is released when
// it returns.
//
// The paged KV cache on the device is tiled. A block of B token rows maps to
// 32-row tiles by this rule (B must divide 32 or be a multiple of 32):
//
//   B <= 32: 32 / B consecutive blocks share one 32-row tile; block b is rows
//            (b % (32 / B)) * B .. + B of tile group b / (32 / B) (B = 16:
//            block 2k is faces 0-1 and block 2k + 1 faces 2-3 of one tile).
//   B >  32: block b is B / 32 whole tiles.
//
// A page is one tile: page(group, part, kv_head, row_tile, d_tile) =
// (((group * parts + part) * G + kv_head) * tiles_per_block + row_tile) * Dt
// + d_tile, with parts = 2 (key, value) for paged attention and 1 for MLA's
// latent cache, and Dt = ceil(D / 32): a head size that is not a multiple of
// 32 leaves padding columns in the last tile of a row. They hold zeros
// (buffers are created zero-filled, the host tilizes zeros into them and no
// kernel writes them), and the reader zeros the query's padding too, so
// Q K^T sums only zeros there; value padding only reaches padding columns of
// the output tiles, which the writer never stores.
//
// Key positions past seq_len inside the last tile are masked by the kernels,
// so sequence lengths need not be multiples of 32 (or of B).
//
// Queries, outputs and new keys/values are row-major "sticks": one page per
// (token, head) row. lse has one page per token (H f32), the block table one
// per request (padded to a multiple of 256 bytes, the chunk the reader reads
// rows in), the slot mapping one per token, sinks and ALiBi slopes one page
// of H f32. Every page sits at the architecture's DRAM alignment.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_ATTENTIONOPS_H
#define ATTN_RUNTIME_EXECUTORS_TT_ATTENTIONOPS_H

#include "core/KvCache.h"
#include "reference/ops/Ops.h"
#include "devices/tt/TTDevice.h"

#include <algorithm>
#include <optional>

namespace attn::tt {

/// The static shape and knobs a program was compiled for (program.json's
/// params).
struct ProgramShape {
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headSize = 0;
  int64_t valueSize = 0;
  int64_t blockSize = 0;
  /// 2 (key, value) for the paged cache, 1 for MLA's latent rows.
  int64_t kvParts = 2;
  DType dtype = DType::BF16;
  KvLayout layout = KvLayout::NHD;
  bool causal = true;
  int64_t windowLeft = -1;
  int64_t windowRight = -1;
  bool sinks = false;
  bool alibi = false;
  /// reshape_and_cache: widths of the key and value rows.
  int64_t keyWidth = 0, valueWidth = 0;
  int64_t numKvSplits = 1;
  int64_t numStates = 0;
};

/// Where cache rows live in the tiled device cache (the file comment).
struct TiledCache {
  int64_t blockSize = 0, numKvHeads = 0, rowSize = 0, parts = 2, numBlocks = 0;
  DType dtype = DType::BF16;
  int64_t blocksPerTile() const { return std::max<int64_t>(1, 32 / blockSize); }
  int64_t tilesPerBlock() const { return std::max<int64_t>(1, blockSize / 32); }
  /// Tiles across a row; columns past rowSize are padding (zeros).
  int64_t dTiles() const { return (rowSize + 31) / 32; }
  int64_t numGroups() const {
    return (numBlocks + blocksPerTile() - 1) / blocksPerTile();
  }
  int64_t numPages() const {
    return numGroups() * parts * numKvHeads * tilesPerBlock() * dTiles();
  }
  uint32_t pageBytes() const;
  /// Page and in-tile row of row `offset` of `block`.
  void locate(int64_t block, int64_t offset, int64_t part, int64_t head,
              int64_t dTile, int64_t &page, int64_t &row) const {
    int64_t group = block / blocksPerTile();
    int64_t rowInGroup = (block % blocksPerTile()) * blockSize + offset;
    int64_t rowTile = rowInGroup / 32;
    row = rowInGroup % 32;
    page = (((group * parts + part) * numKvHeads + head) * tilesPerBlock() +
            rowTile) *
               dTiles() +
           dTile;
  }
  bool operator==(const TiledCache &) const = default;
};

/// A KV cache kept in the device's tiled layout: one tile per page of a DRAM
/// buffer of the device.
struct DeviceCache {
  Buffer buffer;
  TiledCache layout;
};

/// A row-major operand in DRAM: row r (rowBytes of the host copy) at page r
/// of pageBytes >= rowBytes, the padding zeros.
struct RowPages {
  uint32_t rowBytes = 0, pageBytes = 0, rows = 0;
  uint64_t hostBytes() const { return uint64_t(rowBytes) * rows; }
  bool operator==(const RowPages &) const = default;
};
/// Sticks (queries, outputs, new keys and values, lse, slots): one page per
/// row of `rowBytes`.
RowPages stickPages(int64_t rows, int64_t rowBytes);
/// The block table [R, M] i32: one page per request, padded to the 256-byte
/// chunks the reader reads.
RowPages blockTablePages(int64_t R, int64_t M);
/// Sinks or ALiBi slopes: one page of H f32.
RowPages headPages(int64_t H);
/// A new buffer of `device` holding the host rows `data` as `pages`; the
/// caller releases it.
Result<Buffer> uploadRows(TTDevice &device, const RowPages &pages,
                          const void *data);
/// Reads the rows of `buffer` (laid out as `pages`) into `data`.
Status downloadRows(TTDevice &device, const Buffer &buffer,
                    const RowPages &pages, void *data);

/// Tilizes host cache `cache` (in `layout`, the tiled layout `tc`) into a
/// new buffer of `device`, which the caller releases.
Result<Buffer> uploadCache(TTDevice &device, const TiledCache &tc,
                           const Tensor &cache, KvLayout layout);
/// Untilizes `cache` into the host cache `out` (in `layout`).
Status downloadCache(TTDevice &device, const DeviceCache &cache, Tensor &out,
                     KvLayout layout);

/// Reads and checks the params of `description` (dtype bf16, f16 or f32;
/// head sizes that are multiples of 8; a block size the tiled cache takes).
Result<ProgramShape> readProgramShape(const ProgramDescription &description);

/// The tiled layout of the cache of a program of shape `s`, `numBlocks`
/// blocks.
TiledCache tiledCacheOf(const ProgramShape &s, int64_t numBlocks);

/// Runs a "paged_attention" or "mla_decode" program. For paged attention:
/// query [T, H, D], kvCache in `layout`; for MLA: query [R, H, L + P], kvCache
/// [NB, B, L + P], queryStartLoc null (one query per request). sinks and
/// alibiSlopes ([H] f32) may be null when the program was compiled without.
/// A program compiled with num_kv_splits > 1 splits each request's key
/// tiles into that many ranges and runs its merge program on the partial
/// states.
Result<AttentionOutput>
runAttentionProgram(TTDevice &device, const Program &program,
                    const Tensor &query, const Tensor &kvCache,
                    const Tensor &blockTable, const Tensor &seqLens,
                    const Tensor *queryStartLoc, const Tensor *sinks,
                    const Tensor *alibiSlopes, KvLayout layout);
/// The same over a cache already tiled on the device.
Result<AttentionOutput>
runAttentionProgram(TTDevice &device, const Program &program,
                    const Tensor &query, const DeviceCache &kvCache,
                    const Tensor &blockTable, const Tensor &seqLens,
                    const Tensor *queryStartLoc, const Tensor *sinks,
                    const Tensor *alibiSlopes);

/// The operands of an attention program already in DRAM, in the layouts
/// above, for T query tokens (R for MLA).
struct AttentionBuffers {
  Buffer query;
  DeviceCache kvCache;
  Buffer blockTable;
  /// Absent when the program was compiled without them.
  std::optional<Buffer> sinks, alibiSlopes;
  /// What the program writes: T * H pages of valueSize elements, T pages of
  /// H f32.
  Buffer out, lse;
};
/// Runs an attention program on operands in DRAM and leaves its result in
/// `buffers.out` and `buffers.lse`. The metadata (block table, seq_lens,
/// query_start_loc, null for MLA) and sinks (for rows that see no key) are
/// also needed on the host, which lays out the work from them.
Status runAttentionProgram(TTDevice &device, const Program &program,
                           const AttentionBuffers &buffers, int64_t numTokens,
                           const Tensor &blockTable, const Tensor &seqLens,
                           const Tensor *queryStartLoc, const Tensor *sinks);

/// Runs a "merge_states" program on two states: out [T, H, Dv] in the
/// program's dtype and lse [T, H] f32 each.
Result<AttentionOutput> runMergeStatesProgram(TTDevice &device,
                                              const Program &program,
                                              const Tensor &outA,
                                              const Tensor &lseA,
                                              const Tensor &outB,
                                              const Tensor &lseB);

/// The same, leaving the merged state in DRAM: out (T * H pages of
/// valueSize elements) and lse (T pages of H f32). The states go down from
/// the host, both in one buffer as the merge program reads them.
Status runMergeStatesProgram(TTDevice &device, const Program &program,
                             const Tensor &outA, const Tensor &lseA,
                             const Tensor &outB, const Tensor &lseB,
                             const Buffer &out, const Buffer &lse);

/// Runs a "reshape_and_cache" program: writes key/value [T, G, D] into
/// kvCache (in `layout`) at slotMapping [T] i64; for the MLA latent cache
/// [NB, B, L + P], key is kv_c [T, L] and value k_pe [T, P] (layout
/// ignored).
Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Tensor &key, const Tensor &value,
                                 Tensor &kvCache, const Tensor &slotMapping,
                                 KvLayout layout);
/// The same into a cache tiled on the device, written in place: only the
/// new rows move.
Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Tensor &key, const Tensor &value,
                                 const DeviceCache &kvCache,
                                 const Tensor &slotMapping);
/// The same with the new rows already in DRAM: key and value sticks of the
/// program's key and value widths, T * G rows each, and the slot mapping
/// (one i64 page per token), which the host also checks.
Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Buffer &key, const Buffer &value,
                                 const Buffer &slots,
                                 const DeviceCache &kvCache,
                                 const Tensor &slotMapping);

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_ATTENTIONOPS_H
