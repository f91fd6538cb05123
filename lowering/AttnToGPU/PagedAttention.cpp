//===- PagedAttention.cpp - paged_attention as a GPU kernel ---------------===//
//
// One workgroup per query token t and kv head g (and split, with split-KV)
// runs the online softmax of the H/G query heads that read kv head g, so
// each key and value row is loaded once per group. Decode reads the whole
// context per workgroup, so the kernel is built to keep many loads in
// flight:
//
//  - A row of the head dimension is spread over L lanes, each owning chunks
//    of w contiguous elements (w from the target's widest load: 8 bf16 for
//    128-bit loads on NVIDIA); a subgroup of S lanes holds R = S / L rows.
//  - The workgroup is W subgroups, so W * R "row groups" take keys
//    round-robin, U keys per row group per step: every step issues U key
//    and U value loads before the first score is needed.
//  - A dot product is a lane-local partial sum and a sum over the row
//    group's L lanes (butterfly shuffles, or a subgroup reduction when L =
//    S). Each row group keeps its own online-softmax state.
//  - At the end the R states of a subgroup merge through shuffles, and the
//    W subgroups' normalized results through workgroup memory, as split-KV
//    partials merge.
//
// Visibility is an interval of key positions (causal, window_left and
// window_right each clip one end), so the kernel narrows the loop bounds
// instead of masking scores: no compare is emitted for a knob that is off.
// Keys past the interval's end in the last step are masked (score -inf).
//
// With row-vectors (the cpu target: one invocation per workgroup, a CPU
// core's SIMD registers instead of lanes) the walk is shaped for a core:
// a work item takes up to eight heads of its kv head and walks the visible
// keys a cache block at a time. It loads each key row as one vector,
// scores it for every head (a vector reduction per head) into a stack
// buffer, prefetching the same row of the next block; updates each head's
// online softmax once per block; then adds the block's values a chunk of
// columns at a time, the chunk's accumulators in registers and each
// probability broadcast from the buffer.
//
// A workgroup takes Hw of the H/G query heads of its kv head: all of them
// unless their state would not fit the lanes' register budget (MQA with
// hundreds of heads), so the kernel's size is bounded by the budget, not by
// the group.
//
// With the tiled prefill kernel (PagedPrefill.cpp, on by default), a batch
// is split at run time: this kernel takes the tokens of requests with at
// most the decode threshold of query tokens (vLLM's
// reorder_batch_threshold) and its workgroups for other tokens return at
// once; the tiled kernel takes the rest. Both grids are bounded by shapes,
// so the host plan launches both whatever the batch holds.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// How one workgroup covers the keys and the head dimension.
struct Tiling {
  int64_t subgroups;    ///< W
  int64_t lanesPerRow;  ///< L
  int64_t rowsPerGroup; ///< R = S / L
  int64_t keysPerStep;  ///< U, per row group
  int64_t heads;        ///< Hw, query heads per workgroup
  LaneLayout layout;    ///< a lane's share of a row

  int64_t rowGroups() const { return subgroups * rowsPerGroup; }
};

/// Most keys per row group and step.
constexpr int64_t kMaxKeysPerStep = 4;

Tiling chooseTiling(const PagedConfig &c, const LoweringOptions &o,
                    Type cacheElement) {
  LaneChunks chunks = chooseLaneChunks(o, cacheElement, c.headSize);
  if (o.rowVectors) {
    // One invocation holds whole rows (walkKeyBlocks): up to 8 query heads
    // share each key and value row, more heads take more workgroups.
    Tiling t{/*subgroups=*/1,
             /*lanesPerRow=*/1,
             /*rowsPerGroup=*/1,
             /*keysPerStep=*/1,
             /*heads=*/1,
             LaneLayout{c.headSize, 1, chunks.width, chunks.vectorLoads}};
    for (int64_t h = 1; h <= std::min<int64_t>(c.group(), 8); ++h)
      if (c.group() % h == 0)
        t.heads = h;
    return t;
  }
  int64_t budget = o.laneRegisters;
  int64_t S = o.subgroupSize;
  // A lane keeps a query row and an accumulator per head and the key and
  // value rows of up to kMaxKeysPerStep keys. The spread of a row: the
  // fewest lanes (the fewest shuffles per dot product), then the widest
  // chunks, with which `heads` heads fit the budget; where none does, the
  // one with the fewest values per lane.
  struct Spread {
    int64_t lanes, width, perLane;
  };
  auto spreadFor = [&](int64_t heads) {
    std::optional<Spread> fitting, smallest;
    for (int64_t lanes = 1; lanes <= S; lanes *= 2)
      for (int64_t w = chunks.width; w >= 1; w /= 2) {
        int64_t p = LaneLayout{c.headSize, lanes, w}.perLane();
        Spread sp{lanes, w, p};
        if (!fitting && 2 * (heads + kMaxKeysPerStep) * p <= budget)
          fitting = sp;
        if (!smallest || p < smallest->perLane)
          smallest = sp;
      }
    return fitting ? *fitting : *smallest;
  };
  Tiling t;
  // All query heads of the kv head share each key row, unless their state
  // alone passes the budget (MQA with hundreds of heads): then the largest
  // divisor of the group that fits, so that the kernel stays bounded.
  int64_t group = c.group();
  int64_t leastPerLane = spreadFor(1).perLane;
  t.heads = 1;
  for (int64_t h = 1; h <= group; ++h)
    if (group % h == 0 && (h == 1 || 2 * h * leastPerLane <= budget))
      t.heads = h;
  Spread sp = spreadFor(t.heads);
  t.lanesPerRow = sp.lanes;
  t.rowsPerGroup = S / sp.lanes;
  t.layout = LaneLayout{c.headSize, sp.lanes, sp.width,
                        chunks.vectorLoads && sp.width > 1};
  int64_t spare = budget - 2 * t.heads * sp.perLane;
  t.keysPerStep =
      std::clamp<int64_t>(spare / (2 * sp.perLane), 1, kMaxKeysPerStep);
  // The subgroups' normalized rows and lses, in workgroup memory.
  t.subgroups = o.attentionSubgroups;
  while (t.subgroups > 1 &&
         t.subgroups * t.heads * (c.headSize + 1) * 4 > o.maxWorkgroupMemory)
    --t.subgroups;
  return t;
}

