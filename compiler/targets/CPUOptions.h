//===- CPUOptions.h - The cpu target's knobs --------------------*- C++ -*-===//
//
// Target cpu's own knobs: CompileOptions holds one of these per target,
// and only that target's compile (compiler/targets/CPU.cpp) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_CPUOPTIONS_H
#define ATTN_COMPILER_TARGETS_CPUOPTIONS_H

#include <string>

namespace mlir::attn {

/// Target cpu's knobs: the ISA level its machine code is for (a name of
/// core/CpuKernel.h's cpuIsaLevels()). CPU kernels are built for subgroup
/// size 1, one invocation per work item.
struct CPUTargetOptions {
  std::string isa = "x86-64-v3";
};

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_CPUOPTIONS_H
