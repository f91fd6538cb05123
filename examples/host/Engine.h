//===- Engine.h - The engine side of the serving example -------*- C++ -*-===//
//
// All that a serving engine writes against attn's runtime: a session on a
// device with the bundles the deployment compiled, a layer per model (its
// backend from the registry, an impl checked against the bundles, the KV
// cache on the device), and each step the scheduler's batch as metadata
// and one forward on device tensors. HostExample.cpp around it is a test
// harness: a scheduler, the models' activations, and a second engine on the
// CPU to compare every step with.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_EXAMPLES_HOST_ENGINE_H
#define ATTN_EXAMPLES_HOST_ENGINE_H

#include "runtime/host/Metadata.h"
#include "devices/Devices.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::example {

/// One step's batch of one model, as the scheduler made it.
struct Batch {
  /// Per request: this step's tokens and the tokens cached before them.
  std::vector<int64_t> queryLens, computed;
  /// Per request: its cache blocks, in order.
  std::vector<std::vector<int32_t>> blocks;
  /// The cache slot of every new token, in batch order.
  std::vector<int64_t> slots;
};

class Engine {
public:
  /// Opens `device` with `bundles` and a layer per model, each with a cache
  /// of `numBlocks` blocks of `blockSize` tokens.
  static Result<std::unique_ptr<Engine>>
  open(runtime::DeviceType device, const std::vector<std::string> &bundles,
       const std::vector<runtime::AttentionLayer> &models, int64_t numBlocks,
       int64_t blockSize);

  runtime::PlanDevice &device() { return session_->device(); }
  runtime::SessionLayer &layer(size_t model) { return *layers_[model]; }

  /// The model runner's metadata for `batch` (vLLM's
  /// CommonAttentionMetadata).
  static Result<runtime::CommonAttentionMetadata> metadata(const Batch &batch);

  /// One forward of `model`'s layer: writes the new tokens' key and value
  /// into its cache and attends. `out` is [T, H, value width] on the device.
  Status forward(size_t model,
                 const runtime::CommonAttentionMetadata &metadata,
                 const runtime::DeviceTensor &query,
                 const runtime::DeviceTensor &key,
                 const runtime::DeviceTensor &value,
                 const runtime::DeviceTensor &out);

  /// MLA prompts reach the latent cache through the cache write alone
  /// (TRITON_MLA decodes only): kv_c [T, L] and k_pe [T, P] at `slots`.
  Status writeLatents(size_t model, const runtime::DeviceTensor &kvC,
                      const runtime::DeviceTensor &kPe,
                      const std::vector<int64_t> &slots);

private:
  std::unique_ptr<runtime::Session> session_;
  std::vector<std::unique_ptr<runtime::SessionLayer>> layers_;
};

} // namespace attn::example

#endif // ATTN_EXAMPLES_HOST_ENGINE_H
