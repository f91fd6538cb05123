//===- BundleExecutor.cpp - Runs a bundle's plans as a KernelExecutor ----===//

#include "runtime/executor/BundleExecutor.h"

#include "core/Metadata.h"

#include <algorithm>
#include <set>

namespace attn::runtime {

namespace {

/// Checks the paged metadata of one call against a cache of `numBlocks`
/// blocks of `blockSize` tokens and a query of `queryRows` rows, as the
/// reference does (checkPagedBatch); returns the batch's token count. Host
/// tensors only: nothing is read from the device. `causal` is the op's: only
/// non-causal calls may see fewer keys than queries.
Result<int64_t> checkPagedMetadata(const Tensor &queryStartLoc,
                                   const Tensor &seqLens,
                                   const Tensor &blockTable, int64_t queryRows,
                                   int64_t numBlocks, int64_t blockSize,
                                   bool causal) {
  Result<CommonAttentionMetadata> md =
      checkPagedBatch(queryStartLoc, seqLens, blockTable, causal, queryRows,
                      numBlocks, blockSize);
  if (!md)
    return md.status();
  return md->numActualTokens;
}

/// The block count and block size of a paged cache in `layout`.
Result<std::pair<int64_t, int64_t>> pagedCacheBlocks(const DeviceTensor &cache,
                                                     KvCacheLayout layout) {
  Result<KvCacheGeometry> g =
      KvCacheGeometry::ofShape(cache.shape, layout, cache.describe());
  if (!g)
    return g.status();
  return std::pair<int64_t, int64_t>{g->numBlocks, g->blockSize};
}

/// Checks that `t` is [rows, trailing...] of `dtype`.
Status checkRows(const DeviceTensor &t, std::string_view name, int64_t rows,
                 const std::vector<int64_t> &trailing, DType dtype) {
  bool ok = t.rank() == static_cast<int64_t>(trailing.size()) + 1 &&
            t.dtype == dtype && t.dim(0) == rows;
  for (size_t i = 0; ok && i < trailing.size(); ++i)
    ok = t.dim(i + 1) == trailing[i];
  if (ok)
    return Status::ok();
  std::string want = "[" + std::to_string(rows);
  for (int64_t d : trailing)
    want += ", " + std::to_string(d);
  return errorf(name, " is ", t.describe(), ", expected ", want, "] ",
                toString(dtype));
}

/// The first `rows` rows of `t`, or all of it when it has no more.
DeviceTensor firstRows(const DeviceTensor &t, int64_t rows) {
  return t.rank() >= 1 && rows < t.dim(0) ? t.leadingRows(rows) : t;
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
  // The entries of the same op, closest first (fewest differing
  // parameters), each once: a bundle lists a variant per subgroup size.
  std::vector<std::pair<size_t, std::string>> sameOp;
  std::vector<std::string> all;
  std::set<std::string> seen;
  bool windowDiffers = false;
  for (const BundleVariant &v : bundle.variants) {
    all.push_back(v.name);
    auto it = v.parameters.find("op");
    if (it == v.parameters.end() || it->second != op)
      continue;
    std::vector<std::string> mismatches = query.mismatches(v.parameters);
    std::string differ;
    for (const std::string &d : mismatches) {
      differ += (differ.empty() ? "" : ", ") + d;
      windowDiffers |= d.starts_with("window_left=");
    }
    std::string entry = v.name + " (" + differ + ")";
    if (seen.insert(entry).second)
      sameOp.emplace_back(mismatches.size(), std::move(entry));
  }
  std::stable_sort(sameOp.begin(), sameOp.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  constexpr size_t kShown = 4;
  std::string have;
  for (size_t i = 0; i < std::min(sameOp.size(), kShown); ++i)
    have += (have.empty() ? "" : "; ") + sameOp[i].second;
  if (sameOp.size() > kShown)
    have += "; and " + std::to_string(sameOp.size() - kShown) + " more";
  if (sameOp.empty())
    have = "no " + op + " variant" +
           (all.empty() ? std::string() : ", only " + joinDistinct(all));
  return errorf("bundle ", bundle.directory, " has no ", op, " variant with ",
                wanted, " (it has: ", have,
                "); compile one with: attn-compile --variant ",
                query.describe(),
                windowDiffers ? " (window_left is vLLM's sliding_window - 1)"
                              : "");
}

/// The scales an fp8 `kvCache` needs (`names` of those in `scales`), none
/// for any other: given exactly when the cache is fp8.
using NamedScale = std::pair<const char *, const Tensor *>;
Status checkScales(const DeviceTensor &kvCache,
                   std::initializer_list<NamedScale> scales) {
  for (const auto &[name, scale] : scales) {
    if (isFp8(kvCache.dtype) && !scale)
      return errorf("kv cache ", kvCache.describe(), " is fp8 but no ", name,
                    " was given");
    if (!isFp8(kvCache.dtype) && scale)
      return errorf(name, " given for kv cache ", kvCache.describe(),
                    ", which is not fp8");
  }
  return Status::ok();
}

} // namespace

Result<const BundleVariant *> findVariant(const Bundle &bundle,
                                          const VariantQuery &query,
                                          std::string_view target,
                                          const SubgroupSizes &subgroups) {
  // Only the entries whose parameters match are read whole.
  std::vector<const BundleVariant *> matching;
  for (const BundleVariant &header : bundle.variants) {
    if (!query.matches(header.parameters))
      continue;
    Result<const BundleVariant *> v = bundle.entry(header);
    if (!v)
      return v.status();
    matching.push_back(*v);
  }
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
                               PlanDevice &device)
    : bundle_(std::move(bundle)), target_(std::move(target)), device_(device),
      name_(std::string(device.name()) + " (" + target_ + " bundle)") {}

Status BundleExecutor::load(const BundleVariant &variant,
                            const BundleKernel &kernel) {
  // A TT program is several files under one symbol, one per entry point; a
  // SPIR-V kernel may have two ABI forms under one symbol, told apart by
  // their launch facts.
  std::string key = kernel.symbol + '\0' + kernel.entryPoint + '\0' +
                    kernel.launchJson;
  auto it = loaded_.find(key);
  if (it != loaded_.end()) {
    if (it->second == kernel.hash)
      return Status::ok();
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has another kernel under the symbol ", kernel.symbol,
                  " than the one already loaded (hash ", kernel.hash,
                  ", loaded ", it->second, ")");
  }
  Result<std::string> bytes = bundle_.readKernel(kernel);
  if (!bytes && manifestChanged(bundle_))
    return errorf(bytes.message(), "; the bundle was rewritten since it was "
                                   "opened: open it again");
  if (!bytes)
    return bytes.status();
  Status s = device_.loadKernel(bundle_, kernel, *bytes);
  if (!s)
    return errorf("loading kernel ", kernel.symbol, " (", kernel.file,
                  ") of variant ", variant.name, " on ", device_.name(), ": ",
                  s.message());
  loaded_.emplace(std::move(key), kernel.hash);
  return Status::ok();
}

Status BundleExecutor::loadSymbol(const BundleVariant &variant,
                                  std::string_view symbol) {
  // Every kernel of the symbol the device runs; when it runs none, the
  // first, so that the device says why.
  const BundleKernel *first = nullptr;
  bool any = false;
  for (const BundleKernel &k : variant.kernels) {
    if (k.symbol != symbol || k.target != target_)
      continue;
    first = first ? first : &k;
    if (!device_.runsKernel(k))
      continue;
    any = true;
    ATTN_RETURN_IF_ERROR(load(variant, k));
  }
  if (!first)
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has no ", target_, " kernel for ", symbol);
  return any ? Status::ok() : load(variant, *first);
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

Status BundleExecutor::checkRunnable() {
  std::set<std::string> targets;
  bool runs = false;
  for (const BundleKernel &kind : bundle_.kernelKinds()) {
    targets.insert(kind.target);
    runs |= kind.target == target_ && device_.runsKernel(kind);
  }
  if (!targets.count(target_)) {
    std::string have;
    for (const std::string &t : targets)
      have += (have.empty() ? "" : ", ") + t;
    return errorf("bundle ", bundle_.directory, " has no kernels for target ",
                  target_, " (it has: ", have.empty() ? "none" : have, ")");
  }
  if (runs)
    return Status::ok();
  // None of the target's kernels runs here (a CPU bundle of another ISA
  // level): the first entry with the target's kernels has the device say
  // why.
  for (size_t i = 0; i < bundle_.variants.size(); ++i) {
    Result<const BundleVariant *> v = bundle_.entry(i);
    if (!v)
      return v.status();
    if (hasTarget(**v, target_))
      return checkEntryRunnable(**v);
  }
  return Status::ok();
}

Result<std::map<std::string, const BundleVariant *>>
BundleExecutor::runnableEntries() {
  ATTN_RETURN_IF_ERROR(checkRunnable());
  SubgroupSizes subgroups = device_.subgroupSizes();
  std::map<std::string, const BundleVariant *> chosen;
  for (size_t i = 0; i < bundle_.variants.size(); ++i) {
    Result<const BundleVariant *> v = bundle_.entry(i);
    if (!v)
      return v.status();
    if (!hasTarget(**v, target_))
      continue;
    const BundleVariant *&pick = chosen[(*v)->name];
    if ((*v)->subgroupSize == subgroups.native ||
        (!pick && subgroups.canRun((*v)->subgroupSize)))
      pick = *v;
  }
  return chosen;
}

Result<std::vector<const BundleVariant *>> BundleExecutor::checkAllRunnable() {
  Result<std::map<std::string, const BundleVariant *>> chosen =
      runnableEntries();
  if (!chosen)
    return chosen.status();
  SubgroupSizes subgroups = device_.subgroupSizes();
  std::vector<const BundleVariant *> entries;
  for (const auto &[name, entry] : *chosen) {
    if (!entry)
      return errorf(name_, ": bundle ", bundle_.directory, ": variant ", name,
                    " has no build for the device's subgroup size ",
                    subgroups.describe(), ": recompile with --subgroup-size=",
                    subgroups.native);
    ATTN_RETURN_IF_ERROR(checkEntryRunnable(*entry));
    entries.push_back(entry);
  }
  return entries;
}

Status BundleExecutor::checkEntryRunnable(const BundleVariant &entry) {
  // A symbol without a kernel the device runs (a CPU bundle of another ISA
  // level) fails now: loadSymbol loads one so that the device says why.
  // Otherwise nothing is read.
  std::map<std::string_view, bool> runs;
  for (const BundleKernel &k : entry.kernels)
    if (k.target == target_)
      runs[k.symbol] |= device_.runsKernel(k);
  for (const auto &[symbol, any] : runs)
    if (!any)
      ATTN_RETURN_IF_ERROR(loadSymbol(entry, symbol));
  return Status::ok();
}

Status BundleExecutor::loadEntry(const BundleVariant &entry) {
  std::set<std::string_view> symbols;
  for (const BundleKernel &k : entry.kernels)
    if (k.target == target_)
      symbols.insert(k.symbol);
  for (std::string_view symbol : symbols)
    ATTN_RETURN_IF_ERROR(loadSymbol(entry, symbol));
  return Status::ok();
}

Status BundleExecutor::loadAllKernels() {
  Result<std::vector<const BundleVariant *>> entries = checkAllRunnable();
  if (!entries)
    return entries.status();
  for (const BundleVariant *entry : *entries)
    ATTN_RETURN_IF_ERROR(loadEntry(*entry));
  return Status::ok();
}

Status BundleExecutor::prepare(const VariantQuery &call) {
  Result<const BundleVariant *> variant = select(call);
  if (!variant)
    return errorf(name_, ": ", variant.message());
  return loadEntry(**variant);
}

Result<DeviceTensor> BundleExecutor::stage(const Tensor &host) {
  Result<DeviceTensor> t = toDevice(device_, host);
  if (!t)
    return errorf(name_, ": ", t.message());
  return t;
}

Status BundleExecutor::stageAll(std::span<const Tensor *const> hosts,
                                std::vector<DeviceTensor> &args) {
  for (const Tensor *host : hosts) {
    if (!host)
      continue;
    Result<DeviceTensor> staged = stage(*host);
    if (!staged)
      return staged.status();
    args.push_back(std::move(*staged));
  }
  return Status::ok();
}

Result<std::vector<DeviceTensor>>
BundleExecutor::run(const BundleVariant &variant, std::string_view op,
                    std::span<const DeviceTensor> args) {
  const Plan *plan = variant.plan();
  if (!plan)
    return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                  " has no host plan");
  // Check the arguments before anything is launched.
  ATTN_RETURN_IF_ERROR(checkPlanInputs(*plan, args));
  for (const PlanOp &planOp : plan->ops) {
    if (planOp.kind != PlanOpKind::Launch)
      continue;
    if (!variant.findKernel(planOp.kernel, target_))
      return errorf("bundle ", bundle_.directory, ": variant ", variant.name,
                    " (", op, ") has no ", target_, " kernel for ",
                    planOp.kernel);
    ATTN_RETURN_IF_ERROR(loadSymbol(variant, planOp.kernel));
  }
  Result<std::vector<DeviceTensor>> results =
      runPlan(*plan, device_, args, &lastStats_);
  if (!results)
    return errorf(name_, ": ", results.message());
  return results;
}

Status BundleExecutor::deliver(const DeviceTensor &result,
                               const DeviceTensor &dst, std::string_view what) {
  // In place already (a cache the plan wrote).
  if (result.buffer == dst.buffer && result.offset == dst.offset)
    return Status::ok();
  if (result.dtype != dst.dtype || dst.rank() != result.rank() ||
      dst.rank() < 1 || dst.dim(0) < result.dim(0))
    return errorf(name_, ": ", what, " is ", dst.describe(),
                  ", the plan's result ", result.describe());
  for (int64_t i = 1; i < dst.rank(); ++i)
    if (dst.dim(i) != result.dim(i))
      return errorf(name_, ": ", what, " is ", dst.describe(),
                    ", the plan's result ", result.describe());
  return device_.copy(result.view(), dst.leadingRows(result.dim(0)).view());
}

Status BundleExecutor::deliverAttention(
    const std::vector<DeviceTensor> &results, const DeviceTensor &out,
    const DeviceTensor *lse) {
  if (results.size() != 2)
    return errorf(name_, ": the plan returned ", results.size(),
                  " results, expected (out, lse)");
  ATTN_RETURN_IF_ERROR(deliver(results[0], out, "out"));
  if (lse)
    ATTN_RETURN_IF_ERROR(deliver(results[1], *lse, "lse"));
  return Status::ok();
}

Status BundleExecutor::reshapeAndCache(const DeviceTensor &key,
                                       const DeviceTensor &value,
                                       const Tensor &slotMapping,
                                       KvCacheLayout layout,
                                       const DeviceTensor &kvCache,
                                       const KvCacheScales &kvScales) {
  ATTN_RETURN_IF_ERROR(checkScales(
      kvCache, {{"k_scale", kvScales.key}, {"v_scale", kvScales.value}}));
  Result<std::pair<int64_t, int64_t>> cache = pagedCacheBlocks(kvCache, layout);
  if (!cache)
    return cache.status();
  if (key.rank() != 3 || value.shape != key.shape)
    return errorf("key ", key.describe(), " and value ", value.describe(),
                  " must both be [T, G, D]");
  int64_t tokens = slotMapping.rank() == 1 ? slotMapping.dim(0) : -1;
  ATTN_RETURN_IF_ERROR(
      checkSlotMapping(slotMapping, tokens, cache->first, cache->second));
  if (key.dim(0) < tokens)
    return errorf("key has ", key.dim(0), " tokens but slot_mapping has ",
                  tokens);
  Result<const BundleVariant *> variant =
      select(reshapeAndCacheQuery(key, kvCache, layout, kvScales));
  if (!variant)
    return variant.status();
  const Tensor *scales[] = {kvScales.key, kvScales.value};
  return runCacheWrite(**variant, key, value, tokens, slotMapping, kvCache,
                       scales);
}

Status BundleExecutor::runCacheWrite(const BundleVariant &variant,
                                     const DeviceTensor &key,
                                     const DeviceTensor &value, int64_t tokens,
                                     const Tensor &slotMapping,
                                     const DeviceTensor &kvCache,
                                     std::span<const Tensor *const> scales) {
  Result<DeviceTensor> slots = stage(slotMapping);
  if (!slots)
    return slots.status();
  std::vector<DeviceTensor> args = {firstRows(key, tokens),
                                    firstRows(value, tokens), kvCache, *slots};
  ATTN_RETURN_IF_ERROR(stageAll(scales, args));
  Result<std::vector<DeviceTensor>> results =
      run(variant, "reshape_and_cache", args);
  if (!results)
    return results.status();
  if (results->size() != 1 || (*results)[0].shape != kvCache.shape ||
      (*results)[0].dtype != kvCache.dtype)
    return errorf(name_, ": @reshape_and_cache of variant ", variant.name,
                  " did not return the cache");
  return deliver((*results)[0], kvCache, "kv_cache");
}

Status BundleExecutor::concatAndCacheMla(const DeviceTensor &kvC,
                                         const DeviceTensor &kPe,
                                         const Tensor &slotMapping,
                                         const DeviceTensor &kvCache,
                                         const Tensor *kvScale) {
  ATTN_RETURN_IF_ERROR(checkScales(kvCache, {{"k_scale", kvScale}}));
  if (kvCache.rank() != 3 || kvC.rank() != 2 || kPe.rank() != 2 ||
      kPe.dim(0) != kvC.dim(0) || kvC.dim(1) + kPe.dim(1) != kvCache.dim(2))
    return errorf("kv_c ", kvC.describe(), ", k_pe ", kPe.describe(),
                  " and kv cache ", kvCache.describe(),
                  " must be [T, L], [T, P] and [num_blocks, B, L + P]");
  if (kPe.dtype != kvC.dtype ||
      (kvC.dtype != kvCache.dtype && !isFp8(kvCache.dtype)))
    return errorf("kv_c ", kvC.describe(), " and k_pe ", kPe.describe(),
                  " must have the kv cache's dtype (", kvCache.describe(),
                  "), or one dtype beside an fp8 cache");
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
  return runCacheWrite(**variant, kvC, kPe, tokens, slotMapping, kvCache,
                       {&kvScale, 1});
}

Status BundleExecutor::pagedAttention(
    const DeviceTensor &query, const DeviceTensor &kvCache,
    const Tensor &queryStartLoc, const Tensor &seqLens,
    const Tensor &blockTable, const PagedAttentionParams &params,
    const DeviceTensor &out, const DeviceTensor *lse) {
  ATTN_RETURN_IF_ERROR(
      checkScales(kvCache, {{"k_scale", params.kvScales.key},
                            {"v_scale", params.kvScales.value}}));
  Result<std::pair<int64_t, int64_t>> cache =
      pagedCacheBlocks(kvCache, params.layout);
  if (!cache)
    return cache.status();
  if (query.rank() != 3)
    return errorf("query is ", query.describe(), ", expected [T, H, D]");
  Result<int64_t> tokens =
      checkPagedMetadata(queryStartLoc, seqLens, blockTable, query.dim(0),
                         cache->first, cache->second, params.causal);
  if (!tokens)
    return tokens.status();
  Result<const BundleVariant *> variant =
      select(pagedAttentionQuery(query, kvCache, params));
  if (!variant)
    return variant.status();

  // The variant's arguments: query, cache, metadata, the optional per-head
  // tensors, an fp8 cache's scales (attn-compile --variant's order).
  std::vector<DeviceTensor> args = {firstRows(query, *tokens), kvCache};
  const Tensor *hosts[] = {&blockTable,          &seqLens,
                           &queryStartLoc,       params.alibiSlopes,
                           params.sinks,         params.kvScales.key,
                           params.kvScales.value};
  ATTN_RETURN_IF_ERROR(stageAll(hosts, args));
  Result<std::vector<DeviceTensor>> results =
      run(**variant, "paged_attention", args);
  if (!results)
    return results.status();
  return deliverAttention(*results, out, lse);
}

Status BundleExecutor::mlaDecode(const DeviceTensor &q,
                                 const DeviceTensor &kvCache,
                                 const Tensor &blockTable,
                                 const Tensor &seqLens,
                                 const MlaDecodeParams &params,
                                 const DeviceTensor &out,
                                 const DeviceTensor *lse) {
  ATTN_RETURN_IF_ERROR(checkScales(kvCache, {{"k_scale", params.kvScale}}));
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
                         kvCache.dim(0), kvCache.dim(1), /*causal=*/true);
  if (!tokens)
    return tokens.status();
  if (q.dim(0) != numReqs)
    return errorf("q has ", q.dim(0), " rows for ", numReqs, " requests");
  Result<const BundleVariant *> variant =
      select(mlaDecodeQuery(q, kvCache, params));
  if (!variant)
    return variant.status();