/// Builds the per-token kernel's body (see the file comment), one concern
/// per method, each emitting its ops where the last one left off.
class DecodeBuilder {
public:
  DecodeBuilder(KernelBuilder &b, gpu::GPUFuncOp fn, const KernelArgs &args,
                const PagedConfig &c, const Tiling &tiling)
      : b(b), fn(fn), args(args), c(c), tiling(tiling), math{c},
        group(tiling.heads) {}

  void build() {
    placeLanes();
    locateToken();
    loadQueries();
    SoftmaxState state =
        mergeRowGroups(b.options.rowVectors ? walkKeyBlocks() : walkKeys());
    if (tiling.subgroups == 1)
      writeResults(state);
    else
      mergeSubgroups(state);
  }

private:
  /// The lane's place: its row group and its share of a row.
  void placeLanes();
  /// The token, its request and position, the visible keys (this split's
  /// share of them) and the workgroup's kv head and query heads.
  void locateToken();
  /// The lane's share of each query row (scaled), and the ALiBi slopes.
  void loadQueries();
  /// The online softmax over the visible keys, U keys per row group and
  /// step, every load of a step before its math.
  SoftmaxState walkKeys();
  /// walkKeys for one invocation with whole rows as vectors (row-vectors):
  /// a cache block of keys per step, scored into one vector per head
  /// before one softmax update, then its values.
  SoftmaxState walkKeyBlocks();
  /// The query rows walkKeyBlocks scores keys with, one f32 vector per
  /// head: scaled by qScale, or, where both the query and the cache are
  /// bf16, the unscaled rows widened (bf16Dot()).
  SmallVector<Value> queryRowVectors();
  /// Whether scores are dot products of bf16 rows, widened to f32 in the
  /// product (extf, mulf, reduction add): the form a target with bf16 dot
  /// products selects them from (attn-cpu-bf16-dot). qScale then scales
  /// each dot product instead of the query row.
  bool bf16Dot() const;
  /// The scores of keys [uLo, uHi) of `block` (start: its first key's
  /// index) into `probs`, a row of the block size per head, -inf at the
  /// other keys; prefetches the same rows of block `next`.
  void scoreBlock(KernelBuilder &kb, ArrayRef<Value> qRows, Value block,
                  Value next, Value start, Value uLo, Value uHi);
  /// Asks the memory system for row `offset` of kv head g's keys and values
  /// in `block`, a cache line at a time, ahead of their loads: a work item
  /// reads one row in (kv heads) of the cache, too sparse for the hardware
  /// prefetchers to run ahead.
  void prefetchRows(KernelBuilder &kb, Value block, Value offset);
  /// `accRows[h]` times alpha[h] plus probs[h][u] times value row u, for
  /// the keys [uLo, uHi), a chunk of columns at a time.
  void addValues(KernelBuilder &kb, ArrayRef<Value> alpha, Value block,
                 Value uLo, Value uHi);
  /// Columns [first, first + width) of row `offset` of kv head g's keys
  /// (part 0) or values (part 1) in `block`, as one f32 vector.
  Value loadCacheRow(KernelBuilder &kb, int64_t part, Value block, Value offset,
                     int64_t first, int64_t width);
  /// Merges the R row groups of a subgroup through shuffles.
  SoftmaxState mergeRowGroups(SoftmaxState final);
  /// One subgroup: writes out and lse (or the split's partials).
  void writeResults(const SoftmaxState &final);
  /// W subgroups: their normalized rows through workgroup memory, merged
  /// by their lses with the sink, as split-KV partials merge.
  void mergeSubgroups(const SoftmaxState &final);

