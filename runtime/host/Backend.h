//===- Backend.h - Attention backends, impls and layer parameters ---------===//
//
// vLLM v1's attention backend API, device-independent: an AttentionBackend
// says which configurations it serves, dictates the KV cache shape, and makes
// the impl (runs a layer) and the metadata builder (prepares each step).
// AttentionImpl::forward checks its operands and metadata and dispatches the
// work to a KernelExecutor, which owns the device.
//
// AttentionCGSupport and the metadata builders live in MetadataBuilder.h
// (where vLLM keeps them, beside the builder) and come with this header.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BACKEND_H
#define ATTN_RUNTIME_BACKEND_H

#include "core/DType.h"
#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/executor/KernelExecutor.h"
#include "runtime/host/MetadataBuilder.h"
#include "runtime/executor/VariantQuery.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::runtime {

/// One attention layer of the model: what vLLM passes to an impl's
/// constructor, plus the layer's name for messages.
struct AttentionLayer {
  std::string name;
  int64_t numHeads = 0;
  /// Query/key head size; for MLA, kv_lora_rank + qk_rope_head_dim.
  int64_t headSize = 0;
  int64_t numKvHeads = 0;
  /// Softmax scale.
  double scale = 0.0;
  DType dtype = DType::F16;
  /// vLLM's kv_cache_dtype: "auto" (the cache in `dtype`), "fp8" (=
  /// "fp8_e4m3") or "fp8_e5m2".
  std::string kvCacheDtype = "auto";
  /// An fp8 cache's per-layer scales (vLLM's _k_scale_float /
  /// _v_scale_float): the cache holds fp8(x / scale). MLA's latent cache
  /// uses kScale only. Unused with "auto".
  float kScale = 1.0f;
  float vScale = 1.0f;
  /// Sliding window in tokens (vLLM's sliding_window); none: full attention.
  std::optional<int64_t> slidingWindow;
  std::optional<double> logitsSoftCap;
  /// [num_heads] ALiBi slopes; empty: none.
  std::vector<float> alibiSlopes;
  /// [num_heads] attention sink logits; empty: none.
  std::vector<float> sinks;
  /// MLA only: the value width L of the latent cache.
  int64_t kvLoraRank = 0;
};

/// The element type of a kv cache of vLLM's `kvCacheDtype` for a model of
/// `dtype`: "auto" is `dtype`, "fp8" and "fp8_e4m3" f8E4M3FN, "fp8_e5m2"
/// f8E5M2; any other name is an error.
Result<DType> kvCacheElementType(std::string_view kvCacheDtype, DType dtype);

/// One of `layer`'s fp8 scales (`scale`: its kScale or vScale) as the [1]
/// f32 tensor the ops take; none for an "auto" cache.
std::optional<Tensor> layerScale(const AttentionLayer &layer, float scale);

/// The hyperparameters FlashInfer-style backends need to agree across layers
/// (vLLM's PerLayerParameters). Equality ignores the two `hasSame` fields.
struct PerLayerParameters {
  int64_t windowLeft = -1;
  std::optional<double> logitsSoftCap;
  double smScale = 0.0;
  bool hasSinks = false;
  /// Filled by inferGlobalHyperparameters.
  std::optional<bool> hasSameWindowLefts;
  std::optional<bool> hasSameAllParams;

  bool operator==(const PerLayerParameters &other) const {
    return windowLeft == other.windowLeft &&
           logitsSoftCap == other.logitsSoftCap && smScale == other.smScale &&
           hasSinks == other.hasSinks;
  }
};

/// window_left = sliding_window - 1 (or -1), the soft cap, the scale, and
/// whether the layer has sinks.
PerLayerParameters getPerLayerParameters(const AttentionLayer &layer);

/// The parameters every layer shares. With `requireSame`, a layer that
/// differs from the first is an error naming both layers and the field;
/// without, the first layer's parameters come back with hasSameWindowLefts /
/// hasSameAllParams telling whether the others agree. No layers: an error.
Result<PerLayerParameters>
inferGlobalHyperparameters(const std::vector<AttentionLayer> &layers,
                           bool requireSame = true);

/// What the engine asks the registry for (vLLM's backend selection inputs).
struct SelectionRequest {
  int64_t headSize = 0;
  DType dtype = DType::F16;
  std::string kvCacheDtype = "auto";
  int64_t blockSize = 16;
  bool useMla = false;
  bool hasSinks = false;
  bool useSlidingWindow = false;
  bool useAlibi = false;
  /// Consider only this backend (vLLM's VLLM_ATTENTION_BACKEND).
  std::optional<std::string> backendName;
};

/// Runs one layer (vLLM's AttentionImpl). The public fields are the layer's
/// geometry and scale, filled by AttentionBackend::getImpl and adjustable
/// afterwards, as in the seed.
class AttentionImpl {
public:
  virtual ~AttentionImpl() = default;

  int64_t numHeads = 0;
  int64_t headSize = 0;
  int64_t numKvHeads = 0;
  double scale = 0.0;

  /// Attention of `query` ([T, H, D], T at least the metadata's tokens)
  /// into `output`, after writing the new `key` / `value` ([T, G, D]) into
  /// `kvCache` at the metadata's slots. The tensors are on the executor's
  /// device; the metadata is checked on the host before anything is
  /// enqueued, and the work is enqueued on the device's queue (the output is
  /// complete once the device synchronizes). A default-constructed key skips
  /// the cache write (KV sharing, cross-attention). Fused output
  /// quantization (outputScale, outputBlockScale) is not supported.
  virtual Status forward(const AttentionLayer &layer,
                         const DeviceTensor &query, const DeviceTensor &key,
                         const DeviceTensor &value,
                         const DeviceTensor &kvCache,
                         const AttentionMetadata &metadata,
                         const DeviceTensor &output,
                         const Tensor *outputScale = nullptr,
                         const Tensor *outputBlockScale = nullptr) = 0;

