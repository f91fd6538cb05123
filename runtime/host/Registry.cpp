//===- Registry.cpp - Attention backends by device type and name ----------===//

#include "runtime/host/Registry.h"

#include "runtime/host/FlashAttention.h"
#include "runtime/host/TritonMla.h"

#include <algorithm>
#include <sstream>

namespace attn::runtime {

namespace {

constexpr DeviceType kAllDevices[] = {DeviceType::CPU, DeviceType::CUDA,
                                      DeviceType::VULKAN, DeviceType::METAL,
                                      DeviceType::TENSTORRENT};

std::string describe(const SelectionRequest &request) {
  std::ostringstream os;
  os << "head_size=" << request.headSize
     << ", dtype=" << toString(request.dtype)
     << ", kv_cache_dtype=" << request.kvCacheDtype
     << ", block_size=" << request.blockSize
     << ", use_mla=" << (request.useMla ? "true" : "false");
  if (request.hasSinks)
    os << ", sinks";
  if (request.useSlidingWindow)
    os << ", sliding window";
  if (request.useAlibi)
    os << ", alibi";
  if (request.usePerHeadQuantScales)
    os << ", per-head quant scales";
  return os.str();
}

} // namespace

std::string_view toString(DeviceType device) {
  switch (device) {
  case DeviceType::CPU:
    return "cpu";
  case DeviceType::CUDA:
    return "cuda";
  case DeviceType::VULKAN:
    return "vulkan";
  case DeviceType::METAL:
    return "metal";
  case DeviceType::TENSTORRENT:
    return "tenstorrent";
  }
  return "?";
}

std::optional<DeviceType> parseDeviceType(std::string_view name) {
  for (DeviceType device : kAllDevices)
    if (toString(device) == name)
      return device;
  return std::nullopt;
}

std::vector<std::string> defaultBackendPriority(DeviceType) {
  // Every device family reads FLASH_ATTN's NHD cache with its own paged
  // attention kernels, and has both of TRITON_MLA's ops (the latent cache
  // write and the decode); use_mla picks TRITON_MLA.
  return {std::string(FlashAttentionBackend::kName),
          std::string(TritonMlaBackend::kName)};
}

BackendRegistry::BackendRegistry() {
  for (DeviceType device : kAllDevices)
    priority_[device] = defaultBackendPriority(device);
}

BackendRegistry &BackendRegistry::global() {
  // Built on first use, so registrars in other units find it ready whatever
  // the order of static initialization; never destroyed, so it outlives
  // anything that uses it during static destruction.
  static BackendRegistry *registry = [] {
    auto *r = new BackendRegistry();
    Status s = registerBuiltinBackends(*r);
    (void)s; // A fresh registry has no name to collide with.
    return r;
  }();
  return *registry;
}

Status BackendRegistry::registerBackend(DeviceType device, std::string name,
                                        AttentionBackendFactory factory) {
  if (!factory)
    return errorf("backend '", name, "' for ", toString(device),
                  " has no factory");
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(device, name);
  if (factories_.count(key))
    return errorf("backend '", name, "' is already registered for ",
                  toString(device));
  factories_.emplace(std::move(key), std::move(factory));
  return Status::ok();
}

bool BackendRegistry::isRegistered(DeviceType device,
                                   std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return factories_.count({device, std::string(name)}) != 0;
}

std::vector<std::string>
BackendRegistry::registeredNames(DeviceType device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto &[key, factory] : factories_)
    if (key.first == device)
      names.push_back(key.second);
  return names; // std::map keeps them sorted.
}

Result<std::unique_ptr<AttentionBackend>>
BackendRegistry::create(DeviceType device, std::string_view name) const {
  AttentionBackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = factories_.find({device, std::string(name)});
    if (it == factories_.end())
      return errorf("backend '", name, "' is not registered for ",
                    toString(device));
    factory = it->second;
  }
  std::unique_ptr<AttentionBackend> backend = factory();
  if (!backend)
    return errorf("the factory of backend '", name, "' for ", toString(device),
                  " returned nothing");
  return backend;
}