  KernelBuilder &b;
  gpu::GPUFuncOp fn;
  const KernelArgs &args;
  const PagedConfig &c;
  const Tiling &tiling;
  ScoreMath math;
  int64_t group;

  Value cache, blockTable, alibi, sinks, out, lse, kScales, vScales;
  Value lane, sg, rowInSg, rowGroup, laneBase;
  Value t, y, r, numTokens, maxBlocks, numBlocks, pos, jlo, jhi, split, g,
      firstHead;
  Value qScale, vScale;
  SmallVector<SmallVector<Value>> q;
  /// Where each head's query row starts in the query buffer.
  SmallVector<Value> qRowStarts;
  SmallVector<Value> slopes;
  /// walkKeyBlocks' stack buffers: a block's scores, then probabilities
  /// (heads x block size), and the accumulator rows (heads x head size).
  Value probs, accRows;
};

void DecodeBuilder::placeLanes() {
  cache = args.of(fn, Arg::Cache);
  blockTable = args.of(fn, Arg::BlockTable);
  alibi = args.of(fn, Arg::AlibiSlopes);
  sinks = args.of(fn, Arg::Sinks);
  std::tie(out, lse) = args.outputs(fn);
  kScales = args.of(fn, Arg::KScale);
  vScales = args.of(fn, Arg::VScale);

  int64_t S = b.options.subgroupSize, L = tiling.lanesPerRow;
  int64_t R = tiling.rowsPerGroup;
  t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  y = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  // Lanes and subgroups as the device numbers them: the shuffles of a row
  // group need lanes that are neighbours in the subgroup.
  lane = b.create<gpu::LaneIdOp>(/*upper_bound=*/nullptr);
  sg = tiling.subgroups > 1
           ? Value(b.create<gpu::SubgroupIdOp>(/*upper_bound=*/nullptr))
           : b.idx(0);
  Value laneInRow = L == S ? lane : b.remui(lane, b.idx(L));
  rowInSg = L == S ? b.idx(0) : b.divui(lane, b.idx(L));
  rowGroup = b.addi(b.muli(sg, b.idx(R)), rowInSg);
  laneBase = b.muli(laneInRow, b.idx(tiling.layout.vectorWidth));
}

