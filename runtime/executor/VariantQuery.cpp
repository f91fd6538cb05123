//===- VariantQuery.cpp - What an op call requires of a compiled variant -===//

#include "runtime/executor/VariantQuery.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace attn::runtime {

namespace {

using Kind = VariantParameter::Kind;

std::optional<int64_t> parseInt(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return v;
}

std::optional<bool> parseBool(const std::string &text) {
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}

std::optional<float> parseF32(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0')
    return std::nullopt;
  return static_cast<float>(v);
}

bool sameValue(const VariantParameter &want, const std::string &have) {
  switch (want.kind) {
  case Kind::Text:
    return have == want.value;
  case Kind::Int: {
    std::optional<int64_t> a = parseInt(have), b = parseInt(want.value);
    return a && b && *a == *b;
  }
  case Kind::Bool: {
    std::optional<bool> a = parseBool(have), b = parseBool(want.value);
    return a && b && *a == *b;
  }
  case Kind::F32: {
    std::optional<float> a = parseF32(have), b = parseF32(want.value);
    return a && b && *a == *b;
  }
  }
  return false;
}

/// An f32 printed with enough digits to read back the same f32.
std::string f32Text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g",
                static_cast<double>(static_cast<float>(v)));
  return text;
}

VariantParameter text(std::string key, std::string_view value) {
  return {std::move(key), std::string(value), Kind::Text};
}
VariantParameter integer(std::string key, int64_t value) {
  return {std::move(key), std::to_string(value), Kind::Int};
}
/// kv_cache_dtype of a cache of `cache`'s dtype: vLLM's name of an fp8
/// type, "auto" for the model dtype. Bundles older than fp8 caches lack the
/// key and serve "auto".
VariantParameter kvCacheDtype(const OperandType &cache) {
  std::string_view name = cache.dtype == DType::F8E4M3FN ? "fp8_e4m3"
                          : cache.dtype == DType::F8E5M2 ? "fp8_e5m2"
                                                         : "auto";
  VariantParameter p = text("kv_cache_dtype", name);
  p.absentMatches = name == "auto";
  return p;
}
VariantParameter boolean(std::string key, bool value) {
  return {std::move(key), value ? "true" : "false", Kind::Bool};
}
VariantParameter f32(std::string key, double value) {
  return {std::move(key), f32Text(value), Kind::F32};
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
  for (const VariantParameter &p : parameters)
    s += (s.empty() ? "" : ",") + p.key + "=" + p.value;
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
    else if (!sameValue(p, it->second))
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
      text("op", "paged_attention"),
      integer("num_heads", query.dim(1)),
      integer("num_kv_heads", numKvHeads),
      integer("head_size", query.dim(2)),
      integer("block_size", blockSize),
      text("dtype", toString(query.dtype)),
      kvCacheDtype(kvCache),
      text("layout", toString(params.layout)),
      boolean("causal", params.causal),
      integer("window_left", params.windowLeft < 0 ? -1 : params.windowLeft),
  };
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
                                  KvCacheLayout layout) {
  auto [blockSize, numKvHeads] = pagedCacheDims(kvCache, layout);
  VariantQuery q;
  q.parameters = {
      text("op", "reshape_and_cache"),      integer("num_kv_heads", numKvHeads),
      integer("head_size", key.dim(2)),  integer("block_size", blockSize),
      text("dtype", toString(key.dtype)), kvCacheDtype(kvCache),
      text("layout", toString(layout)),
  };
  return q;
}

VariantQuery concatAndCacheMlaQuery(const OperandType &kvC,
                                    const OperandType &kPe,
                                    const OperandType &kvCache) {
  VariantQuery q;
  q.parameters = {
      text("op", "reshape_and_cache"),
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
      text("op", "mla_decode"),
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
      text("op", "merge_states"),
      integer("num_heads", outA.dim(1)),
      integer("head_size", outA.dim(2)),
      text("dtype", toString(outA.dtype)),
  };
  return q;
}

} // namespace attn::runtime
