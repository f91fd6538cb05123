//===- MergeStates.cpp - merge_states and split-KV reduce kernels ---------===//
//
// One workgroup per (row, head) merges partial attention states by their
// log-sum-exps; its invocations stride over the head dimension. The same
// body serves attn.merge_states (two states) and the reduce kernel of
// split-KV decode (S states in f32 scratch, plus the sinks of the op).
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"
#include "lowering/AttnToGPU/PagedAttention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

std::string mlir::attn::kernelName(Operation *op, StringRef suffix) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  return ((fn ? fn.getName() : StringRef("attn")) + "_" + suffix).str();
}

FailureOr<int64_t> mlir::attn::getStaticDim(Operation *op, Value value, int64_t i,
                                      StringRef what) {
  auto type = cast<ShapedType>(value.getType());
  if (type.isDynamicDim(i))
    return op->emitOpError() << "expects " << what
                             << " to be static to lower to a GPU kernel";
  return type.getDimSize(i);
}

FailureOr<int64_t> mlir::attn::getScaleCount(Operation *op, Value scale) {
  if (!scale)
    return 1;
  return getStaticDim(op, scale, 0, "the number of fp8 scales");
}

LogicalResult mlir::attn::lowerMergeStates(MergeStatesOp op, LoweringContext &ctx) {
  FailureOr<int64_t> numHeads =
      getStaticDim(op, op.getOutA(), 1, "the number of heads");
  FailureOr<int64_t> headSize =
      getStaticDim(op, op.getOutA(), 2, "the head size");
  if (failed(numHeads) || failed(headSize))
    return failure();
  int64_t wgSize = ctx.options.elementwiseWorkgroupSize();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  HostLaunch launch(builder, loc, ctx.options);
  launch.addBuffer(Arg::OutA, op.getOutA());
  launch.addBuffer(Arg::LseA, op.getLseA());
  launch.addBuffer(Arg::OutB, op.getOutB());
  launch.addBuffer(Arg::LseB, op.getLseB());
  launch.addBuffer(Arg::Out, op.getOutInit());
  launch.addBuffer(Arg::Lse, op.getLseInit());
  KernelArgs args = launch.arguments();
  Value numTokens = launch.dim(op.getOutA(), 0);
  launch.addParam(::attn::abi::kMergeNumTokens, "num_tokens", numTokens);
  // Row grid.x of every state; num_tokens is their row count too.
  for (Arg role : {Arg::OutA, Arg::LseA, Arg::OutB, Arg::LseB, Arg::Out,
                   Arg::Lse}) {
    launch.boundRows(role, {gridOf(0)});
    launch.boundRows(role, {paramOf(::attn::abi::kMergeNumTokens)});
  }
  gpu::GPUFuncOp fn = createKernel(ctx.module, loc,
                                   kernelName(op, "merge_states"),
                                   launch.getKernelArgTypes(), wgSize,
                                   launch.getParamNames(), "merge_states");
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    Value outs[2] = {args.of(fn, Arg::OutA), args.of(fn, Arg::OutB)};
    Value lses[2] = {args.of(fn, Arg::LseA), args.of(fn, Arg::LseB)};
    Value out = args.of(fn, Arg::Out), lse = args.of(fn, Arg::Lse);
    Value t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
    Value h = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
    Value row = b.addi(b.muli(t, b.idx(*numHeads)), h);
    Value rowBase = b.muli(row, b.idx(*headSize));
    emitMerge(
        b, 2, *headSize, wgSize,
        [&](KernelBuilder &kb, int64_t s) { return kb.loadF32(lses[s], row); },
        [&](KernelBuilder &kb, int64_t s, Value d) {
          return kb.loadF32(outs[s], kb.addi(rowBase, d));
        },
        /*sink=*/Value(),
        [&](KernelBuilder &kb, Value d, Value v) {
          kb.storeF32(v, out, kb.addi(rowBase, d));
        },
        [&](KernelBuilder &kb, Value v) { kb.storeF32(v, lse, row); });
  }
  Value heads = arith::ConstantIndexOp::create(builder, loc, *numHeads);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  launch.launch(fn, {numTokens, heads, one}, wgSize);
  return success();
}