void BackendRegistry::setPriority(DeviceType device,
                                  std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(mutex_);
  priority_[device] = std::move(names);
}

std::vector<std::string> BackendRegistry::priority(DeviceType device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = priority_.find(device);
  return it == priority_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> BackendRegistry::candidates(DeviceType device) const {
  std::vector<std::string> names = priority(device);
  for (std::string &name : registeredNames(device))
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  return names;
}

/// Why `device` has no kernels for a cache of vLLM's `kvCacheDtype`, or
/// nothing when it has. Every device but Tenstorrent runs fp8 caches (the
/// GPU kernels, when a bundle has the variant; the reference on the CPU).
static std::optional<std::string> missingCacheKernels(DeviceType device,
                                                      std::string_view
                                                          kvCacheDtype) {
  Result<DType> element = kvCacheElementType(kvCacheDtype, DType::F32);
  if (!element || !isFp8(*element) || device != DeviceType::TENSTORRENT)
    return std::nullopt; // an unknown name is each backend's to refuse
  return "TT-Metalium has no fp8 data format (Bfp8_b and Bfp4_b are block "
         "floats sharing one exponent per 16 values)";
}

Result<std::unique_ptr<AttentionBackend>>
BackendRegistry::selectBackend(DeviceType device,
                               const SelectionRequest &request) const {
  if (std::optional<std::string> why =
          missingCacheKernels(device, request.kvCacheDtype))
    return errorf("no attention backend for ", toString(device), " accepts ",
                  describe(request), ": kv cache dtype '",
                  request.kvCacheDtype, "': ", *why);
  std::vector<std::string> names =
      request.backendName ? std::vector<std::string>{*request.backendName}
                          : candidates(device);
  std::vector<std::string> rejections;
  for (const std::string &name : names) {
    Result<std::unique_ptr<AttentionBackend>> backend = create(device, name);
    if (!backend) {
      rejections.push_back(name + ": not registered for " +
                           std::string(toString(device)));
      continue;
    }
    std::vector<std::string> reasons =
        (*backend)->validateConfiguration(request);
    if (reasons.empty())
      return backend;
    std::string line = name + ": ";
    for (size_t i = 0; i < reasons.size(); ++i)
      line += (i ? ", " : "") + reasons[i];
    rejections.push_back(std::move(line));
  }
  std::ostringstream os;
  os << "no attention backend for " << toString(device) << " accepts "
     << describe(request);
  if (rejections.empty())
    os << ": no backend is registered";
  for (size_t i = 0; i < rejections.size(); ++i)
    os << (i ? "; " : ": ") << rejections[i];
  return Status::error(os.str());
}

Status registerBuiltinBackends(BackendRegistry &registry) {
  AttentionBackendFactory flashAttention = [] {
    return std::unique_ptr<AttentionBackend>(
        std::make_unique<FlashAttentionBackend>());
  };
  // FLASH_ATTN's backend is host metadata only (shape, builder, impl); every
  // device's paged attention kernels read its NHD layout, so it is
  // registered for all of them and the priority lists decide.
  AttentionBackendFactory tritonMla = [] {
    return std::unique_ptr<AttentionBackend>(
        std::make_unique<TritonMlaBackend>());
  };
  for (DeviceType device : kAllDevices) {
    ATTN_RETURN_IF_ERROR(registry.registerBackend(
        device, std::string(FlashAttentionBackend::kName), flashAttention));
    // Upstream registers TRITON_MLA for CUDA only, the one device it has an
    // MLA kernel for; attn has them on every device.
    ATTN_RETURN_IF_ERROR(registry.registerBackend(
        device, std::string(TritonMlaBackend::kName), tritonMla));
  }
  return Status::ok();
}

Result<std::unique_ptr<AttentionBackend>>
selectBackend(DeviceType device, const SelectionRequest &request) {
  return BackendRegistry::global().selectBackend(device, request);
}

AttentionBackendRegistrar::AttentionBackendRegistrar(
    DeviceType device, std::string_view name, AttentionBackendFactory factory,
    BackendRegistry &registry)
    : status_(registry.registerBackend(device, std::string(name),
                                       std::move(factory))) {}

} // namespace attn::runtime
