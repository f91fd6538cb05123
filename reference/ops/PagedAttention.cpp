//===- PagedAttention.cpp - Reference paged attention ---------------------===//
//
// Each work item is one request and one kv head: it copies that head's keys
// and values for positions [0, seq_len) out of the pages into dense f64 rows
// once, then runs plain attention for every query token of the request and
// every query head that reads this kv head.
//
//===----------------------------------------------------------------------===//
#include "reference/ops/Ops.h"

#include "reference/ops/AttentionState.h"
#include "core/Metadata.h"
#include "reference/ops/ParallelFor.h"
#include "core/TensorCheck.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace attn {

namespace {

/// Whether key position j is visible to the query at position p.
bool isVisible(int64_t j, int64_t p, const PagedAttentionParams &params) {
  if (params.causal && j > p)
    return false;
  if (params.windowLeft >= 0 && j < p - params.windowLeft)
    return false;
  if (!params.causal && params.windowRight >= 0 && j > p + params.windowRight)
    return false;
  return true;
}

Status checkPerHead(const Tensor *t, std::string_view name, int64_t numHeads) {
  if (!t)
    return Status::ok();
  ATTN_RETURN_IF_ERROR(checkRankAndDType(*t, name, 1, {DType::F32}));
  return checkDim(*t, name, 0, numHeads, "num_heads, query dim 1");
}

} // namespace

