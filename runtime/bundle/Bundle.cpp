//===- Bundle.cpp - Bundle manifests: read, check, write -----------------===//

#include "runtime/bundle/Bundle.h"

#include "core/FileReader.h"
#include "core/JsonRead.h"
#include "runtime/bundle/PlanJson.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace attn::runtime {

namespace {

/// Far above what attn-compile writes (a manifest of thousands of variants
/// is a few MiB; a kernel's shared object a few MiB), so that a corrupt or
/// endless file (a symlink to /dev/zero) is refused instead of read forever.
constexpr uint64_t kMaxManifestBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxKernelFileBytes = uint64_t{1} << 30;

} // namespace

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
  std::string hash = contentHash(text);
  if (hash != kernel.hash)
    return errorf("bundle ", directory, ": kernel file ", kernel.file,
                  " does not match its hash (manifest ", kernel.hash,
                  ", file ", hash,
                  "): the bundle is corrupt or was changed after attn-compile");
  return text;
}

std::string entrySymbolPrefix(const BundleVariant &v) {
  return v.name + "@" + v.cacheKey + "/";
}

namespace {

/// A symbol as the manifest writes it: "./<rest>" when it has the entry's
/// prefix, else as it is.
std::string relativeSymbol(const std::string &symbol,
                           const std::string &prefix) {
  if (symbol.starts_with(prefix))
    return "./" + symbol.substr(prefix.size());
  return symbol;
}

/// The inverse of relativeSymbol.
std::string fullSymbol(const std::string &stored, const std::string &prefix) {
  if (stored.starts_with("./"))
    return prefix + stored.substr(2);
  return stored;
}

nlohmann::json kernelRecord(const BundleKernel &k) {
  nlohmann::json launch =
      nlohmann::json::parse(k.launchJson, nullptr, /*allow_exceptions=*/false);
  return {{"target", k.target},
          {"file", k.file},
          {"entry", k.entryPoint},
          {"hash", k.hash},
          {"launch", launch.is_discarded() ? nlohmann::json::object() : launch}};
}

/// A table of distinct JSON values, each once, in order of first use.
class SharedTable {
public:
  size_t add(nlohmann::json value) {
    auto [it, inserted] = index_.try_emplace(value.dump(), values_.size());
    if (inserted)
      values_.push_back(std::move(value));
    return it->second;
  }
  nlohmann::json take() { return nlohmann::json(std::move(values_)); }

private:
  std::map<std::string, size_t> index_;
  std::vector<nlohmann::json> values_;
};

/// The entries of `bundle` in the manifest's order: by name, then subgroup
/// size, whatever order they were compiled in, so that the same entries
/// always make the same manifest (a merge of shards equals a whole
/// compile).
std::vector<const BundleVariant *> canonicalOrder(const Bundle &bundle) {
  std::vector<const BundleVariant *> order;
  for (const BundleVariant &v : bundle.variants)
    order.push_back(&v);
  std::stable_sort(order.begin(), order.end(),
                   [](const BundleVariant *a, const BundleVariant *b) {
                     return std::tie(a->name, a->subgroupSize) <
                            std::tie(b->name, b->subgroupSize);
                   });
  return order;
}

/// The manifest as a JSON value, without its hash.
nlohmann::json manifestValue(const Bundle &bundle) {
  SharedTable kernels, plans;
  nlohmann::json variants = nlohmann::json::array();
  for (const BundleVariant *v : canonicalOrder(bundle)) {
    std::string prefix = entrySymbolPrefix(*v);
    nlohmann::json jv;
    jv["name"] = v->name;
    jv["subgroup_size"] = v->subgroupSize;
    jv["cache_key"] = v->cacheKey;
    jv["parameters"] = v->parameters;
    if (const Plan *p = v->plan()) {
      Plan relative = *p;
      for (PlanOp &op : relative.ops)
        if (op.kind == PlanOpKind::Launch)
          op.kernel = relativeSymbol(op.kernel, prefix);
      jv["plan"] = plans.add(planToJsonValue(relative));
    }
    jv["kernels"] = nlohmann::json::array();
    for (const BundleKernel &k : v->kernels)
      jv["kernels"].push_back(nlohmann::json::array(
          {relativeSymbol(k.symbol, prefix), kernels.add(kernelRecord(k))}));
    variants.push_back(std::move(jv));
  }
  nlohmann::json j;
  j["format_version"] = bundle.formatVersion;
  j["compiler"] = bundle.compiler;
  j["kernels"] = kernels.take();
  j["plans"] = plans.take();
  j["variants"] = std::move(variants);
  return j;
}

/// `"key": [` then one element per line.
void appendArray(std::string &text, const char *key,
                 const nlohmann::json &array) {
  text += std::string(",\n\"") + key + "\": [";
  for (size_t i = 0; i < array.size(); ++i)
    text += (i ? ",\n " : "\n ") + array[i].dump();
  text += "]";
}

} // namespace

std::string manifestHash(const Bundle &bundle) {
  return contentHash(manifestValue(bundle).dump());
}

void signBundle(Bundle &bundle, const SecretKey &key) {
  bundle.signature = signManifestHash(manifestHash(bundle), key);
}

