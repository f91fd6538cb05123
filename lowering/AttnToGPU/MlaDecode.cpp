//===- MlaDecode.cpp - mla_decode as GPU kernels --------------------------===//
//
// Multi-head latent attention decode: one query per request, one kv head
// whose cache row holds the latent (the first kv_lora_rank = L values) and
// the rotary part. A workgroup (one subgroup) takes one request, a tile of
// query heads and one split of the request's keys: every cache row is read
// once for the whole tile, and its first L values, already in the lanes'
// registers, serve as the value. Lanes split the row as in paged_attention.
// With more than one split the partial states go to f32 scratch and a
// reduce kernel merges them.
//
// With row-vectors (the cpu target: one invocation per workgroup) the walk
// is shaped for a core, as paged_attention's decode kernel is: a work item
// takes up to 8 heads and walks its keys a cache block at a time. Each
// visible row is scored for every head of the tile a chunk of 16 columns at
// a time (one key chunk, one FMA per head into the head's own vector
// accumulator, the scaled query rows in a stack buffer), then summed once
// per head into a heads x block buffer, while the same row of the next
// block is prefetched; each head's online softmax is updated once per
// block; then the block's latent values are added a chunk of columns at a
// time for every head, the accumulators (heads x L, f32) on the stack. All
// 128 heads of DeepSeek read each row, so the arithmetic bounds the step;
// a tile of H heads does H multiply-adds per element loaded.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct MlaConfig {
  int64_t numHeads, rowSize, rank, blockSize, headsPerGroup, numSplits;
  double scale;
  /// An fp8 latent cache's format, null otherwise; its one scale (k_scale)
  /// dequantizes keys and values alike.
  Type fp8Format;
  /// A lane's share of a cache row and of its latent part: the same chunks
  /// (dividing both sizes), so the latent elements are the first ones.
  LaneLayout rowLayout, latentLayout;
  /// With row-vectors: the columns of a row each vector operation takes
  /// (dividing both sizes).
  int64_t chunk = 1;
};

/// Columns of a row one vector operation of the row-vectors kernel takes:
/// 16 f32 (one AVX-512 register, two AVX2 ones), or the widest power of two
/// below that divides the row and its latent part.
constexpr int64_t kRowChunk = 16;

/// What a work item takes: request r, the heads [firstHead, firstHead +
/// headsPerGroup) (some past H in the last tile when the tile does not
/// divide H), the keys [jlo, jhi) of its split (split null without
/// split-KV), and the launch's sizes.
struct MlaWork {
  Value r, firstHead, jlo, jhi, split;
  Value numReqs, maxBlocks, numBlocks;
  /// An fp8 cache's k_scale, else null.
  Value cacheScale;
  /// The factor each query element is loaded with: the softmax scale in
  /// log2 units times k_scale, so that the scores dequantize the keys.
  Value qScale;
};

/// The launch bounds of the mla_decode kernel: request r = grid.x reads
/// its query row, seq_lens[r] and block table row r * M + column (the
/// column clamped to M - 1, a block to num_blocks - 1), and writes its out
/// and lse rows, or row split * num_reqs + r of the partials.
void boundMlaLaunch(HostLaunch &launch, const MlaConfig &c) {
  using namespace ::attn::abi;
  launch.boundRows(Arg::Query, {gridOf(0)});
  launch.boundRows(Arg::Query, {paramOf(kMlaNumReqs)});
  launch.boundRows(Arg::SeqLens, {gridOf(0)});
  launch.bound(Arg::BlockTable, {gridOf(0), paramOf(kMlaMaxBlocksPerReq)}, 1,
               0, 1);
  launch.boundRows(Arg::Cache, {paramOf(kMlaNumBlocks)}, 0, 1);
  if (c.numSplits == 1) {
    launch.boundRows(Arg::Out, {gridOf(0)});
    launch.boundRows(Arg::Lse, {gridOf(0)});
    return;
  }
  launch.boundBy(gridOf(0), paramOf(kMlaNumReqs));
  launch.bound(Arg::PartialOut, {paramOf(kMlaNumReqs)},
               c.numSplits * c.numHeads * c.rank);
  launch.bound(Arg::PartialLse, {paramOf(kMlaNumReqs)},
               c.numSplits * c.numHeads);
}

