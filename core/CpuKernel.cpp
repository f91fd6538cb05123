//===- CpuKernel.cpp - The cpu target's ISA levels ------------------------===//

#include "core/CpuKernel.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace attn {

namespace {

// x86-64-v3: AVX2, FMA, F16C, BMI; v4 adds AVX-512 F/BW/CD/DQ/VL (the psABI
// levels, which LLVM knows as CPU names), and v4-bf16 the AVX-512 BF16
// extension on top. AArch64: Armv8-A with NEON, which every AArch64 Linux
// machine has.
constexpr CpuIsaLevel kLevels[] = {
    {"x86-64-v3", CpuArch::X86_64, "x86_64-unknown-linux-gnu", "x86-64-v3", "",
     /*bf16Dot=*/false, "AVX2, FMA, F16C (Haswell, Zen 1 and later)"},
    {"x86-64-v4", CpuArch::X86_64, "x86_64-unknown-linux-gnu", "x86-64-v4", "",
     /*bf16Dot=*/false,
     "AVX-512 F/BW/CD/DQ/VL (Skylake-SP, Zen 4 and later)"},
    {"x86-64-v4-bf16", CpuArch::X86_64, "x86_64-unknown-linux-gnu",
     "x86-64-v4", "+avx512bf16", /*bf16Dot=*/true,
     "x86-64-v4 and AVX-512 BF16 (Cooper Lake, Sapphire Rapids, Zen 4 and "
     "later)"},
    {"aarch64", CpuArch::AArch64, "aarch64-unknown-linux-gnu", "generic",
     "+neon", /*bf16Dot=*/false, "Armv8-A with NEON"},
};

} // namespace

std::span<const CpuIsaLevel> cpuIsaLevels() { return kLevels; }

const CpuIsaLevel *findCpuIsaLevel(std::string_view name) {
  for (const CpuIsaLevel &level : kLevels)
    if (level.name == name)
      return &level;
  return nullptr;
}

std::string cpuIsaLevelNames() {
  std::string names;
  for (const CpuIsaLevel &level : kLevels) {
    if (!names.empty())
      names += ", ";
    names += level.name;
  }
  return names;
}

CpuArch hostCpuArch() {
#if defined(__aarch64__)
  return CpuArch::AArch64;
#else
  return CpuArch::X86_64;
#endif
}

bool hostRunsCpuIsa(const CpuIsaLevel &level) {
  if (level.arch != hostCpuArch())
    return false;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (level.name == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
  if (level.name == "x86-64-v4")
    return __builtin_cpu_supports("x86-64-v4");
  if (level.name == "x86-64-v4-bf16")
    return __builtin_cpu_supports("x86-64-v4") &&
           __builtin_cpu_supports("avx512bf16");
  return false;
#elif defined(__aarch64__) && defined(__linux__)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
  return false;
#endif
}

const CpuIsaLevel *bestHostCpuIsa() {
  const CpuIsaLevel *best = nullptr;
  for (const CpuIsaLevel &level : kLevels)
    if (hostRunsCpuIsa(level))
      best = &level;
  return best;
}

} // namespace attn