void mlir::attn::launchSplitReduce(LoweringContext &ctx, OpBuilder &builder,
                             Location loc, StringRef name, Value partialOut,
                             Value partialLse, Value sinks, Value out,
                             Value lse, Value numRows, int64_t numSplits,
                             int64_t numHeads, int64_t headDim,
                             std::optional<DecodeRows> decodeRows) {
  int64_t wgSize = ctx.options.elementwiseWorkgroupSize();
  HostLaunch launch(builder, loc, ctx.options);
  launch.addBuffer(Arg::PartialOut, partialOut);
  launch.addBuffer(Arg::PartialLse, partialLse);
  if (sinks)
    launch.addBuffer(Arg::Sinks, sinks);
  launch.addBuffer(Arg::Out, out);
  launch.addBuffer(Arg::Lse, lse);
  if (decodeRows)
    launch.addBuffer(Arg::QueryStartLoc, decodeRows->queryStartLoc);
  KernelArgs args = launch.arguments();
  launch.addParam(::attn::abi::kMergeNumTokens, "num_rows", numRows);
  if (decodeRows)
    launch.addParam(::attn::abi::kMergeNumReqs, "num_reqs",
                    decodeRows->numReqs);
  // Row t = grid.x of out and lse; partial s * num_rows + t of split s;
  // with decode rows, request r < num_reqs (at least one) reads
  // query_start_loc[r + 1].
  launch.boundRows(Arg::Out, {gridOf(0)});
  launch.boundRows(Arg::Lse, {gridOf(0)});
  launch.boundBy(gridOf(0), paramOf(::attn::abi::kMergeNumTokens));
  launch.bound(Arg::PartialOut, {paramOf(::attn::abi::kMergeNumTokens)},
               numSplits * numHeads * headDim);
  launch.bound(Arg::PartialLse, {paramOf(::attn::abi::kMergeNumTokens)},
               numSplits * numHeads);
  if (decodeRows)
    launch.boundRows(Arg::QueryStartLoc, {paramOf(::attn::abi::kMergeNumReqs)},
                     1, 1);
  gpu::GPUFuncOp fn =
      createKernel(ctx.module, loc, name, launch.getKernelArgTypes(), wgSize,
                   launch.getParamNames(), "split_kv_reduce");
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    Value pOut = args.of(fn, Arg::PartialOut);
    Value pLse = args.of(fn, Arg::PartialLse);
    Value sinkBuf = args.of(fn, Arg::Sinks);
    Value outBuf = args.of(fn, Arg::Out), lseBuf = args.of(fn, Arg::Lse);
    Value qsl = args.of(fn, Arg::QueryStartLoc);
    Value params = args.of(fn, Arg::Params);
    Value rows = b.loadIndex(params, b.idx(::attn::abi::kMergeNumTokens));
    Value t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
    Value h = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
    if (decodeRows) {
      // The other requests' rows are another kernel's to write.
      Value numReqs =
          b.loadIndex(params, b.idx(::attn::abi::kMergeNumReqs));
      Value r = findRequest(b, qsl, t, numReqs);
      Value qLen = b.subi(b.loadIndex(qsl, b.addi(r, b.idx(1))),
                          b.loadIndex(qsl, r));
      auto mine = b.create<scf::IfOp>(
          b.cmpi(arith::CmpIPredicate::sle, qLen,
                 b.idx(decodeRows->maxQueryLen)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(mine.thenBlock());
    }
    Value row = b.addi(b.muli(t, b.idx(numHeads)), h);
    // Partial state s of this row sits at row s * rows * H + row.
    auto partialRow = [&](KernelBuilder &kb, int64_t s) {
      return kb.addi(kb.muli(kb.muli(kb.idx(s), rows), kb.idx(numHeads)),
                     row);
    };
    Value sink = sinkBuf ? b.loadF32(sinkBuf, h) : Value();
    Value rowBase = b.muli(row, b.idx(headDim));
    emitMerge(
        b, numSplits, headDim, wgSize,
        [&](KernelBuilder &kb, int64_t s) {
          return kb.loadF32(pLse, partialRow(kb, s));
        },
        [&](KernelBuilder &kb, int64_t s, Value d) {
          return kb.loadF32(
              pOut, kb.addi(kb.muli(partialRow(kb, s), kb.idx(headDim)), d));
        },
        sink,
        [&](KernelBuilder &kb, Value d, Value v) {
          kb.storeF32(v, outBuf, kb.addi(rowBase, d));
        },
        [&](KernelBuilder &kb, Value v) { kb.storeF32(v, lseBuf, row); });
  }
  Value heads = arith::ConstantIndexOp::create(builder, loc, numHeads);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  launch.launch(fn, {numRows, heads, one}, wgSize);
}
