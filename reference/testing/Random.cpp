//===- Random.cpp - Seeded, platform-independent random problems ---------===//
#include "reference/testing/Random.h"

#include "core/MemoryBudget.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attn {

double Random::uniform() {
  // The top 53 bits make a double in [0, 1) exactly.
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Random::uniform(double lo, double hi) {
  return lo + (hi - lo) * uniform();
}

int64_t Random::uniformInt(int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) // [INT64_MIN, INT64_MAX]: every draw is fine
    return static_cast<int64_t>(next());
  // Draws at or above the largest multiple of `range` would favour small
  // results; redraw them.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / range * range;
  uint64_t x;
  do {
    x = next();
  } while (x >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
}

void Random::fill(Tensor &t, double lo, double hi) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFloat(i, uniform(lo, hi));
}

namespace {

enum class RequestKind { Decode, Prefill, ChunkedPrefill, Cross };

/// ALiBi's slopes (Press et al.): a geometric sequence 2^(-8 i / n) for the
/// largest power of two n <= H, then every other slope of the sequence for
/// 2n for the remaining heads.
std::vector<double> alibiSlopes(int64_t numHeads) {
  int64_t n = 1;
  while (n * 2 <= numHeads)
    n *= 2;
  std::vector<double> slopes;
  for (int64_t i = 1; i <= n; ++i)
    slopes.push_back(std::exp2(-8.0 * i / n));
  for (int64_t i = 1; static_cast<int64_t>(slopes.size()) < numHeads; i += 2)
    slopes.push_back(std::exp2(-8.0 * i / (2 * n)));
  return slopes;
}

/// The first key some query token of request `r` sees: the window start of
/// its first token (position seq_len - q_len), or 0 without a window.
int64_t firstReadKey(const Problem &p, const ProblemShape &shape, int64_t r) {
  if (shape.windowLeft < 0)
    return 0;
  const int64_t queryLen =
      p.queryStartLoc.getInt(r + 1) - p.queryStartLoc.getInt(r);
  const int64_t context = p.seqLens.getInt(r) - queryLen;
  return std::max<int64_t>(0, context - shape.windowLeft);
}

/// ProblemOptions::unreadFill on a drawn problem of `numBlocks` cache
/// blocks: the blocks no request uses, and the slots of every request's
/// blocks before its first read key or at or past its seq_len, hold
/// `value`; block-table entries past a request's blocks point at the unused
/// blocks in turn.
void fillUnreadSlots(Problem &p, const ProblemShape &shape, double value,
                     int64_t numBlocks) {
  const int64_t blockSize = shape.blockSize;
  const int64_t numReqs = p.blockTable.dim(0), maxBlocks = p.blockTable.dim(1);
  std::vector<bool> read(numBlocks * blockSize, false);
  std::vector<bool> used(numBlocks, false);
  for (int64_t r = 0; r < numReqs; ++r) {
    const int64_t seqLen = p.seqLens.getInt(r);
    const int64_t blocks = (seqLen + blockSize - 1) / blockSize;
    for (int64_t j = firstReadKey(p, shape, r); j < seqLen; ++j)
      read[p.blockTable.getInt(p.blockTable.offset({r, j / blockSize})) *
               blockSize +
           j % blockSize] = true;
    for (int64_t i = 0; i < blocks; ++i)
      used[p.blockTable.getInt(p.blockTable.offset({r, i}))] = true;
  }
  std::vector<int64_t> free;
  for (int64_t b = 0; b < numBlocks; ++b)
    if (!used[b])
      free.push_back(b);
  for (int64_t r = 0, next = 0; r < numReqs && !free.empty(); ++r) {
    const int64_t seqLen = p.seqLens.getInt(r);
    for (int64_t i = (seqLen + blockSize - 1) / blockSize; i < maxBlocks; ++i)
      p.blockTable.setInt(p.blockTable.offset({r, i}),
                          free[next++ % free.size()]);
  }
  // One cache slot is a row per kv head and part (keys, values), or one
  // latent row.
  Tensor &cache = p.kvCache;
  for (int64_t b = 0; b < numBlocks; ++b)
    for (int64_t o = 0; o < blockSize; ++o) {
      if (read[b * blockSize + o])
        continue;
      if (shape.isMla()) {
        const int64_t row = cache.dim(2);
        for (int64_t e = 0; e < row; ++e)
          cache.setFloat(cache.offset({b, o, e}), value);
        continue;
      }
      const bool nhd = shape.layout == KvLayout::NHD;
      const int64_t g = nhd ? cache.dim(3) : cache.dim(2);
      const int64_t d = cache.dim(4);
      for (int64_t part = 0; part < 2; ++part)
        for (int64_t h = 0; h < g; ++h)
          for (int64_t e = 0; e < d; ++e)
            cache.setFloat(nhd ? cache.offset({b, part, o, h, e})
                               : cache.offset({b, part, h, o, e}),
                           value);
    }
}

Status checkOptions(const ProblemShape &shape, const ProblemOptions &options,
                    int64_t sharedTokens) {
  if (shape.numHeads < 1 || shape.blockSize < 1)
    return errorf("numHeads and blockSize must be >= 1");
  if (shape.isMla()) {
    if (shape.ropeDim < 0)
      return errorf("ropeDim must be >= 0, got ", shape.ropeDim);
  } else {
    if (shape.numKvHeads < 1 || shape.numHeads % shape.numKvHeads != 0)
      return errorf("numHeads = ", shape.numHeads,
                    " must be a multiple of numKvHeads = ", shape.numKvHeads);
    if (shape.headSize < 1)
      return errorf("headSize must be >= 1, got ", shape.headSize);
  }
  if (!isModelDType(shape.dtype))
    return errorf("dtype must be f32, f16 or bf16, got ",
                  toString(shape.dtype));
  if (options.numReqs < 1 || options.numReqs > kMaxRandomRequests)
    return errorf("numReqs must be in [1, ", kMaxRandomRequests, "], got ",
                  options.numReqs);
  for (int64_t tokens : {options.minContextLen, options.maxContextLen,
                         options.maxPrefillQueryLen})
    if (tokens > kMaxRandomTokens)
      return errorf("context and query lengths must be <= ", kMaxRandomTokens,
                    ", got ", tokens);
  if (options.sharedPrefixBlocks > kMaxRandomBlocks ||
      options.extraFreeBlocks > kMaxRandomBlocks)
    return errorf("sharedPrefixBlocks and extraFreeBlocks must be <= ",
                  kMaxRandomBlocks);
  if (!(options.decodeFraction >= 0.0 && options.decodeFraction <= 1.0))
    return errorf("decodeFraction must be in [0, 1], got ",
                  options.decodeFraction);
  if (options.sharedPrefixBlocks < 0 || options.extraFreeBlocks < 0)
    return errorf("sharedPrefixBlocks and extraFreeBlocks must be >= 0");
  const int64_t minContext = std::max(options.minContextLen, sharedTokens);
  if (options.minContextLen < 0 || minContext > options.maxContextLen)
    return errorf("no context length fits: [max(minContextLen = ",
                  options.minContextLen, ", sharedPrefixBlocks * blockSize = ",
                  sharedTokens, "), maxContextLen = ", options.maxContextLen,
                  "] is empty");
  if (!(options.crossFraction >= 0.0 && options.crossFraction <= 1.0))
    return errorf("crossFraction must be in [0, 1], got ",
                  options.crossFraction);
  if (options.crossFraction > 0.0 && options.sharedPrefixBlocks > 0)
    return errorf("cross-attention requests share no prefix: crossFraction "
                  "needs sharedPrefixBlocks = 0");
  const bool hasPrefill = !shape.isMla() && options.decodeFraction < 1.0;
  const bool hasCross = !shape.isMla() && options.crossFraction > 0.0;
  if ((hasPrefill || hasCross) && options.maxPrefillQueryLen < 2)
    return errorf("maxPrefillQueryLen must be >= 2 when some requests are "
                  "prefills or cross-attention, got ",
                  options.maxPrefillQueryLen);
  if (hasPrefill && std::max<int64_t>(minContext, 1) > options.maxContextLen)
    return errorf("chunked prefill needs maxContextLen >= 1");
  return Status::ok();
}

/// The bytes of the step's cache, query, key and value (`shapes`) against
/// the host's memory, before any of them is allocated: each may fit the
/// tensor limit and still be more than the host holds.
Status checkProblemMemory(DType dtype, const std::vector<int64_t> (&shapes)[4],
                          int64_t numBlocks, int64_t numTokens) {
  uint64_t total = 0;
  for (const std::vector<int64_t> &s : shapes) {
    Result<uint64_t> bytes = tensorBytes(dtype, s);
    if (!bytes)
      return bytes.status();
    total += *bytes; // each at most kMaxTensorBytes: no overflow
  }
  return checkHostMemory(
      total, "a random step of " + std::to_string(numTokens) + " tokens over " +
                 std::to_string(numBlocks) + " cache blocks");
}

} // namespace