void DecodeBuilder::locateToken() {
  Value qsl = args.of(fn, Arg::QueryStartLoc);
  Value params = args.of(fn, Arg::Params);
  numTokens = b.loadIndex(params, b.idx(::attn::abi::kPagedNumTokens));
  Value numReqs = b.loadIndex(params, b.idx(::attn::abi::kPagedNumReqs));
  maxBlocks = b.loadIndex(params, b.idx(::attn::abi::kPagedMaxBlocksPerReq));
  numBlocks = b.loadIndex(params, b.idx(::attn::abi::kPagedNumBlocks));

  // Token -> request, and the token's absolute position.
  r = findRequest(b, qsl, t, numReqs);
  Value qStart = b.loadIndex(qsl, r);
  Value qEnd = b.loadIndex(qsl, b.addi(r, b.idx(1)));
  Value seqLen = b.loadIndex(args.of(fn, Arg::SeqLens), r);
  Value qLen = b.subi(qEnd, qStart);
  if (c.decodeMaxQueryLen) {
    // Longer requests are the tiled kernel's: the whole workgroup returns.
    auto mine = b.create<scf::IfOp>(
        b.cmpi(arith::CmpIPredicate::sle, qLen,
               b.idx(*c.decodeMaxQueryLen)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(mine.thenBlock());
  }
  Value context = b.subi(seqLen, qLen);
  pos = b.addi(context, b.subi(t, qStart));

  // The visible keys [jlo, jhi).
  std::tie(jlo, jhi) = visibleKeys(b, c, pos, seqLen);
  if (c.numSplits > 1) {
    // Split s takes the s-th of numSplits equal chunks of the interval.
    split = b.create<gpu::BlockIdOp>(gpu::Dimension::z);
    // Offsets from jlo, bounded by len, so that no sum passes jhi (i32).
    Value len = b.maxsi(b.subi(jhi, jlo), b.idx(0));
    Value chunk = b.ceilDiv(len, b.idx(c.numSplits));
    Value lo = b.addi(jlo, b.minsi(b.muli(split, chunk), len));
    jhi = b.addi(lo, b.minsi(chunk, b.subi(jhi, lo)));
    jlo = lo;
  }

  // Workgroup y takes heads [firstHead, firstHead + Hw) of kv head g.
  int64_t slices = c.group() / group;
  g = slices == 1 ? y : b.divui(y, b.idx(slices));
  firstHead = b.muli(g, b.idx(c.group()));
  if (slices > 1)
    firstHead = b.addi(firstHead,
                       b.muli(b.remui(y, b.idx(slices)), b.idx(group)));
}

void DecodeBuilder::loadQueries() {
  Value query = args.of(fn, Arg::Query);
  std::tie(qScale, vScale) = math.rowScales(b, kScales, vScales, g);
  for (int64_t i = 0; i < group; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value row = b.muli(b.addi(b.muli(t, b.idx(c.numHeads)), h),
                       b.idx(c.headSize));
    qRowStarts.push_back(row);
    // bf16 dot products load their rows themselves (queryRowVectors).
    if (!bf16Dot())
      q.push_back(b.loadLaneRow(query, row, laneBase, tiling.layout, qScale));
    if (alibi)
      slopes.push_back(math.slope(b, alibi, h));
  }
}

SoftmaxState DecodeBuilder::walkKeys() {
  const LaneLayout &layout = tiling.layout;
  int64_t L = tiling.lanesPerRow, U = tiling.keysPerStep;
  // The step at key j0 covers keys j0 + u * P + rowGroup, u < U, for the P
  // row groups; a key at or past jhi reads key jhi - 1 and is masked.
  int64_t P = tiling.rowGroups();
  Value last = b.subi(jhi, b.idx(1));
  Value lastBlock = b.subi(numBlocks, b.idx(1));
  Value lastColumn = b.subi(maxBlocks, b.idx(1));
  Value tableRow = b.muli(r, maxBlocks);
  Value ninf = b.f32(-std::numeric_limits<double>::infinity());
  SoftmaxState init = SoftmaxState::init(b, group, layout.perLane());
  int64_t perLane = layout.perLane();
  // The loop counts offsets from jlo, not keys: keys reach 2^31 - 1, where
  // a key j0 + P * U would leave i32 (SPIR-V's index) and wrap below jhi.
  // An empty interval's len is negative: no step runs.
  Value len = b.subi(jhi, jlo);
  auto loop = b.create<scf::ForOp>(
      b.idx(0), len, b.idx(P * U), init.flatten(),
      [&](OpBuilder &nested, Location loc, Value o0, ValueRange carried) {
        KernelBuilder kb(loc, nested, b.options);
        SoftmaxState state = SoftmaxState::unflatten(carried, group, perLane);
        Value first = kb.addi(o0, rowGroup);
        // All loads of the step first, then the math.
        SmallVector<Value> keys, valid;
        SmallVector<SmallVector<Value>> k, v;
        for (int64_t u = 0; u < U; ++u) {
          Value o = kb.addi(first, kb.idx(u * P));
          valid.push_back(kb.cmpi(arith::CmpIPredicate::slt, o, len));
          Value jc = kb.select(valid.back(), kb.addi(jlo, o), last);
          Value block = lookupBlock(kb, c.blockSize, blockTable, tableRow,
                                    lastColumn, lastBlock, jc);
          Value offset = kb.remui(jc, kb.idx(c.blockSize));
          keys.push_back(jc);
          k.push_back(kb.loadLaneRow(
              cache, cacheRowStart(kb, c, 0, block, offset, g), laneBase,
              layout, /*scale=*/Value(), c.fp8Format));
          v.push_back(kb.loadLaneRow(
              cache, cacheRowStart(kb, c, 1, block, offset, g), laneBase,
              layout, /*scale=*/Value(), c.fp8Format));
        }
        SmallVector<SmallVector<Value>> scores(U);
        for (int64_t u = 0; u < U; ++u) {
          Value dist;
          if (alibi)
            dist = keyDistance(kb, keys[u], pos);
          SmallVector<Value> partials = kb.partialDots(q, k[u]);
          for (int64_t i = 0; i < group; ++i) {
            Value s = math.score(kb, kb.clusterSum(partials[i], L),
                                 alibi ? slopes[i] : Value(), dist);
            scores[u].push_back(kb.select(valid[u], s, ninf));
          }
        }
        SoftmaxState next = updateSoftmax(kb, state, scores, v);
        kb.create<scf::YieldOp>(next.flatten());
      });
  return SoftmaxState::unflatten(loop.getResults(), group, perLane);
}

Value DecodeBuilder::loadCacheRow(KernelBuilder &kb, int64_t part, Value block,
                                  Value offset, int64_t first, int64_t width) {
  Type element = cast<MemRefType>(cache.getType()).getElementType();
  Value start =
      kb.addi(cacheRowStart(kb, c, part, block, offset, g), kb.idx(first));
  Value row = vector::LoadOp::create(kb, VectorType::get({width}, element),
                                     cache, ValueRange{start});
  return kb.toF32(row, c.fp8Format);
}

/// Columns of an accumulator row that the values pass keeps in registers
/// at once: `heads` x width <= 64 floats (four AVX-512 or eight AVX2
/// registers), at least 8, dividing the head size.
static int64_t valueChunk(int64_t headSize, int64_t heads) {
  int64_t width = std::max<int64_t>(8, 64 / heads);
  width = int64_t(1) << llvm::Log2_64(width);
  while (headSize % width != 0)
    width /= 2;
  return width;
}

void DecodeBuilder::prefetchRows(KernelBuilder &kb, Value block, Value offset) {
  for (int64_t part = 0; part < 2; ++part)
    kb.prefetchLines(cache, cacheRowStart(kb, c, part, block, offset, g),
                     c.headSize);
}

bool DecodeBuilder::bf16Dot() const {
  auto elementOf = [](Value buffer) {
    return cast<MemRefType>(buffer.getType()).getElementType();
  };
  return b.options.rowVectors && !c.fp8Format &&
         elementOf(args.of(fn, Arg::Query)).isBF16() &&
         elementOf(cache).isBF16();
}

SmallVector<Value> DecodeBuilder::queryRowVectors() {
  auto rowType = VectorType::get({c.headSize}, b.getF32Type());
  SmallVector<Value> rows;
  if (!bf16Dot()) {
    for (const SmallVector<Value> &row : q)
      rows.push_back(b.create<vector::FromElementsOp>(rowType, row));
    return rows;
  }
  Value query = args.of(fn, Arg::Query);
  for (Value start : qRowStarts) {
    Value raw = vector::LoadOp::create(
        b, VectorType::get({c.headSize}, b.getBF16Type()), query,
        ValueRange{start});
    rows.push_back(b.toF32(raw));
  }
  return rows;
}

void DecodeBuilder::scoreBlock(KernelBuilder &b, ArrayRef<Value> qRows,
                               Value block, Value next, Value start, Value uLo,
                               Value uHi) {
  auto scoresType = VectorType::get({c.blockSize}, b.getF32Type());
  Value ninf = b.create<vector::BroadcastOp>(
      scoresType, b.f32(-std::numeric_limits<double>::infinity()));
  for (int64_t i = 0; i < group; ++i)
    vector::StoreOp::create(b, ninf, probs, ValueRange{b.idx(i), b.idx(0)});
  b.create<scf::ForOp>(
      uLo, uHi, b.idx(1), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value u, ValueRange) {
        KernelBuilder kb(loc, nested, b.options);
        prefetchRows(kb, next, u);
        Value key = loadCacheRow(kb, 0, block, u, 0, c.headSize);
        Value dist;
        if (alibi)
          dist = keyDistance(kb, kb.addi(start, u), pos);
        for (int64_t i = 0; i < group; ++i) {
          Value products = kb.create<arith::MulFOp>(qRows[i], key, dotFlags());
          Value dot = vector::ReductionOp::create(
              kb, vector::CombiningKind::ADD, products, dotFlags());
          if (bf16Dot())
            dot = kb.mulf(dot, qScale);
          Value s = math.score(kb, dot, alibi ? slopes[i] : Value(), dist);
          memref::StoreOp::create(kb, s, probs, ValueRange{kb.idx(i), u});
        }
        kb.create<scf::YieldOp>();
      });
}

void DecodeBuilder::addValues(KernelBuilder &b, ArrayRef<Value> alpha,
                              Value block, Value uLo, Value uHi) {
  int64_t width = valueChunk(c.headSize, group);
  auto chunkType = VectorType::get({width}, b.getF32Type());
  for (int64_t first = 0; first < c.headSize; first += width) {
    SmallVector<Value> init;
    for (int64_t i = 0; i < group; ++i) {
      Value old = vector::LoadOp::create(b, chunkType, accRows,
                                         ValueRange{b.idx(i), b.idx(first)});
      init.push_back(
          b.mulf(old, b.create<vector::BroadcastOp>(chunkType, alpha[i])));
    }
    auto loop = b.create<scf::ForOp>(
        uLo, uHi, b.idx(1), init,
        [&](OpBuilder &nested, Location loc, Value u, ValueRange carried) {
          KernelBuilder kb(loc, nested, b.options);
          Value value = loadCacheRow(kb, 1, block, u, first, width);
          kb.create<scf::YieldOp>(
              addWeightedValue(kb, probs, u, value, carried));
        });
    for (int64_t i = 0; i < group; ++i)
      vector::StoreOp::create(b, loop.getResult(i), accRows,
                              ValueRange{b.idx(i), b.idx(first)});
  }
}

SoftmaxState DecodeBuilder::walkKeyBlocks() {
  int64_t D = c.headSize;
  auto rowType = VectorType::get({D}, b.getF32Type());
  SmallVector<Value> qRows = queryRowVectors();
  // The block's scores, then its probabilities, and the accumulator rows
  // live on the work item's stack: read back as vectors, or one element
  // broadcast (a memory operand of the FMA), they need no register shuffle.
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&fn.getBody().front());
    probs = memref::AllocaOp::create(
        b, MemRefType::get({group, c.blockSize}, b.getF32Type()));
    accRows = memref::AllocaOp::create(
        b, MemRefType::get({group, D}, b.getF32Type()));
  }
  Value zeros = b.create<vector::BroadcastOp>(rowType, b.f32(0.0));
  for (int64_t i = 0; i < group; ++i)
    vector::StoreOp::create(b, zeros, accRows, ValueRange{b.idx(i), b.idx(0)});
  // The state, carried: m and l of each head.
  SmallVector<Value> init(group,
                          b.f32(-std::numeric_limits<double>::infinity()));
  init.append(group, b.f32(0.0));
  Value bs = b.idx(c.blockSize);
  Value lastBlock = b.subi(numBlocks, b.idx(1));
  Value lastColumn = b.subi(maxBlocks, b.idx(1));
  Value tableRow = b.muli(r, maxBlocks);
  auto loop = b.create<scf::ForOp>(
      b.divui(jlo, bs), b.ceilDiv(jhi, bs), b.idx(1), init,
      [&](OpBuilder &nested, Location loc, Value kbi, ValueRange carried) {
        KernelBuilder kb(loc, nested, b.options);
        Value start = kb.muli(kbi, bs);
        Value block = lookupBlock(kb, c.blockSize, blockTable, tableRow,
                                  lastColumn, lastBlock, start);
        // The block's visible keys; the loops read no other slot.
        Value uLo = kb.maxsi(kb.subi(jlo, start), kb.idx(0));
        Value uHi = kb.minsi(kb.subi(jhi, start), bs);
        Value nextBlock =
            lookupBlock(kb, c.blockSize, blockTable, tableRow, lastColumn,
                        lastBlock, kb.addi(start, bs));
        scoreBlock(kb, qRows, block, nextBlock, start, uLo, uHi);
        BlockUpdates u = updateBlockSoftmaxes(kb, probs, carried, group);
        addValues(kb, u.alpha, block, uLo, uHi);
        kb.create<scf::YieldOp>(u.carried);
      });
  // Back to the lane form the rest of the kernel writes from.
  SoftmaxState state;
  for (int64_t i = 0; i < group; ++i) {
    state.m.push_back(loop.getResult(i));
    state.l.push_back(loop.getResult(group + i));
    Value row = vector::LoadOp::create(b, rowType, accRows,
                                       ValueRange{b.idx(i), b.idx(0)});
    SmallVector<Value> acc;
    for (int64_t d = 0; d < D; ++d)
      acc.push_back(vector::ExtractOp::create(b, row, d));
    state.acc.push_back(std::move(acc));
  }
  return state;
}

