//===- PagedPrefill.cpp - paged_attention's tiled prefill kernel ----------===//
//
// FlashAttention-2 over a paged cache, on SIMT lanes. A workgroup takes a
// tile of Br query rows: Bq query tokens of one request times Hq of the H/G
// query heads that read one kv head, so every key and value row it loads
// serves all of them (GQA shares the tile). It walks the keys the tile can
// see in tiles of Bc keys: the workgroup copies each tile's key and value
// rows through the block table into workgroup memory (a tile may span
// cache blocks), then every row reads them from there.
//
//  - The workgroup is W subgroups; a row is spread over L lanes (chunks of
//    the staged words dealt round-robin, so a dot product is a lane-local
//    partial sum and a butterfly over L lanes), a subgroup holds S / L row
//    groups and each row group R rows: Br = W * (S / L) * R. A lane keeps
//    its share of the query and the accumulator of its R rows.
//  - A subgroup's rows are consecutive (tokens, then heads), so it narrows
//    the keys of each tile to the ones its rows can see; it takes them U at
//    a time and updates the online softmax of its rows once per step.
//  - Tiles outside the keys the workgroup's rows can see are never visited;
//    inside, keys a row cannot see score -inf (causal diagonal, windows,
//    keys past a step's end).
//
// L, R and U come from the lane register budget (lane-registers), Bc from
// the workgroup memory (max-workgroup-memory), W from attention-subgroups.
//
// Which workgroup takes which tokens. The grid is (ceil(T / Bq) + R_reqs,
// G * H / (G * Hq)): workgroup x < ceil(T / Bq) takes the tokens of
// [x * Bq, (x + 1) * Bq) that belong to the request of token x * Bq;
// workgroup ceil(T / Bq) + r takes the tokens of request r before the
// first multiple of Bq at or after its start. Every token is covered once,
// with bounds the host computes from shapes alone. Requests with at most
// the decode threshold of query tokens are left to the per-token kernel.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Most keys per step and rows per lane: beyond them the kernel grows
/// (compile time, instruction cache) for little more reuse. A row group
/// aims at kMinRowsPerLane rows with at least kMinKeysPerStep keys a step.
constexpr int64_t kMaxKeysPerStep = 4;
constexpr int64_t kMaxRowsPerLane = 16;
constexpr int64_t kMinRowsPerLane = 4;
constexpr int64_t kMinKeysPerStep = 1;
/// Most keys per tile.
constexpr int64_t kMaxKeysPerTile = 64;

int64_t floorPowerOf2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/// How one workgroup covers its rows, the keys and the head dimension.
struct PrefillTiling {
  int64_t subgroupSize; ///< S
  int64_t subgroups;    ///< W
  int64_t lanesPerRow;  ///< L
  int64_t rowsPerLane;  ///< R, per row group
  int64_t keysPerStep;  ///< U
  int64_t keysPerTile;  ///< Bc
  int64_t headsPerTile; ///< Hq
  int64_t tokensPerTile; ///< Bq
  /// Bytes of a staged chunk (4, 8, 16 or 32) and chunks of a cache row.
  int64_t chunkBytes, chunksPerRow;
  /// A lane's share of a row: the chunks of chunkBytes of the row dealt to
  /// the L lanes of its row group.
  LaneLayout layout;

  int64_t rowGroups() const { return subgroupSize / lanesPerRow; }
  int64_t rowsPerSubgroup() const { return rowGroups() * rowsPerLane; }
  int64_t rows() const { return subgroups * rowsPerSubgroup(); }
  int64_t workgroupSize() const { return subgroups * subgroupSize; }
  /// Staged chunks of one tile: keys, then values.
  int64_t tileChunks() const { return 2 * keysPerTile * chunksPerRow; }
};

int64_t elementBytes(Type element) {
  return element.getIntOrFloatBitWidth() / 8;
}

/// The widest chunk, up to the target's widest load (at least 4 bytes),
/// that divides a cache row; 0 when none does.
int64_t chooseChunkBytes(const PagedConfig &c, Type cacheElement,
                         const LoweringOptions &o) {
  int64_t rowBytes = c.headSize * elementBytes(cacheElement);
  int64_t widest = std::max<int64_t>(o.vectorLoadBytes, 4);
  for (int64_t bytes : {32, 16, 8, 4})
    if (bytes <= widest && rowBytes % bytes == 0 &&
        bytes % elementBytes(cacheElement) == 0)
      return bytes;
  return 0;
}

