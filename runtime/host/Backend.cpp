//===- Backend.cpp - Attention backends, impls and layer parameters -------===//

#include "runtime/host/Backend.h"

#include "core/Metadata.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace attn::runtime {

namespace {

template <typename Range> std::string joined(const Range &values) {
  std::ostringstream os;
  bool first = true;
  for (const auto &v : values) {
    if (!first)
      os << ", ";
    first = false;
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, DType>)
      os << toString(v);
    else
      os << v;
  }
  return os.str();
}

std::string shapeOf(const OperandType &t) {
  std::ostringstream os;
  os << "[" << joined(t.shape) << "] " << toString(t.dtype);
  return os.str();
}

/// Checks that `t` (a host or device tensor) is `shape` (a negative entry
/// matches any size) and, when given, of `dtype`.
Status checkShape(std::string_view who, std::string_view name,
                  const OperandType &t, std::vector<int64_t> shape,
                  std::optional<DType> dtype) {
  bool ok = t.shape.size() == shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = shape[i] < 0 || t.shape[i] == shape[i];
  if (!ok) {
    std::ostringstream want;
    want << "[";
    for (size_t i = 0; i < shape.size(); ++i)
      want << (i ? ", " : "")
           << (shape[i] < 0 ? "?" : std::to_string(shape[i]));
    want << "]";
    return errorf(who, ": ", name, " must be ", want.str(), ", got ",
                  shapeOf(t));
  }
  if (dtype && t.dtype != *dtype)
    return errorf(who, ": ", name, " must be ", toString(*dtype), ", got ",
                  toString(t.dtype));
  return Status::ok();
}

/// A device tensor is on the executor's device, so its kernels can read it.
Status checkOnDevice(std::string_view who, std::string_view name,
                     const DeviceTensor &t, const PlanDevice &device) {
  if (t.device != &device)
    return errorf(who, ": ", name, " ", t.describe(), " is not on ",
                  device.name(), ", the device of the layer's executor");
  return Status::ok();
}

/// Checks that every block a request reads (those covering [0, seq_len))
/// and every non-padding slot lies inside a cache of `numBlocks` blocks of
/// `blockSize` tokens, so no executor reads or writes out of bounds
/// (core/Metadata.h's rules).
Status checkPagedAccess(std::string_view who, const Tensor &seqLens,
                        const Tensor &blockTable, const Tensor *slotMapping,
                        int64_t numBlocks, int64_t blockSize) {
  Status s = checkCacheBounds(seqLens, blockTable, slotMapping, numBlocks,
                              blockSize);
  if (!s)
    return errorf(who, ": ", s.message());
  return Status::ok();
}

Status checkPositiveDims(std::string_view who, int64_t numBlocks,
                         int64_t blockSize, int64_t numKvHeads,
                         int64_t headSize) {
  if (numBlocks < 1 || blockSize < 1 || numKvHeads < 1 || headSize < 1)
    return errorf(who,
                  ": kv cache dimensions must be positive, got "
                  "num_blocks = ",
                  numBlocks, ", block_size = ", blockSize,
                  ", num_kv_heads = ", numKvHeads, ", head_size = ", headSize);
  // Even at one byte per element, the cache must be a size a host can hold
  // and index without overflow.
  Result<uint64_t> bytes =
      tensorBytes(1, {numBlocks, 2, blockSize, numKvHeads, headSize});
  if (!bytes)
    return errorf(who, ": kv cache too large: ", bytes.message());
  return Status::ok();
}