SoftmaxState DecodeBuilder::mergeRowGroups(SoftmaxState final) {
  // The R row groups of a subgroup: lanes with the same place in their row
  // are L, 2L, ... apart.
  int64_t S = b.options.subgroupSize;
  for (int64_t mask = tiling.lanesPerRow; mask < S; mask *= 2) {
    SoftmaxState other;
    for (int64_t i = 0; i < group; ++i) {
      other.m.push_back(b.shuffleXor(final.m[i], mask));
      other.l.push_back(b.shuffleXor(final.l[i], mask));
      SmallVector<Value> acc;
      for (Value x : final.acc[i])
        acc.push_back(b.shuffleXor(x, mask));
      other.acc.push_back(std::move(acc));
    }
    final = mergeSoftmax(b, final, other);
  }
  return final;
}

/// Row t (or row s * T + t of split s's scratch) of out and lse.
void DecodeBuilder::writeResults(const SoftmaxState &final) {
  Value row = split ? b.addi(b.muli(split, numTokens), t) : t;
  Value isRow0 = b.cmpi(arith::CmpIPredicate::eq, rowInSg, b.idx(0));
  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));
  for (int64_t i = 0; i < group; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value sinkLog2;
    if (sinks)
      sinkLog2 = b.mulf(b.loadF32(sinks, h), b.f32(kLog2E));
    HeadResult res = finalizeSoftmax(b, final, i, sinkLog2, vScale);
    Value lseAt = b.addi(b.muli(row, b.idx(c.numHeads)), h);
    auto store = [&](KernelBuilder &ib) {
      ib.storeLaneRow(res.out, out, ib.muli(lseAt, ib.idx(c.headSize)),
                      laneBase, tiling.layout);
    };
    if (tiling.rowsPerGroup > 1)
      emitIf(b, isRow0, store);
    else
      store(b);
    emitIf(b, isLane0,
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
  }
}

