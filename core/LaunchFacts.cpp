//===- LaunchFacts.cpp - What launching a compiled kernel takes -----------===//

#include "core/LaunchFacts.h"

#include "core/CpuKernel.h"
#include "core/JsonRead.h"

#include <cassert>
#include <cstdio>
#include <limits>

namespace attn {

namespace {

using nlohmann::json;

/// Reads launch facts of one target; every error names the key.
class FactsReader {
public:
  FactsReader(const json &object, std::string_view target)
      : object_(object), target_(target) {}

  Status error(std::string_view key, std::string_view wanted) const {
    return errorf(target_, " launch facts: '", key, "' must be ", wanted);
  }

  /// An integer member in [min, max].
  template <typename T>
  Status integer(const char *key, T min, T max, T &out) const {
    const json *v = jsonMember(object_, key, JsonKind::Integer);
    if (!v || v->get<int64_t>() < static_cast<int64_t>(min) ||
        (v->is_number_unsigned()
             ? v->get<uint64_t>() > static_cast<uint64_t>(max)
             : v->get<int64_t>() > static_cast<int64_t>(max)))
      return error(key, "an integer in [" + std::to_string(min) + ", " +
                            std::to_string(max) + "]");
    out = v->get<T>();
    return Status::ok();
  }

  /// A list of integers in [min, max]; `count` entries when set.
  template <typename T>
  Status integers(const char *key, T min, T max, std::vector<T> &out,
                  std::optional<size_t> count = std::nullopt) const {
    const json *list = jsonMember(object_, key, JsonKind::Array);
    std::string wanted = (count ? std::to_string(*count) + " integers"
                                : std::string("a list of integers")) +
                         " in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]";
    if (!list || (count && list->size() != *count))
      return error(key, wanted);
    out.clear();
    for (const json &n : *list) {
      if (!n.is_number_integer() || n.get<int64_t>() < int64_t(min) ||
          (n.is_number_unsigned() && n.get<uint64_t>() > uint64_t(max)))
        return error(key, wanted);
      out.push_back(n.get<T>());
    }
    return Status::ok();
  }

  /// A string member; an error when `required` and it is missing or empty.
  Status string(const char *key, bool required, std::string &out) const {
    if (!has(key) && !required)
      return Status::ok();
    const json *v = jsonMember(object_, key, JsonKind::String);
    if (!v || (required && v->get<std::string>().empty()))
      return error(key, "a non-empty string");
    out = v->get<std::string>();
    return Status::ok();
  }

  bool has(const char *key) const { return jsonMember(object_, key); }