MlaWork locateWork(KernelBuilder &b, gpu::GPUFuncOp fn, const KernelArgs &args,
                   const MlaConfig &c) {
  MlaWork w;
  Value params = args.of(fn, Arg::Params);
  w.cacheScale = b.loadScale(args.of(fn, Arg::KScale), 1, Value());
  w.numReqs = b.loadIndex(params, b.idx(::attn::abi::kMlaNumReqs));
  w.maxBlocks = b.loadIndex(params, b.idx(::attn::abi::kMlaMaxBlocksPerReq));
  w.numBlocks = b.loadIndex(params, b.idx(::attn::abi::kMlaNumBlocks));
  w.r = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  Value tile = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  w.firstHead = b.muli(tile, b.idx(c.headsPerGroup));
  w.jlo = b.idx(0);
  w.jhi = b.loadIndex(args.of(fn, Arg::SeqLens), w.r);
  if (c.numSplits > 1) {
    w.split = b.create<gpu::BlockIdOp>(gpu::Dimension::z);
    Value chunk = b.ceilDiv(w.jhi, b.idx(c.numSplits));
    w.jlo = b.muli(w.split, chunk);
    w.jhi = b.minsi(w.jhi, b.addi(w.jlo, chunk));
  }
  w.qScale = b.f32(c.scale * kLog2E);
  if (w.cacheScale)
    w.qScale = b.mulf(w.qScale, w.cacheScale);
  return w;
}

/// Where head `h` of the work item writes its lse (times the latent rank:
/// its out row): row r, or row split * R + r of the split's partials.
Value resultRow(KernelBuilder &b, const MlaWork &w, const MlaConfig &c,
                Value h) {
  Value row = w.r;
  if (w.split)
    row = b.addi(b.muli(w.split, w.numReqs), w.r);
  return b.addi(b.muli(row, b.idx(c.numHeads)), h);
}

void buildKernelBody(KernelBuilder &b, gpu::GPUFuncOp fn,
                     const KernelArgs &args, const MlaConfig &c) {
  Value q = args.of(fn, Arg::Query), cache = args.of(fn, Arg::Cache);
  Value blockTable = args.of(fn, Arg::BlockTable);
  auto [out, lse] = args.outputs(fn);
  MlaWork w = locateWork(b, fn, args, c);
  Value lane = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);

  const LaneLayout &rowLayout = c.rowLayout, &latentLayout = c.latentLayout;
  Value laneBase = b.muli(lane, b.idx(rowLayout.vectorWidth));
  SmallVector<SmallVector<Value>> qs;
  for (int64_t i = 0; i < c.headsPerGroup; ++i) {
    Value h = b.addi(w.firstHead, b.idx(i));
    Value row =
        b.muli(b.addi(b.muli(w.r, b.idx(c.numHeads)), h), b.idx(c.rowSize));
    qs.push_back(b.loadLaneRow(q, row, laneBase, rowLayout, w.qScale));
  }

  auto body = [&](KernelBuilder &kb, Value, Value block, Value offset,
                  const SoftmaxState &state) {
    Value row = kb.muli(kb.addi(kb.muli(block, kb.idx(c.blockSize)), offset),
                        kb.idx(c.rowSize));
    SmallVector<Value> k = kb.loadLaneRow(cache, row, laneBase, rowLayout,
                                          /*scale=*/Value(), c.fp8Format);
    SmallVector<Value> scores;
    for (Value partial : kb.partialDots(qs, k))
      scores.push_back(kb.subgroupSum(partial));
    // A lane's latent elements are the first ones of its row elements.
    ArrayRef<Value> v = ArrayRef<Value>(k).take_front(latentLayout.perLane());
    return updateSoftmax(kb, state, scores, v);
  };
  SoftmaxState init =
      SoftmaxState::init(b, c.headsPerGroup, latentLayout.perLane());
  SoftmaxState final =
      emitKeyLoop(b, w.jlo, w.jhi, c.blockSize, blockTable,
                  b.muli(w.r, w.maxBlocks), w.maxBlocks, w.numBlocks, init,
                  body);

  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));
  for (int64_t i = 0; i < c.headsPerGroup; ++i) {
    Value h = b.addi(w.firstHead, b.idx(i));
    HeadResult res =
        finalizeSoftmax(b, final, i, /*sinkLog2=*/Value(), w.cacheScale);
    Value lseAt = resultRow(b, w, c, h);
    b.storeLaneRow(res.out, out, b.muli(lseAt, b.idx(c.rank)), laneBase,
                   latentLayout);
    emitIf(b, isLane0,
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
  }
}