void DecodeBuilder::mergeSubgroups(const SoftmaxState &final) {
  // Every subgroup writes its normalized rows ([W, group, D] after W *
  // group lses) to workgroup memory; then the workgroup merges them.
  int64_t W = tiling.subgroups, S = b.options.subgroupSize;
  Value shared = addWorkgroupBuffer(fn, W * group * (c.headSize + 1));
  Value row = split ? b.addi(b.muli(split, numTokens), t) : t;
  Value isRow0 = b.cmpi(arith::CmpIPredicate::eq, rowInSg, b.idx(0));
  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));
  int64_t rowsBase = W * group;
  for (int64_t i = 0; i < group; ++i) {
    HeadResult res =
        finalizeSoftmax(b, final, i, /*sinkLog2=*/Value(), vScale);
    Value slot = b.addi(b.muli(sg, b.idx(group)), b.idx(i));
    emitIf(b, isRow0, [&](KernelBuilder &ib) {
      Value base = ib.addi(ib.idx(rowsBase), ib.muli(slot, ib.idx(c.headSize)));
      ib.storeLaneRow(res.out, shared, base, laneBase, tiling.layout);
    });
    emitIf(b, isLane0,
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, shared, slot); });
  }
  b.create<gpu::BarrierOp>();
  for (int64_t i = 0; i < group; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value sink = sinks ? b.loadF32(sinks, h) : Value();
    Value lseAt = b.addi(b.muli(row, b.idx(c.numHeads)), h);
    emitMerge(
        b, W, c.headSize, W * S,
        [&](KernelBuilder &kb, int64_t s) {
          return kb.loadF32(shared, kb.idx(s * group + i));
        },
        [&](KernelBuilder &kb, int64_t s, Value d) {
          return kb.loadF32(
              shared, kb.addi(kb.idx(rowsBase + (s * group + i) * c.headSize),
                              d));
        },
        sink,
        [&](KernelBuilder &kb, Value d, Value v) {
          kb.storeF32(v, out, kb.addi(kb.muli(lseAt, kb.idx(c.headSize)), d));
        },
        [&](KernelBuilder &kb, Value v) { kb.storeF32(v, lse, lseAt); });
  }
}

} // namespace

