//===- TritonMla.cpp - TRITON_MLA: MLA decode over the latent cache -------===//

#include "runtime/host/TritonMla.h"

#include "runtime/host/OperandChecks.h"

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// TritonMlaBackend
//===----------------------------------------------------------------------===//

Result<std::vector<int64_t>>
TritonMlaBackend::getKvCacheShape(int64_t numBlocks, int64_t blockSize,
                                  int64_t numKvHeads, int64_t headSize,
                                  std::string_view cacheDtype) const {
  if (!supportsBlockSize(blockSize))
    return Status::error("Block size must be a multiple of 16.");
  if (numKvHeads != 1)
    return Status::error(
        "MLA kv cache requires num_kv_heads == 1 (the latent is one head).");
  ATTN_RETURN_IF_ERROR(
      checkKvCacheDims(numBlocks, blockSize, numKvHeads, headSize, cacheDtype));
  // No K/V axis: key and value share the latent row.
  return std::vector<int64_t>{numBlocks, blockSize, headSize};
}

std::vector<int64_t> TritonMlaBackend::supportedHeadSizes() const {
  return {576};
}

Result<std::unique_ptr<AttentionImpl>>
TritonMlaBackend::makeImpl(const AttentionLayer &layer,
                           KernelExecutor &executor) const {
  if (layer.numKvHeads != 1)
    return errorf(kName, ": layer '", layer.name,
                  "': MLA requires num_kv_heads == 1, got ", layer.numKvHeads);
  if (layer.kvLoraRank < 1 || layer.kvLoraRank >= layer.headSize)
    return errorf(kName, ": layer '", layer.name, "': kv_lora_rank ",
                  layer.kvLoraRank, " must be in [1, head size ",
                  layer.headSize, ")");
  return std::unique_ptr<AttentionImpl>(
      std::make_unique<TritonMlaImpl>(layer, executor));
}

Result<std::unique_ptr<AttentionMetadataBuilder>>
TritonMlaBackend::makeBuilder(const KvCacheSpec &spec,
                              std::vector<std::string> layerNames,
                              const BuilderConfig &config) const {
  if (spec.numKvHeads != 1)
    return errorf(kName, ": MLA requires num_kv_heads == 1, got ",
                  spec.numKvHeads);
  return std::unique_ptr<AttentionMetadataBuilder>(
      std::make_unique<MlaMetadataBuilder>(spec, std::move(layerNames),
                                           config));
}

//===----------------------------------------------------------------------===//
// TritonMlaImpl
//===----------------------------------------------------------------------===//

TritonMlaImpl::TritonMlaImpl(const AttentionLayer &layer,
                             KernelExecutor &executor)
    : AttentionImpl(layer, executor), cacheDtype_(layerCacheDtype(layer)),
      kScale_(layerScale(layer, layer.kScale)) {
  kvLoraRank = layer.kvLoraRank;
}

Status TritonMlaImpl::forward(const AttentionLayer &layer,
                              const DeviceTensor &query,
                              const DeviceTensor &key,
                              const DeviceTensor &value,
                              const DeviceTensor &kvCache,
                              const AttentionMetadata &metadata,
                              const DeviceTensor &output,
                              const Tensor *outputScale,
                              const Tensor *outputBlockScale) {
  // The whole call is one unit of the device's work (Device.h: mutex).
  std::lock_guard<std::recursive_mutex> lock(executor().device().mutex());
  constexpr std::string_view who = "TRITON_MLA";
  Result<const MlaMetadata *> mdOr = forwardMetadata<MlaMetadata>(
      who, metadata, outputScale, outputBlockScale);
  if (!mdOr)
    return mdOr.status();
  const MlaMetadata *md = *mdOr;
  // Decode is one query token per request; a longer query is a prefill,
  // which this decode-only impl does not run.
  if (query.rank() != 3 || md->seqLens.rank() != 1 ||
      query.dim(0) != md->seqLens.dim(0) || md->numPrefills != 0)
    return errorf(who,
                  ": only the pure decode shape is implemented (one "
                  "query token per request): query ",
                  shapeOf(query), " for ", md->numReqs, " requests with ",
                  md->numPrefills, " prefills");

  // The new tokens' latent rows: kv_c and k_pe, or neither.
  bool writeCache = key.defined() || value.defined();
  if (!writeCache)
    return forwardMqa(layer, query, kvCache, *md, output, /*lse=*/nullptr);
  if (!key.defined() || !value.defined())
    return errorf(who, ": kv_c (key) and k_pe (value) go together, got ",
                  shapeOf(key), " and ", shapeOf(value));
  ATTN_RETURN_IF_ERROR(checkMqa(layer, query, kvCache, *md, output,
                                /*lse=*/nullptr, &md->slotMapping));
  int64_t slots = md->slotMapping.dim(0);
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "kv_c", key, {-1, kvLoraRank}, query.dtype));
  ATTN_RETURN_IF_ERROR(checkShape(
      who, "k_pe", value, {key.dim(0), headSize - kvLoraRank}, query.dtype));
  ATTN_RETURN_IF_ERROR(checkOnDevice(who, "kv_c", key, executor().device()));
  ATTN_RETURN_IF_ERROR(checkOnDevice(who, "k_pe", value, executor().device()));
  if (key.dim(0) < slots)
    return errorf(who, ": kv_c has ", key.dim(0),
                  " tokens but slot_mapping has ", slots);
  ATTN_RETURN_IF_ERROR(
      executor().concatAndCacheMla(key, value, md->slotMapping, kvCache,
                                   kScale_ ? &*kScale_ : nullptr));
  return forwardMqa(layer, query, kvCache, *md, output, /*lse=*/nullptr);
}

