//===- Lowerings.h - One kernel builder per attn op ------------*- C++ -*-===//
//
// Each function builds the kernels of one op instance into ctx.module and
// replaces the op (on memrefs) by their launches, emitted before it; the
// caller erases the op.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_LOWERINGS_H
#define ATTN_LOWERING_ATTNTOGPU_LOWERINGS_H

#include "dialect/AttnOps.h"
#include "lowering/AttnToGPU/KernelBuilder.h"

#include <optional>

namespace mlir {
namespace attn {

LogicalResult lowerPagedAttention(PagedAttentionOp op, LoweringContext &ctx);
LogicalResult lowerReshapeAndCache(ReshapeAndCacheOp op,
                                   LoweringContext &ctx);
LogicalResult lowerMergeStates(MergeStatesOp op, LoweringContext &ctx);
LogicalResult lowerMlaDecode(MlaDecodeOp op, LoweringContext &ctx);

/// The rows a split-KV reduce of paged_attention merges when another kernel
/// writes the rest: the tokens of requests (by `queryStartLoc`, over
/// `numReqs` requests, a host index) with at most `maxQueryLen` query
/// tokens.
struct DecodeRows {
  Value queryStartLoc;
  Value numReqs;
  int64_t maxQueryLen;
};

/// Launches the reduce kernel of split-KV decode: merges the `numSplits`
/// f32 partial outputs [S, rows, H, Dv] and lses [S, rows, H] (1-D scratch
/// buffers) into `out` [rows, H, Dv] and `lse` [rows, H], adding `sinks`
/// [H] to the denominator when given. `numRows` is a host index value. With
/// `decodeRows`, only those rows are written.
void launchSplitReduce(LoweringContext &ctx, OpBuilder &builder, Location loc,
                       StringRef name, Value partialOut, Value partialLse,
                       Value sinks, Value out, Value lse, Value numRows,
                       int64_t numSplits, int64_t numHeads, int64_t headDim,
                       std::optional<DecodeRows> decodeRows = std::nullopt);

/// `<host function>_<suffix>`: the base name of a kernel of `op`.
std::string kernelName(Operation *op, StringRef suffix);

/// Fails with a diagnostic unless dimension `i` of `value` is static;
/// `what` names it.
FailureOr<int64_t> getStaticDim(Operation *op, Value value, int64_t i,
                                StringRef what);

/// How many scales an fp8 cache's `scale` operand holds (1, or one per kv
/// head): its static size; 1 when there is none.
FailureOr<int64_t> getScaleCount(Operation *op, Value scale);

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOGPU_LOWERINGS_H
