//===- Target.h - The kernel targets by name ------------------------------===//
//
// The targets a bundle holds kernels for, and what the runtime needs to know
// of each. The compiler's target table (compiler/targets/Targets.cpp) points
// at these entries for its names; the runtime and the devices, which cannot
// include the compiler, compare targets by this enum, and read a bundle's
// target names with parseTarget.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_TARGET_H
#define ATTN_CORE_TARGET_H

#include <optional>
#include <span>
#include <string_view>

namespace attn {

enum class Target { SPIRV, PTX, MSL, TT, CPU };

/// One target and its runtime facts.
struct TargetInfo {
  Target target;
  /// What attn-compile --targets and a bundle's manifest name it.
  std::string_view name;
  /// Its kernels index buffers with 32-bit element indices
  /// (checkIndexRange): SPIR-V and MSL; PTX and the CPU index with 64
  /// bits.
  bool indices32;
};

/// Every target, in --help and manifest order: spirv, ptx, msl, tt, cpu.
std::span<const TargetInfo> allTargets();
const TargetInfo &targetInfo(Target target);
/// "spirv", "ptx", "msl", "tt", "cpu".
std::string_view toString(Target target);
/// The target named `name`, or nullopt.
std::optional<Target> parseTarget(std::string_view name);

} // namespace attn

#endif // ATTN_CORE_TARGET_H