  /// The op calls forward makes for `layer` on a kv cache of `cache` (those
  /// of every step; cascade attention's extra passes are left out), as the
  /// queries an executor matches against its kernels.
  virtual std::vector<VariantQuery> calls(const AttentionLayer &layer,
                                          const KvCacheSpec &cache) const = 0;

protected:
  explicit AttentionImpl(KernelExecutor &executor) : executor_(executor) {}
  KernelExecutor &executor() const { return executor_; }

private:
  KernelExecutor &executor_;
};

/// vLLM's AttentionBackend.
class AttentionBackend {
public:
  virtual ~AttentionBackend() = default;

  /// "FLASH_ATTN", "TRITON_MLA".
  virtual std::string_view name() const = 0;

  /// The shape of one layer's KV cache. Errors for a block size the backend
  /// does not support, a kv cache dtype it does not support, or a dimension
  /// below 1.
  virtual Result<std::vector<int64_t>>
  getKvCacheShape(int64_t numBlocks, int64_t blockSize, int64_t numKvHeads,
                  int64_t headSize,
                  std::string_view cacheDtype = "auto") const = 0;

  virtual std::vector<DType> supportedDtypes() const = 0;
  virtual std::vector<int64_t> supportedHeadSizes() const = 0;
  /// "auto" (the model dtype) and vLLM's fp8 names ("fp8" is e4m3). Only
  /// the CPU device runs fp8 caches so far: selection says so for the
  /// others (Registry.h).
  virtual std::vector<std::string> supportedKvCacheDtypes() const {
    return {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
  }
  /// Ok, or why `blockSize` is not supported ("block size 8 is not a
  /// multiple of 16").
  virtual Status checkBlockSize(int64_t blockSize) const = 0;

  bool supportsDtype(DType dtype) const;
  bool supportsHeadSize(int64_t headSize) const;
  bool supportsKvCacheDtype(std::string_view kvCacheDtype) const;
  bool supportsBlockSize(int64_t blockSize) const {
    return checkBlockSize(blockSize).isOk();
  }

  virtual bool isMla() const { return false; }
  virtual bool supportsSinks() const { return false; }
  virtual bool supportsSlidingWindow() const { return false; }
  virtual bool supportsAlibi() const { return false; }
  virtual bool supportsLogitsSoftCap() const { return false; }
  /// The impl writes into a caller-provided output tensor.
  bool acceptOutputBuffer() const { return true; }
  virtual KvCacheLayout kvCacheLayout() const { return KvCacheLayout::NHD; }

  /// Every reason this backend cannot serve `request` (without the backend
  /// name); empty when it can.
  std::vector<std::string>
  validateConfiguration(const SelectionRequest &request) const;

  /// The impl of `layer`, dispatching to `executor` (which must outlive it).
  /// Errors when the layer asks for something the backend does not support
  /// and, when `cache` describes the layer's kv cache, when `executor` does
  /// not serve every op call the impl will make: a bundle without the
  /// variant says so now, naming the attn-compile --variant to add, instead
  /// of failing the first forward.
  Result<std::unique_ptr<AttentionImpl>>
  getImpl(const AttentionLayer &layer, KernelExecutor &executor,
          const KvCacheSpec *cache = nullptr) const;

  /// The metadata builder for the layers `layerNames` sharing `spec`.
  virtual Result<std::unique_ptr<AttentionMetadataBuilder>>
  getBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
             const BuilderConfig &config) const = 0;

protected:
  /// The impl of an already checked-for-support `layer`.
  virtual Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer, KernelExecutor &executor) const = 0;

  /// Checks what getImpl needs of every layer: head counts, a supported head
  /// size, dtype and kv cache dtype, and only the features (sinks, sliding
  /// window, ALiBi) the backend supports, with one value per head.
  Status checkLayer(const AttentionLayer &layer) const;
};

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
  std::vector<DType> supportedDtypes() const override;
  std::vector<int64_t> supportedHeadSizes() const override;
  /// A multiple of 16.
  Status checkBlockSize(int64_t blockSize) const override;
  bool supportsSinks() const override { return true; }
  bool supportsSlidingWindow() const override { return true; }
  bool supportsAlibi() const override { return true; }
  bool supportsLogitsSoftCap() const override { return true; }

  Result<std::unique_ptr<AttentionMetadataBuilder>>
  getBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
             const BuilderConfig &config) const override;

protected:
  Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer,
           KernelExecutor &executor) const override;
};

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
  std::vector<DType> supportedDtypes() const override;
  /// 576: DeepSeek's kv_lora_rank 512 + rope dim 64.
  std::vector<int64_t> supportedHeadSizes() const override;
  /// A multiple of 16.
  Status checkBlockSize(int64_t blockSize) const override;
  bool isMla() const override { return true; }

  Result<std::unique_ptr<AttentionMetadataBuilder>>
  getBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
             const BuilderConfig &config) const override;

protected:
  Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer,
           KernelExecutor &executor) const override;
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

#endif // ATTN_RUNTIME_BACKEND_H
