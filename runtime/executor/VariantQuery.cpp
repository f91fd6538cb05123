//===- VariantQuery.cpp - What an op call requires of a compiled variant -===//

#include "runtime/executor/VariantQuery.h"

#include <cassert>

namespace attn::runtime {

namespace {

/// A parameter of the key named `name`, which core's table holds.
VariantParameter parameter(std::string_view name, std::string value) {
  const VariantKey *key = findVariantKey(name);
  assert(key && "a query names a variant key core does not know");
  bool absentMatches = !key->absentValue.empty() && value == key->absentValue;
  return {std::string(name), std::move(value), key->kind, absentMatches};
}

VariantParameter text(std::string_view key, std::string_view value) {
  return parameter(key, std::string(value));
}
VariantParameter integer(std::string_view key, int64_t value) {
  return parameter(key, intText(value));
}
/// kv_cache_dtype of a cache of `cache`'s dtype: vLLM's name of an fp8
/// type, "auto" for the model dtype.
VariantParameter kvCacheDtype(const OperandType &cache) {
  return text("kv_cache_dtype", toString(cacheDTypeOf(cache.dtype)));
}
/// kv_scale_strategy of an fp8 cache's scales: attn_head when k_scale has a
/// value per kv head (more than one), else tensor.
VariantParameter kvScaleStrategy(const KvCacheScales &scales) {
  bool perHead = scales.key && scales.key->numElements() > 1;
  return text("kv_scale_strategy",
              toString(perHead ? KvScaleStrategy::AttnHead
                               : KvScaleStrategy::Tensor));
}
/// Appends kv_scale_strategy to `q` for a paged cache in fp8: the key does
/// not apply to one in the model dtype, whose queries stay as they were.
void addScaleStrategy(VariantQuery &q, const OperandType &cache,
                      const KvCacheScales &scales) {
  if (cacheDTypeOf(cache.dtype) != CacheDType::Auto)
    q.parameters.push_back(kvScaleStrategy(scales));
}
VariantParameter boolean(std::string_view key, bool value) {
  return parameter(key, boolText(value));
}
VariantParameter f32(std::string_view key, double value) {
  return parameter(key, f32Text(value));
}

/// Block size and kv heads of a paged cache in `layout`.
std::pair<int64_t, int64_t> pagedCacheDims(const OperandType &cache,
                                           KvCacheLayout layout) {
  bool nhd = layout == KvCacheLayout::NHD;
  return {cache.dim(nhd ? 2 : 3), cache.dim(nhd ? 3 : 2)};
}

} // namespace

std::string VariantQuery::describe() const {
  std::string s;
  for (const VariantParameter &p : parameters) {
    if (!s.empty())
      s += ',';
    s.append(p.key).append("=").append(p.value);
  }
  return s;
}

std::vector<std::string>
VariantQuery::mismatches(const std::map<std::string, std::string> &have) const {
  std::vector<std::string> differ;
  for (const VariantParameter &p : parameters) {
    auto it = have.find(p.key);
    if (it == have.end()) {
      if (!p.absentMatches)
        differ.push_back(p.key + " missing");
    }
    else if (!sameVariantValue(p.kind, p.value, it->second))
      differ.push_back(p.key + "=" + it->second);
  }
  return differ;
}

bool VariantQuery::matches(const std::map<std::string, std::string> &have) const {
  return mismatches(have).empty();
}

VariantQuery pagedAttentionQuery(const OperandType &query,
                                 const OperandType &kvCache,
                                 const PagedAttentionParams &params) {
  auto [blockSize, numKvHeads] = pagedCacheDims(kvCache, params.layout);
  VariantQuery q;
  q.parameters = {
      text("op", toString(VariantOp::PagedAttention)),
      integer("num_heads", query.dim(1)),
      integer("num_kv_heads", numKvHeads),
      integer("head_size", query.dim(2)),
      integer("block_size", blockSize),
      text("dtype", toString(query.dtype)),
      kvCacheDtype(kvCache),
  };
  addScaleStrategy(q, kvCache, params.kvScales);
  q.parameters.push_back(text("layout", toString(params.layout)));
  q.parameters.push_back(boolean("causal", params.causal));
  q.parameters.push_back(
      integer("window_left", params.windowLeft < 0 ? -1 : params.windowLeft));
  // Causal attention sees no key to the right whatever window_right says
  // (FLASH_ATTN passes 0 with a sliding window), and attn-compile only
  // accepts window_right with causal=false.
  if (!params.causal)
    q.parameters.push_back(integer(
        "window_right", params.windowRight < 0 ? -1 : params.windowRight));
  q.parameters.push_back(f32("soft_cap", params.softCap));
  q.parameters.push_back(boolean("alibi", params.alibiSlopes != nullptr));
  q.parameters.push_back(boolean("sinks", params.sinks != nullptr));
  q.parameters.push_back(f32("scale", params.scale));
  return q;
}

VariantQuery reshapeAndCacheQuery(const OperandType &key,
                                  const OperandType &kvCache,
                                  KvCacheLayout layout,
                                  const KvCacheScales &scales) {
  auto [blockSize, numKvHeads] = pagedCacheDims(kvCache, layout);
  VariantQuery q;
  q.parameters = {
      text("op", toString(VariantOp::ReshapeAndCache)),
      integer("num_kv_heads", numKvHeads),
      integer("head_size", key.dim(2)),
      integer("block_size", blockSize),
      text("dtype", toString(key.dtype)),
      kvCacheDtype(kvCache),
  };
  addScaleStrategy(q, kvCache, scales);
  q.parameters.push_back(text("layout", toString(layout)));
  return q;
}

VariantQuery concatAndCacheMlaQuery(const OperandType &kvC,
                                    const OperandType &kPe,
                                    const OperandType &kvCache) {
  VariantQuery q;
  q.parameters = {
      text("op", toString(VariantOp::ReshapeAndCache)),
      integer("block_size", kvCache.dim(1)),
      text("dtype", toString(kvC.dtype)),
      kvCacheDtype(kvCache),
      integer("kv_lora_rank", kvC.dim(1)),
      integer("rope_dim", kPe.dim(1)),
  };
  return q;
}

VariantQuery mlaDecodeQuery(const OperandType &q, const OperandType &kvCache,
                            const MlaDecodeParams &params) {
  VariantQuery query;
  query.parameters = {
      text("op", toString(VariantOp::MlaDecode)),
      integer("num_heads", q.dim(1)),
      integer("block_size", kvCache.dim(1)),
      text("dtype", toString(q.dtype)),
      kvCacheDtype(kvCache),
      f32("scale", params.scale),
      integer("kv_lora_rank", params.kvLoraRank),
      integer("rope_dim", q.dim(2) - params.kvLoraRank),
      // Scheduling only, but it is compiled into the plan's grid.
      integer("num_kv_splits", params.numKvSplits),
  };
  return query;
}

VariantQuery mergeStatesQuery(const OperandType &outA) {
  VariantQuery q;
  q.parameters = {
      text("op", toString(VariantOp::MergeStates)),
      integer("num_heads", outA.dim(1)),
      integer("head_size", outA.dim(2)),
      text("dtype", toString(outA.dtype)),
  };
  return q;
}

VariantQuery
variantQueryOf(const std::map<std::string, std::string> &parameters) {
  auto has = [&](const char *key) { return parameters.count(key) != 0; };
  // A paged cache (it has a layout; the latent one has none) in fp8.
  bool pagedFp8 = has("layout") && has("kv_cache_dtype") &&
                  parameters.at("kv_cache_dtype") !=
                      toString(CacheDType::Auto);
  VariantQuery q;
  for (const VariantKey &key : kVariantKeys) {
    auto it = parameters.find(std::string(key.name));
    if (it != parameters.end())
      q.parameters.push_back(parameter(key.name, it->second));
    else if (key.name == "kv_scale_strategy" && pagedFp8)
      q.parameters.push_back(
          parameter(key.name, std::string(key.absentValue)));
  }
  return q;
}

} // namespace attn::runtime