PrefillTiling chooseTiling(const PagedConfig &c, const LoweringOptions &o,
                           Type cacheElement) {
  PrefillTiling t;
  t.subgroupSize = o.subgroupSize;
  t.subgroups = o.attentionSubgroups;
  t.chunkBytes = chooseChunkBytes(c, cacheElement, o);
  int64_t w = t.chunkBytes / elementBytes(cacheElement);
  t.chunksPerRow = c.headSize / w;
  int64_t budget = o.laneRegisters;
  // A lane keeps, per row, its share of the query and the accumulator plus
  // m and l, and per key of a step the key's and value's share and a score
  // per row. Each key element a lane loads serves its R rows, so R is the
  // reuse; spreading a row over more lanes shrinks the share and lets R
  // grow, for a sum over the row's lanes per score. The fewest lanes with
  // which R reaches kMinRowsPerLane (a row's chunks permitting), else the
  // most rows.
  auto rowsFor = [&](int64_t lanes) {
    int64_t p = LaneLayout{c.headSize, lanes, w}.perLane();
    return (budget - 2 * kMinKeysPerStep * p) / (2 * p + 2 + kMinKeysPerStep);
  };
  t.lanesPerRow = 1;
  while (t.lanesPerRow < o.subgroupSize &&
         t.lanesPerRow * 2 <= t.chunksPerRow &&
         rowsFor(t.lanesPerRow) < kMinRowsPerLane)
    t.lanesPerRow *= 2;
  t.layout = LaneLayout{c.headSize, t.lanesPerRow, w};
  int64_t p = t.layout.perLane();
  t.rowsPerLane = std::clamp<int64_t>(
      floorPowerOf2(std::max<int64_t>(rowsFor(t.lanesPerRow), 1)), 1,
      kMaxRowsPerLane);
  int64_t R = t.rowsPerLane;
  int64_t keys = (budget - R * (2 * p + 2)) / (2 * p + R);
  t.keysPerStep = std::clamp<int64_t>(floorPowerOf2(std::max<int64_t>(keys, 1)),
                                      1, kMaxKeysPerStep);
  int64_t rowBytes = c.headSize * elementBytes(cacheElement);
  t.keysPerTile = std::min<int64_t>(
      kMaxKeysPerTile,
      floorPowerOf2(std::max<int64_t>(o.maxWorkgroupMemory / (2 * rowBytes),
                                      1)));
  t.keysPerStep = std::min(t.keysPerStep, t.keysPerTile);
  // The tile's rows: as many of a kv head's query heads as fit (a divisor
  // of the group, so head slices tile it), times the tokens that fill the
  // rest.
  int64_t group = c.group();
  t.headsPerTile = 1;
  for (int64_t h = 1; h <= group && h <= t.rows(); ++h)
    if (group % h == 0)
      t.headsPerTile = h;
  t.tokensPerTile = t.rows() / t.headsPerTile;
  return t;
}

/// One of a lane's rows: where it comes from and what it sees.
struct TileRow {
  Value active; ///< i1: the row is one of the tile's
  Value token, head;
  Value lo, hi; ///< visible keys [lo, hi), empty for inactive rows
  Value pos;    ///< absolute position p = context + i
  Value slope;  ///< ALiBi only
  SmallVector<Value> q;
};

class PrefillBuilder {
public:
  PrefillBuilder(KernelBuilder &b, gpu::GPUFuncOp fn, const KernelArgs &args,
                 const PagedConfig &c, const PrefillTiling &t,
                 Type cacheElement)
      : b(b), fn(fn), args(args), c(c), t(t), cacheElement(cacheElement),
        math{c} {}

