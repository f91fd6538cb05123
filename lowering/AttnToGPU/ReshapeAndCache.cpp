//===- ReshapeAndCache.cpp - reshape_and_cache as a GPU kernel ------------===//
//
// Paged form: one workgroup per token and kv head copies that head's key and
// value rows into the cache slot of the token; its invocations stride over
// the head dimension. MLA form (rank-3 latent cache): one workgroup per token
// copies kv_c [L] then k_pe [P] into the slot's latent row [L + P]. In both,
// padding tokens (slot < 0) and slots outside the cache are skipped, so a bad
// slot never writes outside the buffer. An fp8 cache stores each element
// quantized by its scale (KernelBuilder::quantizeFp8); any other cache has
// the rows' element type and gets their bits.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/KernelABI.h"
#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/AttnToGPU/OnlineSoftmax.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the body of a cache-write kernel works with: the kernel's buffers,
/// the token `t` (block id x), the block id y, the invocation and the slot,
/// already known to be inside the cache; with an fp8 cache its format and
/// the scale buffers.
struct CacheWrite {
  Value key, value, cache, t, y, tid, slot;
  Type fp8Format;
  Value kScales, vScales;
};

/// Stores `element` (loaded from a key or value row) at `to` of the cache:
/// its bits, or with `fp8Format` its fp8 byte for `scale`.
void emitCacheStore(KernelBuilder &b, Value element, Value cache, Value to,
                    Type fp8Format, Value scale) {
  if (fp8Format)
    element = b.quantizeFp8(b.toF32(element), scale, fp8Format);
  b.create<memref::StoreOp>(element, cache, to);
}

/// Copies `size` elements from `src` at `srcStart` to the cache at
/// `dstStart` (emitCacheStore), the workgroup's invocations striding over
/// them.
void emitRowCopy(KernelBuilder &b, Value src, Value srcStart, Value dst,
                 Value dstStart, int64_t size, Value tid, int64_t wgSize,
                 Type fp8Format, Value scale) {
  b.create<scf::ForOp>(
      tid, b.idx(size), b.idx(wgSize), ValueRange(),
      [&](OpBuilder &nested, Location l, Value e, ValueRange) {
        KernelBuilder lb(l, nested, b.options);
        Value element = lb.create<memref::LoadOp>(src, lb.addi(srcStart, e));
        emitCacheStore(lb, element, dst, lb.addi(dstStart, e), fp8Format,
                       scale);
        lb.create<scf::YieldOp>();
      });
}

/// The part both forms share: the launch (buffers key, value, slot_mapping,
/// kv_cache; params num_tokens, num_blocks; grid (T, gridY)) and the kernel's
/// prologue, which skips padding (slot < 0) and slots outside a cache of
/// blockSize-token blocks with one unsigned compare. `body` writes one
/// token's rows.
LogicalResult emitCacheWrite(
    ReshapeAndCacheOp op, LoweringContext &ctx, int64_t blockSize,
    int64_t gridY,
    llvm::function_ref<void(KernelBuilder &, const CacheWrite &)> body) {
  int64_t wgSize = ctx.options.elementwiseWorkgroupSize();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  HostLaunch launch(builder, loc, ctx.options);
  launch.addBuffer(Arg::NewKey, op.getKey());
  launch.addBuffer(Arg::NewValue, op.getValue());
  launch.addBuffer(Arg::SlotMapping, op.getSlotMapping());
  launch.addBuffer(Arg::Cache, op.getKvCache());
  if (Value kScale = op.getKScale())
    launch.addBuffer(Arg::KScale, kScale);
  if (Value vScale = op.getVScale())
    launch.addBuffer(Arg::VScale, vScale);
  KernelArgs args = launch.arguments();
  Value numTokens = launch.dim(op.getKey(), 0);
  launch.addParam(::attn::abi::kCacheNumTokens, "num_tokens", numTokens);
  launch.addParam(::attn::abi::kCacheNumBlocks, "num_blocks",
                  launch.dim(op.getKvCache(), 0));
  // Token t = grid.x reads its key, value and slot rows (num_tokens of
  // each) and writes a slot below num_blocks * B, which it compares.
  for (Arg role : {Arg::NewKey, Arg::NewValue, Arg::SlotMapping}) {
    launch.boundRows(role, {gridOf(0)});
    launch.boundRows(role, {paramOf(::attn::abi::kCacheNumTokens)});
  }
  launch.boundRows(Arg::Cache, {paramOf(::attn::abi::kCacheNumBlocks)});
  gpu::GPUFuncOp fn =
      createKernel(ctx.module, loc, kernelName(op, "reshape_and_cache"),
                   launch.getKernelArgTypes(), wgSize, launch.getParamNames(),
                   "reshape_and_cache");
  {
    OpBuilder kernelBuilder = OpBuilder::atBlockBegin(&fn.getBody().front());
    KernelBuilder b(loc, kernelBuilder, ctx.options);
    CacheWrite w;
    w.key = args.of(fn, Arg::NewKey);
    w.value = args.of(fn, Arg::NewValue);
    Value slots = args.of(fn, Arg::SlotMapping);
    w.cache = args.of(fn, Arg::Cache);
    w.fp8Format = getFp8Format(
        cast<ShapedType>(op.getKvCache().getType()).getElementType());
    w.kScales = args.of(fn, Arg::KScale);
    w.vScales = args.of(fn, Arg::VScale);
    Value params = args.of(fn, Arg::Params);
    Value numBlocks = b.loadIndex(params, b.idx(::attn::abi::kCacheNumBlocks));
    w.t = b.create<gpu::BlockIdOp>(gpu::Dimension::x);
    w.y = b.create<gpu::BlockIdOp>(gpu::Dimension::y);
    w.tid = b.create<gpu::ThreadIdOp>(gpu::Dimension::x);
    // The slot is compared as the i64 it is, before it becomes an index:
    // where index is 32 bits (SPIR-V), -2^32 + 5 would otherwise become
    // slot 5. Unsigned, every negative slot (padding) is out of the cache.
    Value slot = b.create<memref::LoadOp>(slots, w.t);
    Value cacheSlots = b.create<arith::IndexCastOp>(
        slot.getType(), b.muli(numBlocks, b.idx(blockSize)));
    Value inCache = b.cmpi(arith::CmpIPredicate::ult, slot, cacheSlots);
    w.slot = b.create<arith::IndexCastOp>(b.getIndexType(), slot);
    emitIf(b, inCache, [&](KernelBuilder &ib) { body(ib, w); });
  }
  Value y = arith::ConstantIndexOp::create(builder, loc, gridY);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  launch.launch(fn, {numTokens, y, one}, wgSize);
  return success();
}

