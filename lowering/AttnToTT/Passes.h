//===- Passes.h - attn to Tenstorrent kernel passes -----------*- C++ -*-===//
//
// Deliberately free of generated code, so tools can include it without
// depending on this folder's tablegen output.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_PASSES_H
#define ATTN_LOWERING_ATTNTOTT_PASSES_H

#include <memory>

namespace mlir {
class Pass;
namespace attn {

/// convert-attn-to-ttkernel with its default options.
std::unique_ptr<Pass> createConvertAttnToTTKernelPass();

/// Registers convert-attn-to-ttkernel with the global pass registry.
void registerAttnToTTLoweringPasses();

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_ATTNTOTT_PASSES_H
