//===- Engine.cpp - The engine side of the serving example ----------------===//

#include "Engine.h"

#include <algorithm>
#include <optional>

namespace attn::example {

using namespace attn::runtime;

Result<std::unique_ptr<Engine>>
Engine::open(DeviceType device, const std::vector<std::string> &bundles,
             const std::vector<AttentionLayer> &models, int64_t numBlocks,
             int64_t blockSize) {
  // The device and every bundle's kernels for it, loaded and checked once.
  Result<std::unique_ptr<Session>> session =
      devices::openSession(device, bundles);
  if (!session)
    return session.status();
  auto engine = std::unique_ptr<Engine>(new Engine);
  engine->session_ = std::move(*session);
  for (const AttentionLayer &model : models) {
    // A missing variant fails here, naming the attn-compile --variant.
    KvCacheSpec spec{blockSize, model.numKvHeads, model.headSize, model.dtype,
                     model.kvCacheDtype};
    Result<std::unique_ptr<SessionLayer>> layer =
        engine->session_->createLayer(model, spec, numBlocks);
    if (!layer)
      return layer.status();
    engine->layers_.push_back(std::move(*layer));
  }
  return engine;
}

Result<CommonAttentionMetadata> Engine::metadata(const Batch &batch) {
  StepInputs inputs;
  inputs.queryStartLoc = {0};
  size_t cols = 0;
  for (size_t r = 0; r < batch.queryLens.size(); ++r) {
    inputs.queryStartLoc.push_back(
        static_cast<int32_t>(inputs.queryStartLoc.back() + batch.queryLens[r]));
    inputs.seqLens.push_back(
        static_cast<int32_t>(batch.computed[r] + batch.queryLens[r]));
    cols = std::max(cols, batch.blocks[r].size());
  }
  inputs.slotMapping = {batch.slots};
  std::vector<int32_t> blockTable(batch.blocks.size() * cols, 0);
  for (size_t r = 0; r < batch.blocks.size(); ++r)
    std::copy(batch.blocks[r].begin(), batch.blocks[r].end(),
              blockTable.begin() + r * cols);
  return makeCommonAttentionMetadata(inputs, blockTable,
                                     static_cast<int32_t>(cols));
}

Status Engine::forward(size_t model, const CommonAttentionMetadata &metadata,
                       const DeviceTensor &query, const DeviceTensor &key,
                       const DeviceTensor &value, const DeviceTensor &out) {
  SessionLayer &l = *layers_[model];
  Result<std::unique_ptr<AttentionMetadata>> md =
      l.builder->build(/*commonPrefixLen=*/0, metadata);
  if (!md)
    return md.status();
  return l.impl->forward(l.config, query, key, value, l.kvCache, **md, out);
}

Status Engine::writeLatents(size_t model, const DeviceTensor &kvC,
                            const DeviceTensor &kPe,
                            const std::vector<int64_t> &slots) {
  SessionLayer &l = *layers_[model];
  // An fp8 latent cache stores fp8(x / k_scale), as the layer's forward
  // would write it.
  std::optional<Tensor> kScale = layerScale(l.config, l.config.kScale);
  return l.executor->concatAndCacheMla(kvC, kPe, toTensor(slots), l.kvCache,
                                       kScale ? &*kScale : nullptr);
}

} // namespace attn::example