std::string manifestToJson(const Bundle &bundle) {
  nlohmann::json j = manifestValue(bundle);
  std::string text = "{\"format_version\": " + j["format_version"].dump() +
                     ",\n\"compiler\": " + j["compiler"].dump() +
                     ",\n\"manifest_hash\": \"" + contentHash(j.dump()) +
                     "\"";
  if (const std::optional<ManifestSignature> &sig = bundle.signature)
    text += ",\n\"signature\": " +
            nlohmann::json{{"key", sig->key.hex()},
                           {"ed25519", sig->valueHex()}}
                .dump();
  appendArray(text, "kernels", j["kernels"]);
  appendArray(text, "plans", j["plans"]);
  appendArray(text, "variants", j["variants"]);
  return text + "}";
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

/// The manifest's format version (compared as read, so that no larger
/// number truncates to a good one) and its hash over the rest of it, which
/// it returns.
Result<std::string> checkManifestHeader(const nlohmann::json &j,
                                        const std::string &where) {
  if (!j.is_object() || !j.contains("format_version") ||
      !j["format_version"].is_number_integer())
    return errorf(where, ": expected an object with \"format_version\"");
  const nlohmann::json &version = j["format_version"];
  if (!version.is_number_unsigned() ||
      version.get<uint64_t>() != static_cast<uint64_t>(kBundleFormatVersion))
    return errorf(where, ": bundle format version ", version.dump(),
                  " is not supported (this runtime reads format ",
                  kBundleFormatVersion,
                  "; recompile the bundle with this attn-compile)");
  Result<std::string> recorded = getString(j, "manifest_hash", where);
  if (!recorded)
    return recorded.status();
  nlohmann::json rest = j;
  rest.erase("manifest_hash");
  rest.erase("signature");
  std::string actual = contentHash(rest.dump());
  if (*recorded != actual)
    return errorf(where, " does not match its manifest_hash (recorded ",
                  *recorded, ", contents ", actual,
                  "): it was edited or damaged after attn-compile wrote it");
  return actual;
}

/// The manifest's "signature", when it has one.
Result<std::optional<ManifestSignature>>
signatureFromJson(const nlohmann::json &j, const std::string &where) {
  if (!j.contains("signature"))
    return std::optional<ManifestSignature>();
  std::string swhere = where + ", signature";
  Result<std::string> key = getString(j["signature"], "key", swhere);
  if (!key)
    return key.status();
  Result<std::string> value = getString(j["signature"], "ed25519", swhere);
  if (!value)
    return value.status();
  Result<ManifestSignature> signature = manifestSignatureFromHex(*key, *value);
  if (!signature)
    return errorf(swhere, ": ", signature.message());
  return std::optional<ManifestSignature>(*signature);
}

/// One record of the kernel table: target, file inside the bundle, entry
/// point, content hash and launch facts as written (no symbol yet).
Result<BundleKernel> kernelFromJson(const nlohmann::json &jk,
                                    const std::string &where) {
  BundleKernel k;
  for (auto [key, field] :
       {std::pair<const char *, std::string *>{"target", &k.target},
        {"file", &k.file},
        {"entry", &k.entryPoint}}) {
    Result<std::string> s = getString(jk, key, where);
    if (!s)
      return s.status();
    *field = *s;
  }
  Result<std::string> hash = getString(jk, "hash", where);
  if (!hash)
    return hash.status();
  if (hash->size() != 64 ||
      hash->find_first_not_of("0123456789abcdef") != std::string::npos)
    return errorf(where, ": bad hash \"", *hash,
                  "\" (expected 64 lowercase hex digits)");
  k.hash = *hash;
  if (k.file.find("..") != std::string::npos || k.file.starts_with("/"))
    return errorf(where, ": file must be inside the bundle, got ", k.file);
  if (jk.contains("launch"))
    k.launchJson = jk["launch"].dump();
  return k;
}

/// The shared tables every entry refers to by index.
struct SharedTables {
  std::vector<BundleKernel> kernels;
  std::vector<Plan> plans;
};

Result<SharedTables> tablesFromJson(const nlohmann::json &j,
                                    const std::string &where) {
  const nlohmann::json *kernels = jsonMember(j, "kernels", JsonKind::Array);
  const nlohmann::json *plans = jsonMember(j, "plans", JsonKind::Array);
  if (!kernels || !plans)
    return errorf(where, ": expected arrays \"kernels\" and \"plans\"");
  SharedTables tables;
  for (size_t i = 0; i < kernels->size(); ++i) {
    Result<BundleKernel> k = kernelFromJson(
        (*kernels)[i], where + ", kernels[" + std::to_string(i) + "]");
    if (!k)
      return k.status();
    tables.kernels.push_back(std::move(*k));
  }
  for (size_t i = 0; i < plans->size(); ++i) {
    Result<Plan> plan = planFromJsonValue((*plans)[i]);
    if (!plan)
      return errorf(where, ", plans[", i, "]: ", plan.message());
    tables.plans.push_back(std::move(*plan));
  }
  return tables;
}

/// An index into a table of `size` records, or an error.
Result<size_t> tableIndex(const nlohmann::json &value, size_t size,
                          const char *table, const std::string &where) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() >= size)
    return errorf(where, ": ", value.dump(), " is not an index into \"",
                  table, "\" (", size, " records)");
  return static_cast<size_t>(value.get<uint64_t>());
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

