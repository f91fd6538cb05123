//===- BundleExecutor.cpp - Runs a bundle's plans as a KernelExecutor ----===//

#include "runtime/BundleExecutor.h"

#include "reference/ops/KvCache.h"
#include "reference/ops/Metadata.h"
#include "runtime/TensorRows.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

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

KvLayout toReference(KvCacheLayout layout) {
  return layout == KvCacheLayout::Nhd ? KvLayout::NHD : KvLayout::HND;
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

/// Checks the paged metadata of one call against a cache of `numBlocks`
/// blocks of `blockSize` tokens and a query of `queryRows` rows; returns the
/// batch's token count.
Result<int64_t> checkPagedMetadata(const Tensor &queryStartLoc,
                                   const Tensor &seqLens,
                                   const Tensor &blockTable, int64_t queryRows,
                                   int64_t numBlocks, int64_t blockSize) {
  Result<CommonAttentionMetadata> md = makeCommonAttentionMetadata(
      queryStartLoc, seqLens, &blockTable, /*slotMapping=*/nullptr);
  if (!md)
    return md.status();
  if (md->numActualTokens > queryRows)
    return errorf("query_start_loc[", md->numReqs, "] = ", md->numActualTokens,
                  " exceeds the query's ", queryRows, " tokens");
  ATTN_RETURN_IF_ERROR(checkCacheBounds(*md, numBlocks, blockSize));
  return md->numActualTokens;
}

/// Checks that `t` is [rows, trailing...] of `dtype`.
Status checkRows(const Tensor &t, std::string_view name, int64_t rows,
                 const std::vector<int64_t> &trailing, DType dtype) {
  bool ok = t.rank() == static_cast<int64_t>(trailing.size()) + 1 &&
            t.dtype() == dtype && t.dim(0) == rows;
  for (size_t i = 0; ok && i < trailing.size(); ++i)
    ok = t.dim(i + 1) == trailing[i];
  if (ok)
    return Status::ok();
  std::vector<int64_t> shape = {rows};
  shape.insert(shape.end(), trailing.begin(), trailing.end());
  return errorf(name, " is ", t.describe(), ", expected ",
                Tensor(dtype, shape).describe());
}

/// Copies an attention function's (out, lse) results into the caller's.
Status deliver(const std::vector<Tensor> &results, Tensor &out, Tensor *lse) {
  if (results.size() != 2)
    return errorf("the plan returned ", results.size(),
                  " results, expected (out, lse)");
  ATTN_RETURN_IF_ERROR(copyIntoLeadingRows(results[0], out, "out"));
  if (lse)
    ATTN_RETURN_IF_ERROR(copyIntoLeadingRows(results[1], *lse, "lse"));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Variant lookup
//===----------------------------------------------------------------------===//

std::string VariantQuery::describe() const {
  std::string s;
  for (const VariantParameter &p : parameters)
    s += (s.empty() ? "" : ",") + p.key + "=" + p.value;
  return s;
}

Result<const BundleVariant *> findVariant(const Bundle &bundle,
                                          const VariantQuery &query) {
  auto mismatches = [&](const BundleVariant &v) {
    std::vector<std::string> differ;
    for (const VariantParameter &p : query.parameters) {
      auto it = v.parameters.find(p.key);
      if (it == v.parameters.end())
        differ.push_back(p.key + " missing");
      else if (!sameValue(p, it->second))
        differ.push_back(p.key + "=" + it->second);
    }
    return differ;
  };
  for (const BundleVariant &v : bundle.variants)
    if (mismatches(v).empty())
      return &v;

  std::string op = query.parameters.empty() ? "" : query.parameters[0].value;
  std::string wanted;
  for (size_t i = 1; i < query.parameters.size(); ++i)
    wanted += (wanted.empty() ? "" : ",") + query.parameters[i].key + "=" +
              query.parameters[i].value;
  std::string have;
  for (const BundleVariant &v : bundle.variants) {
    auto it = v.parameters.find("op");
    if (it == v.parameters.end() || it->second != op)
      continue;
    std::string differ;
    for (const std::string &d : mismatches(v))
      differ += (differ.empty() ? "" : ", ") + d;
    have += (have.empty() ? "" : "; ") + v.name + " (" + differ + ")";
  }
  if (have.empty()) {
    for (const BundleVariant &v : bundle.variants)
      have += (have.empty() ? "" : ", ") + v.name;
    have = "no " + op + " variant" +
           (have.empty() ? std::string() : ", only " + have);
  }
  return errorf("bundle ", bundle.directory, " has no ", op, " variant with ",
                wanted, " (it has: ", have, ")");
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

//===----------------------------------------------------------------------===//
// BundleExecutor
//===----------------------------------------------------------------------===//

BundleExecutor::BundleExecutor(Bundle bundle, std::string target,
                               PlanDevice &device, KernelLoader loader)
    : bundle_(std::move(bundle)), target_(std::move(target)), device_(device),
      loader_(std::move(loader)),
      name_(std::string(device.name()) + " (" + target_ + " bundle)") {}

Status BundleExecutor::load(const BundleVariant &variant,
                            const BundleKernel &kernel) {
  auto it = loaded_.find(kernel.symbol);
  if (it != loaded_.end()) {
    if (it->second == kernel.hash)
      return Status::ok();
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has another kernel under the symbol ", kernel.symbol,
                  " than the one already loaded (hash ", hashToHex(kernel.hash),
                  ", loaded ", hashToHex(it->second), ")");
  }
  Result<std::string> bytes = bundle_.readKernel(kernel);
  if (!bytes)
    return bytes.status();
  if (!loader_)
    return errorf(name_, ": no kernel loader to put ", kernel.symbol,
                  " on the device");
  Status s = loader_(kernel, *bytes);
  if (!s)
    return errorf("loading kernel ", kernel.symbol, " (", kernel.file,
                  ") of variant ", variant.name, " on ", device_.name(), ": ",
                  s.message());
  loaded_.emplace(kernel.symbol, kernel.hash);
  return Status::ok();
}

Status BundleExecutor::loadAllKernels() {
  bool any = false;
  std::set<std::string> targets;
  for (const BundleVariant &v : bundle_.variants)
    for (const BundleKernel &k : v.kernels) {
      targets.insert(k.target);
      if (k.target != target_)
        continue;
      any = true;
      ATTN_RETURN_IF_ERROR(load(v, k));
    }
  if (any)
    return Status::ok();
  std::string have;
  for (const std::string &t : targets)
    have += (have.empty() ? "" : ", ") + t;
  return errorf("bundle ", bundle_.directory, " has no kernels for target ",
                target_, " (it has: ", have.empty() ? "none" : have, ")");
}

Result<std::vector<Tensor>>
BundleExecutor::run(const BundleVariant &variant, std::string_view function,
                    std::span<const Tensor> inputs) {
  const Plan *plan = variant.findPlan(function);
  if (!plan)
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has no plan for @", function);
  // Check the inputs before anything reaches the device.
  ATTN_RETURN_IF_ERROR(checkPlanInputs(*plan, inputs));
  for (const PlanOp &op : plan->ops) {
    if (op.kind != PlanOpKind::Launch)
      continue;
    const BundleKernel *kernel = variant.findKernel(op.kernel, target_);
    if (!kernel) {
      std::set<std::string> targets;
      for (const BundleKernel &k : variant.kernels)
        if (k.symbol == op.kernel)
          targets.insert(k.target);
      std::string have;
      for (const std::string &t : targets)
        have += (have.empty() ? "" : ", ") + t;
      return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                    " has no kernel for target ", target_, " (@", function,
                    " launches ", op.kernel,
                    ", compiled for: ", have.empty() ? "none" : have, ")");
    }
    ATTN_RETURN_IF_ERROR(load(variant, *kernel));
  }
  Result<std::vector<Tensor>> results =
      runPlan(*plan, device_, inputs, &lastStats_);
  if (!results)
    return errorf(name_, ": ", results.message());
  return results;
}

Status BundleExecutor::reshapeAndCache(const Tensor &key, const Tensor &value,
                                       const Tensor &slotMapping,
                                       KvCacheLayout layout, Tensor &kvCache) {
  Result<KvCacheGeometry> cache =
      KvCacheGeometry::of(kvCache, toReference(layout));
  if (!cache)
    return cache.status();
  if (key.rank() != 3 || value.shape() != key.shape())
    return errorf("key ", key.describe(), " and value ", value.describe(),
                  " must both be [T, G, D]");
  int64_t tokens = slotMapping.rank() == 1 ? slotMapping.dim(0) : -1;
  ATTN_RETURN_IF_ERROR(checkSlotMapping(slotMapping, tokens, cache->numBlocks,
                                        cache->blockSize));
  if (key.dim(0) < tokens)
    return errorf("key has ", key.dim(0), " tokens but slot_mapping has ",
                  tokens);
  Result<const BundleVariant *> variant =
      findVariant(bundle_, reshapeAndCacheQuery(key, kvCache, layout));
  if (!variant)
    return variant.status();

  return runCacheWrite(**variant, key, value, tokens, slotMapping, kvCache);
}

Status BundleExecutor::runCacheWrite(const BundleVariant &variant,
                                     const Tensor &key, const Tensor &value,
                                     int64_t tokens, const Tensor &slotMapping,
                                     Tensor &kvCache) {
  std::vector<Tensor> inputs;
  inputs.push_back(key.dim(0) > tokens ? leadingRows(key, tokens) : key);
  inputs.push_back(value.dim(0) > tokens ? leadingRows(value, tokens) : value);
  inputs.push_back(std::move(kvCache));
  inputs.push_back(slotMapping);
  Result<std::vector<Tensor>> results =
      run(variant, "reshape_and_cache", inputs);
  kvCache = std::move(inputs[2]);
  if (!results)
    return results.status();
  if (results->size() != 1 || (*results)[0].shape() != kvCache.shape() ||
      (*results)[0].dtype() != kvCache.dtype())
    return errorf(name_, ": @reshape_and_cache of variant ", variant.name,
                  " did not return the cache");
  kvCache = std::move((*results)[0]);
  return Status::ok();
}

Status BundleExecutor::concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                                         const Tensor &slotMapping,
                                         Tensor &kvCache) {
  if (kvCache.rank() != 3 || kvC.rank() != 2 || kPe.rank() != 2 ||
      kPe.dim(0) != kvC.dim(0) || kvC.dim(1) + kPe.dim(1) != kvCache.dim(2))
    return errorf("kv_c ", kvC.describe(), ", k_pe ", kPe.describe(),
                  " and kv cache ", kvCache.describe(),
                  " must be [T, L], [T, P] and [num_blocks, B, L + P]");
  if (kvC.dtype() != kvCache.dtype() || kPe.dtype() != kvCache.dtype())
    return errorf("kv_c ", kvC.describe(), " and k_pe ", kPe.describe(),
                  " must have the kv cache's dtype (", kvCache.describe(), ")");
  int64_t tokens = slotMapping.rank() == 1 ? slotMapping.dim(0) : -1;
  ATTN_RETURN_IF_ERROR(
      checkSlotMapping(slotMapping, tokens, kvCache.dim(0), kvCache.dim(1)));
  if (kvC.dim(0) < tokens)
    return errorf("kv_c has ", kvC.dim(0), " tokens but slot_mapping has ",
                  tokens);
  Result<const BundleVariant *> variant =
      findVariant(bundle_, concatAndCacheMlaQuery(kvC, kPe, kvCache));
  if (!variant)
    return variant.status();

  return runCacheWrite(**variant, kvC, kPe, tokens, slotMapping, kvCache);
}

