//===- Metadata.h - Per-step attention metadata shared by all layers ------===//
//
// What a vLLM-shaped serving engine builds once per step and hands to every
// attention backend's metadata builder: vLLM v1's CommonAttentionMetadata,
// with the same fields and the same derivations as the seed's
// MakeCommonAttentionMetadata.
//
// The metadata type is core/Metadata.h's CommonAttentionMetadata; its vectors
// live on the host, and toTensor() copies one into an attn::Tensor when a
// backend hands it to an executor.
//
// For request r: q_len = query_start_loc[r+1] - query_start_loc[r], and
// num_computed_tokens[r] = seq_lens[r] - q_len tokens are already cached.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_METADATA_H
#define ATTN_RUNTIME_METADATA_H

#include "core/Metadata.h"
#include "core/Status.h"
#include "core/Tensor.h"

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

/// The per-batch metadata shared across layers and backends is the
/// core/Metadata.h's: one type, one set of rules.
using attn::CommonAttentionMetadata;

/// Builds the metadata of one step for KV cache group `kvCacheGroupId`, as
/// the seed does: num_actual_tokens = query_start_loc[-1], max_query_len and
/// max_seq_len over the batch, num_computed_tokens = seq_lens - q_len, and the
/// slot mapping of the requested group. An empty batch (num_reqs == 0) is an
/// error. When the step carries no slot mappings at all the result has none;
/// when it carries some, a group id outside them is an error. The result is
/// validated (CommonAttentionMetadata::validate), with a block table even
/// when it has no columns.
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
