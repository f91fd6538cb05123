//===- Metadata.cpp - Per-step attention metadata -------------------------===//

#include "runtime/Metadata.h"

#include "reference/ops/Metadata.h"

#include <algorithm>
#include <cstring>

namespace attn::runtime {

namespace {

/// Python's x[:n] for n >= 0: at most the first n elements.
template <typename T> std::vector<T> headOf(const std::vector<T> &v, size_t n) {
  return std::vector<T>(v.begin(), v.begin() + std::min(n, v.size()));
}

template <typename T>
std::optional<std::vector<T>> headOf(const std::optional<std::vector<T>> &v,
                                     size_t n) {
  if (!v)
    return std::nullopt;
  return headOf(*v, n);
}

/// Checks that an optional per-request vector has one entry per request.
Status checkPerRequest(const std::optional<std::vector<int32_t>> &v,
                       const char *name, int32_t numReqs) {
  if (v && static_cast<int64_t>(v->size()) != numReqs)
    return errorf(name, " has ", v->size(),
                  " entries, expected num_reqs = ", numReqs);
  return Status::ok();
}

template <typename T>
Result<Tensor> copyToTensor(const std::vector<T> &data, DType dtype,
                            std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return errorf("tensor dimension ", d, " is negative");
    count *= d;
  }
  if (count != static_cast<int64_t>(data.size()))
    return errorf("shape holds ", count, " elements but the data has ",
                  data.size());
  Tensor t(dtype, std::move(shape));
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if (!data.empty())
    std::memcpy(t.data(), data.data(), data.size() * sizeof(T));
  return t;
}

} // namespace

std::vector<int32_t> CommonAttentionMetadata::naiveQueryLens() const {
  std::vector<int32_t> lens;
  if (queryStartLoc.size() < 2)
    return lens;
  lens.reserve(queryStartLoc.size() - 1);
  for (size_t i = 1; i < queryStartLoc.size(); ++i)
    lens.push_back(queryStartLoc[i] - queryStartLoc[i - 1]);
  return lens;
}

Result<CommonAttentionMetadata>
CommonAttentionMetadata::unpadded(int32_t numActualTokens,
                                  int32_t numActualReqs) const {
  if (numActualTokens < 0 || numActualReqs < 0)
    return errorf("unpadded expects non-negative counts, got num_actual_tokens"
                  " = ",
                  numActualTokens, " and num_actual_reqs = ", numActualReqs);
  auto reqs = static_cast<size_t>(numActualReqs);
  auto tokens = static_cast<size_t>(numActualTokens);

  CommonAttentionMetadata out;
  out.queryStartLoc = headOf(queryStartLoc, reqs + 1);
  out.queryStartLocCpu = headOf(queryStartLocCpu, reqs + 1);
  out.seqLens = headOf(seqLens, reqs);
  out.seqLensCpu = headOf(seqLensCpu, reqs);
  out.numComputedTokensCpu = headOf(numComputedTokensCpu, reqs);
  out.numReqs = numActualReqs;
  out.numActualTokens = numActualTokens;
  out.maxQueryLen = maxQueryLen;
  out.maxSeqLen = maxSeqLen;
  // Rows of the block table, as torch slices the first dimension.
  size_t cols = static_cast<size_t>(std::max(blockTableNumCols, 0));
  out.blockTableTensor = headOf(blockTableTensor, reqs * cols);
  out.blockTableNumCols = blockTableNumCols;
  out.slotMapping = headOf(slotMapping, tokens);
  out.causal = causal;
  out.logitsIndicesPadded = logitsIndicesPadded;
  out.numLogitsIndices = numLogitsIndices;
  out.encoderSeqLens = headOf(encoderSeqLens, reqs);
  out.encoderSeqLensCpu = headOf(encoderSeqLensCpu, reqs);
  out.dcpLocalSeqLens = headOf(dcpLocalSeqLens, reqs);
  out.dcpLocalSeqLensCpu = headOf(dcpLocalSeqLensCpu, reqs);
  return out;
}

