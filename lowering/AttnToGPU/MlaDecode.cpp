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
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"

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
};

void buildKernelBody(KernelBuilder &b, gpu::GPUFuncOp fn,
                     const KernelArgs &args, const MlaConfig &c) {
  Value q = args.of(fn, Arg::Query), cache = args.of(fn, Arg::Cache);
  Value blockTable = args.of(fn, Arg::BlockTable);
  Value seqLens = args.of(fn, Arg::SeqLens);
  auto [out, lse] = args.outputs(fn);
  Value params = args.of(fn, Arg::Params);
  Value cacheScale = b.loadScale(args.of(fn, Arg::KScale), 1, Value());
  Value numReqs = b.loadIndex(params, b.idx(::attn::abi::kMlaNumReqs));
  Value maxBlocks = b.loadIndex(params, b.idx(::attn::abi::kMlaMaxBlocksPerReq));
  Value numBlocks = b.loadIndex(params, b.idx(::attn::abi::kMlaNumBlocks));
  Value r = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
  Value tile = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
  Value lane = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);

  Value jlo = b.idx(0), jhi = b.loadIndex(seqLens, r);
  Value split;
  if (c.numSplits > 1) {
    split = b.create<gpu::BlockIdOp>(gpu::Dimension::z);
    Value chunk = b.ceilDiv(jhi, b.idx(c.numSplits));
    jlo = b.muli(split, chunk);
    jhi = b.minsi(jhi, b.addi(jlo, chunk));
  }

  const LaneLayout &rowLayout = c.rowLayout, &latentLayout = c.latentLayout;
  Value laneBase = b.muli(lane, b.idx(rowLayout.vectorWidth));
  Value firstHead = b.muli(tile, b.idx(c.headsPerGroup));
  // An fp8 cache's scale multiplies every score and the output.
  Value qScale = b.f32(c.scale * kLog2E);
  if (cacheScale)
    qScale = b.mulf(qScale, cacheScale);
  SmallVector<SmallVector<Value>> qs;
  for (int64_t i = 0; i < c.headsPerGroup; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    Value row = b.muli(b.addi(b.muli(r, b.idx(c.numHeads)), h),
                       b.idx(c.rowSize));
    qs.push_back(b.loadLaneRow(q, row, laneBase, rowLayout, qScale));
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
  SoftmaxState final = emitKeyLoop(b, jlo, jhi, c.blockSize, blockTable,
                                   b.muli(r, maxBlocks), numBlocks, init, body);

  Value isLane0 = b.cmpi(arith::CmpIPredicate::eq, lane, b.idx(0));
  for (int64_t i = 0; i < c.headsPerGroup; ++i) {
    Value h = b.addi(firstHead, b.idx(i));
    HeadResult res =
        finalizeSoftmax(b, final, i, /*sinkLog2=*/Value(), cacheScale);
    Value row = r;
    if (split)
      row = b.addi(b.muli(split, numReqs), r);
    Value lseAt = b.addi(b.muli(row, b.idx(c.numHeads)), h);
    b.storeLaneRow(res.out, out, b.muli(lseAt, b.idx(c.rank)), laneBase,
                   latentLayout);
    emitIf(b, isLane0,
           [&](KernelBuilder &ib) { ib.storeF32(res.lse, lse, lseAt); });
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
  c.numSplits = ctx.options.splitKv > 0 ? ctx.options.splitKv
                                        : op.getNumKvSplits();
  // The largest tile of heads dividing H whose queries and accumulators fit
  // the lanes' register budget (lane-registers; at least one head).
  LaneChunks chunks = chooseLaneChunks(
      ctx.options,
      getKernelElementType(hostCacheElement, ctx.options),
      std::gcd(c.rowSize, c.rank));
  c.rowLayout = LaneLayout{c.rowSize, ctx.options.subgroupSize, chunks.width,
                           chunks.vectorLoads};
  c.latentLayout = LaneLayout{c.rank, ctx.options.subgroupSize, chunks.width,
                              chunks.vectorLoads};
  int64_t perHead = c.rowLayout.perLane() + c.latentLayout.perLane();
  c.headsPerGroup = 1;
  for (int64_t t = 1; t <= c.numHeads; ++t)
    if (c.numHeads % t == 0 && t * perHead <= ctx.options.laneRegisters)
      c.headsPerGroup = t;

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
    buildKernelBody(b, fn, launch.arguments(), c);
  }
  Value tiles = arith::ConstantIndexOp::create(
      builder, loc, c.numHeads / c.headsPerGroup);
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
