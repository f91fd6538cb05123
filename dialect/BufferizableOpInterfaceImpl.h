//===- BufferizableOpInterfaceImpl.h - attn ops and bufferization -*- C++ -*-===//
//
// External models of BufferizableOpInterface for the attn ops, so that
// one-shot bufferization turns attn ops on tensors into attn ops on memrefs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DIALECT_BUFFERIZABLEOPINTERFACEIMPL_H
#define ATTN_DIALECT_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace attn {
/// Attaches the bufferization models to the attn ops when the dialect loads.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_BUFFERIZABLEOPINTERFACEIMPL_H
