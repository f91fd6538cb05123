//===- AttentionOps.cpp - Host side of attn's TT programs ----------------===//
#include "devices/tt/AttentionOps.h"

#include "core/Metadata.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attn::tt {

Result<ProgramShape> readProgramShape(const ProgramDescription &d) {
  ProgramShape s;
  const ProgramParams &p = d.params;
  auto required = [&](const auto &field, const char *what,
                      const char *key) -> Status {
    if (!field)
      return errorf(d.dir, "/program.json: params: json: expected ", what,
                    " member '", key, "'");
    return Status::ok();
  };
  ATTN_RETURN_IF_ERROR(required(p.numHeads, "number", "num_heads"));
  ATTN_RETURN_IF_ERROR(required(p.numKvHeads, "number", "num_kv_heads"));
  ATTN_RETURN_IF_ERROR(required(p.headSize, "number", "head_size"));
  ATTN_RETURN_IF_ERROR(required(p.blockSize, "number", "block_size"));
  s.numHeads = *p.numHeads;
  s.numKvHeads = *p.numKvHeads;
  s.headSize = *p.headSize;
  s.blockSize = *p.blockSize;
  s.valueSize = p.valueSize.value_or(s.headSize);
  s.kvParts = p.kvParts.value_or(s.kvParts);
  s.windowLeft = p.windowLeft.value_or(s.windowLeft);
  s.windowRight = p.windowRight.value_or(s.windowRight);
  s.causal = p.causal.value_or(s.causal);
  s.sinks = p.sinks.value_or(s.sinks);
  s.alibi = p.alibi.value_or(s.alibi);
  s.numKvSplits = p.numKvSplits.value_or(s.numKvSplits);
  s.numStates = p.numStates.value_or(s.numStates);
  s.keyWidth = p.keyWidth.value_or(s.headSize);
  s.valueWidth = p.valueWidth.value_or(s.headSize);
  ATTN_RETURN_IF_ERROR(required(p.dtype, "string", "dtype"));
  auto parsed = parseDType(*p.dtype);
  if (!parsed ||
      (*parsed != DType::BF16 && *parsed != DType::F16 && *parsed != DType::F32))
    return errorf("TT programs compute in bf16, f16 or f32, not '", *p.dtype,
                  "'");
  s.dtype = *parsed;
  if (p.layout) {
    auto parsedLayout = parseKvLayout(*p.layout);
    if (!parsedLayout)
      return errorf(d.dir, "/program.json: params: unknown layout '",
                    *p.layout, "'");
    s.layout = *parsedLayout;
  }
  // A merge program has no cache.
  if (d.op != "merge_states" &&
      (s.blockSize <= 0 || (32 % s.blockSize != 0 && s.blockSize % 32 != 0)))
    return errorf("block size ", s.blockSize,
                  " must divide 32 or be a multiple of 32");
  // Rows are padded to whole 32-wide tiles on the device; the kernels move
  // them in pieces of whole 16-byte words.
  if (s.headSize <= 0 || s.headSize % 8 != 0 || s.valueSize <= 0 ||
      s.valueSize % 8 != 0)
    return errorf("head sizes must be positive multiples of 8, got ",
                  s.headSize, " and ", s.valueSize);
  return s;
}

TiledCache tiledCacheOf(const ProgramShape &s, int64_t numBlocks) {
  return {s.blockSize, s.numKvHeads, s.headSize, s.kvParts, numBlocks, s.dtype};
}

uint32_t TiledCache::pageBytes() const {
  return uint32_t(kTileElements * byteWidth(dtype));
}

