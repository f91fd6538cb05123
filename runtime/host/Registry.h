//===- Registry.h - Attention backends by device type and name ------------===//
//
// Backends are registered per (device type, backend name) with a factory,
// and each device type has a priority list. Selection walks the device's
// candidates in order and returns the first backend whose
// validateConfiguration accepts the request; when none does, the error lists
// every candidate with every reason it was rejected.
//
// Registration. The built-in backends (FLASH_ATTN on every device type,
// TRITON_MLA on every device type with MLA kernels: all but Tenstorrent,
// whose lowering has no latent cache write) are registered by registerBuiltinBackends(), which
// BackendRegistry::global() calls on first use. We do not rely on static
// registrar objects for them: a registrar is a global in a translation unit
// nothing else references, and a linker pulling objects out of the static
// libAttnRuntime.a drops such a unit, and its registration with it, unless
// every consumer links with --whole-archive. An explicit call cannot be
// dropped, and a function-local static also fixes the initialization order
// against registrars in other units.
//
// AttentionBackendRegistrar remains for backends outside this library (an
// executor library registering its own backend): it works wherever its
// translation unit is certainly linked, i.e. an object file, a shared
// library, or an archive linked whole.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_REGISTRY_H
#define ATTN_RUNTIME_REGISTRY_H

#include "core/Status.h"
#include "runtime/host/Backend.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::runtime {

enum class DeviceType { CPU, CUDA, VULKAN, METAL, TENSTORRENT };

/// "cpu", "cuda", "vulkan", "metal", "tenstorrent".
std::string_view toString(DeviceType device);
/// The inverse of toString (case-sensitive).
std::optional<DeviceType> parseDeviceType(std::string_view name);

using AttentionBackendFactory =
    std::function<std::unique_ptr<AttentionBackend>()>;

/// The built-in priority of `device`'s backends: the order selection tries
/// them in. MLA and non-MLA backends share one list; use_mla filters.
std::vector<std::string> defaultBackendPriority(DeviceType device);

class BackendRegistry {
public:
  /// An empty registry with the default priorities and no backends.
  BackendRegistry();

  /// The process-wide registry, holding the built-in backends.
  static BackendRegistry &global();

  /// Registers `factory` as `name` for `device`. Registering a name twice
  /// for one device is an error.
  Status registerBackend(DeviceType device, std::string name,
                         AttentionBackendFactory factory);

  bool isRegistered(DeviceType device, std::string_view name) const;
  /// Names registered for `device`, sorted.
  std::vector<std::string> registeredNames(DeviceType device) const;

  /// A new instance of backend `name` for `device`.
  Result<std::unique_ptr<AttentionBackend>> create(DeviceType device,
                                                   std::string_view name) const;

  /// Replaces `device`'s priority list.
  void setPriority(DeviceType device, std::vector<std::string> names);
  std::vector<std::string> priority(DeviceType device) const;

  /// The candidates of `device` in the order selection tries them: the
  /// priority list, then registered backends missing from it, by name.
  std::vector<std::string> candidates(DeviceType device) const;

  /// The first candidate of `device` that accepts `request` (only
  /// request.backendName when set), or an error naming every candidate and
  /// why it was rejected.
  Result<std::unique_ptr<AttentionBackend>>
  selectBackend(DeviceType device, const SelectionRequest &request) const;

private:
  mutable std::mutex mutex_;
  std::map<std::pair<DeviceType, std::string>, AttentionBackendFactory>
      factories_;
  std::map<DeviceType, std::vector<std::string>> priority_;
};

/// Registers the backends this library defines into `registry`.
Status registerBuiltinBackends(BackendRegistry &registry);

/// selectBackend on the global registry.
Result<std::unique_ptr<AttentionBackend>>
selectBackend(DeviceType device, const SelectionRequest &request);

/// Registers a backend when constructed, typically as a namespace-scope
/// constant (see the file comment for when that is reliable). The outcome is
/// kept in status(), since a constructor cannot return it.
class AttentionBackendRegistrar {
public:
  AttentionBackendRegistrar(
      DeviceType device, std::string_view name, AttentionBackendFactory factory,
      BackendRegistry &registry = BackendRegistry::global());

  const Status &status() const { return status_; }

private:
  Status status_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_REGISTRY_H
