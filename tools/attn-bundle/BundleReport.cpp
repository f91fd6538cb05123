//===- BundleReport.cpp - What a bundle holds, where its bytes go ---------===//

#include "tools/attn-bundle/BundleReport.h"

#include "runtime/bundle/PlanJson.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace attn::tools {

namespace {

struct Tally {
  uint64_t bytes = 0;
  uint64_t files = 0;
};

using Groups = std::map<std::string, Tally>;

/// "address" or "bindings" for a SPIR-V kernel's launch facts.
std::string spirvAbiForm(const runtime::BundleKernel &k) {
  nlohmann::json launch =
      nlohmann::json::parse(k.launchJson, nullptr, /*allow_exceptions=*/false);
  return launch.is_object() && launch.contains("abi") ? "address" : "bindings";
}

std::string formatBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t{1} << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  else
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  return text;
}

void appendGroups(std::string &out, const char *title, const Groups &groups,
                  uint64_t total) {
  out += title;
  out += ":\n";
  for (const auto &[name, t] : groups) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-40s %10s %5.1f%%  %llu files\n",
                  name.c_str(), formatBytes(t.bytes).c_str(),
                  total ? 100.0 * t.bytes / total : 0.0,
                  static_cast<unsigned long long>(t.files));
    out += line;
  }
}

} // namespace

std::string expandedManifest(const runtime::Bundle &bundle) {
  nlohmann::json variants = nlohmann::json::array();
  for (const runtime::BundleVariant &v : bundle.variants) {
    nlohmann::json plans = nlohmann::json::array();
    for (const runtime::Plan &p : v.plans)
      plans.push_back(runtime::planToJsonValue(p));
    nlohmann::json kernels = nlohmann::json::array();
    for (const runtime::BundleKernel &k : v.kernels) {
      nlohmann::json launch = nlohmann::json::parse(
          k.launchJson, nullptr, /*allow_exceptions=*/false);
      kernels.push_back({{"symbol", k.symbol},
                         {"target", k.target},
                         {"file", k.file},
                         {"entry", k.entryPoint},
                         {"hash", k.hash},
                         {"launch", launch.is_discarded()
                                        ? nlohmann::json::object()
                                        : launch}});
    }
    variants.push_back({{"name", v.name},
                        {"subgroup_size", v.subgroupSize},
                        {"cache_key", v.cacheKey},
                        {"parameters", v.parameters},
                        {"plans", std::move(plans)},
                        {"kernels", std::move(kernels)}});
  }
  nlohmann::json j = {{"compiler", bundle.compiler},
                      {"variants", std::move(variants)}};
  return j.dump(1) + "\n";
}

std::string describeBundleBytes(const runtime::Bundle &bundle) {
  namespace fs = std::filesystem;
  std::error_code ec;
  uint64_t manifest =
      fs::file_size(fs::path(bundle.directory) / "manifest.json", ec);
  Groups byTarget, bySubgroup, byAbi, byKernel;
  std::set<std::string> seen, variants;
  uint64_t kernels = 0;
  for (const runtime::BundleVariant &v : bundle.variants) {
    variants.insert(v.name);
    for (const runtime::BundleKernel &k : v.kernels) {
      if (!seen.insert(k.file).second)
        continue;
      uint64_t size = fs::file_size(fs::path(bundle.directory) / k.file, ec);
      kernels += size;
      for (auto [groups, key] :
           {std::pair<Groups *, std::string>{&byTarget, k.target},
            {&bySubgroup, std::to_string(v.subgroupSize)},
            {&byKernel, k.target + " " + k.entryPoint}}) {
        (*groups)[key].bytes += size;
        ++(*groups)[key].files;
      }
      if (k.target == "spirv") {
        byAbi[spirvAbiForm(k)].bytes += size;
        ++byAbi[spirvAbiForm(k)].files;
      }
    }
  }
  size_t n = std::max<size_t>(variants.size(), 1);
  std::string out = "bundle " + bundle.directory + ": " +
                    std::to_string(variants.size()) + " variants (" +
                    std::to_string(bundle.variants.size()) + " entries), " +
                    std::to_string(seen.size()) + " kernel files\n";
  // In bytes per variant: the figure an aim of a few KiB is checked by.
  out += "  manifest     " + formatBytes(manifest) + ", " +
         std::to_string(manifest / n) + " bytes per variant\n";
  out += "  kernel files " + formatBytes(kernels) + ", " +
         formatBytes(kernels / n) + " per variant\n";
  appendGroups(out, "by target", byTarget, kernels);
  appendGroups(out, "by subgroup size (of the first entry naming a file)",
               bySubgroup, kernels);
  if (!byAbi.empty())
    appendGroups(out, "by SPIR-V ABI form", byAbi, kernels);
  appendGroups(out, "by kernel", byKernel, kernels);
  return out;
}

} // namespace attn::tools
