//===- MetadataFuzzer.cpp - Fuzz target: metadata checks + reference ops --===//
//
// Input: a small batch drawn from the bytes — which op, the cache geometry,
// query_start_loc, seq_lens, the block table, the slot mapping, knobs and
// tensor contents. Shapes are mostly consistent (and sometimes off by one
// or of the wrong dtype or rank) and the metadata values are arbitrary
// int32 / int64, so most inputs test validation and some reach the op's
// inner loops. Any input must end in a Status: never a crash, a read or
// write out of bounds (ASan) or undefined behaviour (UBSan).
//
//===----------------------------------------------------------------------===//

#include "core/Metadata.h"
#include "reference/ops/Ops.h"
#include "reference/ops/ParallelFor.h"
#include "test/fuzz/FuzzInput.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

using namespace attn;
using attn::fuzz::FuzzInput;

namespace {

constexpr DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};
constexpr DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16,
                               DType::I32, DType::I64};

/// Mostly `want`, sometimes another dtype.
DType drawDType(FuzzInput &in, DType want) {
  uint8_t b = in.take<uint8_t>();
  return b < 240 ? want : kAllTypes[b % std::size(kAllTypes)];
}

/// Mostly `shape`, sometimes with one dim changed, dropped or added.
std::vector<int64_t> perturb(FuzzInput &in, std::vector<int64_t> shape) {
  uint8_t b = in.take<uint8_t>();
  if (b < 224)
    return shape;
  if (b < 240 && !shape.empty())
    shape[b % shape.size()] += (b & 1) ? 1 : -1;
  else if (b < 248 && !shape.empty())
    shape.pop_back();
  else
    shape.push_back(b % 3);
  for (int64_t &d : shape)
    d = std::max<int64_t>(d, 0);
  return shape;
}

/// Metadata values: small ones reach the ops, raw ones test the checks.
int64_t drawValue(FuzzInput &in, bool wide) {
  uint8_t kind = in.take<uint8_t>();
  if (kind < 200)
    return in.range(-2, 40);
  return wide ? in.take<int64_t>() : in.take<int32_t>();
}

Tensor drawTensor(FuzzInput &in, DType dtype, std::vector<int64_t> shape,
                  bool wideValues = false) {
  dtype = drawDType(in, dtype);
  shape = perturb(in, std::move(shape));
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (dtype == DType::I32 || dtype == DType::I64) {
      int64_t v = drawValue(in, wideValues && dtype == DType::I64);
      t.setInt(i, dtype == DType::I32 ? static_cast<int32_t>(v) : v);
    } else if (dtype == DType::F32) {
      float f = in.take<float>();
      std::memcpy(t.data() + 4 * i, &f, 4);
    } else {
      uint16_t h = in.take<uint16_t>();
      std::memcpy(t.data() + 2 * i, &h, 2);
    }
  }
  return t;
}

/// The cache geometry and batch every op of one input shares.
struct Batch {
  int64_t numReqs, numTokens, numBlocks, blockSize, numKvHeads, numHeads,
      headSize, blockCols;
  DType dtype;
  Tensor qsl, seqLens, blockTable, slotMapping;
};

Batch drawBatch(FuzzInput &in) {
  Batch b;
  b.numReqs = in.range(0, 4);
  b.numBlocks = in.range(0, 6);
  b.blockSize = in.range(0, 17);
  b.numKvHeads = in.range(1, 3);
  b.numHeads = b.numKvHeads * in.range(1, 3);
  b.headSize = in.range(0, 9);
  b.blockCols = in.range(0, 6);
  b.dtype = kFloatTypes[in.range(0, 2)];
  b.qsl = drawTensor(in, DType::I32, {b.numReqs + 1});
  b.seqLens = drawTensor(in, DType::I32, {b.numReqs});
  b.blockTable = drawTensor(in, DType::I32, {b.numReqs, b.blockCols});
  b.numTokens = b.qsl.numElements() && b.qsl.dtype() == DType::I32
                    ? std::clamp<int64_t>(b.qsl.getInt(b.qsl.numElements() - 1),
                                          0, 64)
                    : in.range(0, 8);
  b.slotMapping = drawTensor(in, DType::I64, {b.numTokens}, /*wide=*/true);
  return b;
}

std::vector<int64_t> pagedCacheShape(const Batch &b, KvLayout layout) {
  if (layout == KvLayout::NHD)
    return {b.numBlocks, 2, b.blockSize, b.numKvHeads, b.headSize};
  return {b.numBlocks, 2, b.numKvHeads, b.blockSize, b.headSize};
}

