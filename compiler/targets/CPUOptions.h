//===- CPUOptions.h - The cpu target's knobs --------------------*- C++ -*-===//
//
// Target cpu's own knobs: CompileOptions holds one of these per target,
// and only that target's compile (compiler/targets/CPU.cpp) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_CPUOPTIONS_H
#define ATTN_COMPILER_TARGETS_CPUOPTIONS_H

#include <string>
#include <vector>

namespace mlir::attn {

/// Target cpu's knobs: the ISA levels its machine code is built for
/// (names of core/CpuKernel.h's cpuIsaLevels()), one shared object per
/// kernel and level; the CPU device runs the widest its host has. CPU
/// kernels are built for subgroup size 1, one invocation per work item.
/// x86-64-v4-bf16 is a default level because prefill, bound by its scores,
/// runs about 1.3x faster on VDPBF16PS than on f32 products
/// (bench/README.md).
struct CPUTargetOptions {
  std::vector<std::string> isaLevels = {"x86-64-v3", "x86-64-v4",
                                        "x86-64-v4-bf16", "aarch64"};
};

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_CPUOPTIONS_H
