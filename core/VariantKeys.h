//===- VariantKeys.h - The keys that describe a compiled variant ----------===//
//
// A variant is one attention op with its shape and knobs fixed, written as
// key=value pairs: attn-compile parses them from --variant and grids and
// records them in a bundle's manifest, and the runtime matches a call against
// them. This is the one description of those keys: names, the ops each
// applies to, how values are printed and compared, and the op and cache
// dtype enums. The compiler (compiler/Variant.h) adds parsing into its
// Variant and building attn IR; the runtime (runtime/executor/VariantQuery.h)
// adds the query a call makes.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_VARIANTKEYS_H
#define ATTN_CORE_VARIANTKEYS_H

#include "core/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

/// The op a variant computes.
enum class VariantOp { PagedAttention, ReshapeAndCache, MlaDecode, MergeStates };

/// Every op, in --help order.
inline constexpr VariantOp kVariantOps[] = {
    VariantOp::PagedAttention, VariantOp::ReshapeAndCache,
    VariantOp::MlaDecode, VariantOp::MergeStates};

/// "paged_attention", "reshape_and_cache", "mla_decode", "merge_states".
std::string_view toString(VariantOp op);
std::optional<VariantOp> parseVariantOp(std::string_view name);

/// Element type of the KV cache, vLLM's kv_cache_dtype: the activations'
/// ("auto") or fp8 with per-layer k_scale / v_scale ("fp8" is e4m3, as in
/// vLLM on CUDA).
enum class CacheDType { Auto, F8E4M3, F8E5M2 };

/// "auto", "fp8_e4m3", "fp8_e5m2": the canonical spelling (vLLM's).
std::string_view toString(CacheDType dtype);
/// The canonical spellings and "fp8" (e4m3).
std::optional<CacheDType> parseCacheDType(std::string_view name);
/// The element type of a cache of `dtype` for a model of `model`.
DType cacheElementType(CacheDType dtype, DType model);
/// The cache dtype of a cache whose elements are `element`: fp8 by its type,
/// else auto.
CacheDType cacheDTypeOf(DType element);

/// How an fp8 cache's k_scale and v_scale are shaped: vLLM's kv cache
/// quantization strategy (compressed-tensors' kv_cache_scheme "strategy"),
/// one scale per layer ("tensor", f32 [1]) or one per kv head ("attn_head",
/// f32 [G]).
enum class KvScaleStrategy { Tensor, AttnHead };

/// "tensor", "attn_head" (vLLM's spellings).
std::string_view toString(KvScaleStrategy strategy);
std::optional<KvScaleStrategy> parseKvScaleStrategy(std::string_view name);

/// How a key's values are printed and compared.
enum class VariantKeyKind {
  /// Compared as text (op, dtype, kv_cache_dtype, layout).
  Text,
  /// Compared as integers ("16" and "016" agree).
  Int,
  /// "true"/"1" or "false"/"0".
  Bool,
  /// Compared after rounding both sides to f32.
  F32,
};

constexpr unsigned variantOpBit(VariantOp op) {
  return 1u << static_cast<unsigned>(op);
}

/// One variant key.
struct VariantKey {
  std::string_view name;
  VariantKeyKind kind;
  /// Bit per VariantOp (variantOpBit) of the ops the key applies to.
  unsigned ops;
  /// What it means and its default, for --help.
  std::string_view help;
  /// The value a manifest without the key meant, for a key added after
  /// bundles were made without it (kv_cache_dtype: "auto",
  /// kv_scale_strategy: "tensor"); empty for the others.
  std::string_view absentValue;

  constexpr bool appliesTo(VariantOp op) const {
    return ops & variantOpBit(op);
  }
  /// Whether a manifest leaves the key out at its absentValue, so that
  /// bundles compiled without the key stay byte-identical. kv_cache_dtype
  /// predates the rule and is always recorded.
  constexpr bool omittedAtAbsentValue() const {
    return !absentValue.empty() && name != "kv_cache_dtype";
  }
};

