//===- SPIRVToMSL.h - attn's SPIR-V kernels as Metal source ----*- C++ -*-===//
//
// The Metal path: each SPIR-V kernel of translateKernelsToSPIRV becomes one
// MSL compute function through SPIRV-Cross (its C API, in process), as
// IREE's Metal target does. No MSL is written here; this file chooses
// SPIRV-Cross's options and records what a Metal host needs to launch the
// result.
//
// Choices, and why:
//  - Buffers. Kernel argument i is the storage buffer at set 0, binding i
//    (lowering/AttnToGPU/KernelABI.h); it becomes [[buffer(i)]]. Plain
//    buffer indices, not argument buffers: a kernel has at most a dozen
//    arguments, far below Metal's 31 buffer slots.
//  - MSL version. The lowest that SPIRV-Cross accepts for the capabilities
//    the kernel declares: 2.3 with Int64 (slot_mapping is i64, and
//    SPIRV-Cross wants 2.3 for ulong in buffers), 2.1 with subgroup
//    arithmetic, ballot or vote (simd_sum, simd_ballot on macOS), 2.0 with
//    subgroup shuffles only, 1.2 otherwise. The dtype does not raise it:
//    f16 is `half`, which every MSL version has, and bf16 buffers are 16-bit
//    words (`ushort`) converted with shifts and as_type, because the kernels
//    carry bf16 as i16 (MSL's `bfloat` needs 3.1, and SPIR-V has no bf16).
//  - Platform macOS. Subgroup operations become SIMD-group functions, which
//    assume the kernel's subgroup size is the device's SIMD width (32 on
//    Apple GPUs); the launch facts record the size the kernel was built for.
//  - The threadgroup size is not part of an MSL kernel: it comes from the
//    SPIR-V LocalSize and the host passes it to dispatchThreadgroups.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_SPIRVTOMSL_SPIRVTOMSL_H
#define ATTN_LOWERING_SPIRVTOMSL_SPIRVTOMSL_H

#include "core/LaunchBounds.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>

namespace mlir {
namespace attn {

/// An MSL version in SPIRV-Cross's encoding: major * 10000 + minor * 100.
constexpr uint32_t makeMSLVersion(uint32_t major, uint32_t minor) {
  return major * 10000 + minor * 100;
}

struct MSLOptions {
  /// Invocations per subgroup the SPIR-V was compiled for. Recorded in the
  /// launch facts so that a host refuses a device of another SIMD width.
  int64_t subgroupSize = 32;
  /// The MSL version to emit; 0 picks the lowest the kernel needs. A version
  /// below that is an error.
  uint32_t version = 0;
};

/// One kernel as Metal source.
struct MSLKernel {
  std::string source;
  /// The name of the kernel function in `source`: the SPIR-V entry point,
  /// unless SPIRV-Cross had to rename it (an MSL keyword, `main`).
  std::string entryPoint;
  uint32_t version = 0;
  /// Threads per threadgroup, from the SPIR-V LocalSize.
  std::array<uint32_t, 3> threadgroupSize = {1, 1, 1};
  /// bufferIndices[i] is the [[buffer(n)]] index of kernel argument i.
  SmallVector<uint32_t> bufferIndices;
};

/// Cross-compiles the SPIR-V module `words`, whose GLCompute entry point
/// `entryPoint` takes storage buffers at set 0, bindings 0..N-1, to MSL for
/// macOS. SPIRV-Cross's own errors come back as the error's message.
llvm::Expected<MSLKernel> translateSPIRVToMSL(ArrayRef<uint32_t> words,
                                              StringRef entryPoint,
                                              const MSLOptions &options = {});

/// The launch facts of `kernel` for a bundle (core/LaunchFacts.h): entry
/// point, MSL version, threadgroup size, buffer indices, the subgroup
/// width its reductions assume, and the bounds its launches must keep.
std::string mslLaunchFacts(const MSLKernel &kernel, uint32_t subgroupSize,
                           ::attn::LaunchBounds bounds);

/// "2.1" for makeMSLVersion(2, 1).
std::string formatMSLVersion(uint32_t version);
/// The major and minor numbers of a version made by makeMSLVersion.
inline uint32_t mslMajorVersion(uint32_t version) { return version / 10000; }
inline uint32_t mslMinorVersion(uint32_t version) {
  return version / 100 % 100;
}

} // namespace attn
} // namespace mlir

#endif // ATTN_LOWERING_SPIRVTOMSL_SPIRVTOMSL_H
