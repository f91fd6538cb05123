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

RowPages stickPages(int64_t rows, int64_t rowBytes) {
  return {uint32_t(rowBytes), uint32_t(rowBytes), uint32_t(rows)};
}

RowPages blockTablePages(int64_t R, int64_t M) {
  uint32_t row = uint32_t(M * 4);
  return {row, (std::max<uint32_t>(row, 4) + 255) / 256 * 256, uint32_t(R)};
}

RowPages headPages(int64_t H) { return stickPages(1, H * 4); }

namespace {

/// The host rows `data` as the pages `pages` lays out.
std::vector<uint8_t> padRows(const RowPages &pages, const void *data) {
  std::vector<uint8_t> bytes(size_t(pages.pageBytes) * pages.rows, 0);
  for (uint32_t r = 0; r < pages.rows; ++r)
    std::memcpy(bytes.data() + size_t(r) * pages.pageBytes,
                static_cast<const uint8_t *>(data) + size_t(r) * pages.rowBytes,
                pages.rowBytes);
  return bytes;
}

} // namespace

Result<Buffer> uploadRows(TTDevice &device, const RowPages &pages,
                          const void *data) {
  if (pages.pageBytes == pages.rowBytes)
    return device.upload(data, pages.pageBytes, pages.rows);
  std::vector<uint8_t> bytes = padRows(pages, data);
  return device.upload(bytes.data(), pages.pageBytes, pages.rows);
}

Status downloadRows(TTDevice &device, const Buffer &buffer,
                    const RowPages &pages, void *data) {
  std::vector<uint8_t> bytes(size_t(buffer.numPages) * buffer.pageSize);
  ATTN_RETURN_IF_ERROR(device.read(buffer, bytes.data()));
  for (uint32_t r = 0; r < pages.rows; ++r)
    std::memcpy(static_cast<uint8_t *>(data) + size_t(r) * pages.rowBytes,
                bytes.data() + size_t(r) * buffer.pageSize, pages.rowBytes);
  return Status::ok();
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
  ATTN_RETURN_IF_ERROR(downloadRows(
      device, out, stickPages(T * H, valueSize * byteWidth(dtype)),
      result.out.data()));
  ATTN_RETURN_IF_ERROR(
      downloadRows(device, lse, stickPages(T, H * 4), result.lse.data()));
  return result;
}

