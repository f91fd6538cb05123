//===- Metadata.cpp - Per-step attention metadata and its validation ------===//
#include "core/Metadata.h"

#include "core/TensorCheck.h"

#include <algorithm>
#include <unordered_map>

namespace attn {

namespace {

std::vector<int32_t> readI32(const Tensor &t) {
  std::vector<int32_t> values(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    values[i] = static_cast<int32_t>(t.getInt(i));
  return values;
}

std::vector<int64_t> readI64(const Tensor &t) {
  std::vector<int64_t> values(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    values[i] = t.getInt(i);
  return values;
}

} // namespace

Result<CommonAttentionMetadata>
makeCommonAttentionMetadata(CommonAttentionMetadata m) {
  if (m.seqLens.empty())
    return errorf("empty batch: seq_lens has no requests (num_reqs must be "
                  "at least 1)");
  m.numReqs = static_cast<int64_t>(m.seqLens.size());
  ATTN_RETURN_IF_ERROR(
      checkBatchShape(m.queryStartLoc, m.seqLens, m.causal));
  m.queryLens.clear();
  m.numComputedTokens.clear();
  m.maxQueryLen = m.maxSeqLen = 0;
  for (int64_t r = 0; r < m.numReqs; ++r) {
    const int32_t queryLen = m.queryStartLoc[r + 1] - m.queryStartLoc[r];
    const int32_t seqLen = m.seqLens[r];
    m.queryLens.push_back(queryLen);
    m.numComputedTokens.push_back(seqLen - queryLen);
    m.maxQueryLen = std::max<int64_t>(m.maxQueryLen, queryLen);
    m.maxSeqLen = std::max<int64_t>(m.maxSeqLen, seqLen);
  }
  m.numActualTokens = m.queryStartLoc[m.numReqs];
  ATTN_RETURN_IF_ERROR(m.validate());
  return m;
}

Result<CommonAttentionMetadata>
makeCommonAttentionMetadata(const Tensor &queryStartLoc, const Tensor &seqLens,
                            const Tensor *blockTable,
                            const Tensor *slotMapping, bool causal) {
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(seqLens, "seq_lens", 1, {DType::I32}));
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(queryStartLoc, "query_start_loc", 1, {DType::I32}));
  const int64_t numReqs = seqLens.dim(0);
  if (numReqs == 0)
    return errorf("empty batch: seq_lens has no requests (num_reqs must be "
                  "at least 1)");
  ATTN_RETURN_IF_ERROR(checkDim(queryStartLoc, "query_start_loc", 0,
                                numReqs + 1, "num_reqs + 1"));

