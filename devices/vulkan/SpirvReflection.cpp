//===- SpirvReflection.cpp - What the executor needs to know of a SPIR-V blob
//=//

#include "devices/vulkan/SpirvReflection.h"

#include <algorithm>
#include <map>

namespace attn::vulkan {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kHeaderWords = 5;

enum Opcode : uint32_t {
  OpEntryPoint = 15,
  OpExecutionMode = 16,
  OpCapability = 17,
  OpVariable = 59,
  OpDecorate = 71,
};
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kStorageClassPushConstant = 9;

/// Decodes a nul-terminated literal string starting at `words[0]`; returns
/// the number of words it occupies, or 0 when it is not terminated.
size_t readLiteralString(std::span<const uint32_t> words, std::string &out) {
  out.clear();
  for (size_t w = 0; w < words.size(); ++w) {
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((words[w] >> (8 * b)) & 0xff);
      if (c == '\0')
        return w + 1;
      out.push_back(c);
    }
  }
  return 0;
}

} // namespace

bool SpirvModuleInfo::hasCapability(uint32_t capability) const {
  return std::find(capabilities.begin(), capabilities.end(), capability) !=
         capabilities.end();
}

const SpirvEntryPoint *
SpirvModuleInfo::findEntryPoint(const std::string &name) const {
  for (const SpirvEntryPoint &e : entryPoints)
    if (e.name == name)
      return &e;
  return nullptr;
}

std::optional<std::vector<SpirvBinding>>
SpirvModuleInfo::bindingsOf(const SpirvEntryPoint &entry) const {
  bool interfaceListsAll =
      versionMajor > 1 || (versionMajor == 1 && versionMinor >= 4);
  if (!interfaceListsAll) {
    if (entryPoints.size() != 1)
      return std::nullopt;
    return bindings;
  }
  std::vector<SpirvBinding> used;
  for (const SpirvBinding &b : bindings)
    if (std::find(entry.interface.begin(), entry.interface.end(),
                  b.variableId) != entry.interface.end())
      used.push_back(b);
  return used;
}

Result<SpirvModuleInfo> reflectSpirv(std::span<const uint32_t> words) {
  if (words.size() < kHeaderWords)
    return errorf("SPIR-V blob too short: ", words.size(),
                  " words, the header alone has ", kHeaderWords);
  if (words[0] != kMagic) {
    if (words[0] == __builtin_bswap32(kMagic))
      return Status::error("SPIR-V blob has the wrong byte order");
    return errorf("not a SPIR-V blob: magic number 0x", std::hex, words[0],
                  " instead of 0x", kMagic);
  }

  SpirvModuleInfo info;
  info.versionMajor = (words[1] >> 16) & 0xff;
  info.versionMinor = (words[1] >> 8) & 0xff;

  // Decorations arrive before the variables they decorate; collect both and
  // join at the end.
  std::map<uint32_t, uint32_t> setOf, bindingOf, storageClassOf;
  std::map<uint32_t, std::array<uint32_t, 3>> localSizeOf;

  size_t pos = kHeaderWords;
  while (pos < words.size()) {
    uint32_t wordCount = words[pos] >> 16;
    uint32_t opcode = words[pos] & 0xffff;
    if (wordCount == 0 || pos + wordCount > words.size())
      return errorf("malformed SPIR-V: instruction at word ", pos, " (opcode ",
                    opcode, ", ", wordCount,
                    " words) runs past the end of the ", words.size(),
                    "-word blob");
    std::span<const uint32_t> ops = words.subspan(pos + 1, wordCount - 1);
    pos += wordCount;

    switch (opcode) {
    case OpCapability:
      if (!ops.empty())
        info.capabilities.push_back(ops[0]);
      break;
    case OpEntryPoint: {
      if (ops.size() < 3 || ops[0] != kExecutionModelGLCompute)
        break;
      SpirvEntryPoint entry;
      entry.functionId = ops[1];
      size_t nameWords = readLiteralString(ops.subspan(2), entry.name);
      if (nameWords == 0)
        return Status::error(
            "malformed SPIR-V: unterminated OpEntryPoint name");
      auto rest = ops.subspan(2 + nameWords);
      entry.interface.assign(rest.begin(), rest.end());
      info.entryPoints.push_back(std::move(entry));
      break;
    }
    case OpExecutionMode:
      if (ops.size() == 5 && ops[1] == kExecutionModeLocalSize)
        localSizeOf[ops[0]] = {ops[2], ops[3], ops[4]};
      break;
    case OpDecorate:
      if (ops.size() == 3 && ops[1] == kDecorationBinding)
        bindingOf[ops[0]] = ops[2];
      else if (ops.size() == 3 && ops[1] == kDecorationDescriptorSet)
        setOf[ops[0]] = ops[2];
      break;
    case OpVariable:
      if (ops.size() >= 3) {
        storageClassOf[ops[1]] = ops[2];
        if (ops[2] == kStorageClassPushConstant)
          info.usesPushConstants = true;
      }
      break;
    default:
      break;
    }
  }

  for (SpirvEntryPoint &entry : info.entryPoints) {
    auto it = localSizeOf.find(entry.functionId);
    if (it != localSizeOf.end())
      entry.workgroupSize = it->second;
  }
  for (auto [id, binding] : bindingOf) {
    SpirvBinding b;
    b.variableId = id;
    b.binding = binding;
    auto set = setOf.find(id);
    b.set = set == setOf.end() ? 0 : set->second;
    auto sc = storageClassOf.find(id);
    b.storageClass = sc == storageClassOf.end() ? 0 : sc->second;
    info.bindings.push_back(b);
  }
  return info;
}

} // namespace attn::vulkan