namespace {

/// Copies the host cache into (toDevice) or out of the tiled device pages.
void convertCache(const TiledCache &tc, Tensor &cache, KvLayout layout,
                  std::vector<uint8_t> &pages, bool toDevice) {
  size_t esz = byteWidth(cache.dtype());
  size_t tileBytes = kTileElements * esz;
  if (toDevice)
    pages.assign(size_t(tc.numPages()) * tileBytes, 0);
  // Where a row of the host cache starts: the paged cache's geometry
  // (core/KvCache.h), or the MLA cache's [NB, B, row].
  KvCacheGeometry paged;
  if (tc.parts == 2)
    paged = KvCacheGeometry::ofShape(cache.shape(), layout, cache.describe())
                .value();
  auto rowStart = [&](int64_t block, int64_t part, int64_t offset,
                      int64_t head) {
    if (tc.parts == 1)
      return (block * cache.dim(1) + offset) * cache.dim(2);
    return paged.rowOffset(static_cast<KvPart>(part), block, offset, head);
  };
  for (int64_t b = 0; b < tc.numBlocks; ++b)
    for (int64_t part = 0; part < tc.parts; ++part)
      for (int64_t g = 0; g < tc.numKvHeads; ++g)
        for (int64_t o = 0; o < tc.blockSize; ++o)
          for (int64_t dt = 0; dt < tc.dTiles(); ++dt) {
            int64_t page, row;
            tc.locate(b, o, part, g, dt, page, row);
            const int64_t rowBase = rowStart(b, part, o, g);
            int64_t columns = std::min<int64_t>(32, tc.rowSize - dt * 32);
            for (int64_t c = 0; c < columns; ++c) {
              int64_t host = rowBase + dt * 32 + c;
              uint8_t *dev = pages.data() + page * tileBytes +
                             faceOffset(uint32_t(row), uint32_t(c)) * esz;
              uint8_t *h = cache.data() + host * esz;
              if (toDevice)
                std::memcpy(dev, h, esz);
              else
                std::memcpy(h, dev, esz);
            }
          }
}

} // namespace

Result<Buffer> uploadCache(TTDevice &device, const TiledCache &tc,
                           const Tensor &cache, KvLayout layout) {
  std::vector<uint8_t> pages;
  convertCache(tc, const_cast<Tensor &>(cache), layout, pages,
               /*toDevice=*/true);
  return device.upload(pages.data(), tc.pageBytes(), uint32_t(tc.numPages()));
}

Status downloadCache(TTDevice &device, const DeviceCache &cache, Tensor &out,
                     KvLayout layout) {
  std::vector<uint8_t> pages(size_t(cache.layout.numPages()) *
                             cache.layout.pageBytes());
  ATTN_RETURN_IF_ERROR(device.read(cache.buffer, pages.data()));
  convertCache(cache.layout, out, layout, pages, /*toDevice=*/false);
  return Status::ok();
}

