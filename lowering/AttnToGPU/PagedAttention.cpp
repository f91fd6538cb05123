//===- PagedAttention.cpp - paged_attention as a GPU kernel ---------------===//
//
// One workgroup (one subgroup) per query token t and kv head g: it walks the
// keys its token may see through the request's block table and runs the
// online softmax of the H/G query heads that read kv head g, so each key
// and value row is loaded once per group. Lanes split the head dimension;
// a dot product is a lane-local partial sum and a subgroup reduction.
//
// Visibility is an interval of key positions (causal, window_left and
// window_right each clip one end), so the kernel narrows the loop bounds
// instead of masking scores: no compare is emitted for a knob that is off.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

void buildKernelBody(KernelBuilder &b, gpu::GPUFuncOp fn,
                     const PagedConfig &c) {
  // Arguments, in ABI order.
  unsigned a = 0;
  Value query = fn.getArgument(a++), cache = fn.getArgument(a++);
  Value qsl = fn.getArgument(a++), seqLens = fn.getArgument(a++);
  Value blockTable = fn.getArgument(a++);
  Value alibi = c.hasAlibi ? fn.getArgument(a++) : Value();
  Value sinks = c.hasSinks && c.numSplits == 1 ? fn.getArgument(a++) : Value();
  Value out = fn.getArgument(a++), lse = fn.getArgument(a++);
  Value params = fn.getArgument(a++);

  Value t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  Value g = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  Value lane = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);
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
  LaneLayout layout{c.headSize, b.options.subgroupSize, b.options.vectorWidth};
  Value laneBase = b.muli(lane, b.idx(b.options.vectorWidth));
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
  auto body = [&](KernelBuilder &kb, Value j, Value block, Value offset,
                  const SoftmaxState &state) {
    SmallVector<Value> k =
        kb.loadLaneRow(cache, rowStart(kb, 0, block, offset), laneBase,
                       layout);
    Value dist;
    if (alibi)
      dist = kb.subf(kb.create<arith::SIToFPOp>(
                         kb.getF32Type(),
                         kb.create<arith::IndexCastOp>(kb.getI32Type(), j)),
                     posF32);
    SmallVector<Value> scores;
    for (int64_t i = 0; i < group; ++i) {
      Value partial = kb.f32(0.0);
      for (auto [qv, kv] : llvm::zip_equal(q[i], k))
        partial = kb.addf(partial, kb.mulf(qv, kv));
      Value s = kb.subgroupSum(partial);
      if (alibi)
        s = kb.addf(s, kb.mulf(slopes[i], dist));
      if (capped)
        s = kb.mulf(kb.f32(c.softCap * kLog2E),
                    kb.create<math::TanhOp>(
                        kb.mulf(s, kb.f32(1.0 / c.softCap))));
      scores.push_back(s);
    }
    SmallVector<Value> v =
        kb.loadLaneRow(cache, rowStart(kb, 1, block, offset), laneBase,
                       layout);
    return updateSoftmax(kb, state, scores, v);
  };
  SoftmaxState init = SoftmaxState::init(b, group, layout.perLane());
  SoftmaxState final =
      emitKeyLoop(b, jlo, jhi, c.blockSize, blockTable,
                  b.muli(r, maxBlocks), numBlocks, init, body);

  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));
  for (int64_t i = 0; i < group; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value sinkLog2;
    if (sinks)
      sinkLog2 = b.mulf(b.loadF32(sinks, h), b.f32(kLog2E));
    HeadResult res = finalizeSoftmax(b, final, i, sinkLog2);
    // Partial results of split s go to row s * T + t of the scratch.
    Value row = t;
    if (split)
      row = b.addi(b.muli(split, numTokens), t);
    Value lseAt = b.addi(b.muli(row, b.idx(c.numHeads)), h);
    b.storeLaneRow(res.out, out, b.muli(lseAt, b.idx(c.headSize)), laneBase,
                   layout);
    emitIf(b, isLane0,
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
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
    Value rows = arith::MulIOp::create(
        builder, loc, numTokens,
        arith::ConstantIndexOp::create(builder, loc,
                                       c.numSplits * c.numHeads));
    partialOut = launch.addScratch(arith::MulIOp::create(
        builder, loc, rows,
        arith::ConstantIndexOp::create(builder, loc, c.headSize)));
    partialLse = launch.addScratch(rows);
  }
  launch.addParam("num_tokens", numTokens);
  launch.addParam("num_reqs", launch.dim(metadata.getSeqLens(), 0));
  launch.addParam("max_blocks_per_req", launch.dim(metadata.getBlockTable(), 1));
  launch.addParam("num_blocks", launch.dim(op.getKvCache(), 0));

  gpu::GPUFuncOp fn = createKernel(
      ctx.module, loc,
      kernelName(op, c.numSplits == 1 ? "paged_attention"
                                      : "paged_attention_partial"),
      launch.getKernelArgTypes(), ctx.options.subgroupSize,
      launch.getParamNames(), "paged_attention");
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    buildKernelBody(b, fn, c);
  }
  Value kvHeads = arith::ConstantIndexOp::create(builder, loc, c.numKvHeads);
  Value splits = arith::ConstantIndexOp::create(builder, loc, c.numSplits);
  launch.launch(fn, {numTokens, kvHeads, splits}, ctx.options.subgroupSize);
  if (c.numSplits > 1)
    launchSplitReduce(ctx, builder, loc,
                      kernelName(op, "paged_attention_reduce"), partialOut,
                      partialLse, op.getSinks(), op.getOutInit(),
                      op.getLseInit(), numTokens, c.numSplits, c.numHeads,
                      c.headSize);
  launch.releaseScratch();
  return success();
}
