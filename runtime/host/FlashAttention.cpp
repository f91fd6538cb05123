//===- FlashAttention.cpp - FLASH_ATTN: paged attention over NHD ----------===//

#include "runtime/host/FlashAttention.h"

#include "runtime/host/OperandChecks.h"

namespace attn::runtime {

//===----------------------------------------------------------------------===//
// FlashAttentionBackend
//===----------------------------------------------------------------------===//

Result<std::vector<int64_t>>
FlashAttentionBackend::getKvCacheShape(int64_t numBlocks, int64_t blockSize,
                                       int64_t numKvHeads, int64_t headSize,
                                       std::string_view cacheDtype) const {
  if (blockSize % 16 != 0)
    return Status::error("Block size must be a multiple of 16.");
  ATTN_RETURN_IF_ERROR(
      checkKvCacheDims(numBlocks, blockSize, numKvHeads, headSize, cacheDtype));
  return std::vector<int64_t>{numBlocks, 2, blockSize, numKvHeads, headSize};
}

std::vector<int64_t> FlashAttentionBackend::supportedHeadSizes() const {
  return {32, 64, 96, 128, 160, 192, 224, 256};
}

Result<std::unique_ptr<AttentionImpl>>
FlashAttentionBackend::makeImpl(const AttentionLayer &layer,
                                KernelExecutor &executor) const {
  return std::unique_ptr<AttentionImpl>(
      std::make_unique<FlashAttentionImpl>(layer, executor));
}

Result<std::unique_ptr<AttentionMetadataBuilder>>
FlashAttentionBackend::makeBuilder(const KvCacheSpec &spec,
                                   std::vector<std::string> layerNames,
                                   const BuilderConfig &config) const {
  return std::unique_ptr<AttentionMetadataBuilder>(
      std::make_unique<FlashAttentionMetadataBuilder>(
          spec, std::move(layerNames), config));
}

//===----------------------------------------------------------------------===//
// FlashAttentionImpl
//===----------------------------------------------------------------------===//

FlashAttentionImpl::FlashAttentionImpl(const AttentionLayer &layer,
                                       KernelExecutor &executor)
    : AttentionImpl(layer, executor), cacheDtype_(layerCacheDtype(layer)),
      kScale_(layerScale(layer, layer.kScale, layer.kHeadScales)),
      vScale_(layerScale(layer, layer.vScale, layer.vHeadScales)) {
  // vLLM's decoder convention: a window of W tokens sees W - 1 keys back.
  if (layer.slidingWindow)
    window_ = {*layer.slidingWindow - 1, 0};
  logitsSoftCap_ = layer.logitsSoftCap.value_or(0.0);
  if (!layer.alibiSlopes.empty()) {
    alibiSlopes_ = Tensor(DType::F32, {numHeads});
    for (int64_t h = 0; h < numHeads; ++h)
      alibiSlopes_->setFloat(h, layer.alibiSlopes[h]);
  }
  if (!layer.sinks.empty()) {
    sinks_ = Tensor(DType::F32, {numHeads});
    for (int64_t h = 0; h < numHeads; ++h)
      sinks_->setFloat(h, layer.sinks[h]);
  }
}

Status FlashAttentionImpl::forward(const AttentionLayer &layer,
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
  constexpr std::string_view who = "FLASH_ATTN";
  Result<const FlashAttentionMetadata *> mdOr =
      forwardMetadata<FlashAttentionMetadata>(who, metadata, outputScale,
                                              outputBlockScale);
  if (!mdOr)
    return mdOr.status();
  const FlashAttentionMetadata *md = *mdOr;
  if (!(scale > 0.0))
    return errorf(who, ": scale must be positive, got ", scale);

  // Operand shapes: the padded token count may exceed the metadata's.
  int64_t numReqs = md->numReqs;
  ATTN_RETURN_IF_ERROR(checkShape(who, "query_start_loc", md->queryStartLoc,
                                  {numReqs + 1}, DType::I32));
  int64_t queryTokens = md->queryStartLoc.getInt(numReqs);
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "query", query, {-1, numHeads, headSize}, std::nullopt));
  if (query.dtype != layer.dtype)
    return errorf(who, ": query is ", shapeOf(query), " but layer '",
                  layer.name, "' is ", toString(layer.dtype));
  if (query.dim(0) < queryTokens)
    return errorf(who, ": query has ", query.dim(0),
                  " tokens but the metadata has ", queryTokens);
  ATTN_RETURN_IF_ERROR(checkShape(who, "output", output,
                                  {query.dim(0), numHeads, headSize},
                                  query.dtype));
  ATTN_RETURN_IF_ERROR(checkShape(who, "kv cache", kvCache,
                                  {-1, 2, -1, numKvHeads, headSize},
                                  cacheDtype_));
  for (auto [name, t] : {std::pair<const char *, const DeviceTensor *>{
                             "query", &query},
                         {"output", &output},
                         {"kv cache", &kvCache}})
    ATTN_RETURN_IF_ERROR(checkOnDevice(who, name, *t, executor().device()));
  int64_t numBlocks = kvCache.dim(0);
  int64_t blockSize = kvCache.dim(2);
  if (numBlocks < 1 || blockSize < 1)
    return errorf(who, ": kv cache ", shapeOf(kvCache), " is empty");
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "seq_lens", md->seqLens, {numReqs}, DType::I32));
  ATTN_RETURN_IF_ERROR(checkShape(who, "block_table", md->blockTable,
                                  {numReqs, -1}, DType::I32));
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "slot_mapping", md->slotMapping, {-1}, DType::I64));

  bool writeCache = key.defined();
  if (writeCache) {
    int64_t slots = md->slotMapping.dim(0);
    ATTN_RETURN_IF_ERROR(
        checkShape(who, "key", key, {-1, numKvHeads, headSize}, query.dtype));
    ATTN_RETURN_IF_ERROR(
        checkShape(who, "value", value, key.shape, query.dtype));
    ATTN_RETURN_IF_ERROR(checkOnDevice(who, "key", key, executor().device()));
    ATTN_RETURN_IF_ERROR(
        checkOnDevice(who, "value", value, executor().device()));
    if (key.dim(0) < slots)
      return errorf(who, ": key has ", key.dim(0),
                    " tokens but slot_mapping has ", slots);
  }
  ATTN_RETURN_IF_ERROR(checkPagedAccess(who, md->seqLens, md->blockTable,
                                        writeCache ? &md->slotMapping : nullptr,
                                        numBlocks, blockSize));
  if (writeCache)
    ATTN_RETURN_IF_ERROR(executor().reshapeAndCache(
        key, value, md->slotMapping, KvCacheLayout::NHD, kvCache,
        params(md->causal).kvScales));

  if (md->useCascade)
    return forwardCascade(query, kvCache, *md, params(md->causal), output);
  return executor().pagedAttention(query, kvCache, md->queryStartLoc,
                                   md->seqLens, md->blockTable,
                                   params(md->causal), output,
                                   /*lse=*/nullptr);
}