namespace {

Status checkDims(const Tensor &t, const char *name,
                 std::initializer_list<int64_t> dims, DType dtype) {
  if (t.dtype() != dtype)
    return errorf(name, " is ", t.describe(), ", the program wants ",
                  toString(dtype));
  if (t.rank() != int64_t(dims.size()))
    return errorf(name, " is ", t.describe(), ", the program wants rank ",
                  dims.size());
  int64_t i = 0;
  for (int64_t d : dims) {
    if (d >= 0 && t.dim(i) != d)
      return errorf(name, " is ", t.describe(), ", the program wants dim ", i,
                    " = ", d);
    ++i;
  }
  return Status::ok();
}

/// Reads an attention result: out (T * H pages of valueSize elements) and
/// lse (T pages of H f32). Buffers hold at least one page.
Result<AttentionOutput> readOutputs(TTDevice &device, const Buffer &out,
                                    const Buffer &lse, int64_t T, int64_t H,
                                    int64_t valueSize, DType dtype) {
  AttentionOutput result{Tensor(dtype, {T, H, valueSize}),
                         Tensor(DType::F32, {T, H})};
  std::vector<uint8_t> bytes(size_t(out.numPages) * out.pageSize);
  ATTN_RETURN_IF_ERROR(device.read(out, bytes.data()));
  std::memcpy(result.out.data(), bytes.data(), result.out.numBytes());
  bytes.assign(size_t(lse.numPages) * lse.pageSize, 0);
  ATTN_RETURN_IF_ERROR(device.read(lse, bytes.data()));
  std::memcpy(result.lse.data(), bytes.data(), result.lse.numBytes());
  return result;
}

/// Runs merge program `merge` over the `states` partial states in
/// partialOut (pages (s * T + t) * H + h of Dv elements) and partialLse (pages
/// s * T + t of H f32) on `device`, and reads the merged result back.
Result<AttentionOutput> runMerge(ScopedBuffers &buffers, const Program &merge,
                                 const Buffer &partialOut,
                                 const Buffer &partialLse, int64_t T,
                                 int64_t H, int64_t valueSize, DType dtype) {
  TTDevice &device = buffers.device();
  const ProgramDescription &d = merge.description;
  if (d.op != "merge_states")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not merge_states");
  uint32_t esz = uint32_t(byteWidth(dtype));
  Result<Buffer> out = buffers.create(uint32_t(valueSize * esz),
                                      uint32_t(std::max<int64_t>(T * H, 1)));
  if (!out)
    return out.status();
  Result<Buffer> lse =
      buffers.create(uint32_t(H * 4), uint32_t(std::max<int64_t>(T, 1)));
  if (!lse)
    return lse.status();
  std::vector<std::map<std::string, uint32_t>> units;
  for (int64_t r = 0; r < T * H; r += 32)
    units.push_back({{"row_begin", uint32_t(r)},
                     {"num_rows", uint32_t(std::min<int64_t>(32, T * H - r))}});
  std::map<std::string, uint32_t> named = {
      {"partial_out_addr", partialOut.address},
      {"partial_lse_addr", partialLse.address},
      {"out_addr", out->address},
      {"lse_addr", lse->address},
      {"num_tokens", uint32_t(T)},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches = layOutRuntimeArgs(merge, named, units);
  if (!launches)
    return launches.status();
  ATTN_RETURN_IF_ERROR(device.run(merge, *launches));
  return readOutputs(device, *out, *lse, T, H, valueSize, dtype);
}

/// The host cache's shape and dtype against the program's.
Status checkCacheTensor(const ProgramShape &s, const Tensor &kvCache,
                        KvLayout layout) {
  int64_t G = s.numKvHeads;
  if (s.kvParts == 1)
    ATTN_RETURN_IF_ERROR(
        checkDims(kvCache, "kv_cache", {-1, s.blockSize, s.headSize}, s.dtype));
  else if (layout == KvLayout::NHD)
    ATTN_RETURN_IF_ERROR(checkDims(kvCache, "kv_cache",
                                   {-1, 2, s.blockSize, G, s.headSize},
                                   s.dtype));
  else
    ATTN_RETURN_IF_ERROR(checkDims(kvCache, "kv_cache",
                                   {-1, 2, G, s.blockSize, s.headSize},
                                   s.dtype));
  return Status::ok();
}

/// A device cache's layout against the program's.
Status checkDeviceCache(const ProgramDescription &d, const ProgramShape &s,
                        const DeviceCache &kvCache) {
  if (kvCache.layout == tiledCacheOf(s, kvCache.layout.numBlocks))
    return Status::ok();
  return errorf("program '", d.name,
                "' reads a tiled cache of another shape than its own");
}

/// The query against the program's, and the optional tensors it was
/// compiled to take.
Status checkAttentionInputs(const ProgramDescription &d, const ProgramShape &s,
                            const Tensor &query, const Tensor *sinks,
                            const Tensor *alibiSlopes) {
  ATTN_RETURN_IF_ERROR(
      checkDims(query, "query", {-1, s.numHeads, s.headSize}, s.dtype));
  if (s.sinks && !sinks)
    return errorf("program '", d.name, "' was compiled with sinks");
  if (s.alibi && !alibiSlopes)
    return errorf("program '", d.name, "' was compiled with ALiBi slopes");
  return Status::ok();
}

/// The block table, one page per row padded to the 256-byte chunks the
/// reader reads.
Result<Buffer> uploadBlockTable(ScopedBuffers &buffers,
                                const Tensor &blockTable) {
  uint32_t btCols = uint32_t(blockTable.dim(1));
  uint32_t btPage = (std::max<uint32_t>(btCols, 1) * 4 + 255) / 256 * 256;
  std::vector<uint8_t> btBytes(size_t(btPage) * blockTable.dim(0), 0);
  for (int64_t r = 0; r < blockTable.dim(0); ++r)
    std::memcpy(btBytes.data() + r * btPage,
                blockTable.data() + r * btCols * 4, btCols * 4);
  return buffers.upload(btBytes.data(), btPage, uint32_t(blockTable.dim(0)));
}

/// A per-head parameter (sinks, ALiBi slopes) as one page of H f32; zeros
/// when the call has none.
Result<Buffer> uploadHeadPage(ScopedBuffers &buffers, const Tensor *t,
                              int64_t H, const char *what) {
  std::vector<uint8_t> bytes(size_t(H) * 4, 0);
  if (t) {
    if (t->dtype() != DType::F32 || t->numElements() != H)
      return errorf(what, " must be [", H, "] f32");
    std::memcpy(bytes.data(), t->data(), bytes.size());
  }
  return buffers.upload(bytes.data(), uint32_t(H * 4), 1);
}

/// The keys [lo, hi] position `p` of a request of `seqLen` keys sees; empty
/// when hi < lo. Without causality p may be negative (cross-attention, fewer
/// keys than queries), and a window may then leave a row no key.
std::pair<int64_t, int64_t> visibleKeys(const ProgramShape &s, int64_t p,
                                        int64_t seqLen) {
  int64_t lo = s.windowLeft >= 0 ? std::max<int64_t>(0, p - s.windowLeft) : 0;
  int64_t hi = seqLen - 1;
  if (s.causal)
    hi = std::min(hi, p);
  else if (s.windowRight >= 0)
    hi = std::min(hi, p + s.windowRight);
  return {lo, hi};
}

/// Writes the contract's result for every row that sees no key: out 0 and
/// lse -inf (the sink with sinks). The kernel's additive mask cannot empty a
/// row (a score of -1e30 still gets weight), so such rows are set here.
void clearRowsWithoutKeys(AttentionOutput &result, const ProgramShape &s,
                          const CommonAttentionMetadata &md,
                          const Tensor *sinks) {
  int64_t H = s.numHeads, Dv = result.out.dim(2);
  for (int64_t r = 0; r < md.numReqs; ++r) {
    int64_t context = md.numComputedTokens[r];
    for (int64_t i = 0; i < md.queryLens[r]; ++i) {
      auto [lo, hi] = visibleKeys(s, context + i, md.seqLens[r]);
      if (lo <= hi)
        continue;
      int64_t t = md.queryStartLoc[r] + i;
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t d = 0; d < Dv; ++d)
          result.out.setFloat(result.out.offset({t, h, d}), 0.0);
        result.lse.setFloat(result.lse.offset({t, h}),
                            sinks ? sinks->getFloat(h) : -INFINITY);
      }
    }
  }
}

