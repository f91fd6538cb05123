//===- MetadataBuilder.h - Per-backend attention metadata and builders ----===//
//
// A backend turns the step's CommonAttentionMetadata into the metadata its
// impl reads (vLLM v1's AttentionMetadataBuilder). The builder also tells the
// engine how it wants the batch: its cudagraph support level and its
// reorder_batch_threshold (requests with a query length up to the threshold
// are decodes and are moved to the front of the batch).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_METADATABUILDER_H
#define ATTN_RUNTIME_METADATABUILDER_H

#include "core/CGSupport.h"
#include "core/DType.h"
#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/host/Metadata.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// core's, which the attn dialect's backend attribute shares.
using ::attn::AttentionCGSupport;

/// The KV cache a builder serves (vLLM's AttentionSpec).
struct KvCacheSpec {
  int64_t blockSize = 16;
  int64_t numKvHeads = 1;
  int64_t headSize = 0;
  DType dtype = DType::F16;
  std::string kvCacheDtype = "auto";
};

struct SpeculativeConfig {
  std::optional<int32_t> numSpeculativeTokens;
};

/// The parts of the engine configuration a builder reads.
struct BuilderConfig {
  std::optional<SpeculativeConfig> speculativeConfig;
  int32_t decodeContextParallelSize = 1;
  /// Whether the device the metadata serves records steps for replay
  /// (PlanDevice::canRecord: Vulkan, CUDA, the CPU device running cpu
  /// bundles). Without it no batch is replayable and every builder's
  /// cudagraph support is NEVER. Session sets it from its device and
  /// executor.
  bool deviceRecords = false;
};

/// vLLM's _init_reorder_batch_threshold: starting from `threshold` (none: the
/// builder does not reorder), a backend that runs spec-decode queries as
/// decodes raises it to 1 + num_speculative_tokens when speculation is
/// configured, and decode context parallelism (size > 1) forces it to 1
/// unless the backend supports DCP with varlen queries.
std::optional<int32_t> computeReorderBatchThreshold(
    const BuilderConfig &config, std::optional<int32_t> threshold,
    bool supportsSpecAsDecode, bool supportsDcpWithVarlen);

//===----------------------------------------------------------------------===//
// Per-backend metadata
//===----------------------------------------------------------------------===//

enum class AttentionMetadataKind { FlashAttention, Mla };

std::string_view toString(AttentionMetadataKind kind);

/// What one backend's impl reads each step. Concrete kinds are told apart by
/// kind(), so an engine built without RTTI can tell them; see dynCastMetadata.
class AttentionMetadata {
public:
  virtual ~AttentionMetadata() = default;
  AttentionMetadataKind kind() const { return kind_; }

protected:
  explicit AttentionMetadata(AttentionMetadataKind kind) : kind_(kind) {}
  AttentionMetadata(const AttentionMetadata &) = default;
  AttentionMetadata &operator=(const AttentionMetadata &) = default;

private:
  AttentionMetadataKind kind_;
};

/// `md` as a T when it is one, else null.
template <typename T> const T *dynCastMetadata(const AttentionMetadata *md) {
  return md && md->kind() == T::kKind ? static_cast<const T *>(md) : nullptr;
}

/// The batch every backend's metadata describes: its requests, their query
/// and sequence lengths, their blocks and the new tokens' slots. Index
/// tensors are i32 except slotMapping (i64).
struct BatchMetadata : AttentionMetadata {
  int32_t numReqs = 0;
  /// Tokens including padding (the common metadata's num_actual_tokens).
  int32_t numActualTokens = 0;
  int32_t maxQueryLen = 0;
  int32_t maxSeqLen = 0;
  Tensor queryStartLoc; ///< [R + 1]
  Tensor seqLens;       ///< [R]
  Tensor blockTable;    ///< [R, M]
  Tensor slotMapping;   ///< [T] (may be empty: no cache write)
  bool causal = true;

protected:
  explicit BatchMetadata(AttentionMetadataKind kind)
      : AttentionMetadata(kind) {}
};

/// FLASH_ATTN's metadata (vLLM's FlashAttentionMetadata).
struct FlashAttentionMetadata : BatchMetadata {
  static constexpr AttentionMetadataKind kKind =
      AttentionMetadataKind::FlashAttention;
  FlashAttentionMetadata() : BatchMetadata(kKind) {}

  /// Cascade attention: all requests share the first commonPrefixLen tokens
  /// (a multiple of the block size, held by the first blocks of every row).
  bool useCascade = false;
  int32_t commonPrefixLen = 0;
  std::optional<Tensor> cuPrefixQueryLens; ///< [2] = {0, query tokens}
  std::optional<Tensor> prefixKvLens;      ///< [1] = {commonPrefixLen}
  std::optional<Tensor> suffixKvLens;      ///< [R] = seq_lens - prefix

  /// Upper bound on split-KV splits; 0 lets the executor choose.
  int32_t maxNumSplits = 0;
};

