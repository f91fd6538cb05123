//===- VariantQuery.h - What an op call requires of a compiled variant ---===//
//
// A call of an attention op (a paged attention of these heads and knobs, a
// cache write of this geometry) is served by the bundle variant compiled for
// it. A VariantQuery is that requirement as manifest parameters, built from
// the call's operands; a bundle executor matches it against the manifest, and
// an impl asks its executor for every query it will make when it is created,
// so a missing variant is reported at start-up with the attn-compile
// --variant that would compile it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_VARIANTQUERY_H
#define ATTN_RUNTIME_VARIANTQUERY_H

#include "core/Tensor.h"
#include "core/VariantKeys.h"
#include "runtime/device/Device.h"
#include "runtime/executor/KernelExecutor.h"

#include <map>
#include <string>
#include <vector>

namespace attn::runtime {

/// One manifest parameter a call requires of a variant.
struct VariantParameter {
  /// How the key's values compare (core/VariantKeys.h).
  using Kind = VariantKeyKind;
  std::string key;
  /// The value, as the manifest would print it.
  std::string value;
  Kind kind = Kind::Text;
  /// Whether a manifest without the key serves the call: for a key added
  /// after bundles were made without it, whose value here is the one those
  /// bundles meant (kv_cache_dtype=auto, VariantKey::absentValue).
  bool absentMatches = false;
};

/// The parameters a call requires, in the order of core's variant keys.
/// `op` is the first.
struct VariantQuery {
  std::vector<VariantParameter> parameters;

  /// "op=paged_attention,num_heads=8,...": also the attn-compile --variant
  /// that compiles a variant serving the call.
  std::string describe() const;
  /// Whether a variant with these manifest parameters serves the call.
  bool matches(const std::map<std::string, std::string> &have) const;
  /// The parameters of `have` that differ from the query ("block_size=32",
  /// "alibi missing").
  std::vector<std::string>
  mismatches(const std::map<std::string, std::string> &have) const;
};

/// What a query reads of an operand: its dtype and shape, on either side of
/// the bus (or of no tensor at all, for an impl that plans its calls).
struct OperandType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  OperandType(DType dtype, std::vector<int64_t> shape)
      : dtype(dtype), shape(std::move(shape)) {}
  OperandType(const Tensor &t) : dtype(t.dtype()), shape(t.shape()) {}
  OperandType(const DeviceTensor &t) : dtype(t.dtype), shape(t.shape) {}
  /// Dimension `i`, or -1 when there is none (the query then matches no
  /// variant, and the message shows the -1).
  int64_t dim(int64_t i) const {
    return i < static_cast<int64_t>(shape.size()) ? shape[i] : -1;
  }
};

/// The queries the calls make (exposed for tests and messages). Those of a
/// paged cache in fp8 ask for kv_scale_strategy: attn_head when k_scale has
/// more than one value (one per kv head), else tensor, which bundles from
/// before the key serve.
VariantQuery pagedAttentionQuery(const OperandType &query,
                                 const OperandType &kvCache,
                                 const PagedAttentionParams &params);
/// `scales`: the fp8 cache's scales, whose shape picks kv_scale_strategy.
VariantQuery reshapeAndCacheQuery(const OperandType &key,
                                  const OperandType &kvCache,
                                  KvCacheLayout layout,
                                  const KvCacheScales &scales);
/// concatAndCacheMla's: the reshape_and_cache variant of the latent form,
/// kv_lora_rank = kvC.dim(1), rope_dim = kPe.dim(1), block_size =
/// kvCache.dim(1), dtype of kvC.
VariantQuery concatAndCacheMlaQuery(const OperandType &kvC,
                                    const OperandType &kPe,
                                    const OperandType &kvCache);
VariantQuery mlaDecodeQuery(const OperandType &q, const OperandType &kvCache,
                            const MlaDecodeParams &params);
VariantQuery mergeStatesQuery(const OperandType &outA);

/// The query a variant of exactly these manifest parameters serves (as
/// compiler/Variant.h's variantParameters prints them), for a tool that
/// holds a variant's function rather than a call (attn-diff --bundle). A
/// paged cache in fp8 asks for kv_scale_strategy, which the manifest leaves
/// out at tensor, as the calls' queries do.
VariantQuery variantQueryOf(const std::map<std::string, std::string> &parameters);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_VARIANTQUERY_H
