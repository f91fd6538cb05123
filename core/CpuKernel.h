//===- CpuKernel.h - The cpu target's ISA levels and kernel ABI -*- C++ -*-===//
//
// What the compiler (compiler/targets/CPU.cpp) and the CPU device
// (devices/cpu) agree on for a kernel of target `cpu`. Plain C++: the
// runtime includes it.
//
// ISA levels. A cpu kernel is machine code for one ISA level: an
// architecture and the instruction-set extensions the code may use (the
// x86-64 psABI levels, AArch64 with NEON). They are to the CPU what
// subgroup sizes are to SPIR-V: attn-compile --cpu-isa names the levels a
// bundle holds, each kernel's launch facts record its level, and the device
// runs a kernel only where the host has every extension of its level.
//
// Kernel files. Each kernel is an ELF shared object for its level's triple,
// exporting, with C linkage:
//
//   const uint32_t attn_cpu_abi;     // == kCpuKernelAbi
//   void <entry point>(const int64_t *workItem, void *const *buffers,
//                      const int64_t *elements);
//
// The device calls the entry once per work item of a launch (a GPU
// kernel's workgroup): workItem[0..2] is its index in the launch's grid,
// buffers[i] points at argument i's first element and elements[i] is its
// element count (arguments as lowering/AttnToGPU/KernelABI.h orders them:
// 1-D buffers, the params buffer of i32 last). Work items of one launch
// write disjoint outputs, so they may run on any threads in any order. The
// object may leave the C library's math functions (expf, ...) undefined;
// the loader resolves them from the process.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_CPUKERNEL_H
#define ATTN_CORE_CPUKERNEL_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace attn {

/// The entry convention above; a kernel exporting another value is refused.
inline constexpr uint32_t kCpuKernelAbi = 1;
/// The symbol holding it.
inline constexpr std::string_view kCpuKernelAbiSymbol = "attn_cpu_abi";

/// The signature of a cpu kernel's entry point.
using CpuKernelEntry = void (*)(const int64_t *workItem, void *const *buffers,
                                const int64_t *elements);

enum class CpuArch { X86_64, AArch64 };

/// One ISA level kernels are built for.
struct CpuIsaLevel {
  /// What --cpu-isa and the launch facts name it: "x86-64-v3", ...
  std::string_view name;
  CpuArch arch;
  /// LLVM's target triple, CPU name and feature string for it.
  std::string_view triple;
  std::string_view cpu;
  std::string_view features;
  /// Whether it has AVX-512 BF16 (VDPBF16PS), which attn-cpu-bf16-dot
  /// selects for dot products of bf16 rows.
  bool bf16Dot;
  /// What it adds, for --help.
  std::string_view summary;
};

/// Every level, in --help order: x86-64-v3, x86-64-v4, x86-64-v4-bf16,
/// aarch64.
std::span<const CpuIsaLevel> cpuIsaLevels();
/// The level named `name`, or null.
const CpuIsaLevel *findCpuIsaLevel(std::string_view name);
/// The names of every level, comma-separated: for messages.
std::string cpuIsaLevelNames();

/// The architecture this program runs on.
CpuArch hostCpuArch();
/// Whether this host runs code of `level`: its architecture, and every
/// extension the level may use.
bool hostRunsCpuIsa(const CpuIsaLevel &level);
/// The last level of cpuIsaLevels() this host runs (the widest), or null.
const CpuIsaLevel *bestHostCpuIsa();

} // namespace attn

#endif // ATTN_CORE_CPUKERNEL_H
