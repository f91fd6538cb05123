//===- MetadataBuilder.cpp - Per-backend attention metadata and builders --===//

#include "runtime/host/MetadataBuilder.h"

#include <algorithm>

namespace attn::runtime {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Fills what every backend's metadata takes of the step's common metadata.
Status fillBatch(BatchMetadata &md, const CommonAttentionMetadata &cam) {
  Result<Tensor> blockTable =
      toTensor(cam.blockTable, {cam.numReqs, cam.blockTableCols});
  if (!blockTable)
    return errorf("block table: ", blockTable.message());
  md.numReqs = cam.numReqs;
  md.numActualTokens = cam.numActualTokens;
  md.maxQueryLen = cam.maxQueryLen;
  md.maxSeqLen = cam.maxSeqLen;
  md.queryStartLoc = toTensor(cam.queryStartLoc);
  md.seqLens = toTensor(cam.seqLens);
  md.blockTable = std::move(*blockTable);
  md.slotMapping = toTensor(cam.slotMapping);
  md.causal = cam.causal;
  return Status::ok();
}

} // namespace

std::string_view toString(AttentionMetadataKind kind) {
  switch (kind) {
  case AttentionMetadataKind::FlashAttention:
    return "FlashAttentionMetadata";
  case AttentionMetadataKind::Mla:
    return "MlaMetadata";
  }
  return "?";
}

std::optional<int32_t> computeReorderBatchThreshold(
    const BuilderConfig &config, std::optional<int32_t> threshold,
    bool supportsSpecAsDecode, bool supportsDcpWithVarlen) {
  if (threshold && supportsSpecAsDecode && config.speculativeConfig &&
      config.speculativeConfig->numSpeculativeTokens)
    threshold = std::max(*threshold,
                         1 + *config.speculativeConfig->numSpeculativeTokens);
  // Applies even to a builder that does not otherwise reorder.
  if (config.decodeContextParallelSize > 1 && !supportsDcpWithVarlen)
    threshold = 1;
  return threshold;
}

Result<DecodePrefillSplit>
splitDecodesAndPrefills(const CommonAttentionMetadata &cam,
                        int32_t decodeThreshold) {
  ATTN_RETURN_IF_ERROR(cam.validate());
  int32_t numReqs = cam.numReqs;
  int32_t numTokens = cam.numActualTokens;
  if (cam.maxQueryLen <= decodeThreshold)
    return DecodePrefillSplit{numReqs, 0, numTokens, 0};

  std::vector<int32_t> queryLens = cam.queryLens;
  // A leading prefill: the prefill path takes the whole batch.
  if (queryLens[0] > decodeThreshold)
    return DecodePrefillSplit{0, numReqs, 0, numTokens};
  int32_t firstPrefill = 0;
  while (firstPrefill < numReqs && queryLens[firstPrefill] <= decodeThreshold)
    ++firstPrefill;
  if (firstPrefill == numReqs)
    return DecodePrefillSplit{numReqs, 0, numTokens, 0};
  for (int32_t r = firstPrefill + 1; r < numReqs; ++r) {
    if (queryLens[r] <= decodeThreshold)
      return errorf("batch is not reordered: request ", r, " (query length ",
                    queryLens[r], ") is a decode after request ", firstPrefill,
                    " (query length ", queryLens[firstPrefill],
                    "), a prefill, at decode threshold ", decodeThreshold);
  }
  int32_t numDecodeTokens = cam.queryStartLoc[firstPrefill];
  return DecodePrefillSplit{firstPrefill, numReqs - firstPrefill,
                            numDecodeTokens, numTokens - numDecodeTokens};
}