/// Runs merge program `merge` over the partial states in partialOut (pages
/// (s * T + t) * H + h of Dv elements) and partialLse (pages s * T + t of H
/// f32) on `device`, into out and lse.
Status runMerge(TTDevice &device, const Program &merge,
                const Buffer &partialOut, const Buffer &partialLse,
                const Buffer &out, const Buffer &lse, int64_t T, int64_t H) {
  const ProgramDescription &d = merge.description;
  if (d.op != "merge_states")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not merge_states");
  std::vector<std::map<std::string, uint32_t>> units;
  for (int64_t r = 0; r < T * H; r += 32)
    units.push_back({{"row_begin", uint32_t(r)},
                     {"num_rows", uint32_t(std::min<int64_t>(32, T * H - r))}});
  std::map<std::string, uint32_t> named = {
      {"partial_out_addr", partialOut.address},
      {"partial_lse_addr", partialLse.address},
      {"out_addr", out.address},
      {"lse_addr", lse.address},
      {"num_tokens", uint32_t(T)},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches = layOutRuntimeArgs(merge, named, units);
  if (!launches)
    return launches.status();
  return device.run(merge, *launches);
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

/// A per-head parameter (sinks, ALiBi slopes) as one page of H f32.
Result<Buffer> uploadHeadPage(ScopedBuffers &buffers, const Tensor &t,
                              int64_t H, const char *what) {
  if (t.dtype() != DType::F32 || t.numElements() != H)
    return errorf(what, " must be [", H, "] f32");
  return buffers.upload(t.data(), uint32_t(H * 4), 1);
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
/// row (a score of -1e30 still gets weight), so such rows (windows,
/// cross-attention) are set through the host: out and lse come back, and go
/// down again, only when there are any.
Status clearRowsWithoutKeys(TTDevice &device, const Buffer &out,
                            const Buffer &lse, int64_t T,
                            const ProgramShape &s,
                            const CommonAttentionMetadata &md,
                            const Tensor *sinks) {
  std::vector<int64_t> tokens;
  for (int64_t r = 0; r < md.numReqs; ++r) {
    int64_t context = md.numComputedTokens[r];
    for (int64_t i = 0; i < md.queryLens[r]; ++i) {
      auto [lo, hi] = visibleKeys(s, context + i, md.seqLens[r]);
      if (lo > hi)
        tokens.push_back(md.queryStartLoc[r] + i);
    }
  }
  if (tokens.empty())
    return Status::ok();
  int64_t H = s.numHeads, Dv = s.valueSize;
  Result<AttentionOutput> result =
      readOutputs(device, out, lse, T, H, Dv, s.dtype);
  if (!result)
    return result.status();
  for (int64_t t : tokens)
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t d = 0; d < Dv; ++d)
        result->out.setFloat(result->out.offset({t, h, d}), 0.0);
      result->lse.setFloat(result->lse.offset({t, h}),
                           sinks ? sinks->getFloat(h) : -INFINITY);
    }
  auto writeBack = [&](const Buffer &buffer, const Tensor &t) {
    std::vector<uint8_t> bytes(size_t(buffer.numPages) * buffer.pageSize, 0);
    std::memcpy(bytes.data(), t.data(), t.numBytes());
    return device.write(buffer, bytes.data());
  };
  ATTN_RETURN_IF_ERROR(writeBack(out, result->out));
  return writeBack(lse, result->lse);
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
  auto shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t H = s.numHeads, T = query.dim(0);
  ATTN_RETURN_IF_ERROR(checkAttentionInputs(d, s, query, sinks, alibiSlopes));
  if (blockTable.rank() != 2)
    return errorf("block_table is ", blockTable.describe(), ", not rank 2");
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  ScopedBuffers buffers(device);
  AttentionBuffers in;
  in.kvCache = kvCache;
  Result<Buffer> q = buffers.upload(query.data(), uint32_t(s.headSize * esz),
                                    uint32_t(T * H));
  if (!q)
    return q.status();
  in.query = *q;
  RowPages btPages = blockTablePages(blockTable.dim(0), blockTable.dim(1));
  std::vector<uint8_t> btBytes = padRows(btPages, blockTable.data());
  Result<Buffer> bt =
      buffers.upload(btBytes.data(), btPages.pageBytes, btPages.rows);
  if (!bt)
    return bt.status();
  in.blockTable = *bt;
  if (sinks) {
    Result<Buffer> b = uploadHeadPage(buffers, *sinks, H, "sinks");
    if (!b)
      return b.status();
    in.sinks = *b;
  }
  if (alibiSlopes) {
    Result<Buffer> b = uploadHeadPage(buffers, *alibiSlopes, H, "alibi slopes");
    if (!b)
      return b.status();
    in.alibiSlopes = *b;
  }
  Result<Buffer> out = buffers.create(uint32_t(s.valueSize * esz),
                                      uint32_t(std::max<int64_t>(T * H, 1)));
  if (!out)
    return out.status();
  in.out = *out;
  Result<Buffer> lse =
      buffers.create(uint32_t(H * 4), uint32_t(std::max<int64_t>(T, 1)));
  if (!lse)
    return lse.status();
  in.lse = *lse;
  ATTN_RETURN_IF_ERROR(runAttentionProgram(device, program, in, T, blockTable,
                                           seqLens, queryStartLoc, sinks));
  return readOutputs(device, *out, *lse, T, H, s.valueSize, s.dtype);
}

Status runAttentionProgram(TTDevice &device, const Program &program,
                           const AttentionBuffers &in, int64_t T,
                           const Tensor &blockTable, const Tensor &seqLens,
                           const Tensor *queryStartLoc, const Tensor *sinks) {
  const ProgramDescription &d = program.description;
  if (d.op != "paged_attention" && d.op != "mla_decode")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not attention");
  auto shapeOr = readProgramShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t H = s.numHeads;
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  if (in.query.pageSize != uint32_t(s.headSize * esz) ||
      in.query.numPages < uint64_t(T * H))
    return errorf("program '", d.name, "' reads ", T * H, " query rows of ",
                  s.headSize * esz, " bytes, its buffer has ",
                  in.query.numPages, " of ", in.query.pageSize);
  if (s.sinks != in.sinks.has_value())
    return errorf("program '", d.name, "' was compiled ",
                  s.sinks ? "with" : "without", " sinks");
  if (s.alibi != in.alibiSlopes.has_value())
    return errorf("program '", d.name, "' was compiled ",
                  s.alibi ? "with" : "without", " ALiBi slopes");
  ATTN_RETURN_IF_ERROR(checkDeviceCache(d, s, in.kvCache));

  // MLA (no query_start_loc) has one query per request.
  const int64_t numBlocks = in.kvCache.layout.numBlocks;
  Result<CommonAttentionMetadata> mdOr =
      queryStartLoc
          ? checkPagedBatch(*queryStartLoc, seqLens, blockTable, s.causal, T,
                            numBlocks, s.blockSize)
          : checkDecodeBatch(seqLens, blockTable, T, numBlocks, s.blockSize);
  if (!mdOr)
    return mdOr.status();
  const CommonAttentionMetadata &md = *mdOr;

  ScopedBuffers buffers(device);
  // Programs compiled without sinks or slopes still take an address: a
  // page of zeros, created so (nothing moves).
  auto headPage = [&](const std::optional<Buffer> &b) -> Result<Buffer> {
    if (b)
      return *b;
    return buffers.create(uint32_t(H * 4), 1);
  };
  Result<Buffer> sinkBuf = headPage(in.sinks);
  if (!sinkBuf)
    return sinkBuf.status();
  Result<Buffer> slopeBuf = headPage(in.alibiSlopes);
  if (!slopeBuf)
    return slopeBuf.status();
  // Split-KV: every split writes its partial state to its slice of scratch
  // buffers, which the merge program combines into out and lse. A split
  // without keys keeps out = 0 and lse = -inf.
  int64_t splits = s.numKvSplits;
  if (splits > 1 && !program.merge)
    return errorf("program '", d.name, "' splits its work ", splits,
                  " ways but has no merge program");
  Buffer out = in.out, lse = in.lse;
  if (splits > 1) {
    Result<Buffer> partialOut =
        buffers.create(uint32_t(s.valueSize * esz),
                       uint32_t(std::max<int64_t>(splits * T * H, 1)));
    if (!partialOut)
      return partialOut.status();
    Result<Buffer> partialLse = buffers.create(
        uint32_t(H * 4), uint32_t(std::max<int64_t>(splits * T, 1)));
    if (!partialLse)
      return partialLse.status();
    std::vector<float> noKeys(size_t(partialLse->numPages) * H, -INFINITY);
    ATTN_RETURN_IF_ERROR(device.write(*partialLse, noKeys.data()));
    out = *partialOut;
    lse = *partialLse;
  }

  std::map<std::string, uint32_t> named = {
      {"q_addr", in.query.address},
      {"kv_addr", in.kvCache.buffer.address},
      {"bt_addr", in.blockTable.address},
      {"bt_page_stride", in.blockTable.alignedPageSize},
      {"out_addr", out.address},
      {"lse_addr", lse.address},
      {"sinks_addr", sinkBuf->address},
      {"alibi_addr", slopeBuf->address},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches =
      layOutRuntimeArgs(program, named, attentionUnits(s, md, T));
  if (!launches)
    return launches.status();
  ATTN_RETURN_IF_ERROR(device.run(program, *launches));
  if (splits > 1)
    ATTN_RETURN_IF_ERROR(
        runMerge(device, *program.merge, out, lse, in.out, in.lse, T, H));
  return clearRowsWithoutKeys(device, in.out, in.lse, T, s, md, sinks);
}

Status runMergeStatesProgram(TTDevice &device, const Program &program,
                             const Tensor &outA, const Tensor &lseA,
                             const Tensor &outB, const Tensor &lseB,
                             const Buffer &out, const Buffer &lse) {
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
  return runMerge(device, program, *partialOut, *partialLse, out, lse, T, H);
}

Result<AttentionOutput> runMergeStatesProgram(TTDevice &device,
                                              const Program &program,
                                              const Tensor &outA,
                                              const Tensor &lseA,
                                              const Tensor &outB,
                                              const Tensor &lseB) {
  auto shapeOr = readProgramShape(program.description);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t T = outA.rank() == 3 ? outA.dim(0) : 0, H = s.numHeads;
  ScopedBuffers buffers(device);
  Result<Buffer> out =
      buffers.create(uint32_t(s.valueSize * byteWidth(s.dtype)),
                     uint32_t(std::max<int64_t>(T * H, 1)));
  if (!out)
    return out.status();
  Result<Buffer> lse =
      buffers.create(uint32_t(H * 4), uint32_t(std::max<int64_t>(T, 1)));
  if (!lse)
    return lse.status();
  ATTN_RETURN_IF_ERROR(runMergeStatesProgram(device, program, outA, lseA, outB,
                                             lseB, *out, *lse));
  return readOutputs(device, *out, *lse, T, H, s.valueSize, s.dtype);
}

/// The shape of a reshape_and_cache program, or why `d` is not one.
static Result<ProgramShape> cacheWriteShape(const ProgramDescription &d) {
  if (d.op != "reshape_and_cache")
    return errorf("program '", d.name, "' computes ", d.op,
                  ", not reshape_and_cache");
  return readProgramShape(d);
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
  Result<ProgramShape> shapeOr = cacheWriteShape(d);
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
  // The cache is checked by the buffer form below; the slots here, against
  // the tokens of `key`, before anything is uploaded.
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
  return runReshapeAndCacheProgram(device, program, *k, *v, *slots, kvCache,
                                   slotMapping);
}

Status runReshapeAndCacheProgram(TTDevice &device, const Program &program,
                                 const Buffer &key, const Buffer &value,
                                 const Buffer &slots,
                                 const DeviceCache &kvCache,
                                 const Tensor &slotMapping) {
  const ProgramDescription &d = program.description;
  Result<ProgramShape> shapeOr = cacheWriteShape(d);
  if (!shapeOr)
    return shapeOr.status();
  const ProgramShape &s = *shapeOr;
  int64_t T = slotMapping.numElements(), G = s.numKvHeads;
  uint32_t esz = uint32_t(byteWidth(s.dtype));
  ATTN_RETURN_IF_ERROR(checkDeviceCache(d, s, kvCache));
  ATTN_RETURN_IF_ERROR(
      checkSlotMapping(slotMapping, T, kvCache.layout.numBlocks, s.blockSize));
  if (key.pageSize != uint32_t(s.keyWidth * esz) ||
      value.pageSize != uint32_t(s.valueWidth * esz) ||
      key.numPages < uint64_t(T * G) || value.numPages < uint64_t(T * G) ||
      slots.pageSize != 8 || slots.numPages < uint64_t(T))
    return errorf("program '", d.name,
                  "': its key, value or slot buffers are not laid out for ", T,
                  " tokens");

  std::vector<std::map<std::string, uint32_t>> units;
  for (int64_t t = 0; t < T; ++t)
    units.push_back({{"token", uint32_t(t)}});
  std::map<std::string, uint32_t> named = {
      {"key_addr", key.address},
      {"value_addr", value.address},
      {"slot_addr", slots.address},
      {"kv_addr", kvCache.buffer.address},
      {"num_dram_banks", device.numDramBanks()}};
  auto launches = layOutRuntimeArgs(program, named, units);
  if (!launches)
    return launches.status();
  return device.run(program, *launches);
}

} // namespace attn::tt
