//===- MetalLaunchFacts.cpp - How to launch one MSL kernel ----------------===//

#include "runtime/executors/metal/MetalLaunchFacts.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace attn {

namespace {

/// An unsigned 32-bit member `key` of `object`.
Status readUint(const nlohmann::json &object, const char *key,
                uint32_t &value) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned() ||
      it->get<uint64_t>() > UINT32_MAX)
    return errorf("launch facts: expects '", key,
                  "' to be an unsigned 32-bit number");
  value = it->get<uint32_t>();
  return Status::ok();
}

} // namespace

Result<MetalLaunchFacts> parseMetalLaunchFacts(std::string_view json) {
  nlohmann::json launch =
      nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!launch.is_object())
    return Status::error("launch facts: not a JSON object");
  MetalLaunchFacts facts;

  auto entry = launch.find("entry_point");
  if (entry == launch.end() || !entry->is_string() ||
      entry->get<std::string>().empty())
    return Status::error("launch facts: expects a non-empty 'entry_point'");
  facts.entryPoint = entry->get<std::string>();

  auto version = launch.find("msl_version");
  char tail = 0;
  if (version == launch.end() || !version->is_string() ||
      std::sscanf(version->get<std::string>().c_str(), "%u.%u%c",
                  &facts.mslMajor, &facts.mslMinor, &tail) != 2)
    return Status::error(
        "launch facts: expects 'msl_version' as \"MAJOR.MINOR\"");

  auto size = launch.find("workgroup_size");
  if (size == launch.end() || !size->is_array() || size->size() != 3)
    return Status::error(
        "launch facts: expects 'workgroup_size' as three numbers");
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json &n = (*size)[i];
    if (!n.is_number_unsigned() || n.get<uint64_t>() == 0 ||
        n.get<uint64_t>() > UINT32_MAX)
      return Status::error(
          "launch facts: expects 'workgroup_size' as three positive numbers");
    facts.threadgroupSize[i] = n.get<uint32_t>();
  }

  if (Status s = readUint(launch, "subgroup_size", facts.subgroupSize); !s)
    return s;

  auto indices = launch.find("buffer_indices");
  if (indices == launch.end() || !indices->is_array())
    return Status::error("launch facts: expects 'buffer_indices' as a list");
  for (const nlohmann::json &n : *indices) {
    // Metal has 31 buffer argument slots per stage.
    if (!n.is_number_unsigned() || n.get<uint64_t>() > 30)
      return Status::error(
          "launch facts: expects 'buffer_indices' in [0, 30]");
    facts.bufferIndices.push_back(n.get<uint32_t>());
  }
  return facts;
}

} // namespace attn