bool flashAttentionUseCascade(const CascadeAttentionQuery &q) {
  // The common case first: too short a prefix to pay off.
  if (q.commonPrefixLen < 256)
    return false;
  if (q.useAlibi || q.useSlidingWindow || q.useLocalAttention)
    return false;
  int64_t numReqs = static_cast<int64_t>(q.queryLens.size());
  if (numReqs < 8)
    return false;
  if (q.dcpWorldSize > 1)
    return false;
  if (q.numKvHeads <= 0 || q.numSms <= 0)
    return false;

  // Without FlashDecoding the normal pass re-reads the prefix per request, so
  // cascade saves bandwidth.
  int64_t queriesPerKv = q.numQueryHeads / q.numKvHeads;
  bool allSingleToken = std::all_of(q.queryLens.begin(), q.queryLens.end(),
                                    [](int32_t len) { return len == 1; });
  bool useFlashDecoding = queriesPerKv > 1 && allSingleToken;
  if (!useFlashDecoding)
    return true;

  // FlashDecoding may launch more CTAs than cascade; compare rough wave
  // counts with 128-wide tiles.
  constexpr int64_t kQTile = 128;
  constexpr int64_t kKvTile = 128;
  int64_t prefixTiles = ceilDiv(q.commonPrefixLen, kKvTile);
  int64_t cascadeCtas = q.numQueryHeads * ceilDiv(numReqs, kQTile);
  int64_t cascadeTime = ceilDiv(cascadeCtas, q.numSms) * prefixTiles;
  int64_t flashDecodingCtas =
      numReqs * q.numKvHeads * ceilDiv(queriesPerKv, kQTile) * prefixTiles;
  int64_t flashDecodingTime = ceilDiv(flashDecodingCtas, q.numSms);
  return cascadeTime < flashDecodingTime;
}

//===----------------------------------------------------------------------===//
// AttentionMetadataBuilder
//===----------------------------------------------------------------------===//

AttentionMetadataBuilder::AttentionMetadataBuilder(
    KvCacheSpec spec, std::vector<std::string> layers, BuilderConfig config)
    : kvCacheSpec_(std::move(spec)), layerNames_(std::move(layers)),
      config_(std::move(config)) {}

void AttentionMetadataBuilder::initReorderBatchThreshold(
    std::optional<int32_t> threshold, bool supportsSpecAsDecode,
    bool supportsDcpWithVarlen) {
  reorderBatchThreshold_ = computeReorderBatchThreshold(
      config_, threshold, supportsSpecAsDecode, supportsDcpWithVarlen);
}

Result<std::unique_ptr<AttentionMetadata>>
AttentionMetadataBuilder::buildForCudagraphCapture(
    const CommonAttentionMetadata &cam) {
  return build(/*commonPrefixLen=*/0, cam);
}

Result<std::unique_ptr<AttentionMetadata>>
AttentionMetadataBuilder::buildForDrafting(const CommonAttentionMetadata &cam,
                                           int32_t draftIndex) {
  return build(/*commonPrefixLen=*/0, cam, /*fastBuild=*/true);
}

Result<std::unique_ptr<AttentionMetadata>>
AttentionMetadataBuilder::updateBlockTable(const AttentionMetadata &,
                                           const std::vector<int32_t> &,
                                           int32_t,
                                           const std::vector<int64_t> &) {
  return errorf(backendName(),
                ": the metadata builder does not support updating the block "
                "table (supports_update_block_table is false)");
}

//===----------------------------------------------------------------------===//
// FLASH_ATTN
//===----------------------------------------------------------------------===//

FlashAttentionMetadataBuilder::FlashAttentionMetadataBuilder(
    KvCacheSpec spec, std::vector<std::string> layers, BuilderConfig config)
    : AttentionMetadataBuilder(std::move(spec), std::move(layers),
                               std::move(config)) {
  initReorderBatchThreshold(/*threshold=*/std::nullopt);
}