/// TRITON_MLA's metadata (vLLM's MLACommonMetadata, flattened). The batch is
/// reordered: the first numDecodes requests are decodes.
struct MlaMetadata : BatchMetadata {
  static constexpr AttentionMetadataKind kKind = AttentionMetadataKind::Mla;
  MlaMetadata() : BatchMetadata(kKind) {}

  int32_t numDecodes = 0;
  int32_t numDecodeTokens = 0;
  int32_t numPrefills = 0;
  int32_t numPrefillTokens = 0;
  /// How many KV splits the decode kernel uses per request.
  int32_t numKvSplits = 4;
};

//===----------------------------------------------------------------------===//
// Batch helpers
//===----------------------------------------------------------------------===//

struct DecodePrefillSplit {
  int32_t numDecodes = 0;
  int32_t numPrefills = 0;
  int32_t numDecodeTokens = 0;
  int32_t numPrefillTokens = 0;
};

/// vLLM's split_decodes_and_prefills for a reordered batch (decodes first): a
/// request is a decode when its query length is at most `decodeThreshold`.
/// As in vLLM, a batch whose first request is a prefill is all prefills;
/// otherwise a decode after a prefill means the batch was not reordered: an
/// error.
Result<DecodePrefillSplit>
splitDecodesAndPrefills(const CommonAttentionMetadata &cam,
                        int32_t decodeThreshold = 1);

/// The arguments of use_cascade_attention.
struct CascadeAttentionQuery {
  int32_t commonPrefixLen = 0;
  std::vector<int32_t> queryLens;
  int32_t numQueryHeads = 0;
  int32_t numKvHeads = 0;
  bool useAlibi = false;
  bool useSlidingWindow = false;
  bool useLocalAttention = false;
  /// Streaming multiprocessors (or compute units) of the device.
  int32_t numSms = 1;
  int32_t dcpWorldSize = 1;
};

/// vLLM's FlashAttention heuristic. Never with a prefix under 256 tokens,
/// ALiBi, sliding window, local attention, fewer than 8 requests or DCP.
/// Otherwise cascade is used unless the normal pass would use FlashDecoding
/// (GQA with every query length 1); then a rough model with 128-wide q and
/// kv tiles decides: cascade takes ceil(H * ceil(R / 128) / SMs) waves of
/// ceil(prefix / 128) tiles, FlashDecoding ceil(R * G * ceil((H / G) / 128)
/// * ceil(prefix / 128) / SMs), and cascade wins when strictly faster.
bool flashAttentionUseCascade(const CascadeAttentionQuery &query);

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

/// vLLM v1's AttentionMetadataBuilder.
class AttentionMetadataBuilder {
public:
  virtual ~AttentionMetadataBuilder() = default;

  virtual AttentionCGSupport getCudagraphSupport() const {
    return AttentionCGSupport::NEVER;
  }
  /// The query length up to which requests are pulled to the front of the
  /// batch as decodes; none when the builder does not reorder.
  std::optional<int32_t> reorderBatchThreshold() const {
    return reorderBatchThreshold_;
  }
  /// Whether updateBlockTable is implemented.
  virtual bool supportsUpdateBlockTable() const { return false; }

  /// Builds the metadata of one step. `fastBuild` favours build speed over
  /// execution speed (drafting: the result serves few layers or steps).
  virtual Result<std::unique_ptr<AttentionMetadata>>
  build(int32_t commonPrefixLen, const CommonAttentionMetadata &cam,
        bool fastBuild = false) = 0;

  /// build() with no common prefix.
  Result<std::unique_ptr<AttentionMetadata>>
  buildForCudagraphCapture(const CommonAttentionMetadata &cam);

  /// build() with no common prefix and fastBuild. `draftIndex` is the draft
  /// step (chain) or tree level being drafted.
  Result<std::unique_ptr<AttentionMetadata>>
  buildForDrafting(const CommonAttentionMetadata &cam, int32_t draftIndex);

  /// A copy of `metadata` reading another KV cache group's block table and
  /// slot mapping. An error unless supportsUpdateBlockTable().
  virtual Result<std::unique_ptr<AttentionMetadata>>
  updateBlockTable(const AttentionMetadata &metadata,
                   const std::vector<int32_t> &blockTableFlat,
                   int32_t blockTableNumCols,
                   const std::vector<int64_t> &slotMapping);

  /// Whether to build this step with a common prefix. False unless the
  /// backend says otherwise.
  virtual bool useCascadeAttention(const CascadeAttentionQuery &query) const {
    return false;
  }

  const KvCacheSpec &kvCacheSpec() const { return kvCacheSpec_; }
  const std::vector<std::string> &layerNames() const { return layerNames_; }
  const BuilderConfig &config() const { return config_; }

protected:
  AttentionMetadataBuilder(KvCacheSpec spec, std::vector<std::string> layers,
                           BuilderConfig config);

