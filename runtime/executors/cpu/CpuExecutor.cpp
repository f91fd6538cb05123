//===- CpuExecutor.cpp - The runtime's CPU backend -----------------------===//

#include "runtime/executors/cpu/CpuExecutor.h"

#include "reference/ops/Ops.h"
#include "runtime/TensorRows.h"

#include <algorithm>

namespace attn::runtime {

namespace {

KvLayout toReference(KvCacheLayout layout) {
  return layout == KvCacheLayout::Nhd ? KvLayout::NHD : KvLayout::HND;
}

/// The tokens a batch really has (queryStartLoc[R]), or `rows` when the
/// tensor cannot say (the reference op then reports what is wrong with it).
int64_t batchTokens(const Tensor &queryStartLoc, int64_t rows) {
  if (queryStartLoc.rank() != 1 || queryStartLoc.dim(0) < 1 ||
      queryStartLoc.dtype() != DType::I32)
    return rows;
  int64_t tokens = queryStartLoc.getInt(queryStartLoc.dim(0) - 1);
  return tokens >= 0 && tokens < rows ? tokens : rows;
}

/// Copies an op's results into the caller's out and lse.
Status deliver(const AttentionOutput &result, Tensor &out, Tensor *lse) {
  ATTN_RETURN_IF_ERROR(copyIntoLeadingRows(result.out, out, "out"));
  if (lse)
    ATTN_RETURN_IF_ERROR(copyIntoLeadingRows(result.lse, *lse, "lse"));
  return Status::ok();
}

} // namespace

Status CpuExecutor::reshapeAndCache(const Tensor &key, const Tensor &value,
                                    const Tensor &slotMapping,
                                    KvCacheLayout layout, Tensor &kvCache) {
  // Tokens past the slot mapping are padding.
  if (slotMapping.rank() == 1 && key.rank() >= 1 && value.rank() >= 1 &&
      key.dim(0) > slotMapping.dim(0) && value.dim(0) == key.dim(0))
    return attn::reshapeAndCache(leadingRows(key, slotMapping.dim(0)),
                                 leadingRows(value, slotMapping.dim(0)),
                                 kvCache, slotMapping, toReference(layout));
  return attn::reshapeAndCache(key, value, kvCache, slotMapping,
                               toReference(layout));
}

Status CpuExecutor::concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                                      const Tensor &slotMapping,
                                      Tensor &kvCache) {
  // Tokens past the slot mapping are padding.
  if (slotMapping.rank() == 1 && kvC.rank() >= 1 && kPe.rank() >= 1 &&
      kvC.dim(0) > slotMapping.dim(0) && kPe.dim(0) == kvC.dim(0))
    return attn::concatAndCacheMla(leadingRows(kvC, slotMapping.dim(0)),
                                   leadingRows(kPe, slotMapping.dim(0)),
                                   kvCache, slotMapping);
  return attn::concatAndCacheMla(kvC, kPe, kvCache, slotMapping);
}

Status CpuExecutor::pagedAttention(const Tensor &query, const Tensor &kvCache,
                                   const Tensor &queryStartLoc,
                                   const Tensor &seqLens,
                                   const Tensor &blockTable,
                                   const PagedAttentionParams &params,
                                   Tensor &out, Tensor *lse) {
  attn::PagedAttentionParams ref;
  ref.layout = toReference(params.layout);
  ref.scale = params.scale;
  ref.causal = params.causal;
  ref.windowLeft = params.windowLeft;
  ref.windowRight = params.windowRight;
  ref.softCap = params.logitsSoftCap;
  int64_t rows = query.rank() >= 1 ? query.dim(0) : 0;
  int64_t tokens = batchTokens(queryStartLoc, rows);
  Result<AttentionOutput> result =
      tokens < rows
          ? attn::pagedAttention(leadingRows(query, tokens), kvCache,
                                 blockTable, seqLens, queryStartLoc,
                                 params.alibiSlopes, params.sinks, ref)
          : attn::pagedAttention(query, kvCache, blockTable, seqLens,
                                 queryStartLoc, params.alibiSlopes,
                                 params.sinks, ref);
  if (!result)
    return result.status();
  return deliver(*result, out, lse);
}

Status CpuExecutor::mlaDecode(const Tensor &q, const Tensor &kvCache,
                              const Tensor &blockTable, const Tensor &seqLens,
                              const MlaDecodeParams &params, Tensor &out,
                              Tensor *lse) {
  attn::MlaDecodeParams ref;
  ref.scale = params.scale;
  ref.kvLoraRank = params.kvLoraRank;
  ref.numKvSplits = params.numKvSplits;
  Result<AttentionOutput> result =
      attn::mlaDecode(q, kvCache, blockTable, seqLens, ref);
  if (!result)
    return result.status();
  return deliver(*result, out, lse);
}

Status CpuExecutor::mergeStates(const Tensor &outA, const Tensor &lseA,
                                const Tensor &outB, const Tensor &lseB,
                                Tensor &out, Tensor *lse) {
  Result<AttentionOutput> result = attn::mergeStates(outA, lseA, outB, lseB);
  if (!result)
    return result.status();
  return deliver(*result, out, lse);
}

} // namespace attn::runtime