  CommonAttentionMetadata m;
  m.causal = causal;
  m.queryStartLoc = readI32(queryStartLoc);
  m.seqLens = readI32(seqLens);
  ATTN_RETURN_IF_ERROR(checkBatchShape(m.queryStartLoc, m.seqLens, causal));
  if (blockTable) {
    ATTN_RETURN_IF_ERROR(
        checkRankAndDType(*blockTable, "block_table", 2, {DType::I32}));
    ATTN_RETURN_IF_ERROR(
        checkDim(*blockTable, "block_table", 0, numReqs, "num_reqs"));
    m.hasBlockTable = true;
    m.blockTable = readI32(*blockTable);
    m.blockTableCols = blockTable->dim(1);
  }
  if (slotMapping) {
    ATTN_RETURN_IF_ERROR(
        checkRankAndDType(*slotMapping, "slot_mapping", 1, {DType::I64}));
    ATTN_RETURN_IF_ERROR(checkDim(*slotMapping, "slot_mapping", 0,
                                  m.queryStartLoc[numReqs],
                                  "num_actual_tokens = query_start_loc[-1]"));
    m.slotMapping = readI64(*slotMapping);
  }
  return makeCommonAttentionMetadata(std::move(m));
}

namespace {

/// Checks that a per-request vector has one entry per request.
Status checkPerRequest(size_t size, const char *name, int64_t numReqs) {
  if (static_cast<int64_t>(size) != numReqs)
    return errorf(name, " has ", size, " entries, expected num_reqs = ",
                  numReqs);
  return Status::ok();
}

Status checkPerRequest(const std::optional<std::vector<int32_t>> &v,
                       const char *name, int64_t numReqs) {
  return v ? checkPerRequest(v->size(), name, numReqs) : Status::ok();
}

/// The derived per-request fields agree with queryStartLoc and seqLens, and
/// the maxima bound them.
Status checkDerived(const CommonAttentionMetadata &m) {
  for (int64_t r = 0; r < m.numReqs; ++r) {
    const int32_t qLen = m.queryStartLoc[r + 1] - m.queryStartLoc[r];
    if (m.queryLens[r] != qLen)
      return errorf("query_lens[", r, "] = ", m.queryLens[r],
                    ", expected query_start_loc[", r + 1,
                    "] - query_start_loc[", r, "] = ", qLen);
    if (m.numComputedTokens[r] != m.seqLens[r] - qLen)
      return errorf("num_computed_tokens[", r, "] = ", m.numComputedTokens[r],
                    ", expected seq_lens - q_len = ", m.seqLens[r] - qLen);
    if (qLen > m.maxQueryLen)
      return errorf("max_query_len = ", m.maxQueryLen, " is below request ",
                    r, "'s query length ", qLen);
    if (m.seqLens[r] > m.maxSeqLen)
      return errorf("max_seq_len = ", m.maxSeqLen, " is below seq_lens[", r,
                    "] = ", m.seqLens[r]);
  }
  return Status::ok();
}

} // namespace

Status CommonAttentionMetadata::validate() const {
  if (numReqs <= 0)
    return errorf("attention metadata requires num_reqs > 0, got ", numReqs);
  ATTN_RETURN_IF_ERROR(checkPerRequest(seqLens.size(), "seq_lens", numReqs));
  ATTN_RETURN_IF_ERROR(checkBatchShape(queryStartLoc, seqLens, causal));
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(queryLens.size(), "query_lens", numReqs));
  ATTN_RETURN_IF_ERROR(checkPerRequest(numComputedTokens.size(),
                                       "num_computed_tokens", numReqs));
  ATTN_RETURN_IF_ERROR(checkDerived(*this));
  const int64_t queryTokens = queryStartLoc[numReqs];
  if (numActualTokens < queryTokens)
    return errorf("num_actual_tokens = ", numActualTokens,
                  " is below query_start_loc[num_reqs] = ", queryTokens);
  if (blockTableCols < 0)
    return errorf("block table width ", blockTableCols, " is negative");
  const int64_t tableSize = hasBlockTable ? numReqs * blockTableCols : 0;
  if (static_cast<int64_t>(blockTable.size()) != tableSize)
    return errorf("block table has ", blockTable.size(),
                  " entries, expected num_reqs * num_cols = ", numReqs, " * ",
                  blockTableCols);
  if (!slotMapping.empty() &&
      static_cast<int64_t>(slotMapping.size()) < queryTokens)
    return errorf("slot_mapping has ", slotMapping.size(),
                  " entries but the batch has ", queryTokens, " tokens");
  if (logitsIndicesPadded.has_value() != numLogitsIndices.has_value())
    return errorf("logits_indices_padded and num_logits_indices must be set "
                  "together");
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(encoderSeqLens, "encoder_seq_lens", numReqs));
  return checkPerRequest(dcpLocalSeqLens, "dcp_local_seq_lens", numReqs);
}

Status checkNumTokens(const CommonAttentionMetadata &metadata,
                      int64_t numTokens) {
  if (metadata.numActualTokens <= numTokens)
    return Status::ok();
  return errorf("query_start_loc[", metadata.numReqs,
                "] = ", metadata.numActualTokens, " exceeds the query's ",
                numTokens, " tokens");
}

namespace {

/// A request's key count is never negative: kernels take it as a loop
/// bound, and an unsigned ceiling of a negative one runs (nearly) forever.
Status checkSeqLenNotNegative(size_t r, int64_t seqLen) {
  if (seqLen < 0)
    return errorf("seq_lens[", r, "] = ", seqLen, " is negative");
  return Status::ok();
}

} // namespace