namespace {

/// What the kernels need of `op` (static shapes, knobs, the fp8 cache's
/// format and scales, the decode / prefill split), or failure with a
/// diagnostic.
FailureOr<PagedConfig> readPagedConfig(PagedAttentionOp op,
                                       MetadataOp metadata,
                                       const LoweringContext &ctx) {
  bool nhd = op.getLayout() == KVLayout::nhd;
  FailureOr<int64_t> numHeads =
      getStaticDim(op, op.getQuery(), 1, "the number of query heads");
  FailureOr<int64_t> headSize =
      getStaticDim(op, op.getQuery(), 2, "the head size");
  FailureOr<int64_t> blockSize =
      getStaticDim(op, op.getKvCache(), nhd ? 2 : 3, "the block size");
  FailureOr<int64_t> numKvHeads = getStaticDim(
      op, op.getKvCache(), nhd ? 3 : 2, "the number of kv heads");
  if (failed(numHeads) || failed(headSize) || failed(blockSize) ||
      failed(numKvHeads))
    return failure();

  PagedConfig c;
  c.numHeads = *numHeads;
  c.numKvHeads = *numKvHeads;
  c.headSize = *headSize;
  c.blockSize = *blockSize;
  c.nhd = nhd;
  c.causal = metadata.getCausal();
  c.hasAlibi = static_cast<bool>(op.getAlibiSlopes());
  c.hasSinks = static_cast<bool>(op.getSinks());
  c.scale = op.getScale().convertToDouble();
  c.softCap = op.getSoftCap().convertToDouble();
  c.windowLeft = op.getWindowLeftValue();
  c.windowRight = op.getWindowRightValue();
  // Prefill and decode share one op whose batch is only known at run time,
  // so splitting is opted into.
  c.numSplits = std::max<int64_t>(ctx.options.splitKv, 1);
  Type hostCacheElement =
      cast<ShapedType>(op.getKvCache().getType()).getElementType();
  c.fp8Format = getFp8Format(hostCacheElement);
  FailureOr<int64_t> kScales = getScaleCount(op, op.getKScale());
  FailureOr<int64_t> vScales = getScaleCount(op, op.getVScale());
  if (failed(kScales) || failed(vScales))
    return failure();
  c.kScaleCount = *kScales;
  c.vScaleCount = *vScales;
  Type cacheElement = getKernelElementType(hostCacheElement, ctx.options);
  if (ctx.options.tiledPrefill &&
      canTilePrefill(c, cacheElement, ctx.options)) {
    // The backend's reorder_batch_threshold says which requests are
    // decodes; without one, single-token queries are.
    int64_t threshold = 1;
    if (BackendAttr backend = op.getBackendAttr())
      threshold = backend.getReorderBatchThreshold().value_or(1);
    if (ctx.options.decodeThreshold >= 0)
      threshold = ctx.options.decodeThreshold;
    c.decodeMaxQueryLen = threshold;
  }
  return c;
}

} // namespace