Result<std::unique_ptr<AttentionMetadata>>
FlashAttentionMetadataBuilder::build(int32_t commonPrefixLen,
                                     const CommonAttentionMetadata &cam,
                                     bool fastBuild) {
  ATTN_RETURN_IF_ERROR(cam.validate());
  if (commonPrefixLen < 0)
    return errorf("FLASH_ATTN: common_prefix_len ", commonPrefixLen,
                  " is negative");

  auto md = std::make_unique<FlashAttentionMetadata>();
  ATTN_RETURN_IF_ERROR(fillBatch(*md, cam));
  md->commonPrefixLen = commonPrefixLen;
  md->useCascade = commonPrefixLen > 0;
  if (!md->useCascade)
    return std::unique_ptr<AttentionMetadata>(std::move(md));

  // The prefix pass reads the first blocks of a row for every request, so
  // the prefix must fill whole blocks that every request cached earlier.
  int64_t blockSize = kvCacheSpec().blockSize;
  if (blockSize <= 0 || commonPrefixLen % blockSize != 0)
    return errorf("FLASH_ATTN: common_prefix_len ", commonPrefixLen,
                  " is not a multiple of the block size ", blockSize);
  if (commonPrefixLen / blockSize > cam.blockTableCols)
    return errorf("FLASH_ATTN: common_prefix_len ", commonPrefixLen,
                  " spans more blocks than the block table's ",
                  cam.blockTableCols, " columns");
  std::vector<int32_t> suffixKvLens;
  suffixKvLens.reserve(cam.numReqs);
  for (int32_t r = 0; r < cam.numReqs; ++r) {
    if (cam.numComputedTokens[r] < commonPrefixLen)
      return errorf("FLASH_ATTN: common_prefix_len ", commonPrefixLen,
                    " exceeds the ", cam.numComputedTokens[r],
                    " tokens request ", r, " has cached");
    suffixKvLens.push_back(cam.seqLens[r] - commonPrefixLen);
  }
  // Query tokens past query_start_loc[num_reqs] are padding; the prefix pass
  // covers only the real ones.
  int32_t queryTokens = cam.queryStartLoc[cam.numReqs];
  md->cuPrefixQueryLens = toTensor(std::vector<int32_t>{0, queryTokens});
  md->prefixKvLens = toTensor(std::vector<int32_t>{commonPrefixLen});
  md->suffixKvLens = toTensor(suffixKvLens);
  return std::unique_ptr<AttentionMetadata>(std::move(md));
}

Result<std::unique_ptr<AttentionMetadata>>
FlashAttentionMetadataBuilder::updateBlockTable(
    const AttentionMetadata &metadata,
    const std::vector<int32_t> &blockTableFlat, int32_t blockTableNumCols,
    const std::vector<int64_t> &slotMapping) {
  const auto *md = dynCastMetadata<FlashAttentionMetadata>(&metadata);
  if (!md)
    return errorf("FLASH_ATTN: updateBlockTable expects ",
                  toString(AttentionMetadataKind::FlashAttention), ", got ",
                  toString(metadata.kind()));
  Result<Tensor> blockTable =
      toTensor(blockTableFlat, {md->numReqs, blockTableNumCols});
  if (!blockTable)
    return errorf("FLASH_ATTN: block table: ", blockTable.message());
  if (md->useCascade &&
      md->commonPrefixLen / kvCacheSpec().blockSize > blockTableNumCols)
    return errorf("FLASH_ATTN: the new block table's ", blockTableNumCols,
                  " columns do not hold the common prefix of ",
                  md->commonPrefixLen, " tokens");
  if (slotMapping.size() != static_cast<size_t>(md->slotMapping.dim(0)))
    return errorf("FLASH_ATTN: the new slot mapping has ", slotMapping.size(),
                  " entries, the metadata's has ", md->slotMapping.dim(0));
  auto updated = std::make_unique<FlashAttentionMetadata>(*md);
  updated->blockTable = std::move(*blockTable);
  updated->slotMapping = toTensor(slotMapping);
  return std::unique_ptr<AttentionMetadata>(std::move(updated));
}

//===----------------------------------------------------------------------===//
// TRITON_MLA
//===----------------------------------------------------------------------===//

MlaMetadataBuilder::MlaMetadataBuilder(KvCacheSpec spec,
                                       std::vector<std::string> layers,
                                       BuilderConfig config)
    : AttentionMetadataBuilder(std::move(spec), std::move(layers),
                               std::move(config)) {
  initReorderBatchThreshold(/*threshold=*/1, /*supportsSpecAsDecode=*/false,
                            /*supportsDcpWithVarlen=*/false);
}