  Status workgroup(LaunchFacts &facts) const {
    std::vector<int64_t> size;
    ATTN_RETURN_IF_ERROR(integers<int64_t>(
        "workgroup_size", 1, std::numeric_limits<uint32_t>::max(), size, 3));
    std::copy(size.begin(), size.end(), facts.workgroup.begin());
    return integer<uint32_t>("subgroup_size", 0,
                             std::numeric_limits<uint32_t>::max(),
                             facts.subgroupSize);
  }

private:
  const json &object_;
  std::string_view target_;
};

Status readSpirv(const FactsReader &r, LaunchFacts &facts) {
  ATTN_RETURN_IF_ERROR(r.workgroup(facts));
  std::string abi;
  ATTN_RETURN_IF_ERROR(r.string("abi", /*required=*/false, abi));
  if (abi.empty())
    return Status::ok();
  if (abi != "buffer_address")
    return r.error("abi", "\"buffer_address\" or absent (bindings)");
  uint32_t buffers = 0;
  ATTN_RETURN_IF_ERROR(r.integer<uint32_t>("num_buffers", 0, 16, buffers));
  facts.addressedBuffers = buffers;
  if (!r.has("arg_element_bytes"))
    return Status::ok();
  ATTN_RETURN_IF_ERROR(r.integers<int64_t>("arg_element_bytes", 1, 16,
                                           facts.argElementBytes, buffers));
  return Status::ok();
}

Status readPtx(const FactsReader &r, LaunchFacts &facts) {
  ATTN_RETURN_IF_ERROR(r.workgroup(facts));
  std::string abi;
  ATTN_RETURN_IF_ERROR(r.string("abi", /*required=*/true, abi));
  if (abi != "memref_descriptor")
    return r.error("abi", "\"memref_descriptor\" (the only PTX kernel ABI "
                          "this runtime knows)");
  ATTN_RETURN_IF_ERROR(r.integers<int64_t>(
      "arg_element_bytes", 1, 16, facts.argElementBytes));
  ATTN_RETURN_IF_ERROR(r.string("chip", /*required=*/false, facts.chip));
  if (!facts.chip.empty())
    ATTN_RETURN_IF_ERROR(parseSmVersion(facts.chip).status());
  return Status::ok();
}

Status readMsl(const FactsReader &r, LaunchFacts &facts) {
  ATTN_RETURN_IF_ERROR(r.workgroup(facts));
  ATTN_RETURN_IF_ERROR(
      r.string("entry_point", /*required=*/true, facts.entryPoint));
  std::string version;
  ATTN_RETURN_IF_ERROR(r.string("msl_version", /*required=*/true, version));
  char tail = 0;
  if (std::sscanf(version.c_str(), "%u.%u%c", &facts.mslMajor,
                  &facts.mslMinor, &tail) != 2)
    return r.error("msl_version", "\"MAJOR.MINOR\"");
  // Metal has 31 buffer argument slots per stage.
  return r.integers<uint32_t>("buffer_indices", 0, 30, facts.bufferIndices);
}

Status readCpu(const FactsReader &r, LaunchFacts &facts) {
  ATTN_RETURN_IF_ERROR(r.workgroup(facts));
  if (facts.workgroup != std::array<int64_t, 3>{1, 1, 1})
    return r.error("workgroup_size", "[1, 1, 1] (a cpu kernel runs one work "
                                     "item per call)");
  std::string abi;
  ATTN_RETURN_IF_ERROR(r.string("abi", /*required=*/true, abi));
  if (abi != "attn_cpu")
    return r.error("abi", "\"attn_cpu\" (the only cpu kernel ABI this "
                          "runtime knows)");
  ATTN_RETURN_IF_ERROR(r.string("cpu_isa", /*required=*/true, facts.cpuIsa));
  if (!findCpuIsaLevel(facts.cpuIsa))
    return r.error("cpu_isa", "one of " + cpuIsaLevelNames());
  return r.integers<int64_t>("arg_element_bytes", 1, 16, facts.argElementBytes);
}

} // namespace

std::string writeLaunchFacts(const LaunchFacts &facts, Target target) {
  json j = json::object();
  if (target == Target::TT) {
    j["program"] = facts.program;
    j["description"] = facts.description;
    return j.dump();
  }
  j["workgroup_size"] = facts.workgroup;
  j["subgroup_size"] = facts.subgroupSize;
  if (facts.bounds)
    j["bounds"] = json::parse(writeLaunchBounds(*facts.bounds));
  if (target == Target::SPIRV && facts.addressedBuffers) {
    j["abi"] = "buffer_address";
    j["num_buffers"] = *facts.addressedBuffers;
    if (!facts.argElementBytes.empty())
      j["arg_element_bytes"] = facts.argElementBytes;
  }
  if (target == Target::PTX) {
    j["abi"] = "memref_descriptor";
    j["chip"] = facts.chip;
    j["arg_element_bytes"] = facts.argElementBytes;
  }
  if (target == Target::MSL) {
    j["entry_point"] = facts.entryPoint;
    j["msl_version"] =
        std::to_string(facts.mslMajor) + "." + std::to_string(facts.mslMinor);
    j["buffer_indices"] = facts.bufferIndices;
  }
  if (target == Target::CPU) {
    j["abi"] = "attn_cpu";
    j["cpu_isa"] = facts.cpuIsa;
    j["arg_element_bytes"] = facts.argElementBytes;
  }
  return j.dump();
}

Result<LaunchFacts> readLaunchFacts(std::string_view text, Target target) {
  std::string_view name = toString(target);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return errorf(name, " launch facts are not a JSON object: ", text);
  FactsReader reader(j, name);
  LaunchFacts facts;
  switch (target) {
  case Target::SPIRV:
    ATTN_RETURN_IF_ERROR(readSpirv(reader, facts));
    break;
  case Target::PTX:
    ATTN_RETURN_IF_ERROR(readPtx(reader, facts));
    break;
  case Target::MSL:
    ATTN_RETURN_IF_ERROR(readMsl(reader, facts));
    break;
  case Target::TT:
    ATTN_RETURN_IF_ERROR(reader.string("program", true, facts.program));
    ATTN_RETURN_IF_ERROR(
        reader.string("description", true, facts.description));
    break;
  case Target::CPU:
    ATTN_RETURN_IF_ERROR(readCpu(reader, facts));
    break;
  }
  if (target == Target::TT)
    return facts;
  // Required at launch (PlanRunner), not here: a device's own tests load
  // kernels without plans.
  Result<std::optional<LaunchBounds>> bounds = readLaunchBoundsMember(text);
  if (!bounds)
    return errorf(name, " launch facts: ", bounds.message());
  facts.bounds = std::move(*bounds);
  return facts;
}

Status checkIndexRange(const LaunchFacts &facts, Target target,
                       std::span<const uint64_t> bytes) {
  if (!targetInfo(target).indices32)
    return Status::ok();
  constexpr uint64_t kMaxElements = std::numeric_limits<int32_t>::max();
  for (size_t i = 0; i < bytes.size(); ++i) {
    uint64_t width = i < facts.argElementBytes.size()
                         ? static_cast<uint64_t>(facts.argElementBytes[i])
                         : 1;
    if (bytes[i] / width > kMaxElements)
      return errorf("argument #", i, " holds ", bytes[i] / width,
                    " elements of ", width, " bytes, more than the 2^31 - 1 "
                    "a ", toString(target), " kernel's 32-bit element indices "
                    "reach; split it into tensors of at most ",
                    kMaxElements * width, " bytes");
  }
  return Status::ok();
}

std::string writeLaunchFacts(const LaunchFacts &facts,
                             std::string_view target) {
  std::optional<Target> known = parseTarget(target);
  assert(known && "writeLaunchFacts of a name that is no target");
  return writeLaunchFacts(facts, *known);
}

Result<LaunchFacts> readLaunchFacts(std::string_view text,
                                    std::string_view target) {
  std::optional<Target> known = parseTarget(target);
  if (!known)
    return errorf("no launch facts are defined for target '", target, "'");
  return readLaunchFacts(text, *known);
}

Status checkIndexRange(const LaunchFacts &facts, std::string_view target,
                       std::span<const uint64_t> bytes) {
  std::optional<Target> known = parseTarget(target);
  if (!known)
    return Status::ok();
  return checkIndexRange(facts, *known, bytes);
}

Result<int> parseSmVersion(std::string_view chip) {
  if (chip.substr(0, 3) != "sm_" || chip.size() < 5)
    return errorf("'", chip, "' is not an SM name like sm_90");
  int version = 0;
  size_t i = 3;
  for (; i < chip.size() && chip[i] >= '0' && chip[i] <= '9'; ++i)
    version = version * 10 + (chip[i] - '0');
  // "sm_90a" (arch-specific features) is still SM 90.
  if (i == 3 || version == 0 || (i != chip.size() && chip.substr(i) != "a"))
    return errorf("'", chip, "' is not an SM name like sm_90");
  return version;
}

std::span<const std::string_view> ptxChips() {
  static constexpr std::string_view kChips[] = {
      "sm_80", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"};
  return kChips;
}

std::string ptxChipNames() {
  std::string names;
  for (std::string_view chip : ptxChips())
    names += (names.empty() ? "" : ", ") + std::string(chip);
  return names;
}

bool ptxRunsOn(std::string_view chip, int deviceSm) {
  if (chip.empty())
    return true;
  Result<int> sm = parseSmVersion(chip);
  if (!sm)
    return false;
  return chip.back() == 'a' ? *sm == deviceSm : *sm <= deviceSm;
}

std::optional<size_t> bestPtxChip(std::span<const std::string> chips,
                                  int deviceSm) {
  std::optional<size_t> best;
  int bestSm = -1;
  for (size_t i = 0; i < chips.size(); ++i) {
    if (!ptxRunsOn(chips[i], deviceSm))
      continue;
    int sm = chips[i].empty() ? 0 : *parseSmVersion(chips[i]);
    if (sm > bestSm) {
      best = i;
      bestSm = sm;
    }
  }
  return best;
}

} // namespace attn
