//===- PagedAttention.h - What paged_attention's kernels share --*- C++ -*-===//
//
// paged_attention lowers to two kernels (PagedAttention.cpp): the per-token
// kernel built for decode and the tiled FlashAttention-2 kernel built for
// prefill (PagedPrefill.cpp). Both read the same cache through the same
// block table and compute the same scores; the pieces they share are
// declared here and defined in PagedParts.cpp. Only the AttnToGPU sources
// include it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_PAGEDATTENTION_H
#define ATTN_LOWERING_ATTNTOGPU_PAGEDATTENTION_H

#include "dialect/AttnOps.h"
#include "lowering/AttnToGPU/KernelBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

#include <utility>

namespace mlir {
namespace attn {

/// What the kernel builders need of the op, all static.
struct PagedConfig {
  int64_t numHeads, numKvHeads, headSize, blockSize;
  bool nhd, causal, hasAlibi, hasSinks;
  double scale, softCap;
  int64_t windowLeft, windowRight;
  /// Splits of the per-token kernel (split-KV decode); the tiled kernel
  /// never splits.
  int64_t numSplits;
  /// Requests with a query length up to this go to the per-token kernel,
  /// the others to the tiled one; none: no tiled kernel, every request goes
  /// to the per-token kernel.
  std::optional<int64_t> decodeMaxQueryLen;
  /// An fp8 cache's format (null for a cache in the query's dtype) and how
  /// many k_scale and v_scale values it has (1 or numKvHeads each).
  Type fp8Format;
  int64_t kScaleCount = 1, vScaleCount = 1;

  int64_t group() const { return numHeads / numKvHeads; }
};

/// Finds the request of token `t`: the last r with query_start_loc[r] <= t,
/// by binary search over [0, numReqs).
Value findRequest(KernelBuilder &b, Value qsl, Value t, Value numReqs);

/// The element offset, in the flat cache, of the row of kv head `g` at
/// `offset` of `block`, in its key (part 0) or value (part 1) half.
Value cacheRowStart(KernelBuilder &b, const PagedConfig &c, int64_t part,
                    Value block, Value offset, Value g);

/// The cache block (of `blockSize` keys) holding key `j` of the request
/// whose block-table row starts at `tableRow`: the table column is clamped
/// to the row and the entry to the cache (unsigned min also sends negative
/// entries to the last block), so a bad entry cannot read outside the
/// cache. paged_attention and mla_decode share it.
Value lookupBlock(KernelBuilder &b, int64_t blockSize, Value blockTable,
                  Value tableRow, Value lastColumn, Value lastBlock, Value j);

/// The keys [lo, hi) visible from absolute position `pos` in a sequence of
/// `seqLen` keys: causal, window_left and window_right each clip one end.
/// No compare is emitted for a knob that is off, and no sum that could
/// leave i32 is used (windows up to 2^31 - 1, negative positions).
std::pair<Value, Value> visibleKeys(KernelBuilder &b, const PagedConfig &c,
                                    Value pos, Value seqLen);

/// How query rows are scaled and scored: log2(e) folds into the ALiBi slopes
/// and into the query scale, except under a soft cap, whose tanh needs the
/// score in natural units first (the cap comes before the bias, as in
/// FlashAttention-2).
struct ScoreMath {
  const PagedConfig &c;

  bool capped() const { return c.softCap > 0; }
  /// The factor each query element is loaded with.
  Value queryScale(KernelBuilder &b) const;
  /// The factors of kv head `g`'s rows: the query's (queryScale, times an
  /// fp8 cache's k_scale, so that the scores dequantize the keys) and the
  /// output's (the v_scale finalizeSoftmax takes; null without an fp8
  /// cache). `kScales` / `vScales` are the kernel's scale buffers or null.
  std::pair<Value, Value> rowScales(KernelBuilder &b, Value kScales,
                                    Value vScales, Value g) const;
  /// ALiBi slope of head `h`, in the units of the scores.
  Value slope(KernelBuilder &b, Value alibi, Value h) const;
  /// The score in log2 units of the dot product `dot` of a scaled query and
  /// a key `dist` = j - p positions away (f32; with ALiBi only): capped,
  /// then biased by -slope * |dist|.
  Value score(KernelBuilder &b, Value dot, Value slope, Value dist) const;
};

/// An index value as f32 (positions for ALiBi).
Value indexToF32(KernelBuilder &b, Value v);

/// ALiBi's j - pos as f32, subtracted as integers first: positions reach
/// 2^31 - 1, where f32(j) - f32(pos) loses the distance (f32 holds integers
/// exactly only to 2^24); j - pos itself lies in (-seq_len, q_len].
Value keyDistance(KernelBuilder &b, Value j, Value pos);

/// What one workgroup of a tiled prefill kernel takes (PagedPrefill.cpp
/// says how): its request, its tokens [tStart, tStart + numRowTokens) and
/// kv head, the first of its query heads. beginTileWork emits the
/// assignment and opens `if` the workgroup has work (a prefill, by the
/// decode threshold); end() closes it.
struct TileWork {
  const PagedConfig *c;
  Value request, qStart, seqLen, context, tStart, numRowTokens, lastToken;
  Value kvHead, headBase;
  /// The request's block-table row and the clamps of lookupBlock.
  Value tableRow, lastColumn, lastBlock;
  scf::IfOp guard;