Result<std::unique_ptr<AttentionMetadata>>
MlaMetadataBuilder::build(int32_t commonPrefixLen,
                          const CommonAttentionMetadata &cam, bool fastBuild) {
  if (commonPrefixLen != 0)
    return errorf("TRITON_MLA: cascade attention is not supported "
                  "(common_prefix_len = ",
                  commonPrefixLen, ")");
  Result<DecodePrefillSplit> split =
      splitDecodesAndPrefills(cam, reorderBatchThreshold().value_or(1));
  if (!split)
    return errorf("TRITON_MLA: ", split.message());
  auto md = std::make_unique<MlaMetadata>();
  ATTN_RETURN_IF_ERROR(fillBatch(*md, cam));
  md->numDecodes = split->numDecodes;
  md->numDecodeTokens = split->numDecodeTokens;
  md->numPrefills = split->numPrefills;
  md->numPrefillTokens = split->numPrefillTokens;
  md->numKvSplits = kDefaultNumKvSplits;
  return std::unique_ptr<AttentionMetadata>(std::move(md));
}

//===----------------------------------------------------------------------===//
// Cross-attention
//===----------------------------------------------------------------------===//

namespace {

/// vLLM's _get_cross_slot_mapping: the slots of positions [0, len) of every
/// request with a nonzero `encoderLens[r]`, in request order.
Result<std::vector<int64_t>>
crossSlotMapping(const CommonAttentionMetadata &cam,
                 const std::vector<int32_t> &encoderLens, int64_t blockSize) {
  std::vector<int64_t> slots;
  for (int64_t r = 0; r < cam.numReqs; ++r) {
    const int64_t len = encoderLens[r];
    if (len > 0 && (len + blockSize - 1) / blockSize > cam.blockTableCols)
      return errorf("cross-attention: encoder_seq_lens[", r, "] = ", len,
                    " needs more blocks than the block table's ",
                    cam.blockTableCols, " columns");
    for (int64_t j = 0; j < len; ++j)
      slots.push_back(int64_t{cam.block(r, j / blockSize)} * blockSize +
                      j % blockSize);
  }
  return slots;
}

} // namespace

CrossAttentionMetadataBuilder::CrossAttentionMetadataBuilder(
    std::unique_ptr<AttentionMetadataBuilder> underlying)
    : AttentionMetadataBuilder(underlying->kvCacheSpec(),
                               underlying->layerNames(), underlying->config()),
      underlying_(std::move(underlying)) {
  // The underlying builder's threshold, not derived again.
  initReorderBatchThreshold(underlying_->reorderBatchThreshold(),
                            /*supportsSpecAsDecode=*/false,
                            /*supportsDcpWithVarlen=*/true);
}

Result<std::unique_ptr<AttentionMetadata>>
CrossAttentionMetadataBuilder::build(int32_t commonPrefixLen,
                                     const CommonAttentionMetadata &cam,
                                     bool fastBuild) {
  ATTN_RETURN_IF_ERROR(cam.validate());
  if (!cam.encoderSeqLens)
    return errorf("CrossAttention: the step has no encoder_seq_lens");
  const int64_t blockSize = kvCacheSpec().blockSize;
  if (blockSize <= 0 || !cam.hasBlockTable)
    return errorf(
        "CrossAttention: needs a block table and a positive block size");
  // Only a request's first decoder step writes its encoder's keys.
  std::vector<int32_t> toWrite = *cam.encoderSeqLens;
  for (int64_t r = 0; r < cam.numReqs; ++r)
    if (cam.numComputedTokens[r] > 0)
      toWrite[r] = 0;
  Result<std::vector<int64_t>> slots =
      crossSlotMapping(cam, toWrite, blockSize);
  if (!slots)
    return slots.status();

  CommonAttentionMetadata cross = cam;
  cross.seqLens = *cam.encoderSeqLens;
  cross.causal = false;
  cross.slotMapping.clear();
  Result<CommonAttentionMetadata> made =
      attn::makeCommonAttentionMetadata(std::move(cross));
  if (!made)
    return errorf("CrossAttention: ", made.message());
  // Padded tokens stay the step's.
  made->numActualTokens = cam.numActualTokens;
  Result<std::unique_ptr<AttentionMetadata>> md =
      underlying_->build(commonPrefixLen, *made, fastBuild);
  if (!md)
    return md.status();
  // Every kind of metadata is a BatchMetadata.
  auto *batch = static_cast<BatchMetadata *>(md->get());
  batch->slotMapping = toTensor(*slots);
  return md;
}

} // namespace attn::runtime