/// The MLA form: cache [NB, B, L + P] row slot = concat(key[t], value[t]).
LogicalResult lowerLatentCacheWrite(ReshapeAndCacheOp op,
                                    LoweringContext &ctx) {
  FailureOr<int64_t> latentSize =
      getStaticDim(op, op.getKey(), 1, "kv_lora_rank (the key's row)");
  FailureOr<int64_t> ropeSize =
      getStaticDim(op, op.getValue(), 1, "the rope dim (the value's row)");
  FailureOr<int64_t> blockSize =
      getStaticDim(op, op.getKvCache(), 1, "the block size");
  if (failed(latentSize) || failed(ropeSize) || failed(blockSize))
    return failure();
  int64_t wgSize = ctx.options.elementwiseWorkgroupSize();
  int64_t L = *latentSize, P = *ropeSize;
  return emitCacheWrite(op, ctx, *blockSize, /*gridY=*/1,
                        [&](KernelBuilder &ib, const CacheWrite &w) {
                          // Row `slot` of the cache viewed as [NB * B, L + P].
                          Value row = ib.muli(w.slot, ib.idx(L + P));
                          Value scale = ib.loadScale(w.kScales, 1, Value());
                          emitRowCopy(ib, w.key, ib.muli(w.t, ib.idx(L)),
                                      w.cache, row, L, w.tid, wgSize,
                                      w.fp8Format, scale);
                          emitRowCopy(ib, w.value, ib.muli(w.t, ib.idx(P)),
                                      w.cache, ib.addi(row, ib.idx(L)), P,
                                      w.tid, wgSize, w.fp8Format, scale);
                        });
}

} // namespace

LogicalResult mlir::attn::lowerReshapeAndCache(ReshapeAndCacheOp op,
                                               LoweringContext &ctx) {
  if (op.isLatentCache())
    return lowerLatentCacheWrite(op, ctx);
  bool nhd = *op.getLayout() == KVLayout::nhd;
  FailureOr<int64_t> numKvHeads =
      getStaticDim(op, op.getKey(), 1, "the number of kv heads");
  FailureOr<int64_t> headSize =
      getStaticDim(op, op.getKey(), 2, "the head size");
  FailureOr<int64_t> blockSize =
      getStaticDim(op, op.getKvCache(), nhd ? 2 : 3, "the block size");
  FailureOr<int64_t> kScales = getScaleCount(op, op.getKScale());
  FailureOr<int64_t> vScales = getScaleCount(op, op.getVScale());
  if (failed(numKvHeads) || failed(headSize) || failed(blockSize) ||
      failed(kScales) || failed(vScales))
    return failure();
  int64_t wgSize = ctx.options.elementwiseWorkgroupSize();
  int64_t G = *numKvHeads, D = *headSize, B = *blockSize;
  // One workgroup per token (x) and kv head (y).
  return emitCacheWrite(
      op, ctx, B, /*gridY=*/G, [&](KernelBuilder &ib, const CacheWrite &w) {
        Value g = w.y;
        Value block = ib.divui(w.slot, ib.idx(B));
        Value offset = ib.remui(w.slot, ib.idx(B));
        auto rowStart = [&](int64_t part) {
          Value blockPart = ib.addi(ib.muli(block, ib.idx(2)), ib.idx(part));
          Value row =
              nhd ? ib.addi(
                        ib.muli(ib.addi(ib.muli(blockPart, ib.idx(B)), offset),
                                ib.idx(G)),
                        g)
                  : ib.addi(ib.muli(ib.addi(ib.muli(blockPart, ib.idx(G)), g),
                                    ib.idx(B)),
                            offset);
          return ib.muli(row, ib.idx(D));
        };
        Value keyRow = rowStart(0), valueRow = rowStart(1);
        Value srcRow = ib.muli(ib.addi(ib.muli(w.t, ib.idx(G)), g), ib.idx(D));
        Value kScale = ib.loadScale(w.kScales, *kScales, g);
        Value vScale = ib.loadScale(w.vScales, *vScales, g);
        ib.create<scf::ForOp>(
            w.tid, ib.idx(D), ib.idx(wgSize), ValueRange(),
            [&](OpBuilder &nested, Location l, Value d, ValueRange) {
              KernelBuilder lb(l, nested, ctx.options);
              Value src = lb.addi(srcRow, d);
              Value keyAt = lb.addi(keyRow, d);
              emitCacheStore(lb, lb.create<memref::LoadOp>(w.key, src),
                             w.cache, keyAt, w.fp8Format, kScale);
              Value valueAt = lb.addi(valueRow, d);
              emitCacheStore(lb, lb.create<memref::LoadOp>(w.value, src),
                             w.cache, valueAt, w.fp8Format, vScale);
              lb.create<scf::YieldOp>();
            });
      });
}
