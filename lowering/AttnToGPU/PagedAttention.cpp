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
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <tuple>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the kernel builder needs of the op, all static.
struct PagedConfig {
  int64_t numHeads, numKvHeads, headSize, blockSize;
  bool nhd, causal, hasAlibi, hasSinks;
  double scale, softCap;
  int64_t windowLeft, windowRight;
  int64_t numSplits;
};

/// Finds the request of token `t`: the last r with query_start_loc[r] <= t,
/// by binary search over [0, R).
Value findRequest(KernelBuilder &b, Value qsl, Value t, Value numReqs) {
  Type idx = b.getIndexType();
  auto loop = b.create<scf::WhileOp>(
      TypeRange{idx, idx}, ValueRange{b.idx(0), numReqs},
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        KernelBuilder w(loc, nested, b.options);
        Value more = w.cmpi(arith::CmpIPredicate::sgt,
                            w.subi(args[1], args[0]), w.idx(1));
        w.create<scf::ConditionOp>(more, args);
      },
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        KernelBuilder w(loc, nested, b.options);
        Value mid = w.divui(w.addi(args[0], args[1]), w.idx(2));
        Value startsBefore = w.cmpi(arith::CmpIPredicate::sle,
                                    w.loadIndex(qsl, mid), t);
        w.create<scf::YieldOp>(
            ValueRange{w.select(startsBefore, mid, args[0]),
                       w.select(startsBefore, args[1], mid)});
      });
  return loop.getResult(0);
}

/// How one workgroup covers the keys and the head dimension.
struct Tiling {
  int64_t subgroups;    ///< W
  int64_t lanesPerRow;  ///< L
  int64_t rowsPerGroup; ///< R = S / L
  int64_t keysPerStep;  ///< U, per row group
  LaneLayout layout;    ///< a lane's share of a row

  int64_t rowGroups() const { return subgroups * rowsPerGroup; }
};

/// Values (query, accumulator, key and value rows) a lane may keep in
/// registers; bounds U.
constexpr int64_t kLaneValueBudget = 128;
/// Most keys per row group and step.
constexpr int64_t kMaxKeysPerStep = 4;

int64_t floorPowerOf2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

Tiling chooseTiling(const PagedConfig &c, const LoweringOptions &o,
                    Type cacheElement) {
  LaneChunks chunks = chooseLaneChunks(o, cacheElement, c.headSize);
  int64_t group = c.numHeads / c.numKvHeads;
  Tiling t;
  auto layOut = [&](int64_t w) {
    t.lanesPerRow =
        std::min(o.subgroupSize,
                 floorPowerOf2(std::max<int64_t>(c.headSize / w, 1)));
    t.rowsPerGroup = o.subgroupSize / t.lanesPerRow;
    t.layout = LaneLayout{c.headSize, t.lanesPerRow, w,
                          chunks.vectorLoads && w > 1};
  };
  // Many query heads per kv head (MQA, wide GQA) keep a query row and an
  // accumulator per head in every lane: narrower chunks spread a row over
  // more lanes, so fewer values per lane, until the budget holds or a row
  // takes the whole subgroup.
  int64_t w = chunks.width;
  layOut(w);
  while (w > 1 && 2 * group * t.layout.perLane() > kLaneValueBudget &&
         t.lanesPerRow < o.subgroupSize)
    layOut(w /= 2);
  int64_t perLane = t.layout.perLane();
  int64_t spare = kLaneValueBudget - 2 * group * perLane;
  t.keysPerStep =
      std::clamp<int64_t>(spare / (2 * perLane), 1, kMaxKeysPerStep);
  // The subgroups' normalized rows and lses, in workgroup memory.
  t.subgroups = o.attentionSubgroups;
  while (t.subgroups > 1 &&
         t.subgroups * group * (c.headSize + 1) * 4 > o.maxWorkgroupMemory)
    --t.subgroups;
  return t;
}