Status checkBatchShape(std::span<const int32_t> queryStartLoc,
                       std::span<const int32_t> seqLens, bool causal) {
  const size_t numReqs = seqLens.size();
  if (queryStartLoc.size() != numReqs + 1)
    return errorf("query_start_loc has ", queryStartLoc.size(),
                  " entries, expected num_reqs + 1 = ", numReqs + 1);
  if (queryStartLoc[0] != 0)
    return errorf("query_start_loc[0] = ", queryStartLoc[0], ", expected 0");
  for (size_t r = 0; r < numReqs; ++r) {
    const int32_t begin = queryStartLoc[r];
    const int32_t end = queryStartLoc[r + 1];
    if (end < begin)
      return errorf("query_start_loc is decreasing: query_start_loc[", r + 1,
                    "] = ", end, " < query_start_loc[", r, "] = ", begin);
    const int32_t queryLen = end - begin;
    const int32_t seqLen = seqLens[r];
    ATTN_RETURN_IF_ERROR(checkSeqLenNotNegative(r, seqLen));
    if (causal && seqLen < queryLen)
      return errorf("seq_lens[", r, "] = ", seqLen,
                    " is less than the query length ", queryLen,
                    " of request ", r, " (query_start_loc[", r + 1,
                    "] - query_start_loc[", r,
                    "]); only non-causal (cross) attention allows it");
  }
  return Status::ok();
}

Status checkBlockTable(std::span<const int32_t> seqLens,
                       std::span<const int32_t> blockTable, int64_t cols,
                       int64_t numBlocks, int64_t blockSize) {
  if (blockSize <= 0)
    return errorf("block size must be positive, got ", blockSize);
  for (size_t r = 0; r < seqLens.size(); ++r) {
    const int64_t seqLen = seqLens[r];
    ATTN_RETURN_IF_ERROR(checkSeqLenNotNegative(r, seqLen));
    const int64_t blocksUsed = (seqLen + blockSize - 1) / blockSize;
    if (blocksUsed > cols)
      return errorf("block_table has ", cols, " columns, but request ", r,
                    " with seq_lens[", r, "] = ", seqLen, " needs ",
                    blocksUsed, " blocks of ", blockSize);
    for (int64_t i = 0; i < blocksUsed; ++i) {
      const int32_t b = blockTable[r * cols + i];
      if (b < 0 || b >= numBlocks)
        return errorf("block_table[", r, "][", i, "] = ", b,
                      " is outside [0, num_blocks = ", numBlocks,
                      ") (it holds key positions ", i * blockSize, "..",
                      std::min(seqLen, (i + 1) * blockSize) - 1,
                      " of request ", r, ")");
    }
  }
  return Status::ok();
}

Status checkSlots(std::span<const int64_t> slots, int64_t numBlocks,
                  int64_t blockSize) {
  const int64_t numSlots = numBlocks * blockSize;
  for (size_t t = 0; t < slots.size(); ++t)
    if (slots[t] >= numSlots)
      return errorf("slot_mapping[", t, "] = ", slots[t],
                    " is outside the cache (num_blocks * block_size = ",
                    numBlocks, " * ", blockSize, " = ", numSlots, ")");
  return checkDistinctSlots(slots);
}

Status checkDistinctSlots(std::span<const int64_t> slots) {
  // Two writes of one slot in a step have no order between them (devices
  // write in parallel), so no result would be defined: refuse them.
  std::unordered_map<int64_t, size_t> writer;
  for (size_t t = 0; t < slots.size(); ++t) {
    if (slots[t] < 0)
      continue;
    auto [it, first] = writer.emplace(slots[t], t);
    if (!first)
      return errorf("slot_mapping[", it->second, "] and slot_mapping[", t,
                    "] are both ", slots[t],
                    ": two tokens of one step write the same cache slot");
  }
  return Status::ok();
}

Status checkCacheBounds(const CommonAttentionMetadata &metadata,
                        int64_t numBlocks, int64_t blockSize) {
  if (metadata.hasBlockTable)
    ATTN_RETURN_IF_ERROR(checkBlockTable(metadata.seqLens, metadata.blockTable,
                                         metadata.blockTableCols, numBlocks,
                                         blockSize));
  else if (blockSize <= 0)
    return errorf("block size must be positive, got ", blockSize);
  return checkSlots(metadata.slotMapping, numBlocks, blockSize);
}

