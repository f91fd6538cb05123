//===- Target.cpp - The kernel targets by name ----------------------------===//

#include "core/Target.h"

namespace attn {

namespace {

constexpr TargetInfo kTargets[] = {
    {Target::SPIRV, "spirv", /*indices32=*/true},
    {Target::PTX, "ptx", /*indices32=*/false},
    {Target::MSL, "msl", /*indices32=*/true},
    {Target::TT, "tt", /*indices32=*/false},
    {Target::CPU, "cpu", /*indices32=*/false},
};

constexpr bool inEnumOrder() {
  for (size_t i = 0; i < std::size(kTargets); ++i)
    if (static_cast<size_t>(kTargets[i].target) != i)
      return false;
  return true;
}
static_assert(inEnumOrder(), "kTargets must list the targets in enum order");

} // namespace

std::span<const TargetInfo> allTargets() { return kTargets; }

const TargetInfo &targetInfo(Target target) {
  return kTargets[static_cast<size_t>(target)];
}

std::string_view toString(Target target) { return targetInfo(target).name; }

std::optional<Target> parseTarget(std::string_view name) {
  for (const TargetInfo &info : kTargets)
    if (info.name == name)
      return info.target;
  return std::nullopt;
}

} // namespace attn
