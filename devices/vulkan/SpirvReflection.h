//===- SpirvReflection.h - What the executor needs to know of a SPIR-V blob
//===//
//
// A small reader of SPIR-V binaries: the header, the compute entry points
// with their workgroup sizes, the declared capabilities and the descriptor
// bindings. The executor checks a blob with it before handing it to the
// driver, because vkCreateShaderModule and vkCreateComputePipelines have
// undefined behaviour (often a crash) on malformed code or a missing entry
// point. It is not a validator: spirv-val is.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_VULKAN_SPIRVREFLECTION_H
#define ATTN_RUNTIME_EXECUTORS_VULKAN_SPIRVREFLECTION_H

#include "core/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attn::vulkan {

/// A module-scope variable decorated with DescriptorSet and Binding.
struct SpirvBinding {
  uint32_t variableId = 0;
  uint32_t set = 0;
  uint32_t binding = 0;
  /// SPIR-V StorageClass of the variable (12 = StorageBuffer, 2 = Uniform).
  uint32_t storageClass = 0;
};

/// An OpEntryPoint with the GLCompute execution model.
struct SpirvEntryPoint {
  std::string name;
  uint32_t functionId = 0;
  /// Ids in the entry point's interface list. From SPIR-V 1.4 on it names
  /// every global variable the entry point uses, bindings included.
  std::vector<uint32_t> interface;
  /// From OpExecutionMode LocalSize; absent when given by LocalSizeId or not
  /// at all.
  std::optional<std::array<uint32_t, 3>> workgroupSize;
};

struct SpirvModuleInfo {
  uint32_t versionMajor = 0;
  uint32_t versionMinor = 0;
  std::vector<uint32_t> capabilities;
  std::vector<SpirvEntryPoint> entryPoints;
  std::vector<SpirvBinding> bindings;
  /// Whether some module-scope variable lives in the PushConstant class.
  bool usesPushConstants = false;

  bool hasCapability(uint32_t capability) const;
  const SpirvEntryPoint *findEntryPoint(const std::string &name) const;
  /// The bindings an entry point may access: the ones in its interface list
  /// for SPIR-V >= 1.4, else every binding of the module when it is the only
  /// entry point. Absent when that cannot be told without a call-graph walk
  /// (several entry points in a SPIR-V < 1.4 module).
  std::optional<std::vector<SpirvBinding>>
  bindingsOf(const SpirvEntryPoint &entry) const;
};

/// Reads a SPIR-V binary (native-endian 32-bit words). Fails on a bad magic
/// number, a truncated header or an instruction running past the end.
Result<SpirvModuleInfo> reflectSpirv(std::span<const uint32_t> words);

/// SPIR-V capability numbers the executor maps to device features.
namespace spirv_cap {
enum : uint32_t {
  Float16 = 9,
  Float64 = 10,
  Int64 = 11,
  Int16 = 22,
  Int8 = 39,
  GroupNonUniform = 61,
  GroupNonUniformVote = 62,
  GroupNonUniformArithmetic = 63,
  GroupNonUniformBallot = 64,
  GroupNonUniformShuffle = 65,
  GroupNonUniformShuffleRelative = 66,
  GroupNonUniformClustered = 67,
  GroupNonUniformQuad = 68,
  StorageBuffer16BitAccess = 4433,
  UniformAndStorageBuffer16BitAccess = 4434,
  StoragePushConstant16 = 4435,
  StorageBuffer8BitAccess = 4448,
  UniformAndStorageBuffer8BitAccess = 4449,
  StoragePushConstant8 = 4450,
  VulkanMemoryModel = 5345,
  PhysicalStorageBufferAddresses = 5347,
  CooperativeMatrixKHR = 6022,
};
} // namespace spirv_cap

} // namespace attn::vulkan

#endif // ATTN_RUNTIME_EXECUTORS_VULKAN_SPIRVREFLECTION_H