/// The row-vectors kernel's body (see the file comment), one stage per
/// method.
class RowVectorsBuilder {
public:
  RowVectorsBuilder(KernelBuilder &b, gpu::GPUFuncOp fn, const KernelArgs &args,
                    const MlaConfig &c)
      : b(b), fn(fn), c(c), heads(c.headsPerGroup),
        chunkType(VectorType::get({c.chunk}, b.getF32Type())) {
    cache = args.of(fn, Arg::Cache);
    blockTable = args.of(fn, Arg::BlockTable);
    std::tie(out, lse) = args.outputs(fn);
    w = locateWork(b, fn, args, c);
    query = args.of(fn, Arg::Query);
  }

  void build() {
    allocateBuffers();
    loadQueries();
    auto [m, l] = walkBlocks();
    writeResults(m, l);
  }

private:
  /// The stack buffers: scaled query rows (heads x row), a block's scores
  /// then probabilities (heads x block) and the accumulators (heads x L).
  void allocateBuffers();
  /// Each head's query row, scaled by qScale, into `qRows`; zero `accRows`.
  /// A head past H (the last tile) reads head H - 1's row.
  void loadQueries();
  /// The online softmax over the work item's keys, a cache block at a
  /// time; returns each head's m and l (the accumulators are in accRows).
  std::pair<SmallVector<Value>, SmallVector<Value>> walkBlocks();
  /// The scores of rows [uLo, uHi) of `block` into `probs` (-inf at the
  /// other rows); prefetches the same rows of block `next`.
  void scoreBlock(KernelBuilder &kb, Value block, Value next, Value uLo,
                  Value uHi);
  /// accRows[h] times alpha[h] plus probs[h][u] times the latent part of row
  /// u, for rows [uLo, uHi) of `block`, a chunk of columns at a time.
  void addValues(KernelBuilder &kb, ArrayRef<Value> alpha, Value block,
                 Value uLo, Value uHi);
  /// Elements [first, first + chunk) of row `offset` of `block`, in f32.
  Value loadCacheChunk(KernelBuilder &kb, Value block, Value offset,
                       Value first);
  /// Loops over the chunks of a row of `size` columns, the chunk's first
  /// column given to `body`.
  void forEachChunk(KernelBuilder &kb, int64_t size,
                    function_ref<void(KernelBuilder &, Value)> body);
  /// Normalized out rows and lses of the heads inside H.
  void writeResults(ArrayRef<Value> m, ArrayRef<Value> l);

  KernelBuilder &b;
  gpu::GPUFuncOp fn;
  const MlaConfig &c;
  int64_t heads;
  VectorType chunkType;
  MlaWork w;
  Value query, cache, blockTable, out, lse;
  Value qRows, probs, accRows;
};

void RowVectorsBuilder::allocateBuffers() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.getBody().front());
  Type f32 = b.getF32Type();
  qRows = memref::AllocaOp::create(b, MemRefType::get({heads, c.rowSize}, f32));
  probs =
      memref::AllocaOp::create(b, MemRefType::get({heads, c.blockSize}, f32));
  accRows = memref::AllocaOp::create(b, MemRefType::get({heads, c.rank}, f32));
}

void RowVectorsBuilder::forEachChunk(
    KernelBuilder &kb, int64_t size,
    function_ref<void(KernelBuilder &, Value)> body) {
  kb.create<scf::ForOp>(
      kb.idx(0), kb.idx(size), kb.idx(c.chunk), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value first, ValueRange) {
        KernelBuilder ib(loc, nested, b.options);
        body(ib, first);
        ib.create<scf::YieldOp>();
      });
}

void RowVectorsBuilder::loadQueries() {
  Type element = cast<MemRefType>(query.getType()).getElementType();
  auto rawType = VectorType::get({c.chunk}, element);
  Value scale = b.create<vector::BroadcastOp>(chunkType, w.qScale);
  Value zeros = b.create<vector::BroadcastOp>(chunkType, b.f32(0.0));
  for (int64_t i = 0; i < heads; ++i) {
    Value h = b.addi(w.firstHead, b.idx(i));
    if (c.numHeads % heads != 0)
      h = b.minsi(h, b.idx(c.numHeads - 1));
    Value start =
        b.muli(b.addi(b.muli(w.r, b.idx(c.numHeads)), h), b.idx(c.rowSize));
    forEachChunk(b, c.rowSize, [&](KernelBuilder &kb, Value first) {
      Value raw = vector::LoadOp::create(kb, rawType, query,
                                         ValueRange{kb.addi(start, first)});
      vector::StoreOp::create(kb, kb.mulf(kb.toF32(raw), scale), qRows,
                              ValueRange{kb.idx(i), first});
    });
    forEachChunk(b, c.rank, [&](KernelBuilder &kb, Value first) {
      vector::StoreOp::create(kb, zeros, accRows, ValueRange{kb.idx(i), first});
    });
  }
}