Status checkMultipleOf16(int64_t blockSize) {
  if (blockSize <= 0 || blockSize % 16 != 0)
    return errorf("block size ", blockSize, " is not a multiple of 16");
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Layer parameters
//===----------------------------------------------------------------------===//

PerLayerParameters getPerLayerParameters(const AttentionLayer &layer) {
  PerLayerParameters p;
  p.windowLeft = layer.slidingWindow ? *layer.slidingWindow - 1 : -1;
  p.logitsSoftCap = layer.logitsSoftCap;
  p.smScale = layer.scale;
  p.hasSinks = !layer.sinks.empty();
  return p;
}

Result<PerLayerParameters>
inferGlobalHyperparameters(const std::vector<AttentionLayer> &layers,
                           bool requireSame) {
  if (layers.empty())
    return errorf("no attention layers found in the model");
  PerLayerParameters global = getPerLayerParameters(layers.front());
  const std::string &firstName = layers.front().name;
  bool sameWindowLefts = true;
  bool sameAll = true;
  auto optionalText = [](const std::optional<double> &v) {
    return v ? std::to_string(*v) : std::string("none");
  };
  for (const AttentionLayer &layer : layers) {
    PerLayerParameters p = getPerLayerParameters(layer);
    sameWindowLefts &= p.windowLeft == global.windowLeft;
    sameAll &= p == global;
    if (!requireSame || p == global)
      continue;
    std::ostringstream field;
    if (p.windowLeft != global.windowLeft)
      field << "window_left " << p.windowLeft << " but layer '" << firstName
            << "' has " << global.windowLeft;
    else if (p.logitsSoftCap != global.logitsSoftCap)
      field << "logits_soft_cap " << optionalText(p.logitsSoftCap)
            << " but layer '" << firstName << "' has "
            << optionalText(global.logitsSoftCap);
    else if (p.smScale != global.smScale)
      field << "sm_scale " << p.smScale << " but layer '" << firstName
            << "' has " << global.smScale;
    else
      field << "has_sinks " << (p.hasSinks ? "true" : "false") << " but layer '"
            << firstName << "' has " << (global.hasSinks ? "true" : "false");
    return errorf("layer '", layer.name, "' has ", field.str(),
                  "; all layers must share window_left, logits_soft_cap, "
                  "sm_scale and has_sinks");
  }
  global.hasSameWindowLefts = sameWindowLefts;
  global.hasSameAllParams = sameAll;
  return global;
}

//===----------------------------------------------------------------------===//
// AttentionBackend
//===----------------------------------------------------------------------===//

bool AttentionBackend::supportsDtype(DType dtype) const {
  std::vector<DType> dtypes = supportedDtypes();
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool AttentionBackend::supportsHeadSize(int64_t headSize) const {
  std::vector<int64_t> sizes = supportedHeadSizes();
  return std::find(sizes.begin(), sizes.end(), headSize) != sizes.end();
}

Result<DType> kvCacheElementType(std::string_view kvCacheDtype, DType dtype) {
  if (kvCacheDtype == "auto")
    return dtype;
  if (kvCacheDtype == "fp8" || kvCacheDtype == "fp8_e4m3")
    return DType::F8E4M3FN;
  if (kvCacheDtype == "fp8_e5m2")
    return DType::F8E5M2;
  return errorf("kv cache dtype '", kvCacheDtype,
                "' is none of auto, fp8, fp8_e4m3, fp8_e5m2");
}

/// The element type of `layer`'s cache; checkLayer has accepted its name.
static DType cacheDtypeOf(const AttentionLayer &layer) {
  Result<DType> dtype = kvCacheElementType(layer.kvCacheDtype, layer.dtype);
  return dtype ? *dtype : layer.dtype;
}

std::optional<Tensor> layerScale(const AttentionLayer &layer, float scale) {
  if (layer.kvCacheDtype == "auto")
    return std::nullopt;
  Tensor t(DType::F32, {1});
  t.setFloat(0, scale);
  return t;
}

bool AttentionBackend::supportsKvCacheDtype(
    std::string_view kvCacheDtype) const {
  std::vector<std::string> dtypes = supportedKvCacheDtypes();
  return std::find(dtypes.begin(), dtypes.end(), kvCacheDtype) != dtypes.end();
}

std::vector<std::string>
AttentionBackend::validateConfiguration(const SelectionRequest &request) const {
  std::vector<std::string> reasons;
  auto add = [&](auto &&...parts) {
    std::ostringstream os;
    (os << ... << parts);
    reasons.push_back(os.str());
  };
  if (request.useMla && !isMla())
    add("use_mla is true but ", name(), " is not an MLA backend");
  if (!request.useMla && isMla())
    add("use_mla is false");
  if (!supportsHeadSize(request.headSize))
    add("head size ", request.headSize,
        " is not supported (supported: ", joined(supportedHeadSizes()), ")");
  if (!supportsDtype(request.dtype))
    add("dtype ", toString(request.dtype),
        " is not supported (supported: ", joined(supportedDtypes()), ")");
  if (!supportsKvCacheDtype(request.kvCacheDtype))
    add("kv cache dtype '", request.kvCacheDtype,
        "' is not supported (supported: ", joined(supportedKvCacheDtypes()),
        ")");
  if (Status s = checkBlockSize(request.blockSize); !s)
    add(s.message());
  if (request.hasSinks && !supportsSinks())
    add("attention sinks are not supported");
  if (request.useSlidingWindow && !supportsSlidingWindow())
    add("sliding window is not supported");
  if (request.useAlibi && !supportsAlibi())
    add("ALiBi is not supported");
  return reasons;
}

Result<std::unique_ptr<AttentionImpl>>
AttentionBackend::getImpl(const AttentionLayer &layer, KernelExecutor &executor,
                          const KvCacheSpec *cache) const {
  ATTN_RETURN_IF_ERROR(checkLayer(layer));
  Result<std::unique_ptr<AttentionImpl>> impl = makeImpl(layer, executor);
  if (!impl || !cache)
    return impl;
  for (const VariantQuery &call : (*impl)->calls(layer, *cache))
    if (Status s = executor.checkServes(call); !s)
      return errorf(name(), ": layer '", layer.name, "': ", s.message());
  return impl;
}

Status AttentionBackend::checkLayer(const AttentionLayer &layer) const {
  auto fail = [&](auto &&...parts) {
    return errorf(name(), ": layer '", layer.name, "': ", parts...);
  };
  if (layer.numHeads < 1 || layer.numKvHeads < 1)
    return fail("num_heads (", layer.numHeads, ") and num_kv_heads (",
                layer.numKvHeads, ") must be positive");
  if (layer.numHeads % layer.numKvHeads != 0)
    return fail("num_heads ", layer.numHeads,
                " is not a multiple of num_kv_heads ", layer.numKvHeads);
  if (!supportsHeadSize(layer.headSize))
    return fail("head size ", layer.headSize,
                " is not supported (supported: ", joined(supportedHeadSizes()),
                ")");
  if (!supportsDtype(layer.dtype))
    return fail("dtype ", toString(layer.dtype),
                " is not supported (supported: ", joined(supportedDtypes()),
                ")");
  if (!supportsKvCacheDtype(layer.kvCacheDtype))
    return fail("kv cache dtype '", layer.kvCacheDtype,
                "' is not supported (supported: ",
                joined(supportedKvCacheDtypes()), ")");
  if (layer.kvCacheDtype != "auto")
    for (auto [name, s] : {std::pair{"k_scale", layer.kScale},
                           {"v_scale", layer.vScale}})
      if (!(s > 0.0f) || std::isinf(s))
        return fail(name, " must be finite and > 0 with kv cache dtype '",
                    layer.kvCacheDtype, "', got ", s);
  if (layer.slidingWindow && !supportsSlidingWindow())
    return fail("sliding window is not supported");
  if (layer.slidingWindow && *layer.slidingWindow < 1)
    return fail("sliding window ", *layer.slidingWindow, " must be positive");
  if (!layer.sinks.empty() && !supportsSinks())
    return fail("attention sinks are not supported");
  if (!layer.alibiSlopes.empty() && !supportsAlibi())
    return fail("ALiBi is not supported");
  if (layer.logitsSoftCap && !supportsLogitsSoftCap())
    return fail("logits soft cap is not supported");
  if (!layer.sinks.empty() &&
      static_cast<int64_t>(layer.sinks.size()) != layer.numHeads)
    return fail("sinks has ", layer.sinks.size(), " values for ",
                layer.numHeads, " heads");
  if (!layer.alibiSlopes.empty() &&
      static_cast<int64_t>(layer.alibiSlopes.size()) != layer.numHeads)
    return fail("alibi_slopes has ", layer.alibiSlopes.size(), " values for ",
                layer.numHeads, " heads");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// FLASH_ATTN
//===----------------------------------------------------------------------===//

Result<std::vector<int64_t>>
FlashAttentionBackend::getKvCacheShape(int64_t numBlocks, int64_t blockSize,
                                       int64_t numKvHeads, int64_t headSize,
                                       std::string_view cacheDtype) const {
  if (blockSize % 16 != 0)
    return Status::error("Block size must be a multiple of 16.");
  ATTN_RETURN_IF_ERROR(
      checkPositiveDims(kName, numBlocks, blockSize, numKvHeads, headSize));
  if (!supportsKvCacheDtype(cacheDtype))
    return errorf(kName, ": kv cache dtype '", cacheDtype,
                  "' is not supported (supported: ",
                  joined(supportedKvCacheDtypes()), ")");
  return std::vector<int64_t>{numBlocks, 2, blockSize, numKvHeads, headSize};
}

std::vector<DType> FlashAttentionBackend::supportedDtypes() const {
  return {DType::F32, DType::F16, DType::BF16};
}

std::vector<int64_t> FlashAttentionBackend::supportedHeadSizes() const {
  return {32, 64, 96, 128, 160, 192, 224, 256};
}

Status FlashAttentionBackend::checkBlockSize(int64_t blockSize) const {
  return checkMultipleOf16(blockSize);
}

Result<std::unique_ptr<AttentionImpl>>
FlashAttentionBackend::makeImpl(const AttentionLayer &layer,
                                KernelExecutor &executor) const {
  return std::unique_ptr<AttentionImpl>(
      std::make_unique<FlashAttentionImpl>(layer, executor));
}

Result<std::unique_ptr<AttentionMetadataBuilder>>
FlashAttentionBackend::getBuilder(const KvCacheSpec &spec,
                                  std::vector<std::string> layerNames,
                                  const BuilderConfig &config) const {
  if (Status s = checkBlockSize(spec.blockSize); !s)
    return errorf(kName, ": ", s.message());
  return std::unique_ptr<AttentionMetadataBuilder>(
      std::make_unique<FlashAttentionMetadataBuilder>(
          spec, std::move(layerNames), config));
}

FlashAttentionImpl::FlashAttentionImpl(const AttentionLayer &layer,
                                       KernelExecutor &executor)
    : AttentionImpl(executor),
      cacheDtype_(cacheDtypeOf(layer)),
      kScale_(layerScale(layer, layer.kScale)),
      vScale_(layerScale(layer, layer.vScale)) {
  numHeads = layer.numHeads;
  headSize = layer.headSize;
  numKvHeads = layer.numKvHeads;
  scale = layer.scale;
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
  constexpr std::string_view who = "FLASH_ATTN";
  if (outputScale || outputBlockScale)
    return errorf(who, ": fused output quantization is not supported");
  const auto *md = dynCastMetadata<FlashAttentionMetadata>(&metadata);
  if (!md)
    return errorf(who, ": attention metadata must be ",
                  toString(FlashAttentionMetadata::kKind), ", got ",
                  toString(metadata.kind()));
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
  return {reshapeAndCacheQuery(key, kvCache, KvCacheLayout::NHD),
          pagedAttentionQuery(query, kvCache, params(/*causal=*/true))};
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

//===----------------------------------------------------------------------===//
// TRITON_MLA
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
      checkPositiveDims(kName, numBlocks, blockSize, numKvHeads, headSize));
  if (!supportsKvCacheDtype(cacheDtype))
    return errorf(kName, ": kv cache dtype '", cacheDtype,
                  "' is not supported (supported: ",
                  joined(supportedKvCacheDtypes()), ")");
  // No K/V axis: key and value share the latent row.
  return std::vector<int64_t>{numBlocks, blockSize, headSize};
}

std::vector<DType> TritonMlaBackend::supportedDtypes() const {
  return {DType::F32, DType::F16, DType::BF16};
}

std::vector<int64_t> TritonMlaBackend::supportedHeadSizes() const {
  return {576};
}

Status TritonMlaBackend::checkBlockSize(int64_t blockSize) const {
  return checkMultipleOf16(blockSize);
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
TritonMlaBackend::getBuilder(const KvCacheSpec &spec,
                             std::vector<std::string> layerNames,
                             const BuilderConfig &config) const {
  if (Status s = checkBlockSize(spec.blockSize); !s)
    return errorf(kName, ": ", s.message());
  if (spec.numKvHeads != 1)
    return errorf(kName, ": MLA requires num_kv_heads == 1, got ",
                  spec.numKvHeads);
  return std::unique_ptr<AttentionMetadataBuilder>(
      std::make_unique<MlaMetadataBuilder>(spec, std::move(layerNames),
                                           config));
}

TritonMlaImpl::TritonMlaImpl(const AttentionLayer &layer,
                             KernelExecutor &executor)
    : AttentionImpl(executor),
      cacheDtype_(cacheDtypeOf(layer)),
      kScale_(layerScale(layer, layer.kScale)) {
  numHeads = layer.numHeads;
  headSize = layer.headSize;
  numKvHeads = layer.numKvHeads;
  scale = layer.scale;
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
  constexpr std::string_view who = "TRITON_MLA";
  if (outputScale || outputBlockScale)
    return errorf(who, ": fused output quantization is not supported");
  const auto *md = dynCastMetadata<MlaMetadata>(&metadata);
  if (!md)
    return errorf(who, ": attention metadata must be ",
                  toString(MlaMetadata::kKind), ", got ",
                  toString(metadata.kind()));
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