Result<Problem> generateProblem(const ProblemShape &shape,
                                const ProblemOptions &options) {
  const int64_t blockSize = shape.blockSize;
  const int64_t sharedBlocks = options.sharedPrefixBlocks;
  const int64_t sharedTokens = sharedBlocks * blockSize;
  ATTN_RETURN_IF_ERROR(checkOptions(shape, options, sharedTokens));
  Random random(options.seed);

  // 1. Each request's kind, context and query length.
  const int64_t numReqs = options.numReqs;
  const int64_t minContext = std::max(options.minContextLen, sharedTokens);
  std::vector<int64_t> contexts, queryLens;
  for (int64_t r = 0; r < numReqs; ++r) {
    RequestKind kind = RequestKind::Decode;
    // No draw without cross requests, so the other options' draws stay
    // those of a given seed.
    if (!shape.isMla() && options.crossFraction > 0.0 &&
        random.uniform() < options.crossFraction)
      kind = RequestKind::Cross;
    else if (!shape.isMla() && random.uniform() >= options.decodeFraction)
      kind = random.uniform() < 0.5 ? RequestKind::Prefill
                                    : RequestKind::ChunkedPrefill;
    switch (kind) {
    case RequestKind::Cross: {
      // Fewer keys (the encoder's) than queries: a negative context.
      const int64_t queryLen = random.uniformInt(2, options.maxPrefillQueryLen);
      contexts.push_back(random.uniformInt(1, queryLen - 1) - queryLen);
      queryLens.push_back(queryLen);
      break;
    }
    case RequestKind::Decode:
      contexts.push_back(random.uniformInt(minContext, options.maxContextLen));
      queryLens.push_back(1);
      break;
    case RequestKind::Prefill:
      contexts.push_back(sharedTokens); // a prefix-cache hit, if sharing
      queryLens.push_back(random.uniformInt(2, options.maxPrefillQueryLen));
      break;
    case RequestKind::ChunkedPrefill:
      contexts.push_back(random.uniformInt(std::max<int64_t>(minContext, 1),
                                           options.maxContextLen));
      queryLens.push_back(random.uniformInt(2, options.maxPrefillQueryLen));
      break;
    }
  }

  // 2. Blocks: a random permutation of all block ids, handed out in order
  // (shared prefix first), so no block serves two requests by accident.
  std::vector<int64_t> blocksPerReq;
  int64_t numBlocks = sharedBlocks + options.extraFreeBlocks;
  int64_t maxBlocks = 1;
  for (int64_t r = 0; r < numReqs; ++r) {
    const int64_t seqLen = contexts[r] + queryLens[r];
    blocksPerReq.push_back((seqLen + blockSize - 1) / blockSize);
    numBlocks += blocksPerReq[r] - sharedBlocks;
    maxBlocks = std::max(maxBlocks, blocksPerReq[r]);
  }
  // Before anything of that size is allocated: the options may ask for a
  // step no host holds (65536 requests of 2^20 tokens).
  int64_t numTokens = 0;
  for (int64_t len : queryLens)
    numTokens += len;
  if (numBlocks > kMaxRandomProblemBlocks ||
      numTokens > kMaxRandomProblemBlocks ||
      numReqs * maxBlocks > kMaxRandomProblemBlocks)
    return errorf("the options ask for a step of ", numTokens, " tokens over ",
                  numBlocks, " cache blocks (", maxBlocks,
                  " per request); a generated step has at most ",
                  kMaxRandomProblemBlocks, " of each");
  std::vector<int64_t> ids(numBlocks);
  for (int64_t i = 0; i < numBlocks; ++i)
    ids[i] = i;
  for (int64_t i = numBlocks - 1; i > 0; --i) // Fisher-Yates
    std::swap(ids[i], ids[random.uniformInt(0, i)]);

  Problem p;
  p.blockTable = Tensor(DType::I32, {numReqs, maxBlocks});
  p.seqLens = Tensor(DType::I32, {numReqs});
  p.queryStartLoc = Tensor(DType::I32, {numReqs + 1});
  int64_t nextId = sharedBlocks;
  numTokens = 0;
  for (int64_t r = 0; r < numReqs; ++r) {
    for (int64_t i = 0; i < blocksPerReq[r]; ++i)
      p.blockTable.setInt(p.blockTable.offset({r, i}),
                          i < sharedBlocks ? ids[i] : ids[nextId++]);
    p.seqLens.setInt(r, contexts[r] + queryLens[r]);
    numTokens += queryLens[r];
    p.queryStartLoc.setInt(r + 1, numTokens);
  }

  // 3. The new tokens' slots: position context + i of request r. A cross
  // request's tokens are padding: its cache holds the encoder's keys.
  p.slotMapping = Tensor(DType::I64, {numTokens});
  for (int64_t r = 0, t = 0; r < numReqs; ++r) {
    for (int64_t i = 0; i < queryLens[r]; ++i, ++t) {
      const int64_t position = contexts[r] + i;
      if (contexts[r] < 0) {
        p.slotMapping.setInt(t, -1);
        continue;
      }
      const int64_t block =
          p.blockTable.getInt(p.blockTable.offset({r, position / blockSize}));
      p.slotMapping.setInt(t, block * blockSize + position % blockSize);
    }
  }

  // 4. Tensor contents, uniform in [-1, 1).
  const int64_t numHeads = shape.numHeads;
  // Shapes come from the caller: allocate through Tensor::create, so a
  // size the host cannot hold is an error, not an abort.
  std::vector<int64_t> shapes[4];
  if (shape.isMla()) {
    const int64_t rowSize = shape.kvLoraRank + shape.ropeDim;
    shapes[0] = {numBlocks, blockSize, rowSize};
    shapes[1] = {numReqs, numHeads, rowSize};
    shapes[2] = {numTokens, shape.kvLoraRank};
    shapes[3] = {numTokens, shape.ropeDim};
    p.scale = 1.0 / std::sqrt(static_cast<double>(rowSize));
  } else {
    const int64_t g = shape.numKvHeads, d = shape.headSize;
    shapes[0] = shape.layout == KvLayout::NHD
                    ? std::vector<int64_t>{numBlocks, 2, blockSize, g, d}
                    : std::vector<int64_t>{numBlocks, 2, g, blockSize, d};
    shapes[1] = {numTokens, numHeads, d};
    shapes[2] = {numTokens, g, d};
    shapes[3] = {numTokens, g, d};
    p.scale = 1.0 / std::sqrt(static_cast<double>(d));
  }
  ATTN_RETURN_IF_ERROR(
      checkProblemMemory(shape.dtype, shapes, numBlocks, numTokens));
  Tensor *tensors[4] = {&p.kvCache, &p.query, &p.key, &p.value};
  for (int i = 0; i < 4; ++i) {
    Result<Tensor> t = Tensor::create(shape.dtype, shapes[i]);
    if (!t)
      return t.status();
    *tensors[i] = std::move(*t);
  }
  random.fill(p.kvCache, -1.0, 1.0);
  random.fill(p.query, -1.0, 1.0);
  random.fill(p.key, -1.0, 1.0);
  random.fill(p.value, -1.0, 1.0);

  if (options.unreadFill)
    fillUnreadSlots(p, shape, *options.unreadFill, numBlocks);

  p.alibiSlopes = Tensor(DType::F32, {numHeads});
  const std::vector<double> slopes = alibiSlopes(numHeads);
  for (int64_t h = 0; h < numHeads; ++h)
    p.alibiSlopes.setFloat(h, slopes[h]);
  p.sinks = Tensor(DType::F32, {numHeads});
  random.fill(p.sinks, -1.0, 1.0);
  return p;
}

Tensor quantizeCache(const Tensor &cache, DType dtype, double kScale,
                     double vScale) {
  Tensor quantized(dtype, cache.shape());
  // Elements per half of a paged block: the part of element i is
  // (i / half) % 2.
  const int64_t half = cache.rank() == 5 ? cache.numElements() /
                                               std::max<int64_t>(
                                                   1, cache.dim(0) * 2)
                                         : 0;
  for (int64_t i = 0; i < cache.numElements(); ++i) {
    const bool value = half && (i / half) % 2 == 1;
    quantized.setFloat(i,
                       fp8Quotient(cache.getFloat(i), value ? vScale : kScale));
  }
  return quantized;
}


} // namespace attn
