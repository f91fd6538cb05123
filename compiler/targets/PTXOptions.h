//===- PTXOptions.h - The ptx target's knobs --------------------*- C++ -*-===//
//
// Target ptx's own knobs: CompileOptions holds one of these per
// target, and only that target's compile (compiler/targets/) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_PTXOPTIONS_H
#define ATTN_COMPILER_TARGETS_PTXOPTIONS_H

#include <string>

namespace mlir::attn {

/// Target ptx's knobs: the SM ("sm_80", "sm_90", ...) and the NVPTX features
/// (the PTX ISA version) of the PTX. PTX kernels need subgroup size 32 and
/// take bf16 natively.
struct PTXTargetOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
};

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_PTXOPTIONS_H
