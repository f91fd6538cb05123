//===- KvCache.cpp - Where a token's key and value live in a paged cache --===//
#include "core/KvCache.h"

#include "core/TensorCheck.h"

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
  ATTN_RETURN_IF_ERROR(checkRankAndDType(cache, "kv_cache", 5,
                                         {DType::F32, DType::F16, DType::BF16}));
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

} // namespace attn
