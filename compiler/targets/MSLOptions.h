//===- MSLOptions.h - The msl target's knobs --------------------*- C++ -*-===//
//
// Target msl's own knobs: CompileOptions holds one of these per
// target, and only that target's compile (compiler/targets/) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_MSLOPTIONS_H
#define ATTN_COMPILER_TARGETS_MSLOPTIONS_H

#include <cstdint>

namespace mlir::attn {

/// Target msl's knobs.
struct MSLTargetOptions {
  /// The MSL version to emit (makeMSLVersion); 0: the lowest each kernel
  /// needs.
  uint32_t version = 0;
};

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_MSLOPTIONS_H
