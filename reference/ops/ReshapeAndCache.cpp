//===- ReshapeAndCache.cpp - Reference write of new K/V into the cache ----===//
#include "reference/ops/Ops.h"

#include "core/Metadata.h"
#include "core/TensorCheck.h"

#include <cstring>

namespace attn {

namespace {

/// Stores fp8(source[from + i] / scale) at cache[to + i] for i < count, as
/// vLLM writes it (quant_utils.cuh): the quotient of f32(x) and the f32
/// scale rounded to f32 first, then to fp8 (nearest even, saturated). The
/// f32 rounding moves some quotients onto fp8 ties (x = 1, scale = 0.01f:
/// the exact 99.99999776 becomes 100, a tie of e4m3 that rounds to 96).
void quantizeRow(const Tensor &source, int64_t from, double scale,
                 Tensor &cache, int64_t to, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    cache.setFloat(to + i, fp8Quotient(source.getFloat(from + i), scale));
}

} // namespace

Status reshapeAndCache(const Tensor &key, const Tensor &value, Tensor &kvCache,
                       const Tensor &slotMapping, KvLayout layout,
                       const KvCacheScales &scales) {
  Result<KvCacheGeometry> geometry = KvCacheGeometry::of(kvCache, layout);
  if (!geometry)
    return geometry.status();
  const KvCacheGeometry &cache = *geometry;
  ATTN_RETURN_IF_ERROR(checkRankAndDType(key, "key", 3,
                                         {DType::F32, DType::F16, DType::BF16}));
  if (isFp8(kvCache.dtype())) {
    ATTN_RETURN_IF_ERROR(checkSameDType(value, "value", key, "key"));
  } else {
    ATTN_RETURN_IF_ERROR(checkSameDType(key, "key", kvCache, "kv_cache"));
    ATTN_RETURN_IF_ERROR(checkSameDType(value, "value", kvCache, "kv_cache"));
  }
  if (value.shape() != key.shape())
    return errorf("value is ", value.describe(), ", expected the shape of key ",
                  key.describe());
  ATTN_RETURN_IF_ERROR(
      checkDim(key, "key", 1, cache.numKvHeads, "kv_cache num_kv_heads"));
  ATTN_RETURN_IF_ERROR(
      checkDim(key, "key", 2, cache.headSize, "kv_cache head size"));
  const int64_t numTokens = key.dim(0);
  // Every slot is checked before the first write, so a bad slot leaves the
  // cache untouched.
  ATTN_RETURN_IF_ERROR(checkSlotMapping(slotMapping, numTokens,
                                        cache.numBlocks, cache.blockSize));
  Result<std::vector<double>> keyScales =
      perHeadScales(scales.key, "k_scale", kvCache.dtype(), cache.numKvHeads);
  if (!keyScales)
    return keyScales.status();
  Result<std::vector<double>> valueScales = perHeadScales(
      scales.value, "v_scale", kvCache.dtype(), cache.numKvHeads);
  if (!valueScales)
    return valueScales.status();
  if (isFp8(kvCache.dtype())) {
    for (int64_t t = 0; t < numTokens; ++t) {
      const int64_t slot = slotMapping.getInt(t);
      if (slot < 0)
        continue;
      for (int64_t g = 0; g < cache.numKvHeads; ++g) {
        const int64_t block = slot / cache.blockSize;
        const int64_t offset = slot % cache.blockSize;
        quantizeRow(key, key.offset({t, g, 0}), (*keyScales)[g], kvCache,
                    cache.rowOffset(KvPart::Key, block, offset, g),
                    cache.headSize);
        quantizeRow(value, value.offset({t, g, 0}), (*valueScales)[g],
                    kvCache, cache.rowOffset(KvPart::Value, block, offset, g),
                    cache.headSize);
      }
    }
    return Status::ok();
  }

  // The cache has the key's dtype, so rows are copied bit for bit.
  const size_t rowBytes = cache.headSize * byteWidth(key.dtype());
  // Rows of head size 0 have nothing to copy (and no element 0 to index).
  if (rowBytes == 0)
    return Status::ok();
  for (int64_t t = 0; t < numTokens; ++t) {
    const int64_t slot = slotMapping.getInt(t);
    if (slot < 0)
      continue;
    const int64_t block = slot / cache.blockSize;
    const int64_t offset = slot % cache.blockSize;
    for (int64_t g = 0; g < cache.numKvHeads; ++g) {
      const int64_t source = key.offset({t, g, 0}) * byteWidth(key.dtype());
      const int64_t keyRow =
          cache.rowOffset(KvPart::Key, block, offset, g) * byteWidth(key.dtype());
      const int64_t valueRow = cache.rowOffset(KvPart::Value, block, offset, g) *
                               byteWidth(key.dtype());
      std::memcpy(kvCache.data() + keyRow, key.data() + source, rowBytes);
      std::memcpy(kvCache.data() + valueRow, value.data() + source, rowBytes);
    }
  }
  return Status::ok();
}

Status concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                         Tensor &latentCache, const Tensor &slotMapping,
                         const Tensor *scale) {
  const std::initializer_list<DType> floats = {DType::F32, DType::F16,
                                               DType::BF16};
  ATTN_RETURN_IF_ERROR(checkRankAndDType(
      latentCache, "kv_cache", 3,
      {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN, DType::F8E5M2}));
  ATTN_RETURN_IF_ERROR(checkRankAndDType(kvC, "kv_c", 2, floats));
  ATTN_RETURN_IF_ERROR(checkRankAndDType(kPe, "k_pe", 2, floats));
  if (isFp8(latentCache.dtype())) {
    ATTN_RETURN_IF_ERROR(checkSameDType(kPe, "k_pe", kvC, "kv_c"));
  } else {
    ATTN_RETURN_IF_ERROR(checkSameDType(kvC, "kv_c", latentCache, "kv_cache"));
    ATTN_RETURN_IF_ERROR(checkSameDType(kPe, "k_pe", latentCache, "kv_cache"));
  }
  const int64_t numTokens = kvC.dim(0);
  ATTN_RETURN_IF_ERROR(
      checkDim(kPe, "k_pe", 0, numTokens, "the number of tokens"));
  const int64_t latentSize = kvC.dim(1), ropeSize = kPe.dim(1);
  ATTN_RETURN_IF_ERROR(checkDim(latentCache, "kv_cache", 2,
                                latentSize + ropeSize,
                                "kv_lora_rank + rope dim"));
  const int64_t numBlocks = latentCache.dim(0);
  const int64_t blockSize = latentCache.dim(1);
  ATTN_RETURN_IF_ERROR(
      checkSlotMapping(slotMapping, numTokens, numBlocks, blockSize));
  Result<std::vector<double>> cacheScale =
      perHeadScales(scale, "k_scale", latentCache.dtype(), 1);
  if (!cacheScale)
    return cacheScale.status();
  if (isFp8(latentCache.dtype())) {
    const int64_t rowSize = latentSize + ropeSize;
    for (int64_t t = 0; t < numTokens; ++t) {
      const int64_t slot = slotMapping.getInt(t);
      if (slot < 0)
        continue;
      quantizeRow(kvC, t * latentSize, (*cacheScale)[0], latentCache,
                  slot * rowSize, latentSize);
      quantizeRow(kPe, t * ropeSize, (*cacheScale)[0], latentCache,
                  slot * rowSize + latentSize, ropeSize);
    }
    return Status::ok();
  }

  // Rows of zero width (L or P is 0) have nothing to copy, and no element
  // whose offset could be taken.
  const int64_t width = byteWidth(kvC.dtype());
  const int64_t latentBytes = latentSize * width, ropeBytes = ropeSize * width;
  for (int64_t t = 0; t < numTokens; ++t) {
    const int64_t slot = slotMapping.getInt(t);
    if (slot < 0)
      continue;
    // Row `slot` of the cache viewed as [NB * B, L + P].
    uint8_t *row = latentCache.data() + slot * (latentBytes + ropeBytes);
    if (latentBytes)
      std::memcpy(row, kvC.data() + t * latentBytes, latentBytes);
    if (ropeBytes)
      std::memcpy(row + latentBytes, kPe.data() + t * ropeBytes, ropeBytes);
  }
  return Status::ok();
}

} // namespace attn