  /// The absolute position of query token `token`.
  Value positionOf(KernelBuilder &b, Value token) const;
  /// The first key the first token sees, and one past the last key the
  /// last token sees: the keys of the workgroup.
  Value firstVisible(KernelBuilder &b) const;
  Value lastVisibleEnd(KernelBuilder &b) const;
  /// Moves the insertion point past the work's `if`.
  void end(KernelBuilder &b) const;
};
TileWork beginTileWork(KernelBuilder &b, const PagedConfig &c, Value qsl,
                       Value seqLens, Value params, int64_t tokensPerTile,
                       int64_t headsPerTile);

/// Row `row` of a tile, token-major: token row / Hq (clamped to the
/// workgroup's last; inactive past it) and query head headBase + row % Hq.
struct RowPlace {
  Value active, token, head;
};
RowPlace placeRow(KernelBuilder &b, const TileWork &work, Value row,
                  int64_t headsPerTile, Value headBase);

/// The shape of the tiled prefill kernel on matrix units
/// (PagedPrefillMatrix.cpp): `subgroups` of 16 rows each, `keysPerTile`
/// keys a tile, and the tile's rows as tokens x heads, in a workgroup of
/// `launchSubgroups` subgroups (the SIMT kernel's; those past `subgroups`
/// help stage tiles and skip the products).
struct MatrixPlan {
  int64_t subgroups, keysPerTile, headsPerTile, tokensPerTile, launchSubgroups;
  /// tf32 products of tiles staged as f32 (bf16 caches), else f16 ones.
  bool tf32;
};
/// The matrix plan for tiles of `tileRows` rows in workgroups of
/// `launchSubgroups` subgroups (the SIMT kernel's, so the two share a grid,
/// a workgroup size and so a host plan, whichever a target builds), or
/// none: prefill-matrix off, a cache other than f16 or (tf32 products, on
/// NVVM or emulated) bf16, a head size or tile
/// not a multiple of 16, more than `launchSubgroups` subgroups of 16 rows,
/// or too little workgroup memory.
/// Workgroup memory the matrix-unit prefill kernel may use.
int64_t matrixMemoryBudget(const LoweringOptions &options);
std::optional<MatrixPlan> chooseMatrixPlan(const PagedConfig &c,
                                           Type cacheElement, int64_t tileRows,
                                           int64_t launchSubgroups,
                                           const LoweringOptions &options);
/// Builds the body of `fn`, the tiled prefill kernel on matrix units (or
/// their emulation, with prefill-matrix=emulate).
void buildMatrixPrefillKernel(KernelBuilder &b, gpu::GPUFuncOp fn,
                              const KernelArgs &args, const PagedConfig &c,
                              const MatrixPlan &plan);

/// The launch bounds (HostLaunch::bound) of what both paged_attention
/// kernels read by their params: query_start_loc, seq_lens, the block
/// table and the cache by num_reqs, max_blocks_per_req and num_blocks, the
/// query by num_tokens. Each kernel adds those of its grid and outputs.
void boundPagedInputs(HostLaunch &launch);

/// Adds the inputs both paged_attention kernels take, in the kernel ABI's
/// order (KernelABI.h), each under its role: query, cache, query_start_loc,
/// seq_lens, block table, then ALiBi slopes when the op has them, sinks
/// when `withSinks` and an fp8 cache's k_scale and v_scale. The kernels
/// read them by role (KernelArgs).
void addPagedInputs(HostLaunch &launch, PagedAttentionOp op,
                    MetadataOp metadata, bool withSinks);

/// Builds the tiled prefill kernel of `op` (PagedPrefill.cpp) and emits its
/// launch before `op` with `builder`. Returns failure (with a diagnostic)
/// when the shapes leave it nothing to tile.
LogicalResult launchTiledPrefill(PagedAttentionOp op, MetadataOp metadata,
                                 const PagedConfig &c, LoweringContext &ctx,
                                 OpBuilder &builder);

/// Whether the tiled prefill kernel can serve `c` with `options`: its
/// staging copies whole 32-bit words of a cache row.
bool canTilePrefill(const PagedConfig &c, Type cacheElement,
                    const LoweringOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOGPU_PAGEDATTENTION_H
