//===- MetalLaunchFacts.h - How to launch one MSL kernel -------*- C++ -*-===//
//
// The `launch` object that attn-compile records for each kernel of target
// "msl" (lowering/SPIRVToMSL/SPIRVToMSL.h writes it), parsed. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_METAL_METALLAUNCHFACTS_H
#define ATTN_RUNTIME_EXECUTORS_METAL_METALLAUNCHFACTS_H

#include "core/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct MetalLaunchFacts {
  /// The kernel function's name in the MSL source.
  std::string entryPoint;
  /// MSL version to compile the source with: major and minor.
  uint32_t mslMajor = 0;
  uint32_t mslMinor = 0;
  /// Threads per threadgroup the kernel was compiled for.
  std::array<uint32_t, 3> threadgroupSize = {1, 1, 1};
  /// SIMD width the kernel's reductions assume.
  uint32_t subgroupSize = 0;
  /// bufferIndices[i]: the [[buffer(n)]] index of kernel argument i.
  std::vector<uint32_t> bufferIndices;
};

/// Parses and checks a kernel's launch JSON (entry_point, msl_version,
/// workgroup_size, subgroup_size, buffer_indices).
Result<MetalLaunchFacts> parseMetalLaunchFacts(std::string_view json);

} // namespace attn

#endif // ATTN_RUNTIME_EXECUTORS_METAL_METALLAUNCHFACTS_H
