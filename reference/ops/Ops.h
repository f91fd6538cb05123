//===- Ops.h - Reference attention ops on host tensors --------------------===//
//
// One function per attn op; together they define what each op computes (see
// "Semantics" in DESIGN.md). Every operand is checked first: bad shapes,
// dtypes or metadata give an error Status, never a crash or an out-of-bounds
// read. Float inputs are read exactly as double, the math is done in double,
// and each output element is rounded once, to nearest even, to its dtype.
// Work is spread over threads; results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_OPS_OPS_H
#define ATTN_REFERENCE_OPS_OPS_H

#include "core/KvCache.h"
#include "core/OpParams.h"
#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>

namespace attn {

/// What an attention op returns: out [tokens, heads, value dim] in the
/// query's dtype and lse [tokens, heads] f32 (natural log).
struct AttentionOutput {
  Tensor out;
  Tensor lse;
};

/// Attention of new query tokens over a paged K/V cache (varlen prefill,
/// chunked prefill and decode in one op).
///
///   query          [T, H, D] f32/f16/bf16
///   kvCache        NHD [NB, 2, B, G, D] or HND [NB, 2, G, B, D], query dtype
///                  or fp8 (f8E4M3FN / f8E5M2) with `scales`
///   blockTable     [R, M] i32
///   seqLens        [R] i32
///   queryStartLoc  [R + 1] i32, with queryStartLoc[R] == T
///   alibiSlopes    [H] f32 or null: s -= slope[h] * |j - p|, after the
///                  soft cap
///   sinks          [H] f32 or null: exp(sink[h]) joins the denominator
///   scales         an fp8 cache's k_scale / v_scale (KvCacheScales): key j
///                  is k_scale * cached key, value j v_scale * cached value
///
/// Query token i of request r is at position p = seq_len - q_len + i; head h
/// reads kv head h / (H / G). A query with no visible key gets out 0 and
/// lse -inf (sink[h] with sinks).
Result<AttentionOutput>
pagedAttention(const Tensor &query, const Tensor &kvCache,
               const Tensor &blockTable, const Tensor &seqLens,
               const Tensor &queryStartLoc, const Tensor *alibiSlopes,
               const Tensor *sinks, const PagedAttentionParams &params,
               const KvCacheScales &scales = {});

/// Writes key[t] and value[t] ([T, G, D], the cache's dtype) into `kvCache`
/// at slot slotMapping[t] ([T] i64); a negative slot is padding and skipped.
/// Every slot is checked before anything is written. With two tokens on one
/// slot the later token wins. An fp8 cache (key and value f32/f16/bf16)
/// stores fp8(key / k_scale) and fp8(value / v_scale), rounded to nearest
/// even and saturated (DType.h).
Status reshapeAndCache(const Tensor &key, const Tensor &value, Tensor &kvCache,
                       const Tensor &slotMapping, KvLayout layout,
                       const KvCacheScales &scales = {});

/// The MLA form (vLLM's concat_and_cache_mla): writes the latent row
/// concat(kvC[t], kPe[t]) into the single-head latent cache
/// [NB, B, L + P] at slot slotMapping[t] ([T] i64). kvC is [T, L] and kPe
/// [T, P], both the cache's dtype (f32, f16 or bf16); a negative slot is
/// padding and skipped. Every slot is checked before anything is written.
/// An fp8 latent cache (kvC and kPe f32/f16/bf16) stores fp8(f32(x) / scale)
/// ([1] f32, vLLM's one scale for the latent cache).
Status concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                         Tensor &latentCache, const Tensor &slotMapping,
                         const Tensor *scale = nullptr);

/// MLA decode: one query per request over the single-head latent cache.
///
///   q           [R, H, L + P] f32/f16/bf16
///   cache       [NB, B, L + P], q's dtype, or fp8 with `scale`
///   blockTable  [R, M] i32
///   seqLens     [R] i32, each >= 1
///   scale       an fp8 cache's [1] f32 scale: a row is scale * cached row
///
/// Every one of the seq_len keys is visible. Returns out [R, H, L], lse [R, H].
Result<AttentionOutput> mlaDecode(const Tensor &q, const Tensor &cache,
                                  const Tensor &blockTable,
                                  const Tensor &seqLens,
                                  const MlaDecodeParams &params,
                                  const Tensor *scale = nullptr);

/// Combines attention over two disjoint key sets into attention over their
/// union: outA/outB [T, H, D] (one float dtype), lseA/lseB [T, H] f32. An
/// lse of -inf marks an empty side. Returns out in outA's dtype, lse f32.
/// With `naiveDevicePrecision`, merges as a naive f32 kernel would
/// (mergeAttentionStatesNaive), for attn-diff's second verdict.
Result<AttentionOutput> mergeStates(const Tensor &outA, const Tensor &lseA,
                                    const Tensor &outB, const Tensor &lseB,
                                    bool naiveDevicePrecision = false);

} // namespace attn

#endif // ATTN_REFERENCE_OPS_OPS_H
