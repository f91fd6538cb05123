//===- PTXOptions.h - The ptx target's knobs --------------------*- C++ -*-===//
//
// Target ptx's own knobs: CompileOptions holds one of these per
// target, and only that target's compile (compiler/targets/) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_PTXOPTIONS_H
#define ATTN_COMPILER_TARGETS_PTXOPTIONS_H

#include <string>
#include <vector>

namespace mlir::attn {

/// Target ptx's knobs: the SMs ("sm_80", "sm_90", ...; core/LaunchFacts.h's
/// ptxChips()) to build PTX for, one kernel per chip under the same symbol
/// (the CUDA device loads the newest its GPU runs), and the NVPTX features
/// (the PTX ISA version; empty: the oldest each chip allows,
/// ptxFeaturesForChip). PTX kernels need subgroup size 32 and take bf16
/// natively.
struct PTXTargetOptions {
  std::vector<std::string> chips = {"sm_90"};
  std::string features;
};

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_PTXOPTIONS_H