PagedAttentionParams FlashAttentionImpl::params(bool causal) const {
  PagedAttentionParams params;
  params.scale = scale;
  params.causal = causal;
  params.windowLeft = window_.first;
  params.windowRight = window_.second;
  params.softCap = logitsSoftCap_;
  params.alibiSlopes = alibiSlopes_ ? &*alibiSlopes_ : nullptr;
  params.sinks = sinks_ ? &*sinks_ : nullptr;
  params.kvScales = {kScale_ ? &*kScale_ : nullptr,
                     vScale_ ? &*vScale_ : nullptr};
  params.layout = KvCacheLayout::NHD;
  return params;
}

std::vector<VariantQuery>
FlashAttentionImpl::calls(const AttentionLayer &layer,
                          const KvCacheSpec &cache) const {
  OperandType query(layer.dtype, {0, numHeads, headSize});
  OperandType key(layer.dtype, {0, numKvHeads, headSize});
  OperandType kvCache(cacheDtype_,
                      {0, 2, cache.blockSize, numKvHeads, headSize});
  // A cross-attention layer's metadata is non-causal (its builder's).
  bool causal = layer.attnType == AttentionType::Decoder;
  return {reshapeAndCacheQuery(key, kvCache, KvCacheLayout::NHD,
                               params(causal).kvScales),
          pagedAttentionQuery(query, kvCache, params(causal))};
}