  void build();

private:
  /// The lane's share of staged row `key` (a tile index) of `part` (0 keys,
  /// 1 values), in f32.
  SmallVector<Value> readStaged(KernelBuilder &kb, int64_t part, Value key);
  /// Copies the key and value rows of keys [kt, kt + Bc) (clamped to
  /// `last`) into workgroup memory.
  void stageTile(KernelBuilder &kb, Value kt, Value last);
  /// The online-softmax step over keys kt + [o0, o0 + U).
  SoftmaxState step(KernelBuilder &kb, Value kt, Value o0,
                    const SoftmaxState &state);
  /// The lane's place: its subgroup, row group and share of a row.
  void placeLanes();
  /// The lane's rows of the tile: place, visible keys, query (scaled).
  void loadRows(const TileWork &work);
  /// The online softmax over the key tiles the workgroup's rows see, each
  /// staged in workgroup memory, this subgroup's keys in steps of U.
  SoftmaxState walkTiles(const TileWork &work);
  /// Writes the active rows' out and lse.
  void writeRows(const SoftmaxState &final);

  KernelBuilder &b;
  gpu::GPUFuncOp fn;
  const KernelArgs &args;
  const PagedConfig &c;
  const PrefillTiling &t;
  Type cacheElement;
  ScoreMath math;

  Value query, cache, qsl, seqLens, blockTable, alibi, sinks, out, lse,
      params, kScales, vScales, shared;
  Value g, tableRow, lastColumn, lastBlock, laneInRow, laneBase, tid, sg,
      rowGroup, vScale;
  SmallVector<TileRow> rows;
};

SmallVector<Value> PrefillBuilder::readStaged(KernelBuilder &kb, int64_t part,
                                              Value key) {
  const LaneLayout &layout = t.layout;
  int64_t w = layout.vectorWidth;
  Value rowChunk = kb.muli(
      kb.addi(kb.idx(part * t.keysPerTile), key), kb.idx(t.chunksPerRow));
  SmallVector<Value> values;
  for (int64_t i = 0; i < layout.perLane(); i += w) {
    // Chunk of the lane's i-th element: round i / w of the row group.
    Value chunk = kb.addi(kb.idx((i / w) * t.lanesPerRow), laneInRow);
    Value inRow;
    if (layout.needsMask(i)) {
      inRow = kb.cmpi(arith::CmpIPredicate::ult, chunk,
                      kb.idx(t.chunksPerRow));
      chunk = kb.create<arith::MinUIOp>(chunk, kb.idx(t.chunksPerRow - 1));
    }
    Value words =
        kb.create<memref::LoadOp>(shared, ValueRange{kb.addi(rowChunk, chunk)});
    for (Value v : kb.unpackWords(words, c.fp8Format ? c.fp8Format
                                                     : cacheElement))
      values.push_back(inRow ? kb.select(inRow, v, kb.f32(0.0)) : v);
  }
  return values;
}

void PrefillBuilder::stageTile(KernelBuilder &kb, Value kt, Value last) {
  int64_t w = t.layout.vectorWidth;
  int64_t perPart = t.keysPerTile * t.chunksPerRow;
  kb.create<scf::ForOp>(
      tid, kb.idx(t.tileChunks()), kb.idx(t.workgroupSize()), ValueRange(),
      [&](OpBuilder &nested, Location loc, Value i, ValueRange) {
        KernelBuilder ib(loc, nested, b.options);
        Value part = ib.divui(i, ib.idx(perPart));
        Value rem = ib.remui(i, ib.idx(perPart));
        Value key = ib.divui(rem, ib.idx(t.chunksPerRow));
        Value chunk = ib.remui(rem, ib.idx(t.chunksPerRow));
        // Keys past the last one copy the last one: finite values that the
        // scores mask. kt + key may leave i32, last - kt does not.
        Value j = ib.addi(kt, ib.minsi(key, ib.subi(last, kt)));
        Value block = lookupBlock(ib, c.blockSize, blockTable, tableRow,
                                  lastColumn, lastBlock, j);
        Value offset = ib.remui(j, ib.idx(c.blockSize));
        // cacheRowStart(part) is linear in part: the value half is one
        // block-half further.
        Value keyRow = cacheRowStart(ib, c, 0, block, offset, g);
        Value halfStride =
            ib.idx(c.blockSize * c.numKvHeads * c.headSize);
        Value src = ib.addi(ib.addi(keyRow, ib.muli(part, halfStride)),
                            ib.muli(chunk, ib.idx(w)));
        Value words = ib.loadWords(cache, src, t.chunkBytes);
        ib.create<memref::StoreOp>(words, shared, ValueRange{i});
        ib.create<scf::YieldOp>();
      });
}