std::vector<VariantQuery>
TritonMlaImpl::calls(const AttentionLayer &layer,
                     const KvCacheSpec &cache) const {
  OperandType q(layer.dtype, {0, numHeads, headSize});
  OperandType kvC(layer.dtype, {0, kvLoraRank});
  OperandType kPe(layer.dtype, {0, headSize - kvLoraRank});
  OperandType kvCache(cacheDtype_, {0, cache.blockSize, headSize});
  MlaDecodeParams decode;
  decode.scale = scale;
  decode.kvLoraRank = kvLoraRank;
  decode.numKvSplits = MlaMetadataBuilder::kDefaultNumKvSplits;
  return {concatAndCacheMlaQuery(kvC, kPe, kvCache),
          mlaDecodeQuery(q, kvCache, decode)};
}

Status TritonMlaImpl::checkMqa(const AttentionLayer &layer,
                               const DeviceTensor &q,
                               const DeviceTensor &kvCache,
                               const MlaMetadata &metadata,
                               const DeviceTensor &out,
                               const DeviceTensor *lse,
                               const Tensor *slotMapping) const {
  constexpr std::string_view who = "TRITON_MLA";
  if (layer.slidingWindow)
    return errorf(who, ": sliding window is not supported by MLA (layer '",
                  layer.name, "')");
  if (kvCache.rank() != 3 || kvCache.dim(0) <= 0 || kvCache.dim(1) <= 0)
    return errorf(who,
                  ": kv cache must be the 3-D MLA cache [num_blocks, "
                  "block_size, kv_lora_rank + qk_rope_head_dim], got ",
                  shapeOf(kvCache));
  if (!(scale > 0.0))
    return errorf(who,
                  ": scale must be positive (it carries the mscale^2 "
                  "correction of YaRN-scaled models), got ",
                  scale);
  int64_t numReqs = metadata.numReqs;
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "q", q, {numReqs, numHeads, headSize}, std::nullopt));
  if (q.dtype != layer.dtype)
    return errorf(who, ": q is ", shapeOf(q), " but layer '", layer.name,
                  "' is ", toString(layer.dtype));
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "kv cache", kvCache, {-1, -1, headSize}, cacheDtype_));
  ATTN_RETURN_IF_ERROR(checkShape(who, "output", out,
                                  {numReqs, numHeads, kvLoraRank}, q.dtype));
  for (auto [name, t] :
       {std::pair<const char *, const DeviceTensor *>{"q", &q},
        {"output", &out},
        {"kv cache", &kvCache},
        {"lse", lse}})
    if (t)
      ATTN_RETURN_IF_ERROR(checkOnDevice(who, name, *t, executor().device()));
  if (lse)
    ATTN_RETURN_IF_ERROR(
        checkShape(who, "lse", *lse, {numReqs, numHeads}, DType::F32));
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "seq_lens", metadata.seqLens, {numReqs}, DType::I32));
  ATTN_RETURN_IF_ERROR(checkShape(who, "block_table", metadata.blockTable,
                                  {numReqs, -1}, DType::I32));
  if (slotMapping)
    ATTN_RETURN_IF_ERROR(
        checkShape(who, "slot_mapping", *slotMapping, {-1}, DType::I64));
  return checkPagedAccess(who, metadata.seqLens, metadata.blockTable,
                          slotMapping, kvCache.dim(0), kvCache.dim(1));
}

Status TritonMlaImpl::forwardMqa(const AttentionLayer &layer,
                                 const DeviceTensor &q,
                                 const DeviceTensor &kvCache,
                                 const MlaMetadata &metadata,
                                 const DeviceTensor &out,
                                 const DeviceTensor *lse) {
  ATTN_RETURN_IF_ERROR(
      checkMqa(layer, q, kvCache, metadata, out, lse, /*slotMapping=*/nullptr));
  MlaDecodeParams params;
  params.scale = scale;
  params.kvLoraRank = kvLoraRank;
  params.numKvSplits = metadata.numKvSplits;
  params.kvScale = kScale_ ? &*kScale_ : nullptr;
  return executor().mlaDecode(q, kvCache, metadata.blockTable, metadata.seqLens,
                              params, out, lse);
}

} // namespace attn::runtime