Result<CommonAttentionMetadata>
checkPagedBatch(const Tensor &queryStartLoc, const Tensor &seqLens,
                const Tensor &blockTable, bool causal, int64_t numTokens,
                int64_t numBlocks, int64_t blockSize) {
  Result<CommonAttentionMetadata> metadata = makeCommonAttentionMetadata(
      queryStartLoc, seqLens, &blockTable, /*slotMapping=*/nullptr, causal);
  if (!metadata)
    return metadata.status();
  ATTN_RETURN_IF_ERROR(checkNumTokens(*metadata, numTokens));
  ATTN_RETURN_IF_ERROR(checkCacheBounds(*metadata, numBlocks, blockSize));
  return metadata;
}

Result<CommonAttentionMetadata>
checkDecodeBatch(const Tensor &seqLens, const Tensor &blockTable,
                 int64_t numReqs, int64_t numBlocks, int64_t blockSize) {
  ATTN_RETURN_IF_ERROR(checkRankAndDType(seqLens, "seq_lens", 1, {DType::I32}));
  ATTN_RETURN_IF_ERROR(
      checkDim(seqLens, "seq_lens", 0, numReqs, "num_reqs, q dim 0"));
  Tensor queryStartLoc(DType::I32, {numReqs + 1});
  for (int64_t r = 0; r <= numReqs; ++r)
    queryStartLoc.setInt(r, r);
  return checkPagedBatch(queryStartLoc, seqLens, blockTable, /*causal=*/true,
                         numReqs, numBlocks, blockSize);
}

Status checkCacheBounds(const Tensor &seqLens, const Tensor &blockTable,
                        const Tensor *slotMapping, int64_t numBlocks,
                        int64_t blockSize) {
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(seqLens, "seq_lens", 1, {DType::I32}));
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(blockTable, "block_table", 2, {DType::I32}));
  ATTN_RETURN_IF_ERROR(checkDim(blockTable, "block_table", 0, seqLens.dim(0),
                                "num_reqs"));
  ATTN_RETURN_IF_ERROR(checkBlockTable(readI32(seqLens), readI32(blockTable),
                                       blockTable.dim(1), numBlocks,
                                       blockSize));
  if (!slotMapping)
    return Status::ok();
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(*slotMapping, "slot_mapping", 1, {DType::I64}));
  return checkSlots(readI64(*slotMapping), numBlocks, blockSize);
}

Status checkSlotMapping(const Tensor &slotMapping, int64_t numTokens,
                        int64_t numBlocks, int64_t blockSize) {
  ATTN_RETURN_IF_ERROR(
      checkRankAndDType(slotMapping, "slot_mapping", 1, {DType::I64}));
  ATTN_RETURN_IF_ERROR(checkDim(slotMapping, "slot_mapping", 0, numTokens,
                                "the number of tokens"));
  return checkSlots(readI64(slotMapping), numBlocks, blockSize);
}

Result<CommonAttentionMetadata>
CommonAttentionMetadata::unpadded(int64_t newNumActualTokens,
                                  int64_t numActualReqs) const {
  if (numActualReqs < 1 || numActualReqs > numReqs)
    return errorf("unpadded: num_actual_reqs = ", numActualReqs,
                  " is outside [1, num_reqs = ", numReqs, "]");
  if (newNumActualTokens < 0 || newNumActualTokens > numActualTokens)
    return errorf("unpadded: num_actual_tokens = ", newNumActualTokens,
                  " is outside [0, ", numActualTokens, "]");
  CommonAttentionMetadata m = *this;
  m.numReqs = numActualReqs;
  m.numActualTokens = newNumActualTokens;
  m.queryStartLoc.resize(numActualReqs + 1);
  m.seqLens.resize(numActualReqs);
  m.queryLens.resize(numActualReqs);
  m.numComputedTokens.resize(numActualReqs);
  if (m.hasBlockTable)
    m.blockTable.resize(numActualReqs * blockTableCols);
  if (m.slotMapping.size() > static_cast<size_t>(newNumActualTokens))
    m.slotMapping.resize(newNumActualTokens);
  for (auto *perRequest : {&m.encoderSeqLens, &m.dcpLocalSeqLens})
    if (*perRequest)
      (*perRequest)->resize(numActualReqs);
  return m;
}

} // namespace attn