SoftmaxState PrefillBuilder::step(KernelBuilder &kb, Value kt, Value o0,
                                  const SoftmaxState &state) {
  int64_t U = t.keysPerStep, L = t.lanesPerRow;
  SmallVector<SmallVector<Value>> k, v;
  // Keys are offsets in the tile, compared with the rows' bounds moved by
  // kt: kt + o0 + u leaves i32 in the last tile of 2^31 - 1 keys.
  SmallVector<Value> keys;
  for (int64_t u = 0; u < U; ++u) {
    Value key = kb.addi(o0, kb.idx(u));
    keys.push_back(key);
    k.push_back(readStaged(kb, 0, key));
    v.push_back(readStaged(kb, 1, key));
  }
  Value ninf = kb.f32(-std::numeric_limits<double>::infinity());
  SmallVector<SmallVector<Value>> scores(U);
  SmallVector<SmallVector<Value>> q;
  for (const TileRow &row : rows)
    q.push_back(row.q);
  for (int64_t u = 0; u < U; ++u) {
    SmallVector<Value> partials = kb.partialDots(q, k[u]);
    for (auto [row, partial] : llvm::zip_equal(rows, partials)) {
      Value dot = kb.clusterSum(partial, L);
      Value dist =
          alibi ? keyDistance(kb, keys[u], kb.subi(row.pos, kt)) : Value();
      Value s = math.score(kb, dot, row.slope, dist);
      // Without a left window every row sees from key 0 on.
      Value visible = kb.cmpi(arith::CmpIPredicate::slt, keys[u],
                              kb.subi(row.hi, kt));
      if (c.windowLeft >= 0)
        visible = kb.create<arith::AndIOp>(
            kb.cmpi(arith::CmpIPredicate::sge, keys[u], kb.subi(row.lo, kt)),
            visible);
      scores[u].push_back(kb.select(visible, s, ninf));
    }
  }
  return updateSoftmax(kb, state, scores, v);
}

void PrefillBuilder::build() {
  placeLanes();
  TileWork work = beginTileWork(b, c, qsl, seqLens, params, t.tokensPerTile,
                                t.headsPerTile);
  g = work.kvHead;
  tableRow = work.tableRow;
  lastColumn = work.lastColumn;
  lastBlock = work.lastBlock;
  loadRows(work);
  writeRows(walkTiles(work));
  work.end(b);
}

void PrefillBuilder::placeLanes() {
  query = args.of(fn, Arg::Query);
  cache = args.of(fn, Arg::Cache);
  qsl = args.of(fn, Arg::QueryStartLoc);
  seqLens = args.of(fn, Arg::SeqLens);
  blockTable = args.of(fn, Arg::BlockTable);
  alibi = args.of(fn, Arg::AlibiSlopes);
  sinks = args.of(fn, Arg::Sinks);
  out = args.of(fn, Arg::Out);
  lse = args.of(fn, Arg::Lse);
  params = args.of(fn, Arg::Params);
  kScales = args.of(fn, Arg::KScale);
  vScales = args.of(fn, Arg::VScale);
  shared = addWorkgroupBuffer(
      fn, t.tileChunks(), getWordsType(b.getContext(), t.chunkBytes));

  int64_t S = t.subgroupSize, L = t.lanesPerRow;
  tid = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);
  // The shuffles of a row group need lanes as the device numbers them; with
  // one lane per row the kernel has no subgroup operation, and numbering
  // lanes by thread id keeps it free of subgroup builtins too (SPIR-V would
  // need the GroupNonUniform capability for them alone).
  Value lane;
  if (L > 1) {
    lane = b.create<gpu::LaneIdOp>(/*upper_bound=*/nullptr);
    sg = t.subgroups > 1
             ? Value(b.create<gpu::SubgroupIdOp>(/*upper_bound=*/nullptr))
             : b.idx(0);
  } else {
    lane = t.subgroups > 1 ? b.remui(tid, b.idx(S)) : tid;
    sg = t.subgroups > 1 ? b.divui(tid, b.idx(S)) : b.idx(0);
  }
  laneInRow = L == S ? lane : b.remui(lane, b.idx(L));
  rowGroup = L == S ? b.idx(0) : b.divui(lane, b.idx(L));
  laneBase = b.muli(laneInRow, b.idx(t.layout.vectorWidth));
}