/// Work units: the query rows of one request and kv head, 32 per unit; a
/// row is (query token, head of the group), token-major, so a decode packs
/// the group's heads into one tile as sdpa_decode does. Each unit's key
/// tiles are the ones its rows can see, in `s.numKvSplits` contiguous
/// ranges (a range without keys makes no unit).
std::vector<std::map<std::string, uint32_t>>
attentionUnits(const ProgramShape &s, const CommonAttentionMetadata &md,
               int64_t T) {
  int64_t H = s.numHeads, G = s.numKvHeads, hpg = H / G;
  int64_t splits = s.numKvSplits;
  std::vector<std::map<std::string, uint32_t>> units;
  for (int64_t r = 0; r < md.numReqs; ++r) {
    int64_t qLen = md.queryLens[r], seqLen = md.seqLens[r];
    int64_t context = seqLen - qLen;
    int64_t rows = qLen * hpg;
    for (int64_t g = 0; g < G; ++g)
      for (int64_t rowBegin = 0; rowBegin < rows; rowBegin += 32) {
        int64_t numRows = std::min<int64_t>(32, rows - rowBegin);
        int64_t pMin = context + rowBegin / hpg;
        int64_t pMax = context + (rowBegin + numRows - 1) / hpg;
        int64_t lo = visibleKeys(s, pMin, seqLen).first;
        int64_t hi = visibleKeys(s, pMax, seqLen).second;
        // No keys for any row (clearRowsWithoutKeys writes them).
        if (hi < lo)
          continue;
        // Key tiles [lo / 32, hi / 32] in `splits` contiguous ranges.
        int64_t ktBegin = lo / 32, ktCount = hi / 32 + 1 - ktBegin;
        for (int64_t split = 0; split < splits; ++split) {
          int64_t b = ktBegin + ktCount * split / splits;
          int64_t e = ktBegin + ktCount * (split + 1) / splits;
          if (b == e)
            continue;
          units.push_back({{"req", uint32_t(r)},
                           {"kv_head", uint32_t(g)},
                           {"row_begin", uint32_t(rowBegin)},
                           {"num_rows", uint32_t(numRows)},
                           {"q_start", uint32_t(md.queryStartLoc[r])},
                           {"context", uint32_t(context)},
                           {"seq_len", uint32_t(seqLen)},
                           {"kt_begin", uint32_t(b)},
                           {"kt_end", uint32_t(e)},
                           {"key_begin", uint32_t(lo)},
                           {"key_end", uint32_t(hi + 1)},
                           {"out_page_base", uint32_t(split * T * H)},
                           {"lse_page_base", uint32_t(split * T)}});
        }
      }
  }
  return units;
}

} // namespace

