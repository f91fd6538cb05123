//===- Session.cpp - One device, its bundles and its layers ---------------===//

#include "runtime/host/Session.h"

#include "core/Target.h"
#include "runtime/executor/CpuExecutor.h"

namespace attn::runtime {

std::string_view bundleTarget(DeviceType device) {
  switch (device) {
  case DeviceType::CPU:
    return toString(Target::CPU);
  case DeviceType::CUDA:
    return toString(Target::PTX);
  case DeviceType::VULKAN:
    return toString(Target::SPIRV);
  case DeviceType::METAL:
    return toString(Target::MSL);
  case DeviceType::TENSTORRENT:
    return toString(Target::TT);
  }
  return "";
}

namespace {

/// An executor of the bundle at `dir` on `device`, its manifest read
/// (openManifest: each entry's plan and kernel records are read when a
/// layer selects it) and checked to have the device's target; no kernel
/// file is read until a layer needs it (createLayer). The manifest's
/// signature is checked against `trust` first.
Result<std::unique_ptr<BundleExecutor>>
openExecutor(const std::string &dir, std::string_view target,
             PlanDevice &device, const BundleTrust &trust) {
  Result<Bundle> bundle = openManifest(dir, trust);
  if (!bundle)
    return bundle.status();
  auto executor = std::make_unique<BundleExecutor>(
      std::move(*bundle), std::string(target), device);
  ATTN_RETURN_IF_ERROR(executor->checkRunnable());
  return executor;
}

} // namespace

Result<std::unique_ptr<Session>>
Session::open(DeviceType type, std::unique_ptr<PlanDevice> device,
              const std::vector<std::string> &bundleDirs,
              const BundleTrust &trust) {
  if (!device)
    return Status::error("Session::open: no device");
  std::unique_ptr<Session> session(new Session());
  session->type_ = type;
  session->shared_->device = std::move(device);
  if (type == DeviceType::CPU && bundleDirs.empty()) {
    // Without bundles the CPU runs the reference ops, which read and write
    // the tensors in place.
    if (session->device().memorySpace() != MemorySpace::Host)
      return errorf("a cpu session needs a device with host memory, got ",
                    session->device().name());
    session->shared_->executors.push_back(
        std::make_unique<CpuExecutor>(session->device()));
    return session;
  }
  if (bundleDirs.empty())
    return errorf("a ", toString(type),
                  " session needs a bundle (attn-compile --targets=",
                  bundleTarget(type), ")");
  for (const std::string &dir : bundleDirs) {
    Result<std::unique_ptr<BundleExecutor>> executor =
        openExecutor(dir, bundleTarget(type), session->device(), trust);
    if (!executor)
      return executor.status();
    session->shared_->executors.push_back(std::move(*executor));
  }
  return session;
}

Result<std::unique_ptr<SessionLayer>>
Session::createLayer(const AttentionLayer &layer, const KvCacheSpec &cache,
                     int64_t numBlocks, const BuilderConfig &config) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex());
  auto result = std::make_unique<SessionLayer>();
  result->session = shared_;
  result->config = layer;
  result->cacheSpec = cache;
  if (layer.kvCacheDtype != cache.kvCacheDtype)
    return errorf("layer '", layer.name, "' has kv cache dtype '",
                  layer.kvCacheDtype, "' but its cache spec has '",
                  cache.kvCacheDtype, "'");
  SelectionRequest request;
  request.headSize = layer.headSize;
  request.dtype = layer.dtype;
  request.kvCacheDtype = cache.kvCacheDtype;
  request.blockSize = cache.blockSize;
  request.useMla = layer.kvLoraRank > 0;
  request.hasSinks = !layer.sinks.empty();
  request.useSlidingWindow = layer.slidingWindow.has_value();
  request.useAlibi = !layer.alibiSlopes.empty();
  request.attnType = layer.attnType;
  request.usePerHeadQuantScales = !layer.kHeadScales.empty();
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(type_, request);
  if (!backend)
    return backend.status();
  result->backend = std::move(*backend);

  // The first executor (bundle) that serves every call of the impl.
  Status firstError;
  for (const std::unique_ptr<KernelExecutor> &executor : shared_->executors) {
    Result<std::unique_ptr<AttentionImpl>> impl =
        result->backend->getImpl(layer, *executor, &cache);
    if (impl) {
      result->impl = std::move(*impl);
      result->executor = executor.get();
      result->bundle = executor->servingBundle();
      break;
    }
    if (firstError.isOk())
      firstError = impl.status();
  }
  if (!result->impl)
    return firstError;
  // The layer's kernels go on the device now, once per device (an executor
  // loads a kernel once), and only those of the variants it uses.
  for (const VariantQuery &call : result->impl->calls(layer, cache))
    ATTN_RETURN_IF_ERROR(result->executor->prepare(call));

  BuilderConfig onDevice = config;
  // Only compiled kernels are recorded: the reference ops (no bundle) run
  // on the host.
  onDevice.deviceRecords =
      device().canRecord() && result->executor->servingBundle() != nullptr;
  Result<std::unique_ptr<AttentionMetadataBuilder>> builder =
      result->backend->getBuilder(cache, {layer.name}, onDevice);
  if (!builder)
    return builder.status();
  result->builder = std::move(*builder);
  // vLLM builds a cross-attention layer's metadata from encoder_seq_lens.
  if (layer.attnType == AttentionType::EncoderDecoder)
    result->builder = std::make_unique<CrossAttentionMetadataBuilder>(
        std::move(result->builder));
  Result<std::vector<int64_t>> shape = result->backend->getKvCacheShape(
      numBlocks, cache.blockSize, cache.numKvHeads, cache.headSize,
      cache.kvCacheDtype);
  if (!shape)
    return shape.status();
  Result<DType> cacheDtype = kvCacheElementType(cache.kvCacheDtype, layer.dtype);
  if (!cacheDtype)
    return cacheDtype.status();
  Result<DeviceTensor> kvCache = allocate(*cacheDtype, *shape);
  if (!kvCache)
    return kvCache.status();
  result->kvCache = std::move(*kvCache);
  return result;
}

} // namespace attn::runtime