void PrefillBuilder::loadRows(const TileWork &work) {
  int64_t R = t.rowsPerLane, Hq = t.headsPerTile;
  // The lane's rows: row (sg * R + i) * (S / L) + rowGroup of the tile,
  // token-major.
  Value qScale;
  std::tie(qScale, vScale) = math.rowScales(b, kScales, vScales, g);
  for (int64_t i = 0; i < R; ++i) {
    TileRow row;
    Value index = b.addi(
        b.muli(b.addi(b.muli(sg, b.idx(R)), b.idx(i)), b.idx(t.rowGroups())),
        rowGroup);
    RowPlace place = placeRow(b, work, index, Hq, work.headBase);
    row.active = place.active;
    row.token = place.token;
    row.head = place.head;
    row.pos = work.positionOf(b, row.token);
    auto [lo, hi] = visibleKeys(b, c, row.pos, work.seqLen);
    row.lo = lo;
    row.hi = b.select(row.active, hi, lo);
    if (alibi)
      row.slope = math.slope(b, alibi, row.head);
    Value qRow =
        b.muli(b.addi(b.muli(row.token, b.idx(c.numHeads)), row.head),
               b.idx(c.headSize));
    LaneLayout qLayout = t.layout;
    qLayout.vectorLoads = qLayout.vectorWidth > 1;
    row.q = b.loadLaneRow(query, qRow, laneBase, qLayout, qScale);
    rows.push_back(std::move(row));
  }
}

SoftmaxState PrefillBuilder::walkTiles(const TileWork &work) {
  int64_t R = t.rowsPerLane, Hq = t.headsPerTile;
  auto posOf = [&](Value token) { return work.positionOf(b, token); };
  // Keys the workgroup's rows see, and the ones this subgroup's rows see
  // (its rows are consecutive, so its first and last tokens bound them).
  Value wgLo = work.firstVisible(b), wgHi = work.lastVisibleEnd(b);
  int64_t sgRows = t.rowsPerSubgroup();
  auto sgToken = [&](int64_t rowInSg) {
    Value index = b.addi(b.muli(sg, b.idx(sgRows)), b.idx(rowInSg));
    return b.minsi(b.addi(work.tStart, b.divui(index, b.idx(Hq))),
                   work.lastToken);
  };
  Value sgLo = visibleKeys(b, c, posOf(sgToken(0)), work.seqLen).first;
  Value sgHi =
      visibleKeys(b, c, posOf(sgToken(sgRows - 1)), work.seqLen).second;
  // A subgroup whose rows all lie past the tile's tokens has no keys.
  Value sgActive = b.cmpi(
      arith::CmpIPredicate::ult,
      b.divui(b.muli(sg, b.idx(sgRows)), b.idx(Hq)), work.numRowTokens);
  sgHi = b.select(sgActive, sgHi, sgLo);
  Value lastKey = b.subi(wgHi, b.idx(1));

  int64_t Bc = t.keysPerTile, U = t.keysPerStep;
  SoftmaxState init = SoftmaxState::init(b, R, t.layout.perLane());
  // The loops count offsets (from wgLo, then in the tile), not keys: keys
  // reach 2^31 - 1, where kt + Bc or j0 + U would leave i32 (SPIR-V's
  // index) and wrap below the end. An empty range's end is negative.
  auto tiles = b.create<scf::ForOp>(
      b.idx(0), b.subi(wgHi, wgLo), b.idx(Bc), init.flatten(),
      [&](OpBuilder &nested, Location loc, Value ot, ValueRange carried) {
        KernelBuilder tb(loc, nested, b.options);
        Value kt = tb.addi(wgLo, ot);
        // The previous tile's readers are done before it is overwritten.
        tb.create<gpu::BarrierOp>();
        stageTile(tb, kt, lastKey);
        tb.create<gpu::BarrierOp>();
        // This subgroup's keys of the tile as offsets from kt, in steps of
        // U from a multiple of U (Bc is one, so a step never leaves it).
        Value lo = tb.maxsi(tb.subi(sgLo, kt), tb.idx(0));
        Value hi = tb.maxsi(tb.minsi(tb.idx(Bc), tb.subi(sgHi, kt)), lo);
        Value first = tb.muli(tb.divui(lo, tb.idx(U)), tb.idx(U));
        auto steps = tb.create<scf::ForOp>(
            first, hi, tb.idx(U), carried,
            [&](OpBuilder &inner, Location loc2, Value o0, ValueRange state) {
              KernelBuilder sb(loc2, inner, b.options);
              SoftmaxState s =
                  SoftmaxState::unflatten(state, R, t.layout.perLane());
              sb.create<scf::YieldOp>(step(sb, kt, o0, s).flatten());
            });
        tb.create<scf::YieldOp>(steps.getResults());
      });
  return SoftmaxState::unflatten(tiles.getResults(), R, t.layout.perLane());
}