Result<AttentionOutput>
pagedAttention(const Tensor &query, const Tensor &kvCache,
               const Tensor &blockTable, const Tensor &seqLens,
               const Tensor &queryStartLoc, const Tensor *alibiSlopes,
               const Tensor *sinks, const PagedAttentionParams &params,
               const KvCacheScales &scales) {
  ATTN_RETURN_IF_ERROR(checkRankAndDType(
      query, "query", 3, {DType::F32, DType::F16, DType::BF16}));
  Result<KvCacheGeometry> geometry =
      KvCacheGeometry::of(kvCache, params.layout);
  if (!geometry)
    return geometry.status();
  const KvCacheGeometry &cache = *geometry;
  ATTN_RETURN_IF_ERROR(checkCacheDType(kvCache, "kv_cache", query, "query"));
  const int64_t numTokens = query.dim(0);
  const int64_t numHeads = query.dim(1);
  const int64_t headSize = query.dim(2);
  const int64_t numKvHeads = cache.numKvHeads;
  if (numKvHeads == 0 || numHeads % numKvHeads != 0)
    return errorf("num_heads = ", numHeads,
                  " is not a multiple of num_kv_heads = ", numKvHeads);
  if (cache.headSize != headSize)
    return errorf("kv_cache head size ", cache.headSize,
                  " does not match the query head size ", headSize);
  // As the verifier: at least one head of at least one element (query rows
  // are read from head 0, element 0 on).
  if (numHeads == 0 || headSize == 0)
    return errorf("num_heads and the head size must be at least 1, got a "
                  "query of ",
                  query.describe());
  ATTN_RETURN_IF_ERROR(checkPerHead(alibiSlopes, "alibi_slopes", numHeads));
  ATTN_RETURN_IF_ERROR(checkPerHead(sinks, "sinks", numHeads));
  Result<std::vector<double>> keyScales =
      perHeadScales(scales.key, "k_scale", kvCache.dtype(), numKvHeads);
  if (!keyScales)
    return keyScales.status();
  Result<std::vector<double>> valueScales =
      perHeadScales(scales.value, "v_scale", kvCache.dtype(), numKvHeads);
  if (!valueScales)
    return valueScales.status();
  if (!std::isfinite(params.scale))
    return errorf("scale must be finite, got ", params.scale);
  if (!(params.softCap >= 0.0) || std::isinf(params.softCap))
    return errorf("soft_cap must be finite and >= 0 (0 disables it), got ",
                  params.softCap);

  Result<CommonAttentionMetadata> built =
      checkPagedBatch(queryStartLoc, seqLens, blockTable, params.causal,
                      numTokens, cache.numBlocks, cache.blockSize);
  if (!built)
    return built.status();
  const CommonAttentionMetadata &metadata = *built;

  AttentionOutput result{Tensor(query.dtype(), {numTokens, numHeads, headSize}),
                         Tensor(DType::F32, {numTokens, numHeads})};
  const int64_t headsPerKvHead = numHeads / numKvHeads;

  parallelFor(metadata.numReqs * numKvHeads, [&](int64_t item) {
    const int64_t req = item / numKvHeads;
    const int64_t kvHead = item % numKvHeads;
    const int64_t seqLen = metadata.seqLens[req];
    const int64_t context = metadata.numComputedTokens[req];

    // Dense copies of this kv head's keys and values, one row per position.
    // Each thread keeps its buffers from item to item: fresh multi-megabyte
    // buffers would be page-faulted in again for every item.
    thread_local std::vector<double> keys, values;
    keys.resize(seqLen * headSize);
    values.resize(seqLen * headSize);
    const DType precision = query.dtype();
    const bool quantized = isFp8(kvCache.dtype());
    const std::optional<DType> naive =
        params.naiveDevicePrecision ? std::optional(precision) : std::nullopt;
    for (int64_t j = 0; j < seqLen; ++j) {
      const int64_t block = metadata.block(req, j / cache.blockSize);
      const int64_t offset = j % cache.blockSize;
      double *key = &keys[j * headSize], *value = &values[j * headSize];
      kvCache.getFloats(cache.rowOffset(KvPart::Key, block, offset, kvHead),
                        headSize, key);
      kvCache.getFloats(cache.rowOffset(KvPart::Value, block, offset, kvHead),
                        headSize, value);
      if (quantized) {
        dequantize(key, headSize, (*keyScales)[kvHead], naive);
        dequantize(value, headSize, (*valueScales)[kvHead], naive);
      }
    }

    // Score of key j for query head h at `position`. The naive mode rounds
    // to the output dtype after every step, as a straightforward kernel in
    // that precision would.
    auto step = [&](double v) {
      return params.naiveDevicePrecision ? roundToDType(v, precision) : v;
    };
    // FlashAttention-2's order (flash_attn/src/softmax.h, mask.h): the soft
    // cap first, then the ALiBi bias -slope * |j - p|, for non-causal rows
    // too.
    auto logit = [&](double dot, int64_t h, int64_t j, int64_t position) {
      double s = step(params.scale * step(dot));
      if (params.softCap > 0.0)
        s = step(params.softCap * std::tanh(s / params.softCap));
      if (alibiSlopes)
        s = step(s - alibiSlopes->getFloat(h) *
                         static_cast<double>(std::abs(j - position)));
      return s;
    };

    // The query heads reading this kv head are consecutive: rows of
    // `queries`, with their scores over the visible keys.
    const int64_t firstHead = kvHead * headsPerKvHead;
    std::vector<double> queries(headsPerKvHead * headSize);
    std::vector<double> dots(headsPerKvHead);
    std::vector<std::vector<double>> scores(headsPerKvHead);
    std::vector<const double *> visibleValues;
    for (int64_t i = 0; i < metadata.queryLens[req]; ++i) {
      const int64_t token = metadata.queryStartLoc[req] + i;
      const int64_t position = context + i;
      query.getFloats(query.offset({token, firstHead, 0}),
                      headsPerKvHead * headSize, queries.data());
      for (std::vector<double> &s : scores)
        s.clear();
      visibleValues.clear();
      for (int64_t j = 0; j < seqLen; ++j) {
        if (!isVisible(j, position, params))
          continue;
        // <q_h, k_j> for every head of the group. Each head still sums over
        // d in order; interleaving the heads lets the CPU overlap the sums.
        const double *k = &keys[j * headSize];
        std::fill(dots.begin(), dots.end(), 0.0);
        if (params.naiveDevicePrecision) {
          // A naive kernel accumulates the dot product in f32.
          for (int64_t hh = 0; hh < headsPerKvHead; ++hh) {
            float acc = 0.0f;
            for (int64_t d = 0; d < headSize; ++d)
              acc += static_cast<float>(queries[hh * headSize + d]) *
                     static_cast<float>(k[d]);
            dots[hh] = acc;
          }
        } else {
          for (int64_t d = 0; d < headSize; ++d)
            for (int64_t hh = 0; hh < headsPerKvHead; ++hh)
              dots[hh] += queries[hh * headSize + d] * k[d];
        }
        for (int64_t hh = 0; hh < headsPerKvHead; ++hh)
          scores[hh].push_back(logit(dots[hh], firstHead + hh, j, position));
        visibleValues.push_back(&values[j * headSize]);
      }
      for (int64_t hh = 0; hh < headsPerKvHead; ++hh) {
        const int64_t h = firstHead + hh;
        const double sink = sinks ? sinks->getFloat(h)
                                  : -std::numeric_limits<double>::infinity();
        const AttentionState state =
            params.naiveDevicePrecision
                ? attendNaive(scores[hh], visibleValues, headSize, precision,
                              sink)
                : attend(scores[hh], visibleValues, headSize, sink);
        for (int64_t d = 0; d < headSize; ++d)
          result.out.setFloat(result.out.offset({token, h, d}), state.out[d]);
        result.lse.setFloat(result.lse.offset({token, h}), state.lse);
      }
    }
  });
  return result;
}

} // namespace attn
