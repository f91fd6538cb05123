//===- FlashAttention.h - FLASH_ATTN: paged attention over an NHD cache ---===//
//
// The FLASH_ATTN backend and its impl: the cache write, then varlen paged
// attention or cascade attention, dispatched to a KernelExecutor.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_HOST_FLASHATTENTION_H
#define ATTN_RUNTIME_HOST_FLASHATTENTION_H

#include "runtime/host/Backend.h"

namespace attn::runtime {

/// FlashAttention-style paged attention over an NHD cache
/// [num_blocks, 2, block_size, num_kv_heads, head_size].
class FlashAttentionBackend final : public AttentionBackend {
public:
  static constexpr std::string_view kName = "FLASH_ATTN";

  std::string_view name() const override { return kName; }
  Result<std::vector<int64_t>>
  getKvCacheShape(int64_t numBlocks, int64_t blockSize, int64_t numKvHeads,
                  int64_t headSize,
                  std::string_view cacheDtype = "auto") const override;
  std::vector<int64_t> supportedHeadSizes() const override;
  bool supportsSinks() const override { return true; }
  bool supportsSlidingWindow() const override { return true; }
  bool supportsAlibi() const override { return true; }
  bool supportsPerHeadQuantScales() const override { return true; }
  bool supportsLogitsSoftCap() const override { return true; }
  bool supportsAttnType(AttentionType) const override { return true; }

protected:
  Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer,
           KernelExecutor &executor) const override;
  Result<std::unique_ptr<AttentionMetadataBuilder>>
  makeBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
              const BuilderConfig &config) const override;
};

/// FLASH_ATTN's impl: cache write, then varlen paged attention, or cascade
/// attention (a non-causal pass over the shared prefix and a causal pass over
/// the rest, merged) when the metadata says so.
class FlashAttentionImpl final : public AttentionImpl {
public:
  FlashAttentionImpl(const AttentionLayer &layer, KernelExecutor &executor);

  Status forward(const AttentionLayer &layer, const DeviceTensor &query,
                 const DeviceTensor &key, const DeviceTensor &value,
                 const DeviceTensor &kvCache,
                 const AttentionMetadata &metadata, const DeviceTensor &output,
                 const Tensor *outputScale = nullptr,
                 const Tensor *outputBlockScale = nullptr) override;
  /// reshape_and_cache and causal paged attention.
  std::vector<VariantQuery> calls(const AttentionLayer &layer,
                                  const KvCacheSpec &cache) const override;

private:
  /// The knobs of this layer's paged attention calls.
  PagedAttentionParams params(bool causal) const;
  Status forwardCascade(const DeviceTensor &query, const DeviceTensor &kvCache,
                        const FlashAttentionMetadata &md,
                        const PagedAttentionParams &params,
                        const DeviceTensor &output);

  /// (window_left, window_right) in flash-attn's convention.
  std::pair<int64_t, int64_t> window_ = {-1, -1};
  double logitsSoftCap_ = 0.0;
  std::optional<Tensor> alibiSlopes_;
  std::optional<Tensor> sinks_;
  /// The cache's element type, and an fp8 cache's scales ([1] f32).
  DType cacheDtype_;
  std::optional<Tensor> kScale_, vScale_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOST_FLASHATTENTION_H