void PrefillBuilder::writeRows(const SoftmaxState &final) {
  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, laneInRow, b.idx(0));
  for (auto [i, row] : llvm::enumerate(rows)) {
    Value sinkLog2;
    if (sinks)
      sinkLog2 = b.mulf(b.loadF32(sinks, row.head), b.f32(kLog2E));
    HeadResult res = finalizeSoftmax(b, final, i, sinkLog2, vScale);
    Value lseAt = b.addi(b.muli(row.token, b.idx(c.numHeads)), row.head);
    emitIf(b, row.active, [&](KernelBuilder &ib) {
      ib.storeLaneRow(res.out, out, ib.muli(lseAt, ib.idx(c.headSize)),
                      laneBase, t.layout);
      emitIf(ib, isLane0,
             [&](KernelBuilder &jb) { jb.storeF32(res.lse, lse, lseAt); });
    });
  }
}

} // namespace

TileWork mlir::attn::beginTileWork(KernelBuilder &b, const PagedConfig &c,
                                   Value qsl, Value seqLens, Value params,
                                   int64_t tokensPerTile,
                                   int64_t headsPerTile) {
  int64_t Bq = tokensPerTile, Hq = headsPerTile;
  Value x = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  Value y = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  Value numTokens = b.loadIndex(params, b.idx(::attn::abi::kPagedNumTokens));
  Value numReqs = b.loadIndex(params, b.idx(::attn::abi::kPagedNumReqs));
  Value maxBlocks =
      b.loadIndex(params, b.idx(::attn::abi::kPagedMaxBlocksPerReq));
  Value numBlocks = b.loadIndex(params, b.idx(::attn::abi::kPagedNumBlocks));

  // The request and tokens [tStart, tEnd) of this workgroup (see the file
  // comment).
  Value numChunks = b.ceilDiv(numTokens, b.idx(Bq));
  Value isChunk = b.cmpi(arith::CmpIPredicate::ult, x, numChunks);
  Value chunkStart = b.muli(x, b.idx(Bq));
  auto which = b.create<scf::IfOp>(
      isChunk,
      [&](OpBuilder &nested, Location loc) {
        KernelBuilder ib(loc, nested, b.options);
        ib.create<scf::YieldOp>(findRequest(ib, qsl, chunkStart, numReqs));
      },
      [&](OpBuilder &nested, Location loc) {
        // A grid wider than chunks + num_reqs (a crafted plan) repeats the
        // last request's piece rather than read past the metadata.
        KernelBuilder ib(loc, nested, b.options);
        Value last = ib.subi(numReqs, ib.idx(1));
        ib.create<scf::YieldOp>(ValueRange{
            ib.create<arith::MinUIOp>(ib.subi(x, numChunks), last)});
      });
  TileWork w;
  w.c = &c;
  w.request = which.getResult(0);
  w.qStart = b.loadIndex(qsl, w.request);
  Value qEnd = b.loadIndex(qsl, b.addi(w.request, b.idx(1)));
  w.seqLen = b.loadIndex(seqLens, w.request);
  Value qLen = b.subi(qEnd, w.qStart);
  // Clamped like tEnd, for query_start_loc no host checked (attn-run).
  w.tStart = b.select(isChunk, chunkStart, b.maxsi(w.qStart, b.idx(0)));
  // Rows past num_tokens are none of the launch's (the host checks
  // query_start_loc against the query; the params bound the buffers).
  Value tEnd = b.minsi(
      b.minsi(qEnd, numTokens),
      b.select(isChunk, b.addi(chunkStart, b.idx(Bq)),
               b.muli(b.ceilDiv(w.qStart, b.idx(Bq)), b.idx(Bq))));
  Value mine = b.create<arith::AndIOp>(
      b.cmpi(arith::CmpIPredicate::slt, w.tStart, tEnd),
      b.cmpi(arith::CmpIPredicate::sgt, qLen,
             b.idx(c.decodeMaxQueryLen.value_or(0))));
  // The condition is the same for the whole workgroup, so the barriers
  // inside stay in uniform control flow.
  w.guard = b.create<scf::IfOp>(mine, /*withElseRegion=*/false);
  b.setInsertionPointToStart(w.guard.thenBlock());
  w.context = b.subi(w.seqLen, qLen);
  w.numRowTokens = b.subi(tEnd, w.tStart);
  w.lastToken = b.subi(tEnd, b.idx(1));
  int64_t slices = c.group() / Hq;
  w.kvHead = b.divui(y, b.idx(slices));
  w.headBase = b.addi(b.muli(w.kvHead, b.idx(c.group())),
                      b.muli(b.remui(y, b.idx(slices)), b.idx(Hq)));
  w.tableRow = b.muli(w.request, maxBlocks);
  w.lastColumn = b.subi(maxBlocks, b.idx(1));
  w.lastBlock = b.subi(numBlocks, b.idx(1));
  return w;
}