  Result<DeviceTensor> table = stage(blockTable);
  if (!table)
    return table.status();
  Result<DeviceTensor> lens = stage(seqLens);
  if (!lens)
    return lens.status();
  std::vector<DeviceTensor> args = {q, kvCache, *table, *lens};
  ATTN_RETURN_IF_ERROR(stageAll({&params.kvScale, 1}, args));
  Result<std::vector<DeviceTensor>> results = run(**variant, "mla_decode", args);
  if (!results)
    return results.status();
  return deliverAttention(*results, out, lse);
}

Status BundleExecutor::mergeStates(const DeviceTensor &outA,
                                   const DeviceTensor &lseA,
                                   const DeviceTensor &outB,
                                   const DeviceTensor &lseB,
                                   const DeviceTensor &out,
                                   const DeviceTensor *lse) {
  if (outA.rank() != 3)
    return errorf("out_a is ", outA.describe(), ", expected [N, H, D]");
  int64_t rows = outA.dim(0), heads = outA.dim(1);
  ATTN_RETURN_IF_ERROR(
      checkRows(outB, "out_b", rows, {heads, outA.dim(2)}, outA.dtype));
  ATTN_RETURN_IF_ERROR(checkRows(lseA, "lse_a", rows, {heads}, DType::F32));
  ATTN_RETURN_IF_ERROR(checkRows(lseB, "lse_b", rows, {heads}, DType::F32));
  Result<const BundleVariant *> variant = select(mergeStatesQuery(outA));
  if (!variant)
    return variant.status();

  std::vector<DeviceTensor> args = {outA, lseA, outB, lseB};
  Result<std::vector<DeviceTensor>> results =
      run(**variant, "merge_states", args);
  if (!results)
    return results.status();
  return deliverAttention(*results, out, lse);
}

} // namespace attn::runtime
