//===- KvCache.cpp - Where a token's key and value live in a paged cache --===//
#include "core/KvCache.h"

#include "core/TensorCheck.h"

#include <cmath>

namespace attn {

std::string_view toString(KvLayout layout) {
  return layout == KvLayout::NHD ? "nhd" : "hnd";
}

std::optional<KvLayout> parseKvLayout(std::string_view s) {
  if (s == "nhd")
    return KvLayout::NHD;
  if (s == "hnd")
    return KvLayout::HND;
  return std::nullopt;
}

Result<KvCacheGeometry> KvCacheGeometry::of(const Tensor &cache,
                                            KvLayout layout) {
  ATTN_RETURN_IF_ERROR(checkRankAndDType(
      cache, "kv_cache", 5,
      {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}));
  ATTN_RETURN_IF_ERROR(checkDim(cache, "kv_cache", 1, 2, "key and value"));
  return ofShape(cache.shape(), layout, cache.describe());
}

Result<KvCacheGeometry>
KvCacheGeometry::ofShape(const std::vector<int64_t> &shape, KvLayout layout,
                         std::string_view what) {
  if (shape.size() != 5 || shape[1] != 2)
    return errorf("kv cache ", what,
                  " must be [num_blocks, 2, B, G, D] (nhd) or "
                  "[num_blocks, 2, G, B, D] (hnd)");
  KvCacheGeometry g;
  g.layout = layout;
  g.numBlocks = shape[0];
  g.blockSize = layout == KvLayout::NHD ? shape[2] : shape[3];
  g.numKvHeads = layout == KvLayout::NHD ? shape[3] : shape[2];
  g.headSize = shape[4];
  if (g.blockSize < 1)
    return errorf("kv_cache has block size ", g.blockSize, " (", what,
                  ", layout ", toString(layout), ")");
  return g;
}

int64_t KvCacheGeometry::rowOffset(KvPart part, int64_t block, int64_t offset,
                                   int64_t head) const {
  const int64_t blockBase = (block * 2 + static_cast<int64_t>(part)) *
                            blockSize * numKvHeads;
  const int64_t row = layout == KvLayout::NHD
                          ? offset * numKvHeads + head
                          : head * blockSize + offset;
  return (blockBase + row) * headSize;
}

Status checkCacheDType(const Tensor &cache, std::string_view cacheName,
                       const Tensor &model, std::string_view modelName) {
  if (isFp8(cache.dtype()))
    return Status::ok();
  return checkSameDType(cache, cacheName, model, modelName);
}

Result<std::vector<double>> perHeadScales(const Tensor *scale,
                                          std::string_view name,
                                          DType cacheDType,
                                          int64_t numKvHeads) {
  if (!isFp8(cacheDType)) {
    if (scale)
      return errorf(name, " is given, but the cache is ", toString(cacheDType),
                    "; scales are only for fp8 caches");
    return std::vector<double>(numKvHeads, 1.0);
  }
  if (!scale)
    return errorf("the ", toString(cacheDType), " cache needs ", name);
  ATTN_RETURN_IF_ERROR(checkRankAndDType(*scale, name, 1, {DType::F32}));
  if (scale->dim(0) != 1 && scale->dim(0) != numKvHeads)
    return errorf(name, " is ", scale->describe(),
                  ", expected [1] (per layer) or [", numKvHeads,
                  "] (per kv head)");
  std::vector<double> scales(numKvHeads);
  for (int64_t g = 0; g < numKvHeads; ++g) {
    scales[g] = scale->getFloat(scale->dim(0) == 1 ? 0 : g);
    if (!(scales[g] > 0.0) || std::isinf(scales[g]))
      return errorf(name, "[", scale->dim(0) == 1 ? 0 : g,
                    "] must be finite and > 0, got ", scales[g]);
  }
  return scales;
}

void dequantize(double *elements, int64_t count, double scale,
                std::optional<DType> naivePrecision) {
  if (!naivePrecision) {
    for (int64_t i = 0; i < count; ++i)
      elements[i] *= scale;
    return;
  }
  const float scale32 = static_cast<float>(scale);
  for (int64_t i = 0; i < count; ++i)
    elements[i] = roundToDType(static_cast<float>(elements[i]) * scale32,
                               *naivePrecision);
}

} // namespace attn
