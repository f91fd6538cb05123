//===- Backend.h - Attention backends, impls and layer parameters ---------===//
//
// vLLM v1's attention backend API, device-independent: an AttentionBackend
// says which configurations it serves, dictates the KV cache shape, and makes
// the impl (runs a layer) and the metadata builder (prepares each step).
// AttentionImpl::forward checks its operands and metadata and dispatches the
// work to a KernelExecutor, which owns the device.
//
// The backends themselves have a header each: FlashAttention.h (FLASH_ATTN)
// and TritonMla.h (TRITON_MLA).
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

/// What a layer attends to (vLLM's AttentionType, vllm/attention/backends/
/// abstract.py; ENCODER and ENCODER_ONLY are not served).
enum class AttentionType {
  /// Causal self-attention over the request's own tokens ("decoder").
  Decoder,
  /// Cross-attention of an encoder-decoder model ("encoder_decoder"): the
  /// decoder's queries attend, non-causally, to the encoder's keys, whose
  /// count (encoder_seq_lens) may be below the query count. Session wraps
  /// the layer's builder in a CrossAttentionMetadataBuilder.
  EncoderDecoder,
};
std::string_view toString(AttentionType type);

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
  /// Per-kv-head scales [numKvHeads] instead (vLLM's kv_cache_scheme
  /// strategy "attn_head": the layer's k_scale / v_scale hold one value per
  /// kv head); empty: kScale / vScale for every head. Both or neither. The
  /// impl asks for kv_scale_strategy=attn_head variants with them, unless
  /// the layer has one kv head (then per layer and per head coincide).
  std::vector<float> kHeadScales;
  std::vector<float> vHeadScales;
  /// Sliding window in tokens (vLLM's sliding_window: the query's own token
  /// and the N - 1 before it); none: full attention. Its kernels are the
  /// bundle's variants with window_left = slidingWindow - 1 (a window of
  /// 4096 needs `attn-compile --variant ...,window_left=4095`).
  std::optional<int64_t> slidingWindow;
  std::optional<double> logitsSoftCap;
  /// [num_heads] ALiBi slopes; empty: none.
  std::vector<float> alibiSlopes;
  /// [num_heads] attention sink logits; empty: none.
  std::vector<float> sinks;
  /// MLA only: the value width L of the latent cache.
  int64_t kvLoraRank = 0;
  AttentionType attnType = AttentionType::Decoder;
};

/// The element type of a kv cache of vLLM's `kvCacheDtype` for a model of
/// `dtype`: "auto" is `dtype`, "fp8" and "fp8_e4m3" f8E4M3FN, "fp8_e5m2"
/// f8E5M2; any other name is an error.
Result<DType> kvCacheElementType(std::string_view kvCacheDtype, DType dtype);

/// One of `layer`'s fp8 scales as the f32 tensor the ops take: `perHead`
/// ([G], its kHeadScales or vHeadScales) when given, else `scale` ([1], its
/// kScale or vScale); none for an "auto" cache.
std::optional<Tensor> layerScale(const AttentionLayer &layer, float scale,
                                 const std::vector<float> &perHead = {});

/// The element type of `layer`'s cache (kvCacheElementType), or its dtype
/// for a kv cache dtype name that checkLayer would refuse.
DType layerCacheDtype(const AttentionLayer &layer);

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
  AttentionType attnType = AttentionType::Decoder;
  /// The layers' fp8 scales are per kv head (vLLM's
  /// use_per_head_quant_scales).
  bool usePerHeadQuantScales = false;
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
  /// Takes the geometry and scale from `layer`.
  AttentionImpl(const AttentionLayer &layer, KernelExecutor &executor)
      : numHeads(layer.numHeads), headSize(layer.headSize),
        numKvHeads(layer.numKvHeads), scale(layer.scale), executor_(executor) {}
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

  /// f32, f16 and bf16, which both backends run.
  virtual std::vector<DType> supportedDtypes() const;
  virtual std::vector<int64_t> supportedHeadSizes() const = 0;
  /// "auto" (the model dtype) and vLLM's fp8 names ("fp8" is e4m3). Every
  /// device but Tenstorrent runs fp8 caches (TT-Metalium has no fp8 data
  /// format): selection says so there (Registry.h).
  virtual std::vector<std::string> supportedKvCacheDtypes() const {
    return {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
  }
  /// Ok, or why `blockSize` is not supported ("block size 8 is not a
  /// multiple of 16"). By default, a multiple of 16.
  virtual Status checkBlockSize(int64_t blockSize) const;

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
  /// vLLM's supports_attn_type: every backend serves decoder layers.
  virtual bool supportsAttnType(AttentionType type) const {
    return type == AttentionType::Decoder;
  }
  /// Per-kv-head fp8 scales (AttentionLayer::kHeadScales; vLLM's
  /// supports_per_head_quant_scales).
  virtual bool supportsPerHeadQuantScales() const { return false; }
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

  /// The metadata builder for the layers `layerNames` sharing `spec`; an
  /// error for a block size the backend does not serve.
  Result<std::unique_ptr<AttentionMetadataBuilder>>
  getBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
             const BuilderConfig &config) const;

protected:
  /// The impl of an already checked-for-support `layer`.
  virtual Result<std::unique_ptr<AttentionImpl>>
  makeImpl(const AttentionLayer &layer, KernelExecutor &executor) const = 0;
  /// The builder for a `spec` whose block size getBuilder has checked.
  virtual Result<std::unique_ptr<AttentionMetadataBuilder>>
  makeBuilder(const KvCacheSpec &spec, std::vector<std::string> layerNames,
              const BuilderConfig &config) const = 0;

  /// Checks what getImpl needs of every layer: head counts, a supported head
  /// size, dtype and kv cache dtype, and only the features (sinks, sliding
  /// window, ALiBi) the backend supports, with one value per head.
  Status checkLayer(const AttentionLayer &layer) const;
  /// The part of checkLayer for per-kv-head scales: supported, with an fp8
  /// cache, one value per kv head each, finite and > 0.
  Status checkHeadScales(const AttentionLayer &layer) const;

  /// Checks what getKvCacheShape needs of every cache: dimensions of at
  /// least 1, a size a host can index, and a supported `cacheDtype`.
  Status checkKvCacheDims(int64_t numBlocks, int64_t blockSize,
                          int64_t numKvHeads, int64_t headSize,
                          std::string_view cacheDtype) const;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BACKEND_H
