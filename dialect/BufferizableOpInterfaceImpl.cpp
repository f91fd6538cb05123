//===- BufferizableOpInterfaceImpl.cpp - attn ops and bufferization -------===//
//
// The destination-style ops (paged_attention, reshape_and_cache, mla_decode,
// merge_states) read every tensor operand and write only their `outs`, which
// are tied to their results: upstream's DstBufferizableOpInterfaceExternalModel
// says exactly that. reshape_and_cache's destination is the cache, so
// bufferization updates the cache in place when it may.
//
// attn.metadata reads its tensors and produces a `!attn.metadata` value, which
// is not a tensor and aliases nothing: it bufferizes to the same op on
// memrefs.
//
//===----------------------------------------------------------------------===//

#include "dialect/BufferizableOpInterfaceImpl.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {

/// Replaces every tensor operand of `op` by its buffer and rebuilds the op
/// with the same attributes and no tensor results. Returns the new op.
FailureOr<Operation *> rebuildOnBuffers(RewriterBase &rewriter, Operation *op,
                                        const BufferizationOptions &options,
                                        BufferizationState &state,
                                        TypeRange resultTypes) {
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    if (!isa<TensorType>(operand.getType())) {
      operands.push_back(operand);
      continue;
    }
    FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
    if (failed(buffer))
      return failure();
    operands.push_back(*buffer);
  }
  rewriter.setInsertionPoint(op);
  OperationState newState(op->getLoc(), op->getName(), operands, resultTypes,
                          op->getAttrs());
  return rewriter.create(newState);
}

/// The destination-style attn ops.
template <typename OpTy>
struct DpsOpInterface
    : public DstBufferizableOpInterfaceExternalModel<DpsOpInterface<OpTy>,
                                                     OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    // The results live in the buffers of the tied `outs`.
    SmallVector<Value> results;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, init.get(), options, state);
      if (failed(buffer))
        return failure();
      results.push_back(*buffer);
    }
    if (failed(rebuildOnBuffers(rewriter, op, options, state, TypeRange())))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

/// attn.metadata: reads its tensors, results are not tensors.
struct MetadataOpInterface
    : public BufferizableOpInterface::ExternalModel<MetadataOpInterface,
                                                    attn::MetadataOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    FailureOr<Operation *> newOp = rebuildOnBuffers(
        rewriter, op, options, state, op->getResultTypes());
    if (failed(newOp))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, (*newOp)->getResults());
    return success();
  }
};

} // namespace

void mlir::attn::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    MetadataOp::attachInterface<MetadataOpInterface>(*ctx);
    PagedAttentionOp::attachInterface<DpsOpInterface<PagedAttentionOp>>(*ctx);
    ReshapeAndCacheOp::attachInterface<DpsOpInterface<ReshapeAndCacheOp>>(
        *ctx);
    MlaDecodeOp::attachInterface<DpsOpInterface<MlaDecodeOp>>(*ctx);
    MergeStatesOp::attachInterface<DpsOpInterface<MergeStatesOp>>(*ctx);
  });
}
