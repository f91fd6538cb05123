//===- OnlineSoftmax.h - The attention math of attn's kernels --*- C++ -*-===//
//
// The online softmax as IREE decomposes online attention: per query head a
// running max m of the scores, a running sum l of exp(s - m) and an
// accumulator of exp(s - m) * v, rescaled by exp(m_old - m_new) when the max
// grows. Scores are kept in log2 units (log2(e) folded into the scale) so the
// kernels use exp2. Also the walk over a request's keys through its block
// table, and the merge of partial states by their log-sum-exps.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_ONLINESOFTMAX_H
#define ATTN_LOWERING_ATTNTOGPU_ONLINESOFTMAX_H

#include "lowering/AttnToGPU/KernelBuilder.h"

namespace mlir {
namespace attn {

/// log2(e) and ln(2).
constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

/// The online-softmax state of the query heads of one workgroup, as one
/// lane holds it: per head m (log2 units), l, and the lane's share of the
/// accumulator.
struct SoftmaxState {
  SmallVector<Value> m, l;
  SmallVector<SmallVector<Value>> acc;

  /// m = -inf, l = 0, acc = 0.
  static SoftmaxState init(KernelBuilder &b, int64_t numHeads,
                           int64_t perLane);
  /// As loop-carried values, and back.
  SmallVector<Value> flatten() const;
  static SoftmaxState unflatten(ValueRange values, int64_t numHeads,
                                int64_t perLane);
};

/// `m`, or 0 where it is -inf: the base exp2 subtracts, so that a row with
/// no key yet gives exp2(-inf - 0) = 0, never exp2(-inf - -inf) = NaN.
Value finiteOrZero(KernelBuilder &b, Value m);

/// Adds keys at once: `scores[k][h]` is key k's score for head h in log2
/// units (-inf for a masked key, which adds nothing), `values[k]` the
/// lane's share of key k's value row. One rescale per call, however many
/// keys.
SoftmaxState updateSoftmax(KernelBuilder &b, const SoftmaxState &state,
                           ArrayRef<SmallVector<Value>> scores,
                           ArrayRef<SmallVector<Value>> values);
/// Adds one key: `scores[h]` of each head, `values` the lane's share of its
/// value row.
SoftmaxState updateSoftmax(KernelBuilder &b, const SoftmaxState &state,
                           ArrayRef<Value> scores, ArrayRef<Value> values);

/// One head's online-softmax update by a cache block of keys at once (the
/// row-vectors kernels): `probs` is a stack buffer of heads x block-size
/// f32 whose row `head` holds the block's scores (log2 units, -inf at keys
/// not visible); they become the probabilities exp2(s - m) in place. The
/// block's max is a tree of vector halves (KernelBuilder::maxnumReduce).
/// Returns the head's new m and l (from `m`, `l`) and alpha, the factor of
/// its accumulator.
struct BlockUpdate {
  Value m, l, alpha;
};
BlockUpdate updateBlockSoftmax(KernelBuilder &b, Value probs, int64_t head,
                               Value m, Value l);
/// updateBlockSoftmax for heads 0 .. heads - 1, whose m and l are
/// `carried` as the row-vectors kernels carry them through their block
/// loop (every head's m, then every head's l): the new m and l in the same
/// order, and each head's alpha.
struct BlockUpdates {
  SmallVector<Value> carried, alpha;
};
BlockUpdates updateBlockSoftmaxes(KernelBuilder &b, Value probs,
                                  ValueRange carried, int64_t heads);
/// The accumulators `acc` (one vector per head, heads 0 .. acc.size() - 1)
/// plus key `u`'s probability of each head (row i of `probs`, column u)
/// times `value`, a chunk of the key's value row: one FMA per head.
SmallVector<Value> addWeightedValue(KernelBuilder &b, Value probs, Value u,
                                    Value value, ValueRange acc);

/// The state of the union of the keys of `x` and `y` (same heads, same
/// lane shares); either may be empty (m = -inf).
SoftmaxState mergeSoftmax(KernelBuilder &b, const SoftmaxState &x,
                          const SoftmaxState &y);

/// Called once per visible key j, stored at `offset` of cache block `block`.
using KeyBody = function_ref<SoftmaxState(KernelBuilder &b, Value j,
                                          Value block, Value offset,
                                          const SoftmaxState &state)>;

/// Walks the keys [jlo, jhi) of a request: a loop over its blocks, each
/// read from `blockTable` at `tableRow` + block index (the index clamped
/// to `maxBlocks` - 1 and the entry below `numBlocks`, so neither a
/// seq_len past the table's row nor a bad entry reads outside the table or
/// the cache), and inside it a loop over the block's offsets.
SoftmaxState emitKeyLoop(KernelBuilder &b, Value jlo, Value jhi,
                         int64_t blockSize, Value blockTable, Value tableRow,
                         Value maxBlocks, Value numBlocks,
                         const SoftmaxState &init, KeyBody body);

/// The normalized output and natural-log lse of head `h`. With `sinkLog2`
/// (the sink logit in log2 units) the sink joins the denominator. No
/// visible key: out 0 and lse -inf (the sink with one). With `valueScale`
/// (an fp8 cache's v_scale: the accumulator summed the cached values) out is
/// scaled by it.
struct HeadResult {
  SmallVector<Value> out;
  Value lse;
};
HeadResult finalizeSoftmax(KernelBuilder &b, const SoftmaxState &state,
                           int64_t h, Value sinkLog2,
                           Value valueScale = Value());
/// What finalizeSoftmax applies to a head of running max `m` and sum `l`:
/// out = acc * alpha * inv (alpha only with a sink, else null), and the lse.
/// For kernels that keep their accumulators as vectors.
struct HeadNorm {
  Value alpha, inv, lse;
};
HeadNorm normalizeHead(KernelBuilder &b, Value m, Value l, Value sinkLog2,
                       Value valueScale = Value());

/// The body of a merge kernel (merge_states, split-KV reduce): one
/// workgroup per (row, head), invocations over the head dimension. Merges
/// `numStates` states given by `loadLse(s)` and `loadOut(s, d)`, plus an
/// optional sink logit `sink` (natural units) in the denominator, and writes
/// through `storeOut(d, v)` and `storeLse(v)` (called by invocation 0).
void emitMerge(KernelBuilder &b, int64_t numStates, int64_t headDim,
               int64_t workgroupSize,
               function_ref<Value(KernelBuilder &, int64_t)> loadLse,
               function_ref<Value(KernelBuilder &, int64_t, Value)> loadOut,
               Value sink,
               function_ref<void(KernelBuilder &, Value, Value)> storeOut,
               function_ref<void(KernelBuilder &, Value)> storeLse);

/// Runs `then` when `cond` holds.
void emitIf(KernelBuilder &b, Value cond,
            function_ref<void(KernelBuilder &)> then);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOGPU_ONLINESOFTMAX_H
