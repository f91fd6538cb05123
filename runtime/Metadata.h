//===- Metadata.h - Per-step attention metadata shared by all layers ------===//
//
// What a vLLM-shaped serving engine builds once per step and hands to every
// attention backend's metadata builder: vLLM v1's CommonAttentionMetadata,
// with the same fields and the same derivations as the seed's
// MakeCommonAttentionMetadata.
//
// Tensors live on the host as std::vector, as in the seed; toTensor() copies
// one into an attn::Tensor when a backend needs to hand it to an executor.
//
// For request r: q_len = query_start_loc[r+1] - query_start_loc[r], and
// num_computed_tokens[r] = seq_lens[r] - q_len tokens are already cached.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_METADATA_H
#define ATTN_RUNTIME_METADATA_H

#include "reference/ops/Status.h"
#include "reference/ops/Tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attn::runtime {

/// What the scheduler produced for one step, before any backend sees it.
struct StepInputs {
  /// [num_reqs + 1], cumulative query lengths starting at 0.
  std::vector<int32_t> queryStartLoc;
  /// [num_reqs], total tokens of each request after this step.
  std::vector<int32_t> seqLens;
  /// One slot mapping per KV cache group, each [num_tokens]. A negative slot
  /// is padding.
  std::vector<std::vector<int64_t>> slotMapping;
};

/// Per-batch attention metadata, shared across layers and backends. Mirrors
/// vLLM v1's dataclass field for field; the "device" and `Cpu` copies hold
/// the same host data.
struct CommonAttentionMetadata {
  /// [num_reqs + 1], where each request's queries start in the query tensor.
  std::vector<int32_t> queryStartLoc;
  std::vector<int32_t> queryStartLocCpu;
  /// [num_reqs], tokens of each request including this step's.
  std::vector<int32_t> seqLens;
  std::vector<int32_t> seqLensCpu;

  int32_t numReqs = 0;
  /// Total query tokens of the batch (queryStartLoc[num_reqs]; may be padded).
  int32_t numActualTokens = 0;
  /// Longest query in the batch.
  int32_t maxQueryLen = 0;
  /// Longest sequence in the batch (an upper bound after unpadded()).
  int32_t maxSeqLen = 0;

  /// Row-major [num_reqs, blockTableNumCols] physical block ids.
  std::vector<int32_t> blockTableTensor;
  int32_t blockTableNumCols = 0;
  /// [num_actual_tokens] cache slot of each new token; negative is padding.
  std::vector<int64_t> slotMapping;

  bool causal = true;

  /// Needed by a fast-prefill (KV sharing) builder.
  std::optional<std::vector<int32_t>> logitsIndicesPadded;
  std::optional<int32_t> numLogitsIndices;

  /// Needed by a cross-attention builder.
  std::optional<std::vector<int32_t>> encoderSeqLens;
  std::optional<std::vector<int32_t>> encoderSeqLensCpu;

  /// Sequence lengths of this rank under decode context parallelism.
  std::optional<std::vector<int32_t>> dcpLocalSeqLens;
  std::optional<std::vector<int32_t>> dcpLocalSeqLensCpu;

  /// [num_reqs], seqLens[r] - q_len[r]: tokens cached before this step.
  std::vector<int32_t> numComputedTokensCpu;

  /// queryStartLoc[r + 1] - queryStartLoc[r] for every request; empty when
  /// queryStartLoc has fewer than two entries.
  std::vector<int32_t> naiveQueryLens() const;

  /// The first `numActualReqs` requests and `numActualTokens` tokens, sliced
  /// the way vLLM's unpadded() slices (a bound past the end keeps
  /// everything). maxQueryLen and maxSeqLen are kept, so they become upper
  /// bounds; logits indices are kept whole. Negative counts are an error.
  Result<CommonAttentionMetadata> unpadded(int32_t numActualTokens,
                                           int32_t numActualReqs) const;

  /// Checks the invariants every builder relies on: num_reqs > 0, the
  /// vector lengths agree with num_reqs and the block table width,
  /// queryStartLoc starts at 0 and never decreases, numActualTokens matches
  /// its last entry, no seq_len is below its query length, and the slot
  /// mapping covers every token.
  Status validate() const;
};

/// Builds the metadata of one step for KV cache group `kvCacheGroupId`, as
/// the seed does: num_actual_tokens = query_start_loc[-1], max_query_len and
/// max_seq_len over the batch, num_computed_tokens = seq_lens - q_len, and the
/// slot mapping of the requested group. An empty batch (num_reqs == 0) is an
/// error. When the step carries no slot mappings at all the result has none;
/// when it carries some, a group id outside them is an error. The result is
/// validated (see CommonAttentionMetadata::validate).
Result<CommonAttentionMetadata> makeCommonAttentionMetadata(
    const StepInputs &step, const std::vector<int32_t> &blockTableFlat,
    int32_t blockTableNumCols, bool causal = true, int32_t kvCacheGroupId = 0);

/// Copies host data into a tensor of `shape` (i32 or i64). The element count
/// of `shape` must equal data.size().
Result<Tensor> toTensor(const std::vector<int32_t> &data,
                        std::vector<int64_t> shape);
Result<Tensor> toTensor(const std::vector<int64_t> &data,
                        std::vector<int64_t> shape);
/// The rank-1 tensor of `data`.
Tensor toTensor(const std::vector<int32_t> &data);
Tensor toTensor(const std::vector<int64_t> &data);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_METADATA_H