Status FlashAttentionImpl::forwardCascade(const DeviceTensor &query,
                                          const DeviceTensor &kvCache,
                                          const FlashAttentionMetadata &md,
                                          const PagedAttentionParams &params,
                                          const DeviceTensor &output) {
  constexpr std::string_view who = "FLASH_ATTN";
  // Each pass would see the window, bias and sink on its own, which is not
  // the attention over the whole sequence.
  if (params.windowLeft >= 0 || params.alibiSlopes || params.sinks)
    return errorf(who, ": cascade attention does not support sliding window, "
                       "ALiBi or sinks");
  if (!md.cuPrefixQueryLens || !md.prefixKvLens || !md.suffixKvLens)
    return errorf(who, ": cascade metadata lacks its prefix/suffix lengths");
  int64_t blockSize = kvCache.dim(2);
  if (md.commonPrefixLen % blockSize != 0)
    return errorf(who, ": common_prefix_len ", md.commonPrefixLen,
                  " is not a multiple of the cache's block size ", blockSize);
  int64_t numReqs = md.numReqs;
  int64_t cols = md.blockTable.dim(1);
  int64_t prefixBlocks = md.commonPrefixLen / blockSize;
  if (prefixBlocks > cols)
    return errorf(who, ": common_prefix_len ", md.commonPrefixLen,
                  " spans more blocks than the block table's ", cols,
                  " columns");
  ATTN_RETURN_IF_ERROR(checkShape(who, "suffix_kv_lens", *md.suffixKvLens,
                                  {numReqs}, DType::I32));
  ATTN_RETURN_IF_ERROR(checkShape(who, "cu_prefix_query_lens",
                                  *md.cuPrefixQueryLens, {2}, DType::I32));
  ATTN_RETURN_IF_ERROR(
      checkShape(who, "prefix_kv_lens", *md.prefixKvLens, {1}, DType::I32));
  // The passes read only what the checked seq_lens and block table cover.
  int64_t queryTokens = md.queryStartLoc.getInt(numReqs);
  if (md.cuPrefixQueryLens->getInt(0) != 0 ||
      md.cuPrefixQueryLens->getInt(1) != queryTokens ||
      md.prefixKvLens->getInt(0) != md.commonPrefixLen)
    return errorf(who, ": cascade prefix lengths disagree with the batch");
  for (int64_t r = 0; r < numReqs; ++r)
    if (md.suffixKvLens->getInt(r) != md.seqLens.getInt(r) - md.commonPrefixLen)
      return errorf(
          who, ": suffix_kv_lens[", r, "] = ", md.suffixKvLens->getInt(r),
          ", expected seq_lens - ",
          "common_prefix_len = ", md.seqLens.getInt(r) - md.commonPrefixLen);
  for (int64_t r = 0; r < numReqs; ++r) {
    int64_t queryLen =
        md.queryStartLoc.getInt(r + 1) - md.queryStartLoc.getInt(r);
    if (md.suffixKvLens->getInt(r) < queryLen)
      return errorf(who, ": request ", r, " has ", queryLen,
                    " query tokens but only ", md.suffixKvLens->getInt(r),
                    " keys after the common prefix");
  }

  // Prefix pass: every query token against the shared blocks, no mask. Each
  // token is its own one-token request over the prefix, so that the pass is
  // valid paged attention (seq_len >= query length) however many tokens the
  // batch has.
  // Sized by the metadata: allocation failure is an error, not an abort.
  int64_t tokens = md.cuPrefixQueryLens->getInt(1);
  Result<Tensor> prefixQslOr = Tensor::create(DType::I32, {tokens + 1});
  Result<Tensor> prefixSeqLensOr = Tensor::create(DType::I32, {tokens});
  Result<Tensor> prefixTableOr =
      Tensor::create(DType::I32, {tokens, prefixBlocks});
  Result<Tensor> suffixTableOr =
      Tensor::create(DType::I32, {numReqs, cols - prefixBlocks});
  for (const Result<Tensor> *t :
       {&prefixQslOr, &prefixSeqLensOr, &prefixTableOr, &suffixTableOr})
    if (!*t)
      return errorf(who, ": cascade metadata: ", t->message());
  Tensor &prefixQueryStartLoc = *prefixQslOr;
  Tensor &prefixSeqLens = *prefixSeqLensOr;
  Tensor &prefixTable = *prefixTableOr;
  for (int64_t t = 0; t <= tokens; ++t)
    prefixQueryStartLoc.setInt(t, t);
  for (int64_t t = 0; t < tokens; ++t) {
    prefixSeqLens.setInt(t, md.commonPrefixLen);
    for (int64_t i = 0; i < prefixBlocks; ++i)
      prefixTable.setInt(t * prefixBlocks + i, md.blockTable.getInt(i));
  }
  // Suffix pass: each request against the rest of its row.
  Tensor &suffixTable = *suffixTableOr;
  for (int64_t r = 0; r < numReqs; ++r)
    for (int64_t i = prefixBlocks; i < cols; ++i)
      suffixTable.setInt(r * (cols - prefixBlocks) + i - prefixBlocks,
                         md.blockTable.getInt(r * cols + i));

  // The passes' partial results live on the device, as the output does.
  PlanDevice &device = executor().device();
  Result<DeviceTensor> prefixOut =
      allocateTensor(device, query.dtype, {tokens, numHeads, headSize});
  Result<DeviceTensor> prefixLse =
      allocateTensor(device, DType::F32, {tokens, numHeads});
  Result<DeviceTensor> suffixOut =
      allocateTensor(device, query.dtype, {tokens, numHeads, headSize});
  Result<DeviceTensor> suffixLse =
      allocateTensor(device, DType::F32, {tokens, numHeads});
  for (const Result<DeviceTensor> *t :
       {&prefixOut, &prefixLse, &suffixOut, &suffixLse})
    if (!*t)
      return errorf(who, ": ", t->message());

  PagedAttentionParams prefixParams = params;
  prefixParams.causal = false;
  ATTN_RETURN_IF_ERROR(executor().pagedAttention(
      query, kvCache, prefixQueryStartLoc, prefixSeqLens, prefixTable,
      prefixParams, *prefixOut, &*prefixLse));
  ATTN_RETURN_IF_ERROR(executor().pagedAttention(
      query, kvCache, md.queryStartLoc, *md.suffixKvLens, suffixTable, params,
      *suffixOut, &*suffixLse));
  return executor().mergeStates(*prefixOut, *prefixLse, *suffixOut,
                                *suffixLse, output, /*lse=*/nullptr);
}

} // namespace attn::runtime
