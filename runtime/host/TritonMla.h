//===- TritonMla.h - TRITON_MLA: MLA decode over the latent cache ---------===//
//
// The TRITON_MLA backend and its impl: the latent cache write, then MLA
// decode (one query token per request), dispatched to a KernelExecutor.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_HOST_TRITONMLA_H
#define ATTN_RUNTIME_HOST_TRITONMLA_H

#include "runtime/host/Backend.h"

namespace attn::runtime {

/// MLA decode over the latent cache [num_blocks, block_size, head_size]
/// (one head: kv_lora_rank + qk_rope_head_dim).
class TritonMlaBackend final : public AttentionBackend {
public:
  static constexpr std::string_view kName = "TRITON_MLA";

  std::string_view name() const override { return kName; }
  /// Also refuses num_kv_heads != 1: the latent is one head, and a cache
  /// shaped for GQA could not be read by the decode kernel.
  Result<std::vector<int64_t>>
  getKvCacheShape(int64_t numBlocks, int64_t blockSize, int64_t numKvHeads,
                  int64_t headSize,
                  std::string_view cacheDtype = "auto") const override;
  /// 576: DeepSeek's kv_lora_rank 512 + rope dim 64.
  std::vector<int64_t> supportedHeadSizes() const override;
  bool isMla() const override { return true; }

protected:
  Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer,
           KernelExecutor &executor) const override;
  Result<std::unique_ptr<AttentionMetadataBuilder>>
  makeBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
              const BuilderConfig &config) const override;
};

/// TRITON_MLA's impl: latent cache write, then decode (one query token per
/// request).
class TritonMlaImpl final : public AttentionImpl {
public:
  TritonMlaImpl(const AttentionLayer &layer, KernelExecutor &executor);

  int64_t kvLoraRank = 0;

  /// vLLM's MLA forward, decode only: checks the decode shape, writes the
  /// new tokens' latent rows into `kvCache`, then runs the decode as
  /// forwardMqa does. `key` is kv_c [T, L] (the compressed latent, L =
  /// kv_lora_rank) and `value` is k_pe [T, P] (the rotary key part, vLLM's
  /// [T, 1, P] with the head axis dropped), both the query's dtype, with T at
  /// least slot_mapping's length (rows past it are padding); the row
  /// concat(kv_c[t], k_pe[t]) goes to slot_mapping[t] (negative: skipped)
  /// through KernelExecutor::concatAndCacheMla. When both are
  /// default-constructed (rank 0), nothing is written and the cache is taken
  /// as already holding the new tokens (the seed's behaviour: the host wrote
  /// it); one without the other is an error. Everything, the slots included,
  /// is checked before the write, so a rejected call leaves the cache as it
  /// was.
  Status forward(const AttentionLayer &layer, const DeviceTensor &query,
                 const DeviceTensor &key, const DeviceTensor &value,
                 const DeviceTensor &kvCache,
                 const AttentionMetadata &metadata, const DeviceTensor &output,
                 const Tensor *outputScale = nullptr,
                 const Tensor *outputBlockScale = nullptr) override;
  /// The latent cache write and MLA decode with the metadata builder's
  /// default num_kv_splits.
  std::vector<VariantQuery> calls(const AttentionLayer &layer,
                                  const KvCacheSpec &cache) const override;

  /// MLA decode of q [R, H, L + P] against the latent cache into out
  /// [R, H, L] (and lse [R, H] when not null).
  Status forwardMqa(const AttentionLayer &layer, const DeviceTensor &q,
                    const DeviceTensor &kvCache, const MlaMetadata &metadata,
                    const DeviceTensor &out,
                    const DeviceTensor *lse = nullptr);

private:
  /// forwardMqa's checks; with `slotMapping`, also that every slot is inside
  /// the cache.
  Status checkMqa(const AttentionLayer &layer, const DeviceTensor &q,
                  const DeviceTensor &kvCache, const MlaMetadata &metadata,
                  const DeviceTensor &out, const DeviceTensor *lse,
                  const Tensor *slotMapping) const;

  /// The latent cache's element type, and an fp8 cache's scale ([1] f32).
  DType cacheDtype_;
  std::optional<Tensor> kScale_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOST_TRITONMLA_H