Status BundleExecutor::pagedAttention(
    const Tensor &query, const Tensor &kvCache, const Tensor &queryStartLoc,
    const Tensor &seqLens, const Tensor &blockTable,
    const PagedAttentionParams &params, Tensor &out, Tensor *lse) {
  Result<KvCacheGeometry> cache =
      KvCacheGeometry::of(kvCache, toReference(params.layout));
  if (!cache)
    return cache.status();
  if (query.rank() != 3)
    return errorf("query is ", query.describe(), ", expected [T, H, D]");
  Result<int64_t> tokens =
      checkPagedMetadata(queryStartLoc, seqLens, blockTable, query.dim(0),
                         cache->numBlocks, cache->blockSize);
  if (!tokens)
    return tokens.status();
  Result<const BundleVariant *> variant =
      findVariant(bundle_, pagedAttentionQuery(query, kvCache, params));
  if (!variant)
    return variant.status();

  std::vector<Tensor> inputs;
  inputs.push_back(*tokens < query.dim(0) ? leadingRows(query, *tokens)
                                          : query);
  inputs.push_back(kvCache);
  inputs.push_back(blockTable);
  inputs.push_back(seqLens);
  inputs.push_back(queryStartLoc);
  if (params.alibiSlopes)
    inputs.push_back(*params.alibiSlopes);
  if (params.sinks)
    inputs.push_back(*params.sinks);
  Result<std::vector<Tensor>> results =
      run(**variant, "paged_attention", inputs);
  if (!results)
    return results.status();
  return deliver(*results, out, lse);
}