Value RowVectorsBuilder::loadCacheChunk(KernelBuilder &kb, Value block,
                                        Value offset, Value first) {
  Type element = cast<MemRefType>(cache.getType()).getElementType();
  Value row = kb.addi(kb.muli(block, kb.idx(c.blockSize)), offset);
  Value start = kb.addi(kb.muli(row, kb.idx(c.rowSize)), first);
  Value raw = vector::LoadOp::create(kb, VectorType::get({c.chunk}, element),
                                     cache, ValueRange{start});
  return kb.toF32(raw, c.fp8Format);
}

void RowVectorsBuilder::scoreBlock(KernelBuilder &b, Value block, Value next,
                                   Value uLo, Value uHi) {
  auto scoresType = VectorType::get({c.blockSize}, b.getF32Type());
  Value ninf = b.create<vector::BroadcastOp>(
      scoresType, b.f32(-std::numeric_limits<double>::infinity()));
  for (int64_t i = 0; i < heads; ++i)
    vector::StoreOp::create(b, ninf, probs, ValueRange{b.idx(i), b.idx(0)});
  Value zeros = b.create<vector::BroadcastOp>(chunkType, b.f32(0.0));
  b.create<scf::ForOp>(
      uLo, uHi, b.idx(1), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value u, ValueRange) {
        KernelBuilder kb(loc, nested, b.options);
        Value nextRow = kb.addi(kb.muli(next, kb.idx(c.blockSize)), u);
        kb.prefetchLines(cache, kb.muli(nextRow, kb.idx(c.rowSize)), c.rowSize);
        // One vector accumulator per head, each chunk of the key row
        // loaded once for all of them.
        auto dots = kb.create<scf::ForOp>(
            kb.idx(0), kb.idx(c.rowSize), kb.idx(c.chunk),
            SmallVector<Value>(heads, zeros),
            [&](OpBuilder &inner, Location loc2, Value first, ValueRange acc) {
              KernelBuilder ib(loc2, inner, b.options);
              Value key = loadCacheChunk(ib, block, u, first);
              SmallVector<Value> next;
              for (int64_t i = 0; i < heads; ++i) {
                Value qChunk = vector::LoadOp::create(
                    ib, chunkType, qRows, ValueRange{ib.idx(i), first});
                next.push_back(ib.fma(qChunk, key, acc[i]));
              }
              ib.create<scf::YieldOp>(next);
            });
        for (int64_t i = 0; i < heads; ++i) {
          Value dot = vector::ReductionOp::create(
              kb, vector::CombiningKind::ADD, dots.getResult(i), dotFlags());
          memref::StoreOp::create(kb, dot, probs, ValueRange{kb.idx(i), u});
        }
        kb.create<scf::YieldOp>();
      });
}

void RowVectorsBuilder::addValues(KernelBuilder &b, ArrayRef<Value> alpha,
                                  Value block, Value uLo, Value uHi) {
  SmallVector<Value> alphas;
  for (Value a : alpha)
    alphas.push_back(b.create<vector::BroadcastOp>(chunkType, a));
  forEachChunk(b, c.rank, [&](KernelBuilder &kb, Value first) {
    SmallVector<Value> init;
    for (int64_t i = 0; i < heads; ++i) {
      Value old = vector::LoadOp::create(kb, chunkType, accRows,
                                         ValueRange{kb.idx(i), first});
      init.push_back(kb.mulf(old, alphas[i]));
    }
    auto loop = kb.create<scf::ForOp>(
        uLo, uHi, kb.idx(1), init,
        [&](OpBuilder &nested, Location loc, Value u, ValueRange carried) {
          KernelBuilder ib(loc, nested, b.options);
          Value value = loadCacheChunk(ib, block, u, first);
          ib.create<scf::YieldOp>(
              addWeightedValue(ib, probs, u, value, carried));
        });
    for (int64_t i = 0; i < heads; ++i)
      vector::StoreOp::create(kb, loop.getResult(i), accRows,
                              ValueRange{kb.idx(i), first});
  });
}

