//===- PagedAttention.h - What paged_attention's kernels share --*- C++ -*-===//
//
// paged_attention lowers to two kernels (PagedAttention.cpp): the per-token
// kernel built for decode and the tiled FlashAttention-2 kernel built for
// prefill (PagedPrefill.cpp). Both read the same cache through the same
// block table and compute the same scores; the pieces they share live here.
// Only the AttnToGPU sources include it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_PAGEDATTENTION_H
#define ATTN_LOWERING_ATTNTOGPU_PAGEDATTENTION_H

#include "dialect/AttnOps.h"
#include "lowering/AttnToGPU/KernelBuilder.h"

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

  int64_t group() const { return numHeads / numKvHeads; }
};

/// Finds the request of token `t`: the last r with query_start_loc[r] <= t,
/// by binary search over [0, numReqs).
Value findRequest(KernelBuilder &b, Value qsl, Value t, Value numReqs);

/// The element offset, in the flat cache, of the row of kv head `g` at
/// `offset` of `block`, in its key (part 0) or value (part 1) half.
Value cacheRowStart(KernelBuilder &b, const PagedConfig &c, int64_t part,
                    Value block, Value offset, Value g);

/// The cache block holding key `j` of the request whose block-table row
/// starts at `tableRow`: the table column is clamped to the row and the
/// entry to the cache (unsigned min also sends negative entries to the last
/// block), so a bad entry cannot read outside the cache.
Value lookupBlock(KernelBuilder &b, const PagedConfig &c, Value blockTable,
                  Value tableRow, Value lastColumn, Value lastBlock, Value j);

/// The keys [lo, hi) visible from absolute position `pos` in a sequence of
/// `seqLen` keys: causal, window_left and window_right each clip one end.
/// No compare is emitted for a knob that is off.
std::pair<Value, Value> visibleKeys(KernelBuilder &b, const PagedConfig &c,
                                    Value pos, Value seqLen);

/// How query rows are scaled and scored: log2(e) folds into the query scale
/// and the ALiBi slopes, except under a soft cap, whose tanh needs the score
/// in natural units first.
struct ScoreMath {
  const PagedConfig &c;

  bool capped() const { return c.softCap > 0; }
  /// The factor each query element is loaded with.
  Value queryScale(KernelBuilder &b) const;
  /// ALiBi slope of head `h`, in the units of the scores.
  Value slope(KernelBuilder &b, Value alibi, Value h) const;
  /// The score in log2 units of the dot product `dot` of a scaled query and
  /// a key `dist` = j - p positions away (f32; with ALiBi only).
  Value score(KernelBuilder &b, Value dot, Value slope, Value dist) const;
};

/// An index value as f32 (positions for ALiBi).
Value indexToF32(KernelBuilder &b, Value v);

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
