//===- LaunchFacts.h - What launching a compiled kernel takes --*- C++ -*-===//
//
// The `launch` object of a kernel in a bundle manifest: what the compiler
// knows about a kernel that its executor needs to launch it. One struct for
// every target, written by the compiler (compiler/Compile.cpp) and read by
// the Vulkan, CUDA and Metal executors through this header only, so the
// JSON has one writer and one reader.
//
// Per target, the JSON holds (every key required unless said otherwise):
//   spirv  subgroup_size, workgroup_size, and abi "buffer_address" with
//          num_buffers (argument i is the u64 device address at push-constant
//          offset 8 i) and, optionally, arg_element_bytes; without abi the
//          kernel takes descriptor bindings (a bundle's binding form of a
//          kernel, beside its address form; attn-translate's SPIR-V for the
//          Metal path)
//   ptx    subgroup_size, workgroup_size, chip (optional), abi
//          "memref_descriptor", arg_element_bytes
//   msl    entry_point, msl_version "MAJOR.MINOR", subgroup_size,
//          workgroup_size, buffer_indices (each in [0, 30])
//   tt     program, description (the program's files are found through its
//          description; nothing here is read at launch)
//   cpu    workgroup_size (1, 1, 1), subgroup_size 0, abi "attn_cpu"
//          (core/CpuKernel.h's entry convention), cpu_isa (a level of
//          cpuIsaLevels()), arg_element_bytes
// and every target but tt: bounds, the relations between the kernel's
// params, grid and argument sizes that a launch must keep
// (core/LaunchBounds.h). A TT program takes no params buffer; its device
// derives every size from the launch's grid and checks each buffer
// against it (devices/tt/TTPlanDevice.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_LAUNCHFACTS_H
#define ATTN_CORE_LAUNCHFACTS_H

#include "core/LaunchBounds.h"
#include "core/Status.h"
#include "core/Target.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct LaunchFacts {
  /// Invocations per workgroup the kernel was built for (GPU targets).
  std::array<int64_t, 3> workgroup = {1, 1, 1};
  /// The subgroup width the kernel's reductions assume; 0 when any.
  uint32_t subgroupSize = 0;

  /// spirv: the number of buffers passed by device address; unset when the
  /// kernel takes descriptor bindings.
  std::optional<uint32_t> addressedBuffers;

  /// ptx: the SM the PTX was generated for ("sm_90"); empty when not
  /// recorded.
  std::string chip;
  /// cpu: the ISA level the kernel's machine code is for (core/CpuKernel.h).
  std::string cpuIsa;
  /// ptx, spirv, cpu: bytes per element of each argument, in order.
  std::vector<int64_t> argElementBytes;

  /// msl: the kernel function's name in the source, the MSL version to
  /// compile it with, and the [[buffer(n)]] index of each argument.
  std::string entryPoint;
  uint32_t mslMajor = 0;
  uint32_t mslMinor = 0;
  std::vector<uint32_t> bufferIndices;

  /// Every target but tt: what a launch must keep (core/LaunchBounds.h).
  std::optional<LaunchBounds> bounds;

  /// tt: the program and its description file.
  std::string program;
  std::string description;
};

/// The JSON object of `facts` for a kernel of `target`: the keys that target
/// reads, in a stable order.
std::string writeLaunchFacts(const LaunchFacts &facts, Target target);

/// Parses and checks the launch facts of a kernel of `target`: an error
/// naming the key when one it needs is missing or malformed.
Result<LaunchFacts> readLaunchFacts(std::string_view json, Target target);

/// Kernels of a target with 32-bit indices (TargetInfo::indices32: spirv,
/// msl) index their buffers with 32-bit integers, so each argument may hold
/// at most 2^31 - 1 elements (of argElementBytes[i] bytes; 1 byte where the
/// facts do not say). An error naming the first argument of `bytes` bytes
/// past that; ok for other targets (PTX indexes with 64 bits).
Status checkIndexRange(const LaunchFacts &facts, Target target,
                       std::span<const uint64_t> bytes);

/// The same by a bundle's target name ("spirv", ...). Reading and checking
/// give an error for a name that is no target; writing takes a target's.
std::string writeLaunchFacts(const LaunchFacts &facts, std::string_view target);
Result<LaunchFacts> readLaunchFacts(std::string_view json,
                                    std::string_view target);
Status checkIndexRange(const LaunchFacts &facts, std::string_view target,
                       std::span<const uint64_t> bytes);

/// The SM number of "sm_90" / "sm_90a" (90), or an error.
Result<int> parseSmVersion(std::string_view chip);

/// The SMs target ptx builds PTX for (attn-compile --chip), oldest first:
/// sm_80, sm_89, sm_90, sm_100, sm_103, sm_120, sm_121. Each is checked by
/// ptxas (test/Target/PTX/chips.test).
std::span<const std::string_view> ptxChips();
/// "sm_80, sm_89, ...": ptxChips() for messages.
std::string ptxChipNames();

/// Whether PTX built for `chip` runs on a device of SM `deviceSm`. PTX is
/// forward compatible: the driver JIT-compiles PTX for an older SM on a
/// newer one. An arch-specific chip ("sm_90a") runs on its own SM only.
bool ptxRunsOn(std::string_view chip, int deviceSm);

/// Of one kernel's PTX for each of `chips`, the index of the one a device
/// of SM `deviceSm` loads: the newest chip it runs (an empty chip, PTX of
/// unrecorded chip, ranks below every named one); nullopt when it runs
/// none.
std::optional<size_t> bestPtxChip(std::span<const std::string> chips,
                                  int deviceSm);

} // namespace attn

#endif // ATTN_CORE_LAUNCHFACTS_H
