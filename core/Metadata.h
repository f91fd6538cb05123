//===- Metadata.h - Per-step attention metadata and its validation --------===//
//
// What a serving engine builds each step (vLLM's CommonAttentionMetadata, as
// the seed's MakeCommonAttentionMetadata fills it), read from host tensors and
// checked so that no op reads out of bounds on bad input.
//
// For request r: q_len = query_start_loc[r+1] - query_start_loc[r], and
// context = seq_lens[r] - q_len tokens are already in the cache; without
// causality (cross-attention) context may be negative.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_METADATA_H
#define ATTN_CORE_METADATA_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace attn {

/// vLLM v1's CommonAttentionMetadata, the one type the reference, the
/// runtime's builders and impls, and the executors share. Every field is a
/// host copy: vLLM's `_cpu` twins would hold the same data here, and the
/// runtime stages what a kernel reads to the device itself. Build one with
/// makeCommonAttentionMetadata (from host vectors or from tensors), which
/// fills the derived fields and validates the result.
struct CommonAttentionMetadata {
  /// [numReqs + 1], starting at 0 and non-decreasing.
  std::vector<int32_t> queryStartLoc;
  /// [numReqs], each at least the request's query length when causal.
  std::vector<int32_t> seqLens;
  /// [numReqs], queryStartLoc[r + 1] - queryStartLoc[r].
  std::vector<int32_t> queryLens;
  /// [numReqs], seqLens[r] - queryLens[r]: tokens cached before this step;
  /// negative for a non-causal request with fewer keys than queries.
  std::vector<int32_t> numComputedTokens;

  int64_t numReqs = 0;
  /// Query tokens of the batch: queryStartLoc[numReqs], or more when the
  /// token count is padded.
  int64_t numActualTokens = 0;
  /// Upper bounds over the batch (exact when built, kept by unpadded()).
  int64_t maxQueryLen = 0;
  int64_t maxSeqLen = 0;

  /// Whether a block table was given; without one blockTable is empty.
  bool hasBlockTable = false;
  /// Row-major [numReqs, blockTableCols] physical block ids.
  std::vector<int32_t> blockTable;
  int64_t blockTableCols = 0;
  /// Cache slots of the new tokens, at least queryStartLoc[numReqs] of them;
  /// empty when built without one. A negative slot is padding.
  std::vector<int64_t> slotMapping;

  bool causal = true;

  /// For a fast-prefill (KV sharing) builder; set together.
  std::optional<std::vector<int32_t>> logitsIndicesPadded;
  std::optional<int64_t> numLogitsIndices;
  /// [numReqs], for a cross-attention builder.
  std::optional<std::vector<int32_t>> encoderSeqLens;
  /// [numReqs], this rank's sequence lengths under decode context
  /// parallelism.
  std::optional<std::vector<int32_t>> dcpLocalSeqLens;

  /// The physical block holding key positions [i * B, (i + 1) * B) of `req`.
  int32_t block(int64_t req, int64_t i) const {
    return blockTable[req * blockTableCols + i];
  }

  /// The first `numActualReqs` requests (in [1, numReqs]) and
  /// `numActualTokens` tokens (in [0, this numActualTokens]), sliced as
  /// vLLM's unpadded() slices; a count outside its range is an error (vLLM
  /// would take it as given and leave the fields disagreeing). The max
  /// lengths are kept, so they become upper bounds; logits indices are kept
  /// whole.
  Result<CommonAttentionMetadata> unpadded(int64_t numActualTokens,
                                           int64_t numActualReqs) const;

  /// Checks the invariants every consumer relies on: num_reqs > 0, every
  /// vector's length agrees with num_reqs and the block table width, the
  /// batch shape (checkBatchShape), the derived fields agree with the given
  /// ones, the maxima bound every request, num_actual_tokens covers the
  /// queries, and the slot mapping (when present) covers every token.
  Status validate() const;
};

/// Fills the derived fields of `given` (queryLens, numComputedTokens,
/// numReqs, numActualTokens = queryStartLoc[numReqs], the maxima) from its
/// queryStartLoc and seqLens, then validates it. An empty batch is an
/// error.
Result<CommonAttentionMetadata>
makeCommonAttentionMetadata(CommonAttentionMetadata given);