/// The table's shorthands: a bit per op, the kinds.
namespace variant_key_table {
inline constexpr unsigned kPaged = variantOpBit(VariantOp::PagedAttention);
inline constexpr unsigned kCache = variantOpBit(VariantOp::ReshapeAndCache);
inline constexpr unsigned kMla = variantOpBit(VariantOp::MlaDecode);
inline constexpr unsigned kMerge = variantOpBit(VariantOp::MergeStates);
using Kind = VariantKeyKind;

/// Every key. Its order is the order of --help, of the "known keys" message
/// and of a call's query.
inline constexpr VariantKey kVariantKeys[] = {
    {"op", Kind::Text, kPaged | kCache | kMla | kMerge,
     "paged_attention | reshape_and_cache | mla_decode | merge_states", ""},
    {"num_heads", Kind::Int, kPaged | kMla | kMerge, "query heads H (32)", ""},
    {"num_kv_heads", Kind::Int, kPaged | kCache,
     "kv heads G (num_heads; 8 for reshape_and_cache, not with its latent "
     "form)",
     ""},
    {"head_size", Kind::Int, kPaged | kCache | kMerge,
     "head size D (128; not with reshape_and_cache's latent form)", ""},
    {"block_size", Kind::Int, kPaged | kCache | kMla,
     "tokens per cache block B (16)", ""},
    {"dtype", Kind::Text, kPaged | kCache | kMla | kMerge,
     "f32 | f16 | bf16 (bf16)", ""},
    {"kv_cache_dtype", Kind::Text, kPaged | kCache | kMla,
     "auto | fp8 | fp8_e4m3 | fp8_e5m2 (auto: dtype); fp8 is e4m3, and the "
     "function takes k_scale (and v_scale, not for MLA) f32 [1] last (see "
     "kv_scale_strategy)",
     "auto"},
    {"kv_scale_strategy", Kind::Text, kPaged | kCache,
     "tensor | attn_head (tensor): fp8 scales per layer, f32 [1], or per kv "
     "head, f32 [num_kv_heads] (vLLM's kv_cache_scheme strategy); attn_head "
     "needs an fp8 kv_cache_dtype and num_kv_heads > 1, not with "
     "reshape_and_cache's latent form",
     "tensor"},
    {"layout", Kind::Text, kPaged | kCache,
     "kv cache layout nhd | hnd (nhd; not with reshape_and_cache's latent "
     "form)",
     ""},
    {"causal", Kind::Bool, kPaged, "true | false (true)", ""},
    {"window_left", Kind::Int, kPaged,
     "keys visible to the left, -1: all (-1); vLLM's sliding_window N is "
     "window_left=N-1",
     ""},
    {"window_right", Kind::Int, kPaged,
     "keys visible to the right, causal=false only, -1: all (-1)", ""},
    {"soft_cap", Kind::F32, kPaged, "s = cap * tanh(s / cap), 0: off (0)", ""},
    {"alibi", Kind::Bool, kPaged, "take ALiBi slopes [H] f32 (false)", ""},
    {"sinks", Kind::Bool, kPaged, "take attention sinks [H] f32 (false)", ""},
    {"scale", Kind::F32, kPaged | kMla,
     "softmax scale (1/sqrt(head_size); MLA: 1/sqrt(kv_lora_rank + "
     "rope_dim))",
     ""},
    {"kv_lora_rank", Kind::Int, kMla | kCache,
     "latent size L (512); reshape_and_cache given kv_lora_rank and rope_dim "
     "writes the MLA latent cache [NB, B, L + P] from kv_c [T, L] and k_pe "
     "[T, P]",
     ""},
    {"rope_dim", Kind::Int, kMla | kCache,
     "rotary part P of a latent row (64); see kv_lora_rank", ""},
    {"num_kv_splits", Kind::Int, kMla, "split-KV chunks per request (1)", ""},
};

} // namespace variant_key_table
using variant_key_table::kVariantKeys;

/// The key named `name`, or null.
const VariantKey *findVariantKey(std::string_view name);
/// "op, num_heads, ...": every key, for messages.
std::string variantKeyNames();

/// The printed forms of values: decimal integers, "true"/"false", and f32s
/// with 9 significant digits, which read back as the same f32.
std::string intText(int64_t value);
std::string boolText(bool value);
std::string f32Text(double value);

/// Parses a value of `kind`'s form; nullopt when it is malformed. Integers
/// are decimal with an optional '-', floats anything strtod reads whole.
std::optional<int64_t> parseIntValue(std::string_view text);
std::optional<bool> parseBoolValue(std::string_view text);
std::optional<double> parseFloatValue(std::string_view text);

/// Whether two printed values of a `kind` key are the same value.
bool sameVariantValue(VariantKeyKind kind, std::string_view a,
                      std::string_view b);

} // namespace attn

#endif // ATTN_CORE_VARIANTKEYS_H