LogicalResult mlir::attn::lowerPagedAttention(PagedAttentionOp op,
                                        LoweringContext &ctx) {
  auto metadata = op.getMetadata().getDefiningOp<MetadataOp>();
  if (!metadata)
    return op.emitOpError()
           << "expects its metadata to come from an attn.metadata op";
  FailureOr<PagedConfig> config = readPagedConfig(op, metadata, ctx);
  if (failed(config))
    return failure();
  const PagedConfig &c = *config;
  Type cacheElement = getKernelElementType(
      cast<ShapedType>(op.getKvCache().getType()).getElementType(),
      ctx.options);

  OpBuilder builder(op);
  Location loc = op.getLoc();
  HostLaunch launch(builder, loc, ctx.options);
  addPagedInputs(launch, op, metadata, c.hasSinks && c.numSplits == 1);
  Value numTokens = launch.dim(op.getQuery(), 0);
  auto [partialOut, partialLse] =
      launch.addResults(op.getOutInit(), op.getLseInit(), numTokens,
                        c.numSplits, c.numHeads, c.headSize);
  launch.addParam(::attn::abi::kPagedNumTokens, "num_tokens", numTokens);
  launch.addParam(::attn::abi::kPagedNumReqs, "num_reqs",
                  launch.dim(metadata.getSeqLens(), 0));
  launch.addParam(::attn::abi::kPagedMaxBlocksPerReq, "max_blocks_per_req",
                  launch.dim(metadata.getBlockTable(), 1));
  launch.addParam(::attn::abi::kPagedNumBlocks, "num_blocks",
                  launch.dim(op.getKvCache(), 0));
  boundPagedInputs(launch);
  // Token t = grid.x reads its query row and writes its out and lse rows,
  // or with split-KV row s * num_tokens + t of the partials.
  launch.boundRows(Arg::Query, {gridOf(0)});
  if (c.numSplits == 1) {
    launch.boundRows(Arg::Out, {gridOf(0)});
    launch.boundRows(Arg::Lse, {gridOf(0)});
  } else {
    launch.boundBy(gridOf(0), paramOf(::attn::abi::kPagedNumTokens));
    launch.bound(Arg::PartialOut, {paramOf(::attn::abi::kPagedNumTokens)},
                 c.numSplits * c.numHeads * c.headSize);
    launch.bound(Arg::PartialLse, {paramOf(::attn::abi::kPagedNumTokens)},
                 c.numSplits * c.numHeads);
  }

  Tiling tiling = chooseTiling(c, ctx.options, cacheElement);
  int64_t workgroupSize = tiling.subgroups * ctx.options.subgroupSize;
  gpu::GPUFuncOp fn = createKernel(
      ctx.module, loc,
      kernelName(op, c.numSplits == 1 ? "paged_attention"
                                      : "paged_attention_partial"),
      launch.getKernelArgTypes(), workgroupSize, launch.getParamNames(),
      "paged_attention");
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    DecodeBuilder(b, fn, launch.arguments(), c, tiling).build();
  }
  Value headSlices = arith::ConstantIndexOp::create(
      builder, loc, c.numKvHeads * (c.group() / tiling.heads));
  Value splits = arith::ConstantIndexOp::create(builder, loc, c.numSplits);
  launch.launch(fn, {numTokens, headSlices, splits}, workgroupSize);
  if (c.numSplits > 1) {
    std::optional<DecodeRows> decodeRows;
    if (c.decodeMaxQueryLen)
      decodeRows = DecodeRows{metadata.getQueryStartLoc(),
                              launch.dim(metadata.getSeqLens(), 0),
                              *c.decodeMaxQueryLen};
    launchSplitReduce(ctx, builder, loc,
                      kernelName(op, "paged_attention_reduce"), partialOut,
                      partialLse, op.getSinks(), op.getOutInit(),
                      op.getLseInit(), numTokens, c.numSplits, c.numHeads,
                      c.headSize, decodeRows);
  }
  launch.releaseScratch();
  if (c.decodeMaxQueryLen &&
      failed(launchTiledPrefill(op, metadata, c, ctx, builder)))
    return failure();
  return success();
}