/// Reads and validates metadata: query_start_loc [R + 1] i32, seq_lens [R]
/// i32, and optionally block_table [R, M] i32 and slot_mapping [T] i64 with
/// T = query_start_loc[R]. Bounds against the cache are checked separately
/// (checkCacheBounds), since they need the cache geometry.
Result<CommonAttentionMetadata>
makeCommonAttentionMetadata(const Tensor &queryStartLoc, const Tensor &seqLens,
                            const Tensor *blockTable = nullptr,
                            const Tensor *slotMapping = nullptr,
                            bool causal = true);

/// Checks that the batch's query_start_loc[R] tokens fit the query's
/// `numTokens` rows; rows past query_start_loc[R] are padding (a batch
/// padded to a captured size), neither read nor written.
Status checkNumTokens(const CommonAttentionMetadata &metadata,
                      int64_t numTokens);

/// Checks the block table (when present) and the slot mapping (when present)
/// against a paged cache of `numBlocks` blocks of `blockSize` tokens: every
/// block a request uses (those covering [0, seq_len)) exists, the table is
/// wide enough, and every non-padding slot is inside the cache.
Status checkCacheBounds(const CommonAttentionMetadata &metadata,
                        int64_t numBlocks, int64_t blockSize);

/// What a paged op checks of its batch before it reads anything (the
/// reference's paged_attention and mla_decode, attn-run's device path, the
/// TT host): the metadata (makeCommonAttentionMetadata, without a slot
/// mapping), query_start_loc[R] within the query's `numTokens` rows
/// (checkNumTokens) and the block table against a cache of `numBlocks`
/// blocks of `blockSize` tokens (checkCacheBounds).
Result<CommonAttentionMetadata>
checkPagedBatch(const Tensor &queryStartLoc, const Tensor &seqLens,
                const Tensor &blockTable, bool causal, int64_t numTokens,
                int64_t numBlocks, int64_t blockSize);

/// checkPagedBatch for a decode batch of one query per request (mla_decode):
/// seq_lens has `numReqs` entries (the query's rows) and query_start_loc is
/// 0, 1, ..., numReqs; causal.
Result<CommonAttentionMetadata>
checkDecodeBatch(const Tensor &seqLens, const Tensor &blockTable,
                 int64_t numReqs, int64_t numBlocks, int64_t blockSize);

/// The rules of every batch, on host copies of its metadata (the one copy
/// of them: the reference, the runtime's builders and impls call these):

/// query_start_loc has num_reqs + 1 entries, starts at 0 and never
/// decreases; every seq_len is >= 0 and, for causal attention, at least its
/// request's query length. Non-causal attention may have fewer keys than
/// queries: cross-attention, where a decoder's queries see the encoder's
/// keys (vLLM's CrossAttentionBuilder uses encoder_seq_lens as seq_lens).
Status checkBatchShape(std::span<const int32_t> queryStartLoc,
                       std::span<const int32_t> seqLens, bool causal);
/// Every seq_len is >= 0, every block a request uses (those covering
/// [0, seq_len)) of the row-major block table (`cols` wide) is in
/// [0, numBlocks), and the table is wide enough.
Status checkBlockTable(std::span<const int32_t> seqLens,
                       std::span<const int32_t> blockTable, int64_t cols,
                       int64_t numBlocks, int64_t blockSize);
/// Every slot is padding (negative, as an i64) or below
/// numBlocks * blockSize, and no two tokens share a slot.
Status checkSlots(std::span<const int64_t> slots, int64_t numBlocks,
                  int64_t blockSize);
/// No two tokens share a slot (negative slots are padding, never shared).
Status checkDistinctSlots(std::span<const int64_t> slots);
/// checkCacheBounds on tensors: seq_lens [R] i32, block_table [R, M] i32
/// and, when given, slot_mapping [T] i64.
Status checkCacheBounds(const Tensor &seqLens, const Tensor &blockTable,
                        const Tensor *slotMapping, int64_t numBlocks,
                        int64_t blockSize);

/// Checks slot_mapping: a rank-1 i64 tensor of `numTokens` slots, each
/// negative (padding) or below numBlocks * blockSize, none twice.
Status checkSlotMapping(const Tensor &slotMapping, int64_t numTokens,
                        int64_t numBlocks, int64_t blockSize);

} // namespace attn

#endif // ATTN_CORE_METADATA_H