Value TileWork::positionOf(KernelBuilder &b, Value token) const {
  return b.addi(context, b.subi(token, qStart));
}

Value TileWork::firstVisible(KernelBuilder &b) const {
  return visibleKeys(b, *c, positionOf(b, tStart), seqLen).first;
}

Value TileWork::lastVisibleEnd(KernelBuilder &b) const {
  return visibleKeys(b, *c, positionOf(b, lastToken), seqLen).second;
}

void TileWork::end(KernelBuilder &b) const {
  b.setInsertionPointAfter(guard);
}

RowPlace mlir::attn::placeRow(KernelBuilder &b, const TileWork &work,
                              Value row, int64_t headsPerTile,
                              Value headBase) {
  Value tokenOff = b.divui(row, b.idx(headsPerTile));
  RowPlace p;
  p.active = b.cmpi(arith::CmpIPredicate::ult, tokenOff, work.numRowTokens);
  p.token = b.minsi(b.addi(work.tStart, tokenOff), work.lastToken);
  p.head = b.addi(headBase, b.remui(row, b.idx(headsPerTile)));
  return p;
}

bool mlir::attn::canTilePrefill(const PagedConfig &c, Type cacheElement,
                                const LoweringOptions &options) {
  if (chooseChunkBytes(c, cacheElement, options) == 0)
    return false;
  int64_t rowBytes = c.headSize * elementBytes(cacheElement);
  return 2 * rowBytes <= options.maxWorkgroupMemory;
}