std::pair<SmallVector<Value>, SmallVector<Value>>
RowVectorsBuilder::walkBlocks() {
  // The state, carried: m and l of each head.
  SmallVector<Value> init(heads,
                          b.f32(-std::numeric_limits<double>::infinity()));
  init.append(heads, b.f32(0.0));
  Value bs = b.idx(c.blockSize);
  Value lastBlock = b.subi(w.numBlocks, b.idx(1));
  Value lastColumn = b.subi(w.maxBlocks, b.idx(1));
  Value tableRow = b.muli(w.r, w.maxBlocks);
  auto loop = b.create<scf::ForOp>(
      b.divui(w.jlo, bs), b.ceilDiv(w.jhi, bs), b.idx(1), init,
      [&](OpBuilder &nested, Location loc, Value kbi, ValueRange carried) {
        KernelBuilder kb(loc, nested, b.options);
        Value start = kb.muli(kbi, bs);
        Value block = lookupBlock(kb, c.blockSize, blockTable, tableRow,
                                  lastColumn, lastBlock, start);
        // The block's rows of this split; the loops read no other slot.
        Value uLo = kb.maxsi(kb.subi(w.jlo, start), kb.idx(0));
        Value uHi = kb.minsi(kb.subi(w.jhi, start), bs);
        Value nextBlock =
            lookupBlock(kb, c.blockSize, blockTable, tableRow, lastColumn,
                        lastBlock, kb.addi(start, bs));
        scoreBlock(kb, block, nextBlock, uLo, uHi);
        BlockUpdates u = updateBlockSoftmaxes(kb, probs, carried, heads);
        addValues(kb, u.alpha, block, uLo, uHi);
        kb.create<scf::YieldOp>(u.carried);
      });
  SmallVector<Value> results(loop.getResults());
  return {SmallVector<Value>(ArrayRef<Value>(results).take_front(heads)),
          SmallVector<Value>(ArrayRef<Value>(results).drop_front(heads))};
}

void RowVectorsBuilder::writeResults(ArrayRef<Value> m, ArrayRef<Value> l) {
  for (int64_t i = 0; i < heads; ++i) {
    Value h = b.addi(w.firstHead, b.idx(i));
    HeadNorm norm =
        normalizeHead(b, m[i], l[i], /*sinkLog2=*/Value(), w.cacheScale);
    Value inv = b.create<vector::BroadcastOp>(chunkType, norm.inv);
    auto write = [&](KernelBuilder &ib) {
      Value lseAt = resultRow(ib, w, c, h);
      Value outRow = ib.muli(lseAt, ib.idx(c.rank));
      forEachChunk(ib, c.rank, [&](KernelBuilder &kb, Value first) {
        Value acc = vector::LoadOp::create(kb, chunkType, accRows,
                                           ValueRange{kb.idx(i), first});
        kb.storeF32(kb.mulf(acc, inv), out, kb.addi(outRow, first));
      });
      ib.storeF32(norm.lse, lse, lseAt);
    };
    // Heads past H fill the last tile only.
    if (c.numHeads % heads == 0)
      write(b);
    else
      emitIf(b, b.cmpi(arith::CmpIPredicate::slt, h, b.idx(c.numHeads)), write);
  }
}

} // namespace