Status CommonAttentionMetadata::validate() const {
  if (numReqs <= 0)
    return errorf("attention metadata requires num_reqs > 0, got ", numReqs);
  auto reqs = static_cast<size_t>(numReqs);
  if (queryStartLoc.size() != reqs + 1)
    return errorf("query_start_loc has ", queryStartLoc.size(),
                  " entries, expected num_reqs + 1 = ", reqs + 1);
  if (queryStartLocCpu != queryStartLoc)
    return errorf("query_start_loc_cpu differs from query_start_loc");
  if (seqLens.size() != reqs)
    return errorf("seq_lens has ", seqLens.size(),
                  " entries, expected num_reqs = ", reqs);
  if (seqLensCpu != seqLens)
    return errorf("seq_lens_cpu differs from seq_lens");
  if (numComputedTokensCpu.size() != reqs)
    return errorf("num_computed_tokens_cpu has ", numComputedTokensCpu.size(),
                  " entries, expected num_reqs = ", reqs);
  ATTN_RETURN_IF_ERROR(checkBatchShape(queryStartLoc, seqLens));
  for (size_t r = 0; r < reqs; ++r) {
    int32_t qLen = queryStartLoc[r + 1] - queryStartLoc[r];
    if (numComputedTokensCpu[r] != seqLens[r] - qLen)
      return errorf("num_computed_tokens_cpu[", r,
                    "] = ", numComputedTokensCpu[r],
                    ", expected seq_lens - q_len = ", seqLens[r] - qLen);
    if (qLen > maxQueryLen)
      return errorf("max_query_len = ", maxQueryLen, " is below request ", r,
                    "'s query length ", qLen);
    if (seqLens[r] > maxSeqLen)
      return errorf("max_seq_len = ", maxSeqLen, " is below seq_lens[", r,
                    "] = ", seqLens[r]);
  }
  int32_t queryTokens = queryStartLoc[reqs];
  if (numActualTokens < queryTokens)
    return errorf("num_actual_tokens = ", numActualTokens,
                  " is below query_start_loc[num_reqs] = ", queryTokens);
  if (blockTableNumCols < 0)
    return errorf("block table width ", blockTableNumCols, " is negative");
  if (blockTableTensor.size() != reqs * static_cast<size_t>(blockTableNumCols))
    return errorf("block table has ", blockTableTensor.size(),
                  " entries, expected num_reqs * num_cols = ", reqs, " * ",
                  blockTableNumCols);
  if (!slotMapping.empty() &&
      slotMapping.size() < static_cast<size_t>(queryTokens))
    return errorf("slot_mapping has ", slotMapping.size(),
                  " entries but the batch has ", queryTokens, " tokens");
  if (logitsIndicesPadded.has_value() != numLogitsIndices.has_value())
    return errorf("logits_indices_padded and num_logits_indices must be set "
                  "together");
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(encoderSeqLens, "encoder_seq_lens", numReqs));
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(encoderSeqLensCpu, "encoder_seq_lens_cpu", numReqs));
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(dcpLocalSeqLens, "dcp_local_seq_lens", numReqs));
  ATTN_RETURN_IF_ERROR(
      checkPerRequest(dcpLocalSeqLensCpu, "dcp_local_seq_lens_cpu", numReqs));
  return Status::ok();
}

Result<CommonAttentionMetadata> makeCommonAttentionMetadata(
    const StepInputs &step, const std::vector<int32_t> &blockTableFlat,
    int32_t blockTableNumCols, bool causal, int32_t kvCacheGroupId) {
  if (step.seqLens.empty())
    return errorf("makeCommonAttentionMetadata requires num_reqs > 0");
  if (step.queryStartLoc.size() != step.seqLens.size() + 1)
    return errorf(
        "query_start_loc has ", step.queryStartLoc.size(),
        " entries, expected num_reqs + 1 = ", step.seqLens.size() + 1);

  CommonAttentionMetadata cam;
  // Host-only runtime: the device and `Cpu` copies hold the same data.
  cam.queryStartLoc = step.queryStartLoc;
  cam.queryStartLocCpu = step.queryStartLoc;
  cam.seqLens = step.seqLens;
  cam.seqLensCpu = step.seqLens;
  cam.numReqs = static_cast<int32_t>(step.seqLens.size());
  cam.numActualTokens = step.queryStartLoc.back();

  std::vector<int32_t> queryLens = cam.naiveQueryLens();
  cam.numComputedTokensCpu.reserve(queryLens.size());
  for (size_t r = 0; r < queryLens.size(); ++r) {
    cam.maxQueryLen = std::max(cam.maxQueryLen, queryLens[r]);
    cam.numComputedTokensCpu.push_back(step.seqLens[r] - queryLens[r]);
  }
  cam.maxSeqLen = *std::max_element(step.seqLens.begin(), step.seqLens.end());

  cam.blockTableTensor = blockTableFlat;
  cam.blockTableNumCols = blockTableNumCols;

  // One slot mapping per KV cache group; pick the requested one.
  if (!step.slotMapping.empty()) {
    if (kvCacheGroupId < 0 ||
        static_cast<size_t>(kvCacheGroupId) >= step.slotMapping.size())
      return errorf("kv cache group ", kvCacheGroupId,
                    " has no slot mapping (the step has ",
                    step.slotMapping.size(), " groups)");
    cam.slotMapping = step.slotMapping[kvCacheGroupId];
  }
  cam.causal = causal;

  ATTN_RETURN_IF_ERROR(cam.validate());
  return cam;
}

Result<Tensor> toTensor(const std::vector<int32_t> &data,
                        std::vector<int64_t> shape) {
  return copyToTensor(data, DType::I32, std::move(shape));
}

Result<Tensor> toTensor(const std::vector<int64_t> &data,
                        std::vector<int64_t> shape) {
  return copyToTensor(data, DType::I64, std::move(shape));
}

Tensor toTensor(const std::vector<int32_t> &data) {
  return std::move(
      copyToTensor(data, DType::I32, {static_cast<int64_t>(data.size())})
          .value());
}

Tensor toTensor(const std::vector<int64_t> &data) {
  return std::move(
      copyToTensor(data, DType::I64, {static_cast<int64_t>(data.size())})
          .value());
}

} // namespace attn::runtime
