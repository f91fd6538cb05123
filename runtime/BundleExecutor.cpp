//===- BundleExecutor.cpp - Runs a bundle's plans as a KernelExecutor ----===//

#include "runtime/BundleExecutor.h"

#include "reference/ops/KvCache.h"
#include "reference/ops/Metadata.h"
#include "runtime/TensorRows.h"

#include <set>

namespace attn::runtime {

namespace {

KvLayout toReference(KvCacheLayout layout) {
  return layout == KvCacheLayout::Nhd ? KvLayout::NHD : KvLayout::HND;
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

namespace {

bool hasTarget(const BundleVariant &v, std::string_view target) {
  for (const BundleKernel &k : v.kernels)
    if (k.target == target)
      return true;
  return false;
}

/// "a, b, c" of the distinct values, in order of first appearance.
std::string joinDistinct(const std::vector<std::string> &values) {
  std::string text;
  std::set<std::string> seen;
  for (const std::string &v : values)
    if (seen.insert(v).second)
      text += (text.empty() ? "" : ", ") + v;
  return text;
}

/// The error when no entry's parameters match `query`.
Status noVariant(const Bundle &bundle, const VariantQuery &query) {
  std::string op = query.parameters.empty() ? "" : query.parameters[0].value;
  std::string wanted;
  for (size_t i = 1; i < query.parameters.size(); ++i)
    wanted += (wanted.empty() ? "" : ",") + query.parameters[i].key + "=" +
              query.parameters[i].value;
  std::vector<std::string> sameOp, all;
  for (const BundleVariant &v : bundle.variants) {
    all.push_back(v.name);
    auto it = v.parameters.find("op");
    if (it == v.parameters.end() || it->second != op)
      continue;
    std::string differ;
    for (const std::string &d : query.mismatches(v.parameters))
      differ += (differ.empty() ? "" : ", ") + d;
    sameOp.push_back(v.name + " (" + differ + ")");
  }
  std::string have;
  if (!sameOp.empty())
    for (const std::string &s : sameOp)
      have += (have.empty() ? "" : "; ") + s;
  else
    have = "no " + op + " variant" +
           (all.empty() ? std::string() : ", only " + joinDistinct(all));
  return errorf("bundle ", bundle.directory, " has no ", op, " variant with ",
                wanted, " (it has: ", have,
                "); compile one with: attn-compile --variant ",
                query.describe());
}

} // namespace

Result<const BundleVariant *> findVariant(const Bundle &bundle,
                                          const VariantQuery &query,
                                          std::string_view target,
                                          const SubgroupSizes &subgroups) {
  std::vector<const BundleVariant *> matching;
  for (const BundleVariant &v : bundle.variants)
    if (query.matches(v.parameters))
      matching.push_back(&v);
  if (matching.empty())
    return noVariant(bundle, query);

  std::vector<const BundleVariant *> forTarget;
  for (const BundleVariant *v : matching)
    if (target.empty() || hasTarget(*v, target))
      forTarget.push_back(v);
  if (forTarget.empty()) {
    std::vector<std::string> targets;
    for (const BundleVariant *v : matching)
      for (const BundleKernel &k : v->kernels)
        targets.push_back(k.target);
    return errorf("bundle ", bundle.directory, ": variant ",
                  matching.front()->name, " has no ", target,
                  " kernels (compiled for: ",
                  targets.empty() ? "none" : joinDistinct(targets),
                  "); recompile with --targets including ", target);
  }

  const BundleVariant *runnable = nullptr;
  for (const BundleVariant *v : forTarget) {
    if (v->subgroupSize == subgroups.native)
      return v;
    if (!runnable && subgroups.canRun(v->subgroupSize))
      runnable = v;
  }
  if (runnable)
    return runnable;
  std::vector<std::string> sizes;
  for (const BundleVariant *v : forTarget)
    sizes.push_back(std::to_string(v->subgroupSize));
  return errorf("bundle ", bundle.directory, ": variant ",
                forTarget.front()->name, " is built for subgroup sizes ",
                joinDistinct(sizes), " but the device runs subgroups of ",
                subgroups.describe(), ": recompile with --subgroup-size=",
                subgroups.native);
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
  // A TT program is several files under one symbol, one per entry point.
  std::string key = kernel.symbol + '\0' + kernel.entryPoint;
  auto it = loaded_.find(key);
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
  loaded_.emplace(std::move(key), kernel.hash);
  return Status::ok();
}

Result<const BundleVariant *>
BundleExecutor::select(const VariantQuery &query) const {
  return findVariant(bundle_, query, target_, device_.subgroupSizes());
}

Status BundleExecutor::checkServes(const VariantQuery &call) const {
  Result<const BundleVariant *> variant = select(call);
  if (!variant)
    return errorf(name_, ": ", variant.message());
  return Status::ok();
}

Status BundleExecutor::loadAllKernels() {
  // Per variant, the entry the device would run, as select() picks it.
  SubgroupSizes subgroups = device_.subgroupSizes();
  std::map<std::string, const BundleVariant *> chosen;
  std::set<std::string> targets, names;
  for (const BundleVariant &v : bundle_.variants) {
    for (const BundleKernel &k : v.kernels)
      targets.insert(k.target);
    if (!hasTarget(v, target_))
      continue;
    names.insert(v.name);
    const BundleVariant *&pick = chosen[v.name];
    if (v.subgroupSize == subgroups.native ||
        (!pick && subgroups.canRun(v.subgroupSize)))
      pick = &v;
  }
  if (names.empty()) {
    std::string have;
    for (const std::string &t : targets)
      have += (have.empty() ? "" : ", ") + t;
    return errorf("bundle ", bundle_.directory, " has no kernels for target ",
                  target_, " (it has: ", have.empty() ? "none" : have, ")");
  }
  for (const auto &[name, entry] : chosen) {
    if (!entry)
      return errorf(name_, ": bundle ", bundle_.directory, ": variant ", name,
                    " has no build for the device's subgroup size ",
                    subgroups.describe(), ": recompile with --subgroup-size=",
                    subgroups.native);
    for (const BundleKernel &k : entry->kernels)
      if (k.target == target_)
        ATTN_RETURN_IF_ERROR(load(*entry, k));
  }
  return Status::ok();
}

Result<std::vector<Tensor>>
BundleExecutor::run(const BundleVariant &variant, std::string_view op,
                    std::span<const Tensor> inputs) {
  const Plan *plan = variant.plan();
  if (!plan)
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has no host plan (it was compiled for tt only)");
  // Check the inputs before anything reaches the device.
  ATTN_RETURN_IF_ERROR(checkPlanInputs(*plan, inputs));
  for (const PlanOp &planOp : plan->ops) {
    if (planOp.kind != PlanOpKind::Launch)
      continue;
    const BundleKernel *kernel = variant.findKernel(planOp.kernel, target_);
    if (!kernel)
      return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                    " (", op, ") has no ", target_, " kernel for ",
                    planOp.kernel);
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
      select(reshapeAndCacheQuery(key, kvCache, layout));
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
      select(concatAndCacheMlaQuery(kvC, kPe, kvCache));
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
      select(pagedAttentionQuery(query, kvCache, params));
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
      select(mlaDecodeQuery(q, kvCache, params));
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
      select(mergeStatesQuery(outA));
  if (!variant)
    return variant.status();

  std::vector<Tensor> inputs = {outA, lseA, outB, lseB};
  Result<std::vector<Tensor>> results = run(**variant, "merge_states", inputs);
  if (!results)
    return results.status();
  return deliver(*results, out, lse);
}

} // namespace attn::runtime