/// The plan and the kernels of entry `v` from the shared tables.
Status variantTablesFromJson(const nlohmann::json &jv,
                             const SharedTables &tables, BundleVariant &v,
                             const std::string &vwhere) {
  std::string prefix = entrySymbolPrefix(v);
  if (jv.contains("plan")) {
    Result<size_t> i =
        tableIndex(jv["plan"], tables.plans.size(), "plans", vwhere);
    if (!i)
      return i.status();
    Plan plan = tables.plans[*i];
    for (PlanOp &op : plan.ops)
      if (op.kind == PlanOpKind::Launch)
        op.kernel = fullSymbol(op.kernel, prefix);
    v.plans.push_back(std::move(plan));
  }
  const nlohmann::json *kernels = jsonMember(jv, "kernels", JsonKind::Array);
  if (!kernels)
    return errorf(vwhere, ": expected an array \"kernels\"");
  for (const nlohmann::json &ref : *kernels) {
    if (!ref.is_array() || ref.size() != 2 || !ref[0].is_string())
      return errorf(vwhere, ": a kernel is [symbol, index into \"kernels\"], "
                            "got ", ref.dump());
    Result<size_t> i =
        tableIndex(ref[1], tables.kernels.size(), "kernels", vwhere);
    if (!i)
      return i.status();
    BundleKernel k = tables.kernels[*i];
    k.symbol = fullSymbol(ref[0].get<std::string>(), prefix);
    v.kernels.push_back(std::move(k));
  }
  return checkLaunchedKernels(v, vwhere);
}

/// One entry of "variants": name, subgroup size, cache key, parameters, at
/// most one plan and its kernels.
Result<BundleVariant> variantFromJson(const nlohmann::json &jv,
                                      const SharedTables &tables,
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
  std::string vwhere = where + ", variant " + v.name;
  Result<std::string> key = getString(jv, "cache_key", vwhere);
  if (!key)
    return key.status();
  v.cacheKey = *key;
  if (!jv.contains("parameters") || !jv["parameters"].is_object())
    return errorf(vwhere, ": expected an object \"parameters\"");
  for (const auto &[key, value] : jv["parameters"].items()) {
    if (!value.is_string())
      return errorf(vwhere, ": parameter ", key, " must be a string");
    v.parameters[key] = value.get<std::string>();
  }
  ATTN_RETURN_IF_ERROR(variantTablesFromJson(jv, tables, v, vwhere));
  return v;
}

} // namespace

Result<Bundle> manifestFromJson(std::string_view text,
                                const std::string &directory,
                                const BundleTrust &trust) {
  std::string where = "bundle " + directory + ": manifest.json";
  nlohmann::json j =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf(where, " is not valid JSON");
  Result<std::string> hash = checkManifestHeader(j, where);
  if (!hash)
    return hash.status();
  Result<std::optional<ManifestSignature>> signature =
      signatureFromJson(j, where);
  if (!signature)
    return signature.status();
  ATTN_RETURN_IF_ERROR(checkManifestTrust(
      where, *hash, *signature ? &**signature : nullptr, trust));
  Bundle bundle;
  bundle.signature = *signature;
  bundle.directory = directory;
  bundle.formatVersion = kBundleFormatVersion;
  Result<std::string> compiler = getString(j, "compiler", where);
  if (!compiler)
    return compiler.status();
  bundle.compiler = *compiler;
  Result<SharedTables> tables = tablesFromJson(j, where);
  if (!tables)
    return tables.status();
  if (!j.contains("variants") || !j["variants"].is_array())
    return errorf(where, ": expected an array \"variants\"");
  std::set<std::pair<std::string, int64_t>> seen;
  for (const nlohmann::json &jv : j["variants"]) {
    Result<BundleVariant> v = variantFromJson(jv, *tables, where);
    if (!v)
      return v.status();
    if (!seen.emplace(v->name, v->subgroupSize).second)
      return errorf(where, ": two entries of variant ", v->name,
                    " are for subgroup size ", v->subgroupSize);
    bundle.variants.push_back(std::move(*v));
  }
  return bundle;
}

Result<Bundle> loadManifest(const std::string &directory,
                            const BundleTrust &trust) {
  const std::string path = directory + "/manifest.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return errorf("bundle ", directory, ": no manifest.json (is ", directory,
                  " an attn-compile output directory?)");
  Result<std::string> text =
      readFileBounded(path, kMaxManifestBytes, "manifest");
  if (!text)
    return errorf("bundle ", directory, ": ", text.message());
  return manifestFromJson(*text, directory, trust);
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

Result<Bundle> loadBundle(const std::string &directory,
                          const BundleTrust &trust) {
  for (int attempt = 1;; ++attempt) {
    Result<Bundle> bundle = loadManifest(directory, trust);
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