LogicalResult mlir::attn::lowerMlaDecode(MlaDecodeOp op, LoweringContext &ctx) {
  FailureOr<int64_t> numHeads =
      getStaticDim(op, op.getQ(), 1, "the number of heads");
  FailureOr<int64_t> rowSize =
      getStaticDim(op, op.getQ(), 2, "the latent row size");
  FailureOr<int64_t> blockSize =
      getStaticDim(op, op.getKvCache(), 1, "the block size");
  if (failed(numHeads) || failed(rowSize) || failed(blockSize))
    return failure();
  MlaConfig c;
  c.numHeads = *numHeads;
  c.rowSize = *rowSize;
  c.rank = op.getKvLoraRank();
  c.blockSize = *blockSize;
  c.scale = op.getScale().convertToDouble();
  Type hostCacheElement =
      cast<ShapedType>(op.getKvCache().getType()).getElementType();
  c.fp8Format = getFp8Format(hostCacheElement);
  FailureOr<int64_t> scales = getScaleCount(op, op.getKScale());
  if (failed(scales))
    return failure();
  if (*scales != 1)
    return op.emitOpError() << "expects one k_scale for its latent cache, got "
                            << *scales;
  c.numSplits =
      ctx.options.splitKv > 0 ? ctx.options.splitKv : op.getNumKvSplits();
  LaneChunks chunks = chooseLaneChunks(
      ctx.options,
      getKernelElementType(hostCacheElement, ctx.options),
      std::gcd(c.rowSize, c.rank));
  c.rowLayout = LaneLayout{c.rowSize, ctx.options.subgroupSize, chunks.width,
                           chunks.vectorLoads};
  c.latentLayout = LaneLayout{c.rank, ctx.options.subgroupSize, chunks.width,
                              chunks.vectorLoads};
  if (ctx.options.rowVectors) {
    // A head keeps one chunk in registers (of its score, then of its
    // values): as many heads as fill a quarter of the budget with chunks
    // (8 for the cpu target's 512 floats; the rest holds the key chunk and
    // the operands, and 8 query rows of 576 f32, 18 KiB, stay in a 32 KiB
    // L1 beside the block's rows, where 16 measured 1.1x slower), spread
    // evenly over the fewest tiles, so that a last tile that H does not
    // fill is short by less than one head per tile.
    c.chunk = kRowChunk;
    while (c.rowSize % c.chunk != 0 || c.rank % c.chunk != 0)
      c.chunk /= 2;
    int64_t most =
        std::max<int64_t>(1, ctx.options.laneRegisters / (4 * kRowChunk));
    int64_t tiles = (c.numHeads + most - 1) / most;
    c.headsPerGroup = (c.numHeads + tiles - 1) / tiles;
  } else {
    // The largest tile of heads dividing H whose queries and accumulators
    // fit the lanes' register budget (lane-registers; at least one head).
    int64_t perHead = c.rowLayout.perLane() + c.latentLayout.perLane();
    c.headsPerGroup = 1;
    for (int64_t t = 1; t <= c.numHeads; ++t)
      if (c.numHeads % t == 0 && t * perHead <= ctx.options.laneRegisters)
        c.headsPerGroup = t;
  }

  OpBuilder builder(op);
  Location loc = op.getLoc();
  HostLaunch launch(builder, loc, ctx.options);
  launch.addBuffer(Arg::Query, op.getQ());
  launch.addBuffer(Arg::Cache, op.getKvCache());
  launch.addBuffer(Arg::BlockTable, op.getBlockTable());
  launch.addBuffer(Arg::SeqLens, op.getSeqLens());
  if (Value kScale = op.getKScale())
    launch.addBuffer(Arg::KScale, kScale);
  Value numReqs = launch.dim(op.getQ(), 0);
  auto [partialOut, partialLse] =
      launch.addResults(op.getOutInit(), op.getLseInit(), numReqs, c.numSplits,
                        c.numHeads, c.rank);
  launch.addParam(::attn::abi::kMlaNumReqs, "num_reqs", numReqs);
  launch.addParam(::attn::abi::kMlaMaxBlocksPerReq, "max_blocks_per_req",
                  launch.dim(op.getBlockTable(), 1));
  launch.addParam(::attn::abi::kMlaNumBlocks, "num_blocks",
                  launch.dim(op.getKvCache(), 0));
  boundMlaLaunch(launch, c);
  gpu::GPUFuncOp fn = createKernel(
      ctx.module, loc,
      kernelName(op, c.numSplits == 1 ? "mla_decode" : "mla_decode_partial"),
      launch.getKernelArgTypes(), ctx.options.subgroupSize,
      launch.getParamNames(), "mla_decode");
  fn->setAttr("attn.heads_per_workgroup",
              builder.getI64IntegerAttr(c.headsPerGroup));
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    if (ctx.options.rowVectors)
      RowVectorsBuilder(b, fn, launch.arguments(), c).build();
    else
      buildKernelBody(b, fn, launch.arguments(), c);
  }
  Value tiles = arith::ConstantIndexOp::create(
      builder, loc, (c.numHeads + c.headsPerGroup - 1) / c.headsPerGroup);
  Value splits = arith::ConstantIndexOp::create(builder, loc, c.numSplits);
  launch.launch(fn, {numReqs, tiles, splits}, ctx.options.subgroupSize);
  if (c.numSplits > 1)
    launchSplitReduce(ctx, builder, loc, kernelName(op, "mla_decode_reduce"),
                      partialOut, partialLse, /*sinks=*/Value(),
                      op.getOutInit(), op.getLseInit(), numReqs, c.numSplits,
                      c.numHeads, c.rank);
  launch.releaseScratch();
  return success();
}
