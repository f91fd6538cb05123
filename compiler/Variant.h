//===- Variant.h - Attention variants from key=value lists ---------*- C++ -*-===//
//
// A variant is one attention op with its shape and knobs fixed, written as
// `op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,...` on the
// attn-compile command line. This file parses and checks such lists and
// builds the function that computes the variant in the attn dialect. Batch
// sizes (tokens, requests, cache blocks, block-table width) stay dynamic;
// everything else is static.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_VARIANT_H
#define ATTN_COMPILER_VARIANT_H

#include "core/KvCache.h"
#include "core/VariantKeys.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func

namespace attn {

// The op and cache dtype enums and the key table are core's
// (core/VariantKeys.h), which the runtime shares.
using ::attn::CacheDType;
using ::attn::VariantOp;

/// A fully resolved variant: every key has its value, defaults filled in.
struct Variant {
  VariantOp op = VariantOp::PagedAttention;
  int64_t numHeads = 32;
  int64_t numKvHeads = 32;
  int64_t headSize = 128;
  int64_t blockSize = 16;
  /// Element type of the activations (queries, keys, values, outputs): f32,
  /// f16 or bf16 (::attn::isModelDType).
  ::attn::DType dtype = ::attn::DType::BF16;
  /// paged_attention, reshape_and_cache and mla_decode: the cache's element
  /// type. With fp8 the function also takes the scales (kvScaleStrategy).
  CacheDType kvCacheDtype = CacheDType::Auto;
  /// With an fp8 cache: the scales per layer, f32 [1], or per kv head, f32
  /// [numKvHeads] (attn_head).
  ::attn::KvScaleStrategy kvScaleStrategy = ::attn::KvScaleStrategy::Tensor;
  /// KV cache layout of paged_attention and reshape_and_cache.
  ::attn::KvLayout layout = ::attn::KvLayout::NHD;
  bool causal = true;
  int64_t windowLeft = -1;
  int64_t windowRight = -1;
  double softCap = 0.0;
  bool alibi = false;
  bool sinks = false;
  /// The softmax scale: 1 / sqrt(head_size), for MLA
  /// 1 / sqrt(kv_lora_rank + rope_dim), unless given.
  double scale = 0.0;
  int64_t kvLoraRank = 512;
  int64_t ropeDim = 64;
  int64_t numKvSplits = 1;
  /// reshape_and_cache only: write the MLA latent cache (kv_lora_rank and
  /// rope_dim given) instead of a paged K/V cache.
  bool latentCache = false;

  /// The name of the function buildVariant adds: the op's name.
  llvm::StringRef functionName() const;
};

/// One line per variant key: its meaning, default and the ops it applies to.
std::string variantKeysHelp();

/// Parses `key=value,key=value,...`. `op` is required. Unknown keys, malformed
/// values, keys that do not apply to the op and impossible combinations are
/// errors naming the key.
llvm::Expected<Variant> parseVariant(llvm::StringRef spec);

/// Whether `key` is a variant key that applies to `op` ("op" always does).
bool variantKeyApplies(llvm::StringRef key, llvm::StringRef op);

/// Success when `key` is a variant key; otherwise the error parseVariant
/// gives for it (naming the key and every known one).
llvm::Error checkVariantKey(llvm::StringRef key);

/// The variant as canonical key/values: every key that applies to its op,
/// defaults filled in, floats printed so that they read back as the same
/// f32, except a key at the value its absence means when the table says so
/// (VariantKey::omittedAtAbsentValue: kv_scale_strategy=tensor). Bundles
/// record these and the runtime matches on them.
std::map<std::string, std::string> variantParameters(const Variant &variant);

/// A short unique name: the op and the values that differ from defaults,
/// e.g. "paged_attention.h32.g8.d128.b16.bf16.nhd".
std::string variantName(const Variant &variant);

/// Adds the function computing `variant` to `module` (named
/// variant.functionName()) and verifies it. A verifier failure is returned as
/// an error carrying the diagnostic.
llvm::Error buildVariant(const Variant &variant, mlir::ModuleOp module);

/// The variant `fn` computes, when `fn` is in the form buildVariant gives it
/// (any name): one attn op with static shapes whose operands are the
/// function's arguments in buildVariant's order, and whose results the
/// function returns. That is the form the runtime calls. Otherwise an error
/// saying what differs.
llvm::Expected<Variant> variantOfFunction(func::FuncOp fn);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_VARIANT_H