void checkMetadata(FuzzInput &in, const Batch &b) {
  Result<CommonAttentionMetadata> m = makeCommonAttentionMetadata(
      b.qsl, b.seqLens, in.flag() ? &b.blockTable : nullptr,
      in.flag() ? &b.slotMapping : nullptr, in.flag());
  if (!m)
    return;
  (void)checkNumTokens(*m, b.numTokens);
  (void)checkCacheBounds(*m, b.numBlocks, b.blockSize);
  Result<CommonAttentionMetadata> u =
      m->unpadded(drawValue(in, false), drawValue(in, false));
  if (u)
    (void)checkCacheBounds(*u, b.numBlocks, b.blockSize);
}

void runPagedAttention(FuzzInput &in, const Batch &b) {
  PagedAttentionParams p;
  p.layout = in.flag() ? KvLayout::HND : KvLayout::NHD;
  Tensor query =
      drawTensor(in, b.dtype, {b.numTokens, b.numHeads, b.headSize});
  Tensor cache = drawTensor(in, b.dtype, pagedCacheShape(b, p.layout));
  std::optional<Tensor> alibi, sinks;
  if (in.flag())
    alibi = drawTensor(in, DType::F32, {b.numHeads});
  if (in.flag())
    sinks = drawTensor(in, DType::F32, {b.numHeads});
  p.scale = in.flag() ? in.take<double>() : 0.5;
  p.causal = in.flag();
  p.windowLeft = drawValue(in, true);
  p.windowRight = drawValue(in, true);
  p.softCap = in.flag() ? in.take<double>() : 0.0;
  p.naiveDevicePrecision = in.flag();
  (void)pagedAttention(query, cache, b.blockTable, b.seqLens, b.qsl,
                       alibi ? &*alibi : nullptr, sinks ? &*sinks : nullptr,
                       p);
}

void runReshapeAndCache(FuzzInput &in, const Batch &b) {
  KvLayout layout = in.flag() ? KvLayout::HND : KvLayout::NHD;
  Tensor key = drawTensor(in, b.dtype, {b.numTokens, b.numKvHeads, b.headSize});
  Tensor value =
      drawTensor(in, b.dtype, {b.numTokens, b.numKvHeads, b.headSize});
  Tensor cache = drawTensor(in, b.dtype, pagedCacheShape(b, layout));
  (void)reshapeAndCache(key, value, cache, b.slotMapping, layout);
}

void runConcatAndCacheMla(FuzzInput &in, const Batch &b) {
  const int64_t rank = b.headSize, rope = in.range(0, 4);
  Tensor kvC = drawTensor(in, b.dtype, {b.numTokens, rank});
  Tensor kPe = drawTensor(in, b.dtype, {b.numTokens, rope});
  Tensor cache = drawTensor(in, b.dtype, {b.numBlocks, b.blockSize, rank + rope});
  (void)concatAndCacheMla(kvC, kPe, cache, b.slotMapping);
}

void runMlaDecode(FuzzInput &in, const Batch &b) {
  MlaDecodeParams p;
  p.kvLoraRank = drawValue(in, true);
  const int64_t rowSize = b.headSize + in.range(0, 4);
  Tensor q = drawTensor(in, b.dtype, {b.numReqs, b.numHeads, rowSize});
  Tensor cache = drawTensor(in, b.dtype, {b.numBlocks, b.blockSize, rowSize});
  p.scale = in.flag() ? in.take<double>() : 0.25;
  p.numKvSplits = drawValue(in, true);
  p.naiveDevicePrecision = in.flag();
  (void)mlaDecode(q, cache, b.blockTable, b.seqLens, p);
}

void runMergeStates(FuzzInput &in, const Batch &b) {
  const std::vector<int64_t> out = {b.numTokens, b.numHeads, b.headSize};
  const std::vector<int64_t> lse = {b.numTokens, b.numHeads};
  Tensor outA = drawTensor(in, b.dtype, out);
  Tensor lseA = drawTensor(in, DType::F32, lse);
  Tensor outB = drawTensor(in, b.dtype, out);
  Tensor lseB = drawTensor(in, DType::F32, lse);
  (void)mergeStates(outA, lseA, outB, lseB, in.flag());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // One thread: the same result, and no thread start per input.
  setReferenceThreadCount(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzInput in(data, size);
  const uint8_t op = in.take<uint8_t>();
  Batch batch = drawBatch(in);
  checkMetadata(in, batch);
  switch (op % 5) {
  case 0:
    runPagedAttention(in, batch);
    break;
  case 1:
    runReshapeAndCache(in, batch);
    break;
  case 2:
    runConcatAndCacheMla(in, batch);
    break;
  case 3:
    runMlaDecode(in, batch);
    break;
  case 4:
    runMergeStates(in, batch);
    break;
  }
  return 0;
}