void buildKernelBody(KernelBuilder &b, gpu::GPUFuncOp fn,
                     const PagedConfig &c, const Tiling &tiling) {
  // Arguments, in ABI order.
  unsigned a = 0;
  Value query = fn.getArgument(a++), cache = fn.getArgument(a++);
  Value qsl = fn.getArgument(a++), seqLens = fn.getArgument(a++);
  Value blockTable = fn.getArgument(a++);
  Value alibi = c.hasAlibi ? fn.getArgument(a++) : Value();
  Value sinks = c.hasSinks && c.numSplits == 1 ? fn.getArgument(a++) : Value();
  Value out = fn.getArgument(a++), lse = fn.getArgument(a++);
  Value params = fn.getArgument(a++);
  Value shared;
  if (tiling.subgroups > 1)
    shared = addWorkgroupBuffer(fn, tiling.subgroups *
                                        (c.numHeads / c.numKvHeads) *
                                        (c.headSize + 1));

  int64_t S = b.options.subgroupSize, L = tiling.lanesPerRow;
  int64_t R = tiling.rowsPerGroup, U = tiling.keysPerStep;
  const LaneLayout &layout = tiling.layout;
  Value t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  Value g = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  // Lanes and subgroups as the device numbers them: the shuffles of a row
  // group need lanes that are neighbours in the subgroup.
  Value lane = b.create<gpu::LaneIdOp>(/*upper_bound=*/nullptr);
  Value sg = tiling.subgroups > 1
                 ? Value(b.create<gpu::SubgroupIdOp>(/*upper_bound=*/nullptr))
                 : b.idx(0);
  Value laneInRow = L == S ? lane : b.remui(lane, b.idx(L));
  Value rowInSg = L == S ? b.idx(0) : b.divui(lane, b.idx(L));
  Value rowGroup = b.addi(b.muli(sg, b.idx(R)), rowInSg);
  Value laneBase = b.muli(laneInRow, b.idx(layout.vectorWidth));

  Value numTokens = b.loadIndex(params, b.idx(::attn::abi::kPagedNumTokens));
  Value numReqs = b.loadIndex(params, b.idx(::attn::abi::kPagedNumReqs));
  Value maxBlocks = b.loadIndex(params, b.idx(::attn::abi::kPagedMaxBlocksPerReq));
  Value numBlocks = b.loadIndex(params, b.idx(::attn::abi::kPagedNumBlocks));

  // Token -> request, and the token's absolute position.
  Value r = findRequest(b, qsl, t, numReqs);
  Value qStart = b.loadIndex(qsl, r);
  Value qEnd = b.loadIndex(qsl, b.addi(r, b.idx(1)));
  Value seqLen = b.loadIndex(seqLens, r);
  Value context = b.subi(seqLen, b.subi(qEnd, qStart));
  Value pos = b.addi(context, b.subi(t, qStart));

  // The visible keys [jlo, jhi).
  Value jlo = b.idx(0), jhi = seqLen;
  if (c.causal)
    jhi = b.minsi(jhi, b.addi(pos, b.idx(1)));
  if (c.windowLeft >= 0)
    jlo = b.maxsi(jlo, b.subi(pos, b.idx(c.windowLeft)));
  if (!c.causal && c.windowRight >= 0)
    jhi = b.minsi(jhi, b.addi(pos, b.idx(c.windowRight + 1)));
  Value split;
  if (c.numSplits > 1) {
    // Split s takes the s-th of numSplits equal chunks of the interval.
    split = b.create<gpu::BlockIdOp>(gpu::Dimension::z);
    Value len = b.maxsi(b.subi(jhi, jlo), b.idx(0));
    Value chunk = b.ceilDiv(len, b.idx(c.numSplits));
    Value lo = b.addi(jlo, b.muli(split, chunk));
    jhi = b.minsi(jhi, b.addi(lo, chunk));
    jlo = lo;
  }

  int64_t group = c.numHeads / c.numKvHeads;
  // log2(e) folds into the query scale and the ALiBi slopes, except under a
  // soft cap, whose tanh needs the score in natural units first.
  bool capped = c.softCap > 0;
  Value qScale = b.f32(capped ? c.scale : c.scale * kLog2E);
  Value firstHead = b.muli(g, b.idx(group));
  SmallVector<SmallVector<Value>> q;
  SmallVector<Value> slopes;
  for (int64_t i = 0; i < group; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value row = b.muli(b.addi(b.muli(t, b.idx(c.numHeads)), h),
                       b.idx(c.headSize));
    q.push_back(b.loadLaneRow(query, row, laneBase, layout, qScale));
    if (alibi) {
      Value slope = b.loadF32(alibi, h);
      if (!capped)
        slope = b.mulf(slope, b.f32(kLog2E));
      slopes.push_back(slope);
    }
  }

  // Start of row (part, block, offset) of kv head g in the flat cache.
  auto rowStart = [&](KernelBuilder &kb, int64_t part, Value block,
                      Value offset) {
    Value blockPart = kb.addi(kb.muli(block, kb.idx(2)), kb.idx(part));
    Value row =
        c.nhd ? kb.addi(kb.muli(kb.addi(kb.muli(blockPart,
                                                kb.idx(c.blockSize)),
                                        offset),
                                kb.idx(c.numKvHeads)),
                        g)
              : kb.addi(kb.muli(kb.addi(kb.muli(blockPart,
                                                kb.idx(c.numKvHeads)),
                                        g),
                                kb.idx(c.blockSize)),
                        offset);
    return kb.muli(row, kb.idx(c.headSize));
  };

  Value posF32;
  if (alibi)
    posF32 = b.create<arith::SIToFPOp>(
        b.getF32Type(), b.create<arith::IndexCastOp>(b.getI32Type(), pos));

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
  auto loop = b.create<scf::ForOp>(
      jlo, jhi, b.idx(P * U), init.flatten(),
      [&](OpBuilder &nested, Location loc, Value j0, ValueRange carried) {
        KernelBuilder kb(loc, nested, b.options);
        SoftmaxState state = SoftmaxState::unflatten(carried, group, perLane);
        Value first = kb.addi(j0, rowGroup);
        // All loads of the step first, then the math.
        SmallVector<Value> keys, valid;
        SmallVector<SmallVector<Value>> k, v;
        for (int64_t u = 0; u < U; ++u) {
          Value j = kb.addi(first, kb.idx(u * P));
          valid.push_back(kb.cmpi(arith::CmpIPredicate::slt, j, jhi));
          Value jc = kb.minsi(j, last);
          // The table column is clamped to the row (seq_len beyond M * B is
          // rejected before launch; this keeps the read inside the table
          // regardless), and the entry to the cache: unsigned min also sends
          // negative entries to the last block.
          Value column = kb.create<arith::MinUIOp>(
              kb.divui(jc, kb.idx(c.blockSize)), lastColumn);
          Value raw = kb.loadIndex(blockTable, kb.addi(tableRow, column));
          Value block = kb.create<arith::MinUIOp>(raw, lastBlock);
          Value offset = kb.remui(jc, kb.idx(c.blockSize));
          keys.push_back(jc);
          k.push_back(kb.loadLaneRow(cache, rowStart(kb, 0, block, offset),
                                     laneBase, layout));
          v.push_back(kb.loadLaneRow(cache, rowStart(kb, 1, block, offset),
                                     laneBase, layout));
        }
        SmallVector<SmallVector<Value>> scores(U);
        for (int64_t u = 0; u < U; ++u) {
          Value dist;
          if (alibi)
            dist = kb.subf(kb.create<arith::SIToFPOp>(
                               kb.getF32Type(),
                               kb.create<arith::IndexCastOp>(kb.getI32Type(),
                                                             keys[u])),
                           posF32);
          for (int64_t i = 0; i < group; ++i) {
            Value partial = kb.f32(0.0);
            for (auto [qv, kv] : llvm::zip_equal(q[i], k[u]))
              partial = kb.addf(partial, kb.mulf(qv, kv));
            Value s = kb.clusterSum(partial, L);
            if (alibi)
              s = kb.addf(s, kb.mulf(slopes[i], dist));
            if (capped)
              s = kb.mulf(kb.f32(c.softCap * kLog2E),
                          kb.create<math::TanhOp>(
                              kb.mulf(s, kb.f32(1.0 / c.softCap))));
            scores[u].push_back(kb.select(valid[u], s, ninf));
          }
        }
        SoftmaxState next = updateSoftmax(kb, state, scores, v);
        kb.create<scf::YieldOp>(next.flatten());
      });
  SoftmaxState final =
      SoftmaxState::unflatten(loop.getResults(), group, perLane);

  // The R row groups of a subgroup: lanes with the same place in their row
  // are L, 2L, ... apart.
  for (int64_t mask = L; mask < S; mask *= 2) {
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

  // Row t (or row s * T + t of split s's scratch) of out and lse.
  Value row = t;
  if (split)
    row = b.addi(b.muli(split, numTokens), t);
  Value isRow0 = b.cmpi(arith::CmpIPredicate::eq, rowInSg, b.idx(0));
  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));

  if (tiling.subgroups == 1) {
    for (int64_t i = 0; i < group; ++i) {
      Value h = b.addi(firstHead, b.idx(i));
      Value sinkLog2;
      if (sinks)
        sinkLog2 = b.mulf(b.loadF32(sinks, h), b.f32(kLog2E));
      HeadResult res = finalizeSoftmax(b, final, i, sinkLog2);
      Value lseAt = b.addi(b.muli(row, b.idx(c.numHeads)), h);
      auto store = [&](KernelBuilder &ib) {
        ib.storeLaneRow(res.out, out, ib.muli(lseAt, ib.idx(c.headSize)),
                        laneBase, layout);
      };
      if (R > 1)
        emitIf(b, isRow0, store);
      else
        store(b);
      emitIf(b, isLane0,
             [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
    }
    return;
  }

  // Every subgroup writes its normalized rows ([W, group, D] after W *
  // group lses) to workgroup memory; then the workgroup merges them by
  // their lses, with the sink, as split-KV partials merge.
  int64_t W = tiling.subgroups;
  int64_t rowsBase = W * group;
  for (int64_t i = 0; i < group; ++i) {
    HeadResult res = finalizeSoftmax(b, final, i, /*sinkLog2=*/Value());
    Value slot = b.addi(b.muli(sg, b.idx(group)), b.idx(i));
    emitIf(b, isRow0, [&](KernelBuilder &ib) {
      Value base = ib.addi(ib.idx(rowsBase), ib.muli(slot, ib.idx(c.headSize)));
      ib.storeLaneRow(res.out, shared, base, laneBase, layout);
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

LogicalResult mlir::attn::lowerPagedAttention(PagedAttentionOp op,
                                        LoweringContext &ctx) {
  auto metadata = op.getMetadata().getDefiningOp<MetadataOp>();
  if (!metadata)
    return op.emitOpError()
           << "expects its metadata to come from an attn.metadata op";
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

  OpBuilder builder(op);
  Location loc = op.getLoc();
  HostLaunch launch(builder, loc, ctx.options);
  launch.addBuffer(op.getQuery());
  launch.addBuffer(op.getKvCache());
  launch.addBuffer(metadata.getQueryStartLoc());
  launch.addBuffer(metadata.getSeqLens());
  launch.addBuffer(metadata.getBlockTable());
  if (Value alibi = op.getAlibiSlopes())
    launch.addBuffer(alibi);
  if (c.hasSinks && c.numSplits == 1)
    launch.addBuffer(op.getSinks());
  Value numTokens = launch.dim(op.getQuery(), 0);
  Value partialOut, partialLse;
  if (c.numSplits == 1) {
    launch.addBuffer(op.getOutInit());
    launch.addBuffer(op.getLseInit());
  } else {
    std::tie(partialOut, partialLse) =
        launch.addSplitScratch(numTokens, c.numSplits, c.numHeads, c.headSize);
  }
  launch.addParam("num_tokens", numTokens);
  launch.addParam("num_reqs", launch.dim(metadata.getSeqLens(), 0));
  launch.addParam("max_blocks_per_req", launch.dim(metadata.getBlockTable(), 1));
  launch.addParam("num_blocks", launch.dim(op.getKvCache(), 0));

  Tiling tiling = chooseTiling(
      c, ctx.options,
      getKernelElementType(
          cast<ShapedType>(op.getKvCache().getType()).getElementType(),
                           ctx.options));
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
    buildKernelBody(b, fn, c, tiling);
  }
  Value kvHeads = arith::ConstantIndexOp::create(builder, loc, c.numKvHeads);
  Value splits = arith::ConstantIndexOp::create(builder, loc, c.numSplits);
  launch.launch(fn, {numTokens, kvHeads, splits}, workgroupSize);
  if (c.numSplits > 1)
    launchSplitReduce(ctx, builder, loc,
                      kernelName(op, "paged_attention_reduce"), partialOut,
                      partialLse, op.getSinks(), op.getOutInit(),
                      op.getLseInit(), numTokens, c.numSplits, c.numHeads,
                      c.headSize);
  launch.releaseScratch();
  return success();
}
