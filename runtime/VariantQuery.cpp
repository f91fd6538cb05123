//===- VariantQuery.cpp - What an op call requires of a compiled variant -===//

#include "runtime/VariantQuery.h"

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
VariantParameter boolean(std::string key, bool value) {
  return {std::move(key), value ? "true" : "false", Kind::Bool};
}
VariantParameter f32(std::string key, double value) {
  return {std::move(key), f32Text(value), Kind::F32};
}

std::string_view layoutName(KvCacheLayout layout) {
  return layout == KvCacheLayout::Nhd ? "nhd" : "hnd";
}

/// Dimension `i` of `t`, or -1 when it has none (the query then matches no
/// variant, and the message shows the -1).
int64_t dimOr(const Tensor &t, int64_t i) {
  return i < t.rank() ? t.dim(i) : -1;
}

/// Block size and kv heads of a paged cache in `layout`.
std::pair<int64_t, int64_t> pagedCacheDims(const Tensor &cache,
                                           KvCacheLayout layout) {
  bool nhd = layout == KvCacheLayout::Nhd;
  return {dimOr(cache, nhd ? 2 : 3), dimOr(cache, nhd ? 3 : 2)};
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
    if (it == have.end())
      differ.push_back(p.key + " missing");
    else if (!sameValue(p, it->second))
      differ.push_back(p.key + "=" + it->second);
  }
  return differ;
}

bool VariantQuery::matches(const std::map<std::string, std::string> &have) const {
  return mismatches(have).empty();
}

VariantQuery pagedAttentionQuery(const Tensor &query, const Tensor &kvCache,
                                 const PagedAttentionParams &params) {
  auto [blockSize, numKvHeads] = pagedCacheDims(kvCache, params.layout);
  VariantQuery q;
  q.parameters = {
      text("op", "paged_attention"),
      integer("num_heads", dimOr(query, 1)),
      integer("num_kv_heads", numKvHeads),
      integer("head_size", dimOr(query, 2)),
      integer("block_size", blockSize),
      text("dtype", toString(query.dtype())),
      text("layout", layoutName(params.layout)),
      boolean("causal", params.causal),
      integer("window_left", params.windowLeft < 0 ? -1 : params.windowLeft),
  };
  // Causal attention sees no key to the right whatever window_right says
  // (FLASH_ATTN passes 0 with a sliding window), and attn-compile only
  // accepts window_right with causal=false.
  if (!params.causal)
    q.parameters.push_back(integer(
        "window_right", params.windowRight < 0 ? -1 : params.windowRight));
  q.parameters.push_back(f32("soft_cap", params.logitsSoftCap));
  q.parameters.push_back(boolean("alibi", params.alibiSlopes != nullptr));
  q.parameters.push_back(boolean("sinks", params.sinks != nullptr));
  q.parameters.push_back(f32("scale", params.scale));
  return q;
}

VariantQuery reshapeAndCacheQuery(const Tensor &key, const Tensor &kvCache,
                                  KvCacheLayout layout) {
  auto [blockSize, numKvHeads] = pagedCacheDims(kvCache, layout);
  VariantQuery q;
  q.parameters = {
      text("op", "reshape_and_cache"),      integer("num_kv_heads", numKvHeads),
      integer("head_size", dimOr(key, 2)),  integer("block_size", blockSize),
      text("dtype", toString(key.dtype())), text("layout", layoutName(layout)),
  };
  return q;
}

VariantQuery concatAndCacheMlaQuery(const Tensor &kvC, const Tensor &kPe,
                                    const Tensor &kvCache) {
  VariantQuery q;
  q.parameters = {
      text("op", "reshape_and_cache"),
      integer("block_size", dimOr(kvCache, 1)),
      text("dtype", toString(kvC.dtype())),
      integer("kv_lora_rank", dimOr(kvC, 1)),
      integer("rope_dim", dimOr(kPe, 1)),
  };
  return q;
}

VariantQuery mlaDecodeQuery(const Tensor &q, const Tensor &kvCache,
                            const MlaDecodeParams &params) {
  VariantQuery query;
  query.parameters = {
      text("op", "mla_decode"),
      integer("num_heads", dimOr(q, 1)),
      integer("block_size", dimOr(kvCache, 1)),
      text("dtype", toString(q.dtype())),
      f32("scale", params.scale),
      integer("kv_lora_rank", params.kvLoraRank),
      integer("rope_dim", dimOr(q, 2) - params.kvLoraRank),
      // Scheduling only, but it is compiled into the plan's grid.
      integer("num_kv_splits", params.numKvSplits),
  };
  return query;
}

VariantQuery mergeStatesQuery(const Tensor &outA) {
  VariantQuery q;
  q.parameters = {
      text("op", "merge_states"),
      integer("num_heads", dimOr(outA, 1)),
      integer("head_size", dimOr(outA, 2)),
      text("dtype", toString(outA.dtype())),
  };
  return q;
}

} // namespace attn::runtime