Status BundleExecutor::mlaDecode(const Tensor &q, const Tensor &kvCache,
                                 const Tensor &blockTable,
                                 const Tensor &seqLens,
                                 const MlaDecodeParams &params, Tensor &out,
                                 Tensor *lse) {
  if (kvCache.rank() != 3 || q.rank() != 3)
    return errorf("q ", q.describe(), " and kv cache ", kvCache.describe(),
                  " must be [R, H, L + P] and [num_blocks, B, L + P]");
  // One query per request: the metadata is that of R one-token requests.
  int64_t numReqs = seqLens.rank() == 1 ? seqLens.dim(0) : 0;
  Tensor queryStartLoc(DType::I32, {numReqs + 1});
  for (int64_t r = 0; r <= numReqs; ++r)
    queryStartLoc.setInt(r, r);
  Result<int64_t> tokens =
      checkPagedMetadata(queryStartLoc, seqLens, blockTable, q.dim(0),
                         kvCache.dim(0), kvCache.dim(1));
  if (!tokens)
    return tokens.status();
  if (q.dim(0) != numReqs)
    return errorf("q has ", q.dim(0), " rows for ", numReqs, " requests");
  Result<const BundleVariant *> variant =
      findVariant(bundle_, mlaDecodeQuery(q, kvCache, params));
  if (!variant)
    return variant.status();

  std::vector<Tensor> inputs = {q, kvCache, blockTable, seqLens};
  Result<std::vector<Tensor>> results = run(**variant, "mla_decode", inputs);
  if (!results)
    return results.status();
  return deliver(*results, out, lse);
}

Status BundleExecutor::mergeStates(const Tensor &outA, const Tensor &lseA,
                                   const Tensor &outB, const Tensor &lseB,
                                   Tensor &out, Tensor *lse) {
  if (outA.rank() != 3)
    return errorf("out_a is ", outA.describe(), ", expected [N, H, D]");
  int64_t rows = outA.dim(0), heads = outA.dim(1);
  ATTN_RETURN_IF_ERROR(
      checkRows(outB, "out_b", rows, {heads, outA.dim(2)}, outA.dtype()));
  ATTN_RETURN_IF_ERROR(checkRows(lseA, "lse_a", rows, {heads}, DType::F32));
  ATTN_RETURN_IF_ERROR(checkRows(lseB, "lse_b", rows, {heads}, DType::F32));
  Result<const BundleVariant *> variant =
      findVariant(bundle_, mergeStatesQuery(outA));
  if (!variant)
    return variant.status();

  std::vector<Tensor> inputs = {outA, lseA, outB, lseB};
  Result<std::vector<Tensor>> results = run(**variant, "merge_states", inputs);
  if (!results)
    return results.status();
  return deliver(*results, out, lse);
}

} // namespace attn::runtime
