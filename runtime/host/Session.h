//===- Session.h - One device, its bundles and its layers ------*- C++ -*-===//
//
// What a serving engine opens once per device, so that it never wires
// devices, bundles, executors and kernels together itself:
//
//   auto session = Session::open(DeviceType::VULKAN,
//                                VulkanPlanDevice::create().value(),
//                                {"llama.attnb"}).value();
//   auto layer = session->createLayer(config, cacheSpec, numBlocks).value();
//   // every step, for every layer:
//   auto md = layer->builder->build(0, commonMetadata).value();
//   layer->impl->forward(config, q, k, v, layer->kvCache, *md, out);
//   session->synchronize();
//
// openDevice (devices/Devices.h) opens the device of a type for it. A
// device runs the kernels of the session's bundles (for the device type's
// target: cpu for the CPU, spirv for Vulkan, ptx for CUDA, msl for Metal, tt
// for Tenstorrent). Opening reads each bundle's manifest, checks its
// signature against the keys the engine trusts (BundleTrust, when given),
// and checks it against the device; a layer's kernels are read, checked
// against their hashes and created on the device when the layer is created, once per
// device, so start-up costs what the engine's layers use, not the bundle's
// size. A CPU session without bundles runs the reference ops instead. A
// layer gets the first bundle that serves every call its impl makes; when
// none does, the error names the variant to compile.
//
// Threads and lifetimes. A session and its layers may be used from several
// threads (one per layer group or stream, say): each forward, createLayer,
// allocate, synchronize and recorded step runs whole, holding the device's
// lock (PlanDevice::mutex), so calls from several threads run one after
// another in some order, never interleaved. A layer's metadata builder
// keeps state from one build to the next and is used by one thread at a
// time. A layer keeps the session's device and executors alive, so it may
// outlive its Session object; device tensors must not outlive the layers
// and sessions of their device.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_SESSION_SESSION_H
#define ATTN_RUNTIME_SESSION_SESSION_H

#include "runtime/host/Backend.h"
#include "runtime/executor/BundleExecutor.h"
#include "runtime/device/Device.h"
#include "runtime/host/Registry.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::runtime {

/// The bundle target a device type runs: "cpu", "spirv", "ptx", "msl", "tt".
std::string_view bundleTarget(DeviceType device);

/// One attention layer served by a session.
struct SessionLayer {
  /// The session's device and executors, kept as long as the layer: a
  /// layer may outlive its Session object. First, so that it goes last,
  /// after the cache on the device.
  std::shared_ptr<const void> session;
  AttentionLayer config;
  KvCacheSpec cacheSpec;
  std::unique_ptr<AttentionBackend> backend;
  std::unique_ptr<AttentionImpl> impl;
  std::unique_ptr<AttentionMetadataBuilder> builder;
  /// In the backend's shape, on the session's device, zero-filled.
  DeviceTensor kvCache;
  /// What serves the layer's calls (owned by the session).
  KernelExecutor *executor = nullptr;
  /// The bundle whose kernels serve it; null when the reference ops do.
  const Bundle *bundle = nullptr;
};

class Session {
public:
  /// A session on `device` (kept) of type `type`, serving from the bundles
  /// at `bundleDirs`. Each bundle's manifest is read and checked now (the
  /// device runs its target and subgroup size); kernels wait for the layers
  /// that use them. On the CPU, no bundles means the reference ops
  /// (on any device with host memory); other devices need one. Each
  /// manifest's signature is checked against `trust` before anything else
  /// of the bundle is read: a bundle it refuses fails the open, and no
  /// kernel of it is ever read or loaded.
  static Result<std::unique_ptr<Session>>
  open(DeviceType type, std::unique_ptr<PlanDevice> device,
       const std::vector<std::string> &bundleDirs = {},
       const BundleTrust &trust = {});

  DeviceType deviceType() const { return type_; }
  PlanDevice &device() { return *shared_->device; }

  /// A layer: its backend from the global registry (the first that accepts
  /// it on this device type), an impl checked against the executors, the
  /// kernels of the variants its calls use (created on the device unless an
  /// earlier layer did), its metadata builder, and its kv cache of
  /// `numBlocks` blocks.
  Result<std::unique_ptr<SessionLayer>>
  createLayer(const AttentionLayer &layer, const KvCacheSpec &cache,
              int64_t numBlocks, const BuilderConfig &config = {});

  /// A zero-filled tensor on the device.
  Result<DeviceTensor> allocate(DType dtype, std::vector<int64_t> shape) {
    std::lock_guard<std::recursive_mutex> lock(device().mutex());
    return allocateTensor(device(), dtype, std::move(shape));
  }
  /// Waits for everything enqueued on the device.
  Status synchronize() {
    std::lock_guard<std::recursive_mutex> lock(device().mutex());
    return device().synchronize();
  }

private:
  Session() = default;

  DeviceType type_ = DeviceType::CPU;
  /// What the session's layers share with it (SessionLayer::session).
  struct Shared {
    std::unique_ptr<PlanDevice> device;
    /// One per bundle; without bundles on the CPU, the CPU executor alone.
    /// After the device, so that they go first.
    std::vector<std::unique_ptr<KernelExecutor>> executors;
  };
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_SESSION_SESSION_H