LogicalResult mlir::attn::launchTiledPrefill(PagedAttentionOp op,
                                             MetadataOp metadata,
                                             const PagedConfig &c,
                                             LoweringContext &ctx,
                                             OpBuilder &builder) {
  Location loc = op.getLoc();
  Type cacheElement = getKernelElementType(
      cast<ShapedType>(op.getKvCache().getType()).getElementType(),
      ctx.options);
  PrefillTiling tiling = chooseTiling(c, ctx.options, cacheElement);

  HostLaunch launch(builder, loc, ctx.options);
  addPagedInputs(launch, op, metadata, /*withSinks=*/op.getSinks() != nullptr);
  launch.addBuffer(Arg::Out, op.getOutInit());
  launch.addBuffer(Arg::Lse, op.getLseInit());
  Value numTokens = launch.dim(op.getQuery(), 0);
  Value numReqs = launch.dim(metadata.getSeqLens(), 0);
  launch.addParam(::attn::abi::kPagedNumTokens, "num_tokens", numTokens);
  launch.addParam(::attn::abi::kPagedNumReqs, "num_reqs", numReqs);
  launch.addParam(::attn::abi::kPagedMaxBlocksPerReq, "max_blocks_per_req",
                  launch.dim(metadata.getBlockTable(), 1));
  launch.addParam(::attn::abi::kPagedNumBlocks, "num_blocks",
                  launch.dim(op.getKvCache(), 0));
  boundPagedInputs(launch);
  // Rows are tokens below num_tokens (beginTileWork clamps what
  // query_start_loc says); workgroups past the chunks take request
  // grid.x - chunks, clamped to the last.
  launch.boundRows(Arg::Out, {paramOf(::attn::abi::kPagedNumTokens)});
  launch.boundRows(Arg::Lse, {paramOf(::attn::abi::kPagedNumTokens)});
  launch.gridChecked(0);

  // On matrix units when the target has them and the cache suits them,
  // with the SIMT tile's rows, so both kernels of any target share a grid
  // (and a host plan).
  std::optional<MatrixPlan> matrix = chooseMatrixPlan(
      c, cacheElement, tiling.rows(), tiling.subgroups, ctx.options);
  // Asked for and not possible: the kernel is right either way, but the
  // user should know it is not the one asked for (at the op's location,
  // without the op printed after it). A target's default (auto) is silent.
  if (!matrix && ctx.options.prefillMatrix != PrefillMatrix::None &&
      ctx.options.prefillMatrix != PrefillMatrix::Auto)
    mlir::emitWarning(loc)
        << "prefill-matrix: the tiled prefill kernel keeps SIMT products: "
           "matrix tiles need an f16 cache, or bf16 where bf16 is native "
           "(tf32 products; this one "
        << cast<ShapedType>(op.getKvCache().getType()).getElementType()
        << "), a head size (" << c.headSize << ") and tile rows ("
        << tiling.rows() << ") that are multiples of 16, at most "
        << tiling.subgroups * 16
        << " rows (16 per subgroup of the workgroup), and their "
           "buffers within matrix-workgroup-memory ("
        << matrixMemoryBudget(ctx.options) << " bytes)";
  int64_t workgroupSize = tiling.workgroupSize();
  int64_t tokensPerTile =
      matrix ? matrix->tokensPerTile : tiling.tokensPerTile;
  int64_t headsPerTile = matrix ? matrix->headsPerTile : tiling.headsPerTile;
  gpu::GPUFuncOp fn = createKernel(
      ctx.module, loc, kernelName(op, "paged_attention_prefill"),
      launch.getKernelArgTypes(), workgroupSize, launch.getParamNames(),
      "paged_attention");
  if (matrix)
    fn->setAttr(
        "attn.matrix_tile",
        builder.getDenseI64ArrayAttr(
            {matrix->tokensPerTile, matrix->headsPerTile, matrix->keysPerTile,
             matrix->subgroups, matrix->launchSubgroups}));
  else
    fn->setAttr("attn.tile",
                builder.getDenseI64ArrayAttr(
                    {tiling.tokensPerTile, tiling.headsPerTile,
                     tiling.keysPerTile, tiling.lanesPerRow,
                     tiling.rowsPerLane, tiling.keysPerStep}));
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    KernelArgs args = launch.arguments();
    if (matrix)
      buildMatrixPrefillKernel(b, fn, args, c, *matrix);
    else
      PrefillBuilder(b, fn, args, c, tiling, cacheElement).build();
  }
  // ceil(T / Bq) aligned chunks plus one head piece per request.
  Value bq = arith::ConstantIndexOp::create(builder, loc, tokensPerTile);
  Value chunks = arith::CeilDivUIOp::create(builder, loc, numTokens, bq);
  Value grid = arith::AddIOp::create(builder, loc, chunks, numReqs);
  Value slices = arith::ConstantIndexOp::create(
      builder, loc, c.numKvHeads * (c.group() / headsPerTile));
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  launch.launch(fn, {grid, slices, one}, workgroupSize);
  return success();
}