  /// Sets reorderBatchThreshold() by computeReorderBatchThreshold.
  void initReorderBatchThreshold(std::optional<int32_t> threshold = 1,
                                 bool supportsSpecAsDecode = false,
                                 bool supportsDcpWithVarlen = false);

  /// The name used in messages ("FLASH_ATTN").
  virtual std::string_view backendName() const = 0;

private:
  KvCacheSpec kvCacheSpec_;
  std::vector<std::string> layerNames_;
  BuilderConfig config_;
  std::optional<int32_t> reorderBatchThreshold_;
};

/// FLASH_ATTN: one varlen kernel runs mixed batches, so the batch is not
/// reordered (unless DCP forces it); cascade attention per
/// flashAttentionUseCascade; block tables can be swapped per KV cache group.
/// Without an ahead-of-time scheduler, graphs are UNIFORM_BATCH as for
/// FlashAttention 2, and fastBuild changes nothing.
class FlashAttentionMetadataBuilder final : public AttentionMetadataBuilder {
public:
  FlashAttentionMetadataBuilder(KvCacheSpec spec,
                                std::vector<std::string> layers,
                                BuilderConfig config);

  /// On a device that records: a recorded step replays for any batch of
  /// the recorded shapes (tokens, requests, block-table columns), but like
  /// FlashAttention 2 it is claimed for uniform batches only.
  AttentionCGSupport getCudagraphSupport() const override {
    return config().deviceRecords ? AttentionCGSupport::UNIFORM_BATCH
                                  : AttentionCGSupport::NEVER;
  }
  bool supportsUpdateBlockTable() const override { return true; }

  /// Checks the common metadata and, with a prefix, that it is a multiple of
  /// the block size cached by every request before this step.
  Result<std::unique_ptr<AttentionMetadata>>
  build(int32_t commonPrefixLen, const CommonAttentionMetadata &cam,
        bool fastBuild = false) override;

  Result<std::unique_ptr<AttentionMetadata>>
  updateBlockTable(const AttentionMetadata &metadata,
                   const std::vector<int32_t> &blockTableFlat,
                   int32_t blockTableNumCols,
                   const std::vector<int64_t> &slotMapping) override;

  bool useCascadeAttention(const CascadeAttentionQuery &query) const override {
    return flashAttentionUseCascade(query);
  }

protected:
  std::string_view backendName() const override { return "FLASH_ATTN"; }
};

/// TRITON_MLA: a decode-only kernel with one query per request, so the
/// threshold starts at 1 and speculative tokens do not raise it; graphs are
/// UNIFORM_SINGLE_TOKEN_DECODE. No cascade (a common prefix is an error).
class MlaMetadataBuilder final : public AttentionMetadataBuilder {
public:
  /// The triton MLA decode kernel's fixed split count.
  static constexpr int32_t kDefaultNumKvSplits = 4;

  MlaMetadataBuilder(KvCacheSpec spec, std::vector<std::string> layers,
                     BuilderConfig config);

  /// On a device that records: one-token decodes, the only batches the
  /// MLA impl runs.
  AttentionCGSupport getCudagraphSupport() const override {
    return config().deviceRecords
               ? AttentionCGSupport::UNIFORM_SINGLE_TOKEN_DECODE
               : AttentionCGSupport::NEVER;
  }

  /// Splits the (reordered) batch into decodes and prefills.
  Result<std::unique_ptr<AttentionMetadata>>
  build(int32_t commonPrefixLen, const CommonAttentionMetadata &cam,
        bool fastBuild = false) override;

protected:
  std::string_view backendName() const override { return "TRITON_MLA"; }
};

/// vLLM's CrossAttentionBuilder (vllm/attention/layers/cross_attention.py)
/// for an encoder-decoder model's cross-attention layers: the decoder's
/// queries attend to the encoder's keys, non-causally. It builds with
/// `underlying` on the step's metadata with seq_lens = encoder_seq_lens
/// (required), causal = false and the derived fields recomputed
/// (num_computed_tokens = encoder_seq_len - q_len, negative when the decoder
/// has more queries than the encoder has keys; vLLM keeps the decoder's),
/// then sets the metadata's slot mapping to the encoder tokens to write:
/// positions [0, encoder_seq_len) of every request whose decoder has no
/// computed token yet (its first step writes the cross cache), in request
/// order, as vLLM's _get_cross_slot_mapping.
class CrossAttentionMetadataBuilder final : public AttentionMetadataBuilder {
public:
  /// `underlying` must not be null.
  explicit CrossAttentionMetadataBuilder(
      std::unique_ptr<AttentionMetadataBuilder> underlying);

  AttentionCGSupport getCudagraphSupport() const override {
    return underlying_->getCudagraphSupport();
  }

  Result<std::unique_ptr<AttentionMetadata>>
  build(int32_t commonPrefixLen, const CommonAttentionMetadata &cam,
        bool fastBuild = false) override;

protected:
  std::string_view backendName() const override { return "CrossAttention"; }

private:
  std::unique_ptr<AttentionMetadataBuilder> underlying_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_METADATABUILDER_H
