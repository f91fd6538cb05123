//===- Bundle.cpp - Bundle manifests: read, check, write -----------------===//

#include "runtime/bundle/Bundle.h"

#include "core/FileReader.h"
#include "core/JsonRead.h"
#include "runtime/bundle/PlanJson.h"

#include <cstdio>
#include <filesystem>

namespace attn::runtime {

namespace {

/// Far above what attn-compile writes (a manifest of thousands of variants
/// is a few MiB; a kernel's shared object a few MiB), so that a corrupt or
/// endless file (a symlink to /dev/zero) is refused instead of read forever.
constexpr uint64_t kMaxManifestBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxKernelFileBytes = uint64_t{1} << 30;

} // namespace

uint64_t contentHash(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hashToHex(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

const BundleKernel *BundleVariant::findKernel(std::string_view symbol,
                                              std::string_view target) const {
  for (const BundleKernel &k : kernels)
    if (k.symbol == symbol && k.target == target)
      return &k;
  return nullptr;
}

const BundleVariant *Bundle::findEntry(std::string_view name,
                                       int64_t subgroupSize) const {
  for (const BundleVariant &v : variants)
    if (v.name == name && v.subgroupSize == subgroupSize)
      return &v;
  return nullptr;
}

Result<std::string> Bundle::readKernel(const BundleKernel &kernel) const {
  std::string path = directory + "/" + kernel.file;
  std::error_code ec;
  if (std::filesystem::exists(path, ec) &&
      !std::filesystem::is_regular_file(path, ec))
    return errorf("bundle ", directory, ": kernel file ", kernel.file,
                  " is not a regular file");
  if (!std::filesystem::exists(path, ec))
    return errorf("bundle ", directory, ": missing kernel file ", kernel.file,
                  " (", kernel.symbol, ", ", kernel.target, ")");
  Result<std::string> read =
      readFileBounded(path, kMaxKernelFileBytes, "kernel file");
  if (!read)
    return errorf("bundle ", directory, ": ", read.message());
  std::string text = std::move(*read);
  uint64_t hash = contentHash(text);
  if (hash != kernel.hash)
    return errorf("bundle ", directory, ": kernel file ", kernel.file,
                  " does not match its hash (manifest ",
                  hashToHex(kernel.hash), ", file ", hashToHex(hash),
                  "): the bundle is corrupt or was changed after attn-compile");
  return text;
}

std::string manifestToJson(const Bundle &bundle) {
  nlohmann::json j;
  j["format_version"] = bundle.formatVersion;
  j["compiler"] = bundle.compiler;
  j["variants"] = nlohmann::json::array();
  for (const BundleVariant &v : bundle.variants) {
    nlohmann::json jv;
    jv["name"] = v.name;
    jv["subgroup_size"] = v.subgroupSize;
    jv["cache_key"] = v.cacheKey;
    jv["parameters"] = v.parameters;
    jv["plans"] = nlohmann::json::array();
    for (const Plan &p : v.plans)
      jv["plans"].push_back(planToJsonValue(p));
    jv["kernels"] = nlohmann::json::array();
    for (const BundleKernel &k : v.kernels) {
      nlohmann::json launch = nlohmann::json::parse(
          k.launchJson, nullptr, /*allow_exceptions=*/false);
      jv["kernels"].push_back({{"symbol", k.symbol},
                               {"target", k.target},
                               {"file", k.file},
                               {"entry", k.entryPoint},
                               {"hash", hashToHex(k.hash)},
                               {"launch", launch.is_discarded()
                                              ? nlohmann::json::object()
                                              : launch}});
    }
    j["variants"].push_back(std::move(jv));
  }
  j["manifest_hash"] = hashToHex(contentHash(j.dump(1)));
  return j.dump(1);
}

namespace {

/// A string member of `j`, or an error naming `what`.
Result<std::string> getString(const nlohmann::json &j, const char *key,
                              const std::string &what) {
  const nlohmann::json *member = jsonMember(j, key, JsonKind::String);
  if (!member)
    return errorf(what, ": expected a string \"", key, "\"");
  return member->get<std::string>();
}

/// The manifest's hash over the rest of it, and its format version.
Status checkManifestHeader(const nlohmann::json &j, const std::string &where) {
  Result<std::string> recorded = getString(j, "manifest_hash", where);
  if (!recorded)
    return recorded.status();
  nlohmann::json rest = j;
  rest.erase("manifest_hash");
  std::string actual = hashToHex(contentHash(rest.dump(1)));
  if (*recorded != actual)
    return errorf(where, " does not match its manifest_hash (recorded ",
                  *recorded, ", contents ", actual,
                  "): it was edited or damaged after attn-compile wrote it");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer())
    return errorf(where, ": expected an object with \"format_version\"");
  // Compared as read, so that no larger number truncates to a good one.
  const nlohmann::json &version = j["format_version"];
  if (!version.is_number_unsigned() ||
      version.get<uint64_t>() != static_cast<uint64_t>(kBundleFormatVersion))
    return errorf(where, ": format version ", version.dump(),
                  " is not supported (this runtime reads version ",
                  kBundleFormatVersion, "; recompile the bundle)");
  return Status::ok();
}

/// One kernel of a variant: its names, its content hash, a file inside the
/// bundle, and its launch facts as written.
Result<BundleKernel> kernelFromJson(const nlohmann::json &jk,
                                    const std::string &vwhere) {
  BundleKernel k;
  for (auto [key, field] :
       {std::pair<const char *, std::string *>{"symbol", &k.symbol},
        {"target", &k.target},
        {"file", &k.file},
        {"entry", &k.entryPoint}}) {
    Result<std::string> s = getString(jk, key, vwhere + ", a kernel");
    if (!s)
      return s.status();
    *field = *s;
  }
  Result<std::string> hash = getString(jk, "hash", vwhere + ", a kernel");
  if (!hash)
    return hash.status();
  char *end = nullptr;
  k.hash = std::strtoull(hash->c_str(), &end, 16);
  if (hash->size() != 16 || *end != '\0')
    return errorf(vwhere, ", kernel ", k.symbol, ": bad hash \"", *hash,
                  "\"");
  if (k.file.find("..") != std::string::npos || k.file.starts_with("/"))
    return errorf(vwhere, ", kernel ", k.symbol,
                  ": file must be inside the bundle, got ", k.file);
  if (jk.contains("launch"))
    k.launchJson = jk["launch"].dump();
  return k;
}

/// Every kernel a plan of `v` launches must be in it (for some target).
Status checkLaunchedKernels(const BundleVariant &v, const std::string &vwhere) {
  for (const Plan &p : v.plans)
    for (const PlanOp &op : p.ops)
      if (op.kind == PlanOpKind::Launch) {
        bool found = false;
        for (const BundleKernel &k : v.kernels)
          found |= k.symbol == op.kernel;
        if (!found)
          return errorf(vwhere, ": plan ", p.function, " launches ",
                        op.kernel, ", which the bundle does not contain");
      }
  return Status::ok();
}

/// One entry of "variants": name, subgroup size, cache key, parameters, at
/// most one plan and its kernels.
Result<BundleVariant> variantFromJson(const nlohmann::json &jv,
                                      const std::string &where) {
  BundleVariant v;
  Result<std::string> name = getString(jv, "name", where + ", a variant");
  if (!name)
    return name.status();
  v.name = *name;
  if (!jv.contains("subgroup_size") ||
      !jv["subgroup_size"].is_number_unsigned() ||
      jv["subgroup_size"].get<uint64_t>() > 1024)
    return errorf(where, ", variant ", v.name,
                  ": expected \"subgroup_size\", an integer in [0, 1024]");
  v.subgroupSize = jv["subgroup_size"].get<int64_t>();
  if (jv.contains("cache_key") && jv["cache_key"].is_string())
    v.cacheKey = jv["cache_key"].get<std::string>();
  std::string vwhere = where + ", variant " + v.name;
  if (!jv.contains("parameters") || !jv["parameters"].is_object())
    return errorf(vwhere, ": expected an object \"parameters\"");
  for (const auto &[key, value] : jv["parameters"].items()) {
    if (!value.is_string())
      return errorf(vwhere, ": parameter ", key, " must be a string");
    v.parameters[key] = value.get<std::string>();
  }
  if (!jv.contains("plans") || !jv["plans"].is_array() ||
      !jv.contains("kernels") || !jv["kernels"].is_array())
    return errorf(vwhere, ": expected arrays \"plans\" and \"kernels\"");
  if (jv["plans"].size() > 1)
    return errorf(vwhere, ": has ", jv["plans"].size(),
                  " plans; an entry has at most one");
  for (const nlohmann::json &jp : jv["plans"]) {
    Result<Plan> plan = planFromJsonValue(jp);
    if (!plan)
      return errorf(vwhere, ": ", plan.message());
    v.plans.push_back(std::move(*plan));
  }
  for (const nlohmann::json &jk : jv["kernels"]) {
    Result<BundleKernel> k = kernelFromJson(jk, vwhere);
    if (!k)
      return k.status();
    v.kernels.push_back(std::move(*k));
  }
  ATTN_RETURN_IF_ERROR(checkLaunchedKernels(v, vwhere));
  return v;
}

} // namespace

Result<Bundle> manifestFromJson(std::string_view text,
                                const std::string &directory) {
  std::string where = "bundle " + directory + ": manifest.json";
  nlohmann::json j =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf(where, " is not valid JSON");
  ATTN_RETURN_IF_ERROR(checkManifestHeader(j, where));
  Bundle bundle;
  bundle.directory = directory;
  bundle.formatVersion = kBundleFormatVersion;
  Result<std::string> compiler = getString(j, "compiler", where);
  if (!compiler)
    return compiler.status();
  bundle.compiler = *compiler;
  if (!j.contains("variants") || !j["variants"].is_array())
    return errorf(where, ": expected an array \"variants\"");
  for (const nlohmann::json &jv : j["variants"]) {
    Result<BundleVariant> v = variantFromJson(jv, where);
    if (!v)
      return v.status();
    if (bundle.findEntry(v->name, v->subgroupSize))
      return errorf(where, ": two entries of variant ", v->name,
                    " are for subgroup size ", v->subgroupSize);
    bundle.variants.push_back(std::move(*v));
  }
  return bundle;
}

Result<Bundle> loadManifest(const std::string &directory) {
  const std::string path = directory + "/manifest.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return errorf("bundle ", directory, ": no manifest.json (is ", directory,
                  " an attn-compile output directory?)");
  Result<std::string> text =
      readFileBounded(path, kMaxManifestBytes, "manifest");
  if (!text)
    return errorf("bundle ", directory, ": ", text.message());
  return manifestFromJson(*text, directory);
}

bool manifestChanged(const Bundle &bundle) {
  Result<Bundle> now = loadManifest(bundle.directory);
  return !now || manifestToJson(*now) != manifestToJson(bundle);
}

namespace {

/// Every kernel file of `bundle`, read and checked against its hash.
Status checkKernelFiles(const Bundle &bundle) {
  for (const BundleVariant &v : bundle.variants)
    for (const BundleKernel &k : v.kernels) {
      Result<std::string> bytes = bundle.readKernel(k);
      if (!bytes)
        return bytes.status();
    }
  return Status::ok();
}

} // namespace

Result<Bundle> loadBundle(const std::string &directory) {
  for (int attempt = 1;; ++attempt) {
    Result<Bundle> bundle = loadManifest(directory);
    if (!bundle)
      return bundle;
    Status kernels = checkKernelFiles(*bundle);
    if (kernels)
      return bundle;
    if (attempt == kBundleLoadAttempts || !manifestChanged(*bundle))
      return kernels;
  }
}

} // namespace attn::runtime
