//===- CudaKernelABI.cpp - How PTX kernels take their arguments -----------===//

#include "runtime/executors/cuda/CudaKernelABI.h"

#include <nlohmann/json.hpp>

namespace attn {

Result<CudaLaunchFacts> parseCudaLaunchFacts(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return errorf("PTX launch facts are not a JSON object: ", json);
  CudaLaunchFacts facts;
  auto wg = j.find("workgroup_size");
  if (wg == j.end() || !wg->is_array() || wg->size() != 3)
    return errorf("PTX launch facts need workgroup_size, three integers: ",
                  json);
  for (size_t i = 0; i < 3; ++i) {
    if (!(*wg)[i].is_number_integer() || (*wg)[i].get<int64_t>() <= 0)
      return errorf("PTX launch facts: workgroup_size[", i,
                    "] is not a positive integer: ", json);
    facts.workgroup[i] = (*wg)[i].get<int64_t>();
  }
  auto abi = j.find("abi");
  if (abi == j.end() || !abi->is_string() ||
      abi->get<std::string>() != "memref_descriptor")
    return errorf("PTX launch facts: abi must be \"memref_descriptor\" (the "
                  "only kernel ABI this runtime knows): ",
                  json);
  auto elements = j.find("arg_element_bytes");
  if (elements == j.end() || !elements->is_array())
    return errorf("PTX launch facts need arg_element_bytes: ", json);
  for (const nlohmann::json &e : *elements) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0)
      return errorf("PTX launch facts: arg_element_bytes holds ", e.dump(),
                    ", not a positive integer");
    facts.argElementBytes.push_back(e.get<int64_t>());
  }
  if (auto chip = j.find("chip"); chip != j.end()) {
    if (!chip->is_string())
      return errorf("PTX launch facts: chip is not a string: ", json);
    facts.chip = chip->get<std::string>();
    if (Result<int> sm = parseSmVersion(facts.chip); !sm)
      return sm.status();
  }
  return facts;
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

Result<std::vector<uint64_t>>
packKernelParams(const CudaLaunchFacts &facts,
                 std::span<const uint64_t> addresses,
                 std::span<const uint64_t> bytes) {
  if (addresses.size() != bytes.size())
    return errorf("packKernelParams: ", addresses.size(), " addresses but ",
                  bytes.size(), " sizes");
  if (addresses.size() != facts.argElementBytes.size())
    return errorf("the launch passes ", addresses.size(),
                  " buffers, the kernel takes ", facts.argElementBytes.size());
  std::vector<uint64_t> words;
  words.reserve(addresses.size() * kMemrefDescriptorWords);
  for (size_t i = 0; i < addresses.size(); ++i) {
    uint64_t elements = bytes[i] / facts.argElementBytes[i];
    // allocated, aligned, offset, size, stride
    words.insert(words.end(), {addresses[i], addresses[i], 0, elements, 1});
  }
  return words;
}

} // namespace attn