Result<AttentionOutput>
runAttentionProgram(TTDevice &device, const Program &program,
                    const Tensor &query, const Tensor &kvCache,
                    const Tensor &blockTable, const Tensor &seqLens,
                    const Tensor *queryStartLoc, const Tensor *sinks,
                    const Tensor *alibiSlopes, KvLayout layout) {
  auto shapeOr = readProgramShape(program.description);
  if (!shapeOr)
    return shapeOr.status();
  ATTN_RETURN_IF_ERROR(checkCacheTensor(*shapeOr, kvCache, layout));
  TiledCache tc = tiledCacheOf(*shapeOr, kvCache.dim(0));
  Result<Buffer> buffer = uploadCache(device, tc, kvCache, layout);
  if (!buffer)
    return buffer.status();
  Result<AttentionOutput> result = runAttentionProgram(
      device, program, query, DeviceCache{*buffer, tc}, blockTable, seqLens,
      queryStartLoc, sinks, alibiSlopes);
  device.releaseBuffer(*buffer);
  return result;
}

Result<AttentionOutput>
runAttentionProgram(TTDevice &device, const Program &program,
                    const Tensor &query, const DeviceCache &kvCache,
                    const Tensor &blockTable, const Tensor &seqLens,
                    const Tensor *queryStartLoc, const Tensor *sinks,
                    const Tensor *alibiSlopes) {
  const ProgramDescription &d = program.description;
  if (d.op != "paged_attention" && d.op != "mla_decode")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not attention");
  auto shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t H = s.numHeads;
  ATTN_RETURN_IF_ERROR(checkAttentionInputs(d, s, query, sinks, alibiSlopes));
  ATTN_RETURN_IF_ERROR(checkDeviceCache(d, s, kvCache));

  // One query per request for MLA.
  Tensor mlaQsl;
  if (!queryStartLoc) {
    mlaQsl = Tensor(DType::I32, {query.dim(0) + 1});
    for (int64_t i = 0; i <= query.dim(0); ++i)
      mlaQsl.setInt(i, i);
    queryStartLoc = &mlaQsl;
  }
  auto mdOr = makeCommonAttentionMetadata(*queryStartLoc, seqLens, &blockTable,
                                          nullptr, s.causal);
  if (!mdOr)
    return mdOr.status();
  const CommonAttentionMetadata &md = *mdOr;
  ATTN_RETURN_IF_ERROR(checkNumTokens(md, query.dim(0)));
  ATTN_RETURN_IF_ERROR(
      checkCacheBounds(md, kvCache.layout.numBlocks, s.blockSize));

  int64_t T = query.dim(0);
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  ScopedBuffers buffers(device);
  const Buffer *kv = &kvCache.buffer;
  Result<Buffer> q = buffers.upload(query.data(), uint32_t(s.headSize * esz),
                                uint32_t(T * H));
  if (!q)
    return q.status();
  Result<Buffer> bt = uploadBlockTable(buffers, blockTable);
  if (!bt)
    return bt.status();
  Result<Buffer> sinkBuf = uploadHeadPage(buffers, sinks, H, "sinks");
  if (!sinkBuf)
    return sinkBuf.status();
  Result<Buffer> slopeBuf =
      uploadHeadPage(buffers, alibiSlopes, H, "alibi slopes");
  if (!slopeBuf)
    return slopeBuf.status();
  // Split-KV: every split writes its partial state to its slice of the
  // outputs, which the merge program combines. A split without keys keeps
  // out = 0 and lse = -inf.
  int64_t splits = s.numKvSplits;
  if (splits > 1 && !program.merge)
    return errorf("program '", d.name, "' splits its work ", splits,
                  " ways but has no merge program");
  Result<Buffer> out =
      buffers.create(uint32_t(s.valueSize * esz),
                     uint32_t(std::max<int64_t>(splits * T * H, 1)));
  if (!out)
    return out.status();
  Result<Buffer> lse = buffers.create(
      uint32_t(H * 4), uint32_t(std::max<int64_t>(splits * T, 1)));
  if (!lse)
    return lse.status();
  if (splits > 1) {
    std::vector<float> noKeys(size_t(lse->numPages) * H, -INFINITY);
    ATTN_RETURN_IF_ERROR(device.write(*lse, noKeys.data()));
  }

  std::map<std::string, uint32_t> named = {
      {"q_addr", q->address},
      {"kv_addr", kv->address},
      {"bt_addr", bt->address},
      {"bt_page_stride", bt->alignedPageSize},
      {"out_addr", out->address},
      {"lse_addr", lse->address},
      {"sinks_addr", sinkBuf->address},
      {"alibi_addr", slopeBuf->address},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches =
      layOutRuntimeArgs(program, named, attentionUnits(s, md, T));
  if (!launches)
    return launches.status();
  ATTN_RETURN_IF_ERROR(device.run(program, *launches));
  Result<AttentionOutput> result =
      splits > 1 ? runMerge(buffers, *program.merge, *out, *lse, T, H,
                            s.valueSize, s.dtype)
                 : readOutputs(device, *out, *lse, T, H, s.valueSize, s.dtype);
  if (result)
    clearRowsWithoutKeys(*result, s, md, sinks);
  return result;
}

Result<AttentionOutput> runMergeStatesProgram(TTDevice &device,
                                              const Program &program,
                                              const Tensor &outA,
                                              const Tensor &lseA,
                                              const Tensor &outB,
                                              const Tensor &lseB) {
  const ProgramDescription &d = program.description;
  auto shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t H = s.numHeads, Dv = s.valueSize;
  ATTN_RETURN_IF_ERROR(checkDims(outA, "out_a", {-1, H, Dv}, s.dtype));
  int64_t T = outA.dim(0);
  ATTN_RETURN_IF_ERROR(checkDims(outB, "out_b", {T, H, Dv}, s.dtype));
  ATTN_RETURN_IF_ERROR(checkDims(lseA, "lse_a", {T, H}, DType::F32));
  ATTN_RETURN_IF_ERROR(checkDims(lseB, "lse_b", {T, H}, DType::F32));
  if (s.numStates != 2)
    return errorf("program '", d.name, "' merges ", s.numStates,
                  " states, merge_states has 2");
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  ScopedBuffers buffers(device);
  // Both states in one buffer each: state a then state b.
  std::vector<uint8_t> outs(size_t(2 * T * H * Dv) * esz);
  std::memcpy(outs.data(), outA.data(), outs.size() / 2);
  std::memcpy(outs.data() + outs.size() / 2, outB.data(), outs.size() / 2);
  std::vector<uint8_t> lses(size_t(2 * T * H) * 4);
  std::memcpy(lses.data(), lseA.data(), lses.size() / 2);
  std::memcpy(lses.data() + lses.size() / 2, lseB.data(), lses.size() / 2);
  Result<Buffer> partialOut =
      buffers.upload(outs.data(), uint32_t(Dv * esz), uint32_t(2 * T * H));
  if (!partialOut)
    return partialOut.status();
  Result<Buffer> partialLse =
      buffers.upload(lses.data(), uint32_t(H * 4), uint32_t(2 * T));
  if (!partialLse)
    return partialLse.status();
  return runMerge(buffers, program, *partialOut, *partialLse, T, H, Dv,
                  s.dtype);
}

Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Tensor &key, const Tensor &value,
                                 Tensor &kvCache, const Tensor &slotMapping,
                                 KvLayout layout) {
  auto shapeOr = readProgramShape(program.description);
  if (!shapeOr)
    return shapeOr.status();
  ATTN_RETURN_IF_ERROR(checkCacheTensor(*shapeOr, kvCache, layout));
  DeviceCache cache{{}, tiledCacheOf(*shapeOr, kvCache.dim(0))};
  Result<Buffer> buffer = uploadCache(device, cache.layout, kvCache, layout);
  if (!buffer)
    return buffer.status();
  cache.buffer = *buffer;
  Status s = runReshapeAndCacheProgram(device, program, key, value, cache,
                                       slotMapping);
  if (s.isOk())
    s = downloadCache(device, cache, kvCache, layout);
  device.releaseBuffer(*buffer);
  return s;
}

Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Tensor &key, const Tensor &value,
                                 const DeviceCache &kvCache,
                                 const Tensor &slotMapping) {
  const ProgramDescription &d = program.description;
  if (d.op != "reshape_and_cache")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not reshape_and_cache");
  auto shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  bool latent = s.kvParts == 1;
  int64_t G = s.numKvHeads, W = s.headSize;
  int64_t T = key.dim(0);
  if (latent) {
    ATTN_RETURN_IF_ERROR(checkDims(key, "kv_c", {-1, s.keyWidth}, s.dtype));
    ATTN_RETURN_IF_ERROR(checkDims(value, "k_pe", {T, s.valueWidth}, s.dtype));
  } else {
    ATTN_RETURN_IF_ERROR(checkDims(key, "key", {-1, G, W}, s.dtype));
    ATTN_RETURN_IF_ERROR(checkDims(value, "value", {T, G, W}, s.dtype));
  }
  ATTN_RETURN_IF_ERROR(checkDeviceCache(d, s, kvCache));
  ATTN_RETURN_IF_ERROR(
      checkSlotMapping(slotMapping, T, kvCache.layout.numBlocks, s.blockSize));

  uint32_t esz = uint32_t(byteWidth(s.dtype));
  ScopedBuffers buffers(device);
  Result<Buffer> k =
      buffers.upload(key.data(), uint32_t(s.keyWidth * esz), uint32_t(T * G));
  if (!k)
    return k.status();
  Result<Buffer> v = buffers.upload(value.data(), uint32_t(s.valueWidth * esz),
                                    uint32_t(T * G));
  if (!v)
    return v.status();
  Result<Buffer> slots = buffers.upload(slotMapping.data(), 8, uint32_t(T));
  if (!slots)
    return slots.status();

  std::vector<std::map<std::string, uint32_t>> units;
  for (int64_t t = 0; t < T; ++t)
    units.push_back({{"token", uint32_t(t)}});
  std::map<std::string, uint32_t> named = {
      {"key_addr", k->address},
      {"value_addr", v->address},
      {"slot_addr", slots->address},
      {"kv_addr", kvCache.buffer.address},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches = layOutRuntimeArgs(program, named, units);
  if (!launches)
    return launches.status();
  return device.run(program, *launches);
}

} // namespace attn::tt
