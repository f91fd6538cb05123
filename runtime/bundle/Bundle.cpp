//===- Bundle.cpp - Bundle manifests: read, check, write -----------------===//

#include "runtime/bundle/Bundle.h"

#include "core/FileReader.h"
#include "core/JsonRead.h"
#include "runtime/bundle/Compression.h"
#include "runtime/bundle/PlanJson.h"
#include "runtime/bundle/PlanTemplate.h"

#include <algorithm>
#include <cassert>
#include <filesystem>
#include <map>
#include <mutex>
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
  Result<std::string> stored = readKernelFile(kernel);
  if (!stored || !kernel.file.ends_with(kCompressedSuffix))
    return stored;
  return zstdDecompress(*stored, kMaxKernelFileBytes,
                        "bundle " + directory + ": kernel file " +
                            kernel.file);
}

Result<std::string> Bundle::readKernelFile(const BundleKernel &kernel) const {
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

/// "kernels/<entry point>.<hash><ext>": where attn-compile puts a kernel
/// file (BundleWriter.h's contentAddressedName, under kernels/).
std::string contentAddressedPath(const std::string &entryPoint,
                                 const std::string &hash,
                                 const std::string &ext) {
  return "kernels/" + entryPoint + "." + hash + ext;
}

/// The extension of a kernel's content-addressed file name
/// ("kernels/<entry point>.<hash><ext>", as attn-compile names files:
/// ".spv", ".spv.zst"), or "" for a file named otherwise (a TT program's).
std::string contentAddressedExtension(const BundleKernel &k) {
  std::string stem = contentAddressedPath(k.entryPoint, k.hash, "");
  if (k.file.starts_with(stem)) {
    std::string ext = k.file.substr(stem.size());
    if (ext.starts_with(".") && ext.find('/') == std::string::npos)
      return ext;
  }
  return "";
}

/// A relative symbol as a record writes it: "" for "./f::f" (a module of
/// one kernel, named after it), "./m::" for "./m::f", where f is the entry
/// point; else whole.
std::string recordSymbol(const std::string &symbol,
                         const std::string &entryPoint) {
  if (symbol == "./" + entryPoint + "::" + entryPoint)
    return "";
  std::string tail = "::" + entryPoint;
  if (symbol.ends_with(tail))
    return symbol.substr(0, symbol.size() - entryPoint.size());
  return symbol;
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

/// The kernel table, every distinct kernel file's record once, as columns
/// (a record of its own would cost each kernel more than its hash):
/// "kinds" and "bounds" (index into bounds[], or null) per kernel, the
/// hashes in base64 one after another, and "symbols" and "files" by index
/// for the kernels that need them.
class KernelColumns {
public:
  size_t add(size_t kind, const std::string &hash, nlohmann::json bounds,
             const std::string &symbol,
             const std::optional<std::string> &file) {
    std::string base64 = hashToBase64(hash);
    // A string that is no hash (hashToBase64 returns it as it is) keeps
    // the column's width, in characters the reader refuses.
    if (base64 == hash)
      base64 = std::string(kHashBase64Length, '=');
    nlohmann::json key = {kind, base64, bounds, symbol, file.value_or("")};
    auto [it, inserted] = index_.try_emplace(key.dump(), kinds_.size());
    if (!inserted)
      return it->second;
    std::string index = std::to_string(it->second);
    kinds_.push_back(kind);
    bounds_.push_back(std::move(bounds));
    hashes_ += base64;
    if (!symbol.empty())
      symbols_[index] = symbol;
    if (file)
      files_[index] = *file;
    return it->second;
  }
  nlohmann::json take() {
    return {{"kinds", std::move(kinds_)},
            {"bounds", std::move(bounds_)},
            {"hashes", std::move(hashes_)},
            {"symbols", std::move(symbols_)},
            {"files", std::move(files_)}};
  }

private:
  std::map<std::string, size_t> index_;
  nlohmann::json kinds_ = nlohmann::json::array();
  nlohmann::json bounds_ = nlohmann::json::array();
  std::string hashes_;
  nlohmann::json symbols_ = nlohmann::json::object();
  nlohmann::json files_ = nlohmann::json::object();
};

/// The shared tables a manifest's entries refer to by index.
struct ManifestTables {
  SharedTable kinds, boundShapes, bounds, plans, parameterKeys;
  KernelColumns kernels;

  /// A kernel's record: its kind, its bounds, its symbol where it is not ""
  /// and its file where the kind's extension does not name it. The launch
  /// bounds (core/LaunchBounds.h) have a table of their own: they differ
  /// with a variant's sizes where the rest of a kind's launch facts do not.
  size_t kernel(const BundleKernel &k, const std::string &prefix) {
    nlohmann::json launch = nlohmann::json::parse(k.launchJson, nullptr,
                                                  /*allow_exceptions=*/false);
    if (launch.is_discarded() || !launch.is_object())
      launch = nlohmann::json::object();
    nlohmann::json boundsIndex = nullptr;
    if (auto b = launch.find("bounds"); b != launch.end()) {
      SplitJson split = splitNumbers(std::move(*b));
      boundsIndex = bounds.add(nlohmann::json::array(
          {boundShapes.add(std::move(split.shape)), std::move(split.values)}));
      launch.erase("bounds");
    }
    std::string ext = contentAddressedExtension(k);
    size_t kind = kinds.add(nlohmann::json::array(
        {k.target, k.entryPoint, std::move(launch), ext}));
    std::optional<std::string> file;
    if (ext.empty())
      file = k.file;
    return kernels.add(
        kind, k.hash, std::move(boundsIndex),
        recordSymbol(relativeSymbol(k.symbol, prefix), k.entryPoint), file);
  }

  /// A variant's parameters: [index into parameter_keys[], the values in
  /// the keys' order].
  nlohmann::json parameters(const std::map<std::string, std::string> &p) {
    nlohmann::json keys = nlohmann::json::array();
    nlohmann::json record = nlohmann::json::array({0});
    for (const auto &[key, value] : p) {
      keys.push_back(key);
      record.push_back(value);
    }
    record[0] = parameterKeys.add(std::move(keys));
    return record;
  }
};

/// Kernel indices as runs: [first, count, first, count, ...].
nlohmann::json kernelRuns(const std::vector<size_t> &indices) {
  nlohmann::json runs = nlohmann::json::array();
  for (size_t i : indices) {
    size_t n = runs.size();
    if (n && runs[n - 2].get<size_t>() + runs[n - 1].get<size_t>() == i)
      runs[n - 1] = runs[n - 1].get<size_t>() + 1;
    else
      runs.insert(runs.end(), {i, size_t{1}});
  }
  return runs;
}

/// One entry of a variant: [subgroup size, cache key, plan template or
/// null, the plan's values, kernel records as runs].
nlohmann::json entryValue(const BundleVariant &v, ManifestTables &tables) {
  std::string prefix = entrySymbolPrefix(v);
  nlohmann::json plan = nullptr, values = nlohmann::json::array();
  if (const Plan *p = v.plan()) {
    Plan relative = *p;
    for (PlanOp &op : relative.ops)
      if (op.kind == PlanOpKind::Launch)
        op.kernel = relativeSymbol(op.kernel, prefix);
    SplitJson split = splitPlanValues(planToJsonValue(relative));
    plan = tables.plans.add(std::move(split.shape));
    values = std::move(split.values);
  }
  std::vector<size_t> kernels;
  for (const BundleKernel &k : v.kernels)
    kernels.push_back(tables.kernel(k, prefix));
  return nlohmann::json::array(
      {v.subgroupSize, v.cacheKey, plan, values, kernelRuns(kernels)});
}

/// `values` as an entry after the first of a variant writes them, where
/// that is shorter than the array: an object of the positions where they
/// differ from `previous` ({"31": 16}), those past its end included, and
/// "n", their number, where it differs (a cpu entry's plan and a GPU
/// entry's share their arguments but not their launches).
nlohmann::json valuesAfter(const nlohmann::json &previous,
                           const nlohmann::json &values) {
  nlohmann::json changed = nlohmann::json::object();
  if (previous.size() != values.size())
    changed["n"] = values.size();
  for (size_t i = 0; i < values.size(); ++i)
    if (i >= previous.size() || values[i] != previous[i])
      changed[std::to_string(i)] = values[i];
  return changed.dump().size() < values.dump().size() ? changed : values;
}

/// The manifest as a JSON value, without its hash. Entries of one name and
/// the same parameters (a variant's subgroup sizes) share one record.
nlohmann::json manifestValue(const Bundle &bundle) {
  ManifestTables tables;
  nlohmann::json variants = nlohmann::json::array();
  const BundleVariant *previous = nullptr;
  nlohmann::json previousValues;
  for (const BundleVariant *v : canonicalOrder(bundle)) {
    nlohmann::json entry = entryValue(*v, tables);
    nlohmann::json values = entry[3];
    if (!previous || previous->name != v->name ||
        previous->parameters != v->parameters)
      variants.push_back(
          nlohmann::json::array({v->name, tables.parameters(v->parameters),
                                 nlohmann::json::array()}));
    else
      entry[3] = valuesAfter(previousValues, values);
    variants.back()[2].push_back(std::move(entry));
    previous = v;
    previousValues = std::move(values);
  }
  nlohmann::json j;
  j["format_version"] = bundle.formatVersion;
  j["compiler"] = bundle.compiler;
  j["kinds"] = tables.kinds.take();
  j["bound_shapes"] = tables.boundShapes.take();
  j["bounds"] = tables.bounds.take();
  j["kernels"] = tables.kernels.take();
  j["plans"] = tables.plans.take();
  j["parameter_keys"] = tables.parameterKeys.take();
  j["variants"] = std::move(variants);
  return j;
}

/// `"key": ` then an array with one element per line, or an object with
/// one member per line (any other value, as a manifest edited on purpose
/// may have, on the key's line).
void appendTable(std::string &text, const char *key,
                 const nlohmann::json &table) {
  text += std::string(",\n\"") + key + "\": ";
  if (!table.is_array() && !table.is_object()) {
    text += table.dump();
    return;
  }
  bool first = true;
  text += table.is_array() ? "[" : "{";
  for (const auto &[member, value] : table.items()) {
    text += first ? "\n " : ",\n ";
    if (table.is_object())
      text += nlohmann::json(member).dump() + ": ";
    text += value.dump();
    first = false;
  }
  text += table.is_array() ? "]" : "}";
}

/// The tables in the order the manifest writes them ("kernels" is an
/// object of columns, the others arrays).
constexpr const char *kManifestTables[] = {
    "kinds", "bound_shapes",   "bounds",  "kernels",
    "plans", "parameter_keys", "variants"};

/// The text of manifest `j` that its manifest_hash covers: all of the
/// manifest but the manifest_hash and signature lines, which come after
/// the second line. A manifest edited on purpose may lack the first two
/// members: they are written null, for the reader to refuse.
std::string signedText(const nlohmann::json &j) {
  auto member = [&j](const char *key) {
    auto it = j.find(key);
    return it == j.end() ? std::string("null") : it->dump();
  };
  std::string text = "{\"format_version\": " + member("format_version") +
                     ",\n\"compiler\": " + member("compiler");
  for (const char *table : kManifestTables)
    if (j.contains(table))
      appendTable(text, table, j[table]);
  return text + "}\n";
}

/// Where the lines that manifest_hash does not cover start: after the
/// second line.
size_t unsignedLinesStart(std::string_view text) {
  size_t first = text.find('\n');
  size_t second =
      first == std::string_view::npos ? first : text.find('\n', first + 1);
  return second == std::string_view::npos ? text.size() : second + 1;
}

} // namespace

std::string manifestHash(const Bundle &bundle) {
  if (bundle.unread)
    return bundle.readHash;
  return contentHash(signedText(manifestValue(bundle)));
}

void signBundle(Bundle &bundle, const SecretKey &key) {
  bundle.signature = signManifestHash(manifestHash(bundle), key);
}

namespace {

/// `text` (signedText) with its manifest_hash and, unless null, its
/// signature.
std::string withHashLines(std::string text, const nlohmann::json &signature) {
  std::string lines = "\"manifest_hash\": \"" + contentHash(text) + "\",\n";
  if (!signature.is_null())
    lines += "\"signature\": " + signature.dump() + ",\n";
  return text.insert(unsignedLinesStart(text), lines);
}

} // namespace

std::string manifestToJson(const Bundle &bundle) {
  assert(!bundle.unread && "manifestToJson needs whole entries");
  nlohmann::json signature;
  if (const std::optional<ManifestSignature> &sig = bundle.signature)
    signature = {{"key", sig->key.hex()}, {"ed25519", sig->valueHex()}};
  return withHashLines(signedText(manifestValue(bundle)), signature);
}

std::string restampManifest(std::string_view json) {
  nlohmann::json j =
      nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return "";
  nlohmann::json signature;
  if (auto it = j.find("signature"); it != j.end())
    signature = *it;
  j.erase("signature");
  j.erase("manifest_hash");
  return withHashLines(signedText(j), signature);
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

/// `text` without the lines manifest_hash does not cover: the third line,
/// which must be the manifest_hash, and the fourth when it is the
/// signature.
Result<std::string> signedPart(std::string_view text,
                               const std::string &where) {
  size_t start = unsignedLinesStart(text);
  size_t end = start;
  for (std::string_view key : {"\"manifest_hash\": ", "\"signature\": "}) {
    if (text.substr(end).starts_with(key)) {
      size_t newline = text.find('\n', end);
      end = newline == std::string_view::npos ? text.size() : newline + 1;
    } else if (end == start) {
      return errorf(where, ": its third line is not its manifest_hash (a "
                           "manifest is one record per line, as "
                           "attn-compile writes it)");
    }
  }
  return std::string(text.substr(0, start)) + std::string(text.substr(end));
}

/// The manifest's format version (compared as read, so that no larger
/// number truncates to a good one) and its hash over its signed part
/// (signedPart of `text`), which it returns.
Result<std::string> checkManifestHeader(const nlohmann::json &j,
                                        std::string_view text,
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
  Result<std::string> signed_ = signedPart(text, where);
  if (!signed_)
    return signed_.status();
  std::string actual = contentHash(*signed_);
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

/// An index into a table of `size` records, or an error.
Result<size_t> tableIndex(const nlohmann::json &value, size_t size,
                          const char *table, const std::string &where) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() >= size)
    return errorf(where, ": ", value.dump(), " is not an index into \"",
                  table, "\" (", size, " records)");
  return static_cast<size_t>(value.get<uint64_t>());
}

/// One record of the kinds table: [target, entry point, launch facts, the
/// extension of its files' content-addressed names or ""]. The extension
/// is kept in `file` until the kernel's hash completes the name.
Result<BundleKernel> kindFromJson(const nlohmann::json &jk,
                                  const std::string &where) {
  if (!jk.is_array() || jk.size() != 4 || !jk[0].is_string() ||
      !jk[1].is_string() || !jk[2].is_object() || !jk[3].is_string())
    return errorf(where, ": a kernel kind is [target, entry point, launch "
                         "facts, file extension], got ",
                  jk.dump().substr(0, 200));
  BundleKernel k;
  k.target = jk[0].get<std::string>();
  k.entryPoint = jk[1].get<std::string>();
  k.launchJson = jk[2].dump();
  k.file = jk[3].get<std::string>();
  if (!k.file.empty() &&
      (!k.file.starts_with(".") || k.file.find('/') != std::string::npos))
    return errorf(where, ": \"", k.file, "\" is not a file extension");
  return k;
}

/// The manifest's record of an entry: its variant record and its place
/// among that record's entries.
struct EntryPlace {
  size_t variant = 0;
  size_t entry = 0;
};

} // namespace

namespace detail {

/// The parsed manifest of a bundle from openManifest, and its entries read
/// whole since: Bundle::entry reads one the first time it is asked for.
struct UnreadEntries {
  std::string where;
  nlohmann::json manifest;
  /// The "kinds" table, read when the manifest was opened.
  std::vector<BundleKernel> kinds;
  /// The "parameter_keys" table, read when the manifest was opened.
  std::vector<std::vector<std::string>> parameterKeys;
  /// Where each entry of Bundle::variants is in manifest["variants"].
  std::vector<EntryPlace> places;
  /// The manifest's size, and the kernels its entries' runs name in all:
  /// no more than its bytes, so that a few bytes of runs cannot stand for
  /// many kernels to copy (a list of indices costs two bytes each).
  size_t textBytes = 0;
  uint64_t kernelReferences = 0;

  std::mutex mutex;
  std::vector<std::unique_ptr<const BundleVariant>> whole;
  /// Kernel table records read so far (symbols relative to the entry).
  std::map<size_t, BundleKernel> kernels;
  /// A kind's launch facts with a set of bounds, as JSON text, by (kind,
  /// bounds): each pair merged once, however many kernels share it.
  std::map<std::pair<size_t, size_t>, std::string> launches;

  Result<const BundleVariant *> read(size_t i, const BundleVariant &header);

private:
  Result<BundleVariant> readEntry(const EntryPlace &place,
                                  const BundleVariant &header);
  Result<const BundleKernel *> kernel(size_t index);
  Result<std::vector<size_t>> kernelIndices(const nlohmann::json &runs,
                                            const std::string &vwhere);
  Result<std::string> launchWithBounds(size_t kind, size_t bounds);
  Status readPlan(size_t index, const nlohmann::json &values, BundleVariant &v,
                  const std::string &vwhere);
};

} // namespace detail

using detail::UnreadEntries;

namespace {

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

/// `key` as a position written by std::to_string (digits only, no leading
/// zero, so that one position has one spelling), or nothing.
std::optional<uint64_t> decimalPosition(const std::string &key) {
  char *end = nullptr;
  unsigned long long i = std::strtoull(key.c_str(), &end, 10);
  if (key.empty() || *end != '\0' || key != std::to_string(i))
    return std::nullopt;
  return i;
}

/// An entry's plan values: an array, or (after a variant's first entry)
/// an object of positions where they differ from `previous`'s, with "n",
/// their number, where it differs (then every position past `previous`'s
/// end is given).
Result<nlohmann::json> entryValues(const nlohmann::json &given,
                                   const nlohmann::json &previous,
                                   const std::string &vwhere) {
  if (given.is_array())
    return given;
  if (!given.is_object() || !previous.is_array())
    return errorf(vwhere, ": plan values are an array, or after a variant's "
                          "first entry an object of changed positions");
  nlohmann::json values = previous;
  size_t size = previous.size();
  if (const nlohmann::json *n = jsonMember(given, "n")) {
    // Every position past the end is given: no more than the object has.
    if (!n->is_number_unsigned() || n->get<uint64_t>() > size + given.size())
      return errorf(vwhere, ": \"n\" must be the number of plan values, got ",
                    n->dump().substr(0, 40));
    size = n->get<size_t>();
    values.get_ref<nlohmann::json::array_t &>().resize(size);
  }
  size_t past = 0;
  for (const auto &[key, value] : given.items()) {
    if (key == "n")
      continue;
    std::optional<uint64_t> i = decimalPosition(key);
    if (!i || *i >= size)
      return errorf(vwhere, ": \"", key, "\" is not a position among the ",
                    size, " plan values");
    values[*i] = value;
    past += *i >= previous.size();
  }
  if (size > previous.size() && past != size - previous.size())
    return errorf(vwhere, ": ", size - previous.size(),
                  " plan values past the ", previous.size(),
                  " before are not all given");
  return values;
}

} // namespace

/// Kind `kind`'s launch facts with bounds record `b`: [index into
/// "bound_shapes", the numbers of the shape in order].
Result<std::string> UnreadEntries::launchWithBounds(size_t kind, size_t b) {
  if (auto it = launches.find({kind, b}); it != launches.end())
    return it->second;
  const nlohmann::json &shapes = manifest["bound_shapes"];
  const nlohmann::json &record = manifest["bounds"][b];
  std::string bwhere = this->where + ", bounds[" + std::to_string(b) + "]";
  if (!record.is_array() || record.size() != 2)
    return errorf(bwhere, ": launch bounds are [shape, values], got ",
                  record.dump().substr(0, 200));
  Result<size_t> shape =
      tableIndex(record[0], shapes.size(), "bound_shapes", bwhere);
  if (!shape)
    return shape.status();
  Result<nlohmann::json> filled = fillNumbers(shapes[*shape], record[1]);
  if (!filled)
    return errorf(bwhere, ": ", filled.message());
  nlohmann::json launch = nlohmann::json::parse(kinds[kind].launchJson);
  launch["bounds"] = std::move(*filled);
  return launches.emplace(std::pair{kind, b}, launch.dump()).first->second;
}

/// Kernel `index` of the kernel table's columns (their shape checked by
/// checkKernelColumns): its kind, its hash (URL-safe base64, the
/// index-th 43 characters of "hashes"), its bounds (or null), its symbol
/// relative to the entry (a trailing "::" continues with the entry point;
/// none, or "", is "./<entry>::<entry>") and its file (given only where the
/// kind has no extension).
Result<const BundleKernel *> UnreadEntries::kernel(size_t index) {
  if (auto it = kernels.find(index); it != kernels.end())
    return &it->second;
  const nlohmann::json &columns = manifest["kernels"];
  std::string kwhere = where + ", kernels[" + std::to_string(index) + "]";
  Result<size_t> kind =
      tableIndex(columns["kinds"][index], kinds.size(), "kinds", kwhere);
  if (!kind)
    return kind.status();
  BundleKernel k = kinds[*kind];
  Result<std::string> hash = hashFromBase64(
      std::string_view(columns["hashes"].get_ref<const std::string &>())
          .substr(index * kHashBase64Length, kHashBase64Length));
  if (!hash)
    return errorf(kwhere, ": ", hash.message());
  k.hash = *hash;
  if (const nlohmann::json &b = columns["bounds"][index]; !b.is_null()) {
    Result<size_t> bi =
        tableIndex(b, manifest["bounds"].size(), "bounds", kwhere);
    if (!bi)
      return bi.status();
    Result<std::string> launch = launchWithBounds(*kind, *bi);
    if (!launch)
      return launch.status();
    k.launchJson = *launch;
  }
  std::string key = std::to_string(index);
  const nlohmann::json *file = jsonMember(columns["files"], key);
  bool named = !k.file.empty();
  if (named == (file != nullptr))
    return errorf(kwhere, named ? ": its kind names the file, \"files\" "
                                  "must not"
                                : ": a kernel of a kind without a file "
                                  "extension has its file in \"files\"");
  k.file = named ? contentAddressedPath(k.entryPoint, k.hash, k.file)
                 : file->get<std::string>();
  if (k.file.find("..") != std::string::npos || k.file.starts_with("/"))
    return errorf(kwhere, ": file must be inside the bundle, got ", k.file);
  const nlohmann::json *symbol = jsonMember(columns["symbols"], key);
  k.symbol = symbol ? symbol->get<std::string>() : "";
  if (k.symbol.empty())
    k.symbol = "./" + k.entryPoint + "::";
  if (k.symbol.ends_with("::"))
    k.symbol += k.entryPoint;
  return &kernels.emplace(index, std::move(k)).first->second;
}

/// An entry's kernels, written as runs [first, count, first, count, ...]
/// of the kernel table, one index each (their total across entries is
/// bounded when the manifest is opened: kernelReferences).
Result<std::vector<size_t>>
UnreadEntries::kernelIndices(const nlohmann::json &runs,
                             const std::string &vwhere) {
  size_t size = manifest["kernels"]["kinds"].size();
  if (runs.size() % 2 != 0)
    return errorf(vwhere, ": kernels are runs [first, count, ...], got ",
                  runs.dump().substr(0, 200));
  std::vector<size_t> indices;
  for (size_t r = 0; r < runs.size(); r += 2) {
    Result<size_t> first = tableIndex(runs[r], size, "kernels", vwhere);
    if (!first)
      return first.status();
    const nlohmann::json &count = runs[r + 1];
    if (!count.is_number_unsigned() || count.get<uint64_t>() == 0 ||
        count.get<uint64_t>() > size - *first)
      return errorf(vwhere, ": a run of ", count.dump(), " kernels from ",
                    *first, " is not in \"kernels\" (", size, " records)");
    for (size_t i = *first; i < *first + count.get<uint64_t>(); ++i)
      indices.push_back(i);
  }
  return indices;
}

/// Entry `v`'s plan: template `index` filled with its values, parsed and
/// verified, kernel symbols made whole.
Status UnreadEntries::readPlan(size_t index, const nlohmann::json &values,
                               BundleVariant &v, const std::string &vwhere) {
  Result<nlohmann::json> filled =
      fillPlanValues(manifest["plans"][index], values);
  if (!filled)
    return errorf(vwhere, ": ", filled.message());
  Result<Plan> plan = planFromJsonValue(*filled);
  if (!plan)
    return errorf(vwhere, ": ", plan.message());
  std::string prefix = entrySymbolPrefix(v);
  for (PlanOp &op : plan->ops)
    if (op.kind == PlanOpKind::Launch)
      op.kernel = fullSymbol(op.kernel, prefix);
  v.plans.push_back(std::move(*plan));
  return Status::ok();
}

/// The entry at `place` whole: [subgroup size, cache key, plan or null,
/// plan values, kernels as runs [first, count, ...]] (the first two already
/// in `header`, checked when the manifest was opened). Its plan values
/// follow from those of the variant's entries before it.
Result<BundleVariant> UnreadEntries::readEntry(const EntryPlace &place,
                                               const BundleVariant &header) {
  const nlohmann::json &entries = manifest["variants"][place.variant][2];
  BundleVariant v = header;
  std::string vwhere = where + ", variant " + v.name + " (subgroup size " +
                       std::to_string(v.subgroupSize) + ")";
  nlohmann::json values;
  for (size_t e = 0; e <= place.entry; ++e) {
    Result<nlohmann::json> next = entryValues(entries[e][3], values, vwhere);
    if (!next)
      return next.status();
    values = std::move(*next);
  }
  const nlohmann::json &je = entries[place.entry];
  std::string prefix = entrySymbolPrefix(v);
  Result<std::vector<size_t>> indices = kernelIndices(je[4], vwhere);
  if (!indices)
    return indices.status();
  for (size_t i : *indices) {
    Result<const BundleKernel *> k = kernel(i);
    if (!k)
      return k.status();
    v.kernels.push_back(**k);
    v.kernels.back().symbol = fullSymbol((*k)->symbol, prefix);
  }
  if (!je[2].is_null()) {
    Result<size_t> i =
        tableIndex(je[2], manifest["plans"].size(), "plans", vwhere);
    if (!i)
      return i.status();
    ATTN_RETURN_IF_ERROR(readPlan(*i, values, v, vwhere));
  }
  ATTN_RETURN_IF_ERROR(checkLaunchedKernels(v, vwhere));
  return v;
}

Result<const BundleVariant *> UnreadEntries::read(size_t i,
                                                  const BundleVariant &header) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!whole[i]) {
    Result<BundleVariant> v = readEntry(places[i], header);
    if (!v)
      return v.status();
    whole[i] = std::make_unique<const BundleVariant>(std::move(*v));
  }
  return whole[i].get();
}

Result<const BundleVariant *> Bundle::entry(size_t i) const {
  assert(i < variants.size() && "entry index out of range");
  if (!unread)
    return &variants[i];
  return unread->read(i, variants[i]);
}

size_t Bundle::entriesRead() const {
  if (!unread)
    return 0;
  std::lock_guard<std::mutex> lock(unread->mutex);
  return std::count_if(unread->whole.begin(), unread->whole.end(),
                       [](const auto &v) { return v != nullptr; });
}

Result<const BundleVariant *>
Bundle::entry(const BundleVariant &inVariants) const {
  assert(&inVariants >= variants.data() &&
         &inVariants < variants.data() + variants.size() &&
         "not an entry of this bundle");
  return entry(static_cast<size_t>(&inVariants - variants.data()));
}

Result<std::vector<const BundleKernel *>>
Bundle::kernelsOfSymbol(std::string_view symbol) const {
  std::vector<const BundleVariant *> holders;
  for (size_t i = 0; i < variants.size() && holders.empty(); ++i)
    if (symbol.starts_with(entrySymbolPrefix(variants[i]))) {
      Result<const BundleVariant *> v = entry(i);
      if (!v)
        return v.status();
      holders.push_back(*v);
    }
  if (holders.empty())
    for (size_t i = 0; i < variants.size(); ++i) {
      Result<const BundleVariant *> v = entry(i);
      if (!v)
        return v.status();
      holders.push_back(*v);
    }
  std::vector<const BundleKernel *> kernels;
  for (const BundleVariant *v : holders)
    for (const BundleKernel &k : v->kernels)
      if (k.symbol == symbol)
        kernels.push_back(&k);
  return kernels;
}

std::vector<BundleKernel> Bundle::kernelKinds() const {
  std::vector<BundleKernel> kinds;
  if (unread) {
    for (const BundleKernel &kind : unread->kinds)
      kinds.push_back(
          {"", kind.target, "", kind.entryPoint, "", kind.launchJson});
    return kinds;
  }
  // A bundle made in memory: its kernels' kinds, each once.
  std::set<std::tuple<std::string_view, std::string_view, std::string_view>>
      seen;
  for (const BundleVariant &v : variants)
    for (const BundleKernel &k : v.kernels)
      if (seen.emplace(k.target, k.entryPoint, k.launchJson).second)
        kinds.push_back({"", k.target, "", k.entryPoint, "", k.launchJson});
  return kinds;
}

namespace {

/// The kernel table's columns: "kinds" and "bounds", one per kernel,
/// "hashes", 43 characters per kernel, and "symbols" and "files", objects
/// whose members are kernels' indices (decimal, as written) and strings.
/// What each kernel's values mean is checked when an entry reads it.
Status checkKernelColumns(const nlohmann::json &j, const std::string &where) {
  std::string kwhere = where + ", kernels";
  const nlohmann::json *kinds = jsonMember(j, "kinds", JsonKind::Array);
  const nlohmann::json *bounds = jsonMember(j, "bounds", JsonKind::Array);
  const nlohmann::json *hashes = jsonMember(j, "hashes", JsonKind::String);
  if (!j.is_object() || j.size() != 5 || !kinds || !bounds || !hashes ||
      !jsonMember(j, "symbols", JsonKind::Object) ||
      !jsonMember(j, "files", JsonKind::Object))
    return errorf(kwhere, ": expected columns {\"kinds\": [...], "
                          "\"bounds\": [...], \"hashes\": \"...\", "
                          "\"symbols\": {...}, \"files\": {...}}");
  size_t n = kinds->size();
  if (bounds->size() != n ||
      hashes->get_ref<const std::string &>().size() != n * kHashBase64Length)
    return errorf(kwhere, ": ", n, " kinds, ", bounds->size(), " bounds and ",
                  hashes->get_ref<const std::string &>().size(),
                  " characters of hashes do not make whole records (",
                  kHashBase64Length, " characters a hash)");
  for (const char *column : {"symbols", "files"})
    for (const auto &[key, value] : j[column].items()) {
      std::optional<uint64_t> i = decimalPosition(key);
      if (!i || *i >= n || !value.is_string())
        return errorf(kwhere, ", ", column, ": \"", key.substr(0, 40),
                      "\" is not a kernel's index (", n,
                      " records) with a string");
    }
  return Status::ok();
}

/// One record of "parameter_keys": the names of a variant's parameters, as
/// strings in ascending order.
Result<std::vector<std::string>>
parameterKeysFromJson(const nlohmann::json &jk, const std::string &where) {
  std::vector<std::string> keys;
  if (jk.is_array())
    for (const nlohmann::json &key : jk)
      if (key.is_string() &&
          (keys.empty() || keys.back() < key.get_ref<const std::string &>()))
        keys.push_back(key.get<std::string>());
  if (!jk.is_array() || keys.size() != jk.size())
    return errorf(where, ": parameter keys are names in ascending order, got ",
                  jk.dump().substr(0, 200));
  return keys;
}

/// The tables' shape, and the kinds and parameter keys read: what every
/// entry refers to.
Status tablesFromJson(UnreadEntries &unread) {
  const nlohmann::json &j = unread.manifest;
  for (const char *table : kManifestTables)
    if (std::string_view(table) != "kernels" &&
        !jsonMember(j, table, JsonKind::Array))
      return errorf(unread.where, ": expected an array \"", table, "\"");
  const nlohmann::json *columns = jsonMember(j, "kernels", JsonKind::Object);
  if (!columns)
    return errorf(unread.where, ": expected an object \"kernels\"");
  ATTN_RETURN_IF_ERROR(checkKernelColumns(*columns, unread.where));
  const nlohmann::json &kinds = j["kinds"];
  for (size_t i = 0; i < kinds.size(); ++i) {
    Result<BundleKernel> k = kindFromJson(
        kinds[i], unread.where + ", kinds[" + std::to_string(i) + "]");
    if (!k)
      return k.status();
    unread.kinds.push_back(std::move(*k));
  }
  const nlohmann::json &keys = j["parameter_keys"];
  for (size_t i = 0; i < keys.size(); ++i) {
    Result<std::vector<std::string>> k = parameterKeysFromJson(
        keys[i], unread.where + ", parameter_keys[" + std::to_string(i) + "]");
    if (!k)
      return k.status();
    unread.parameterKeys.push_back(std::move(*k));
  }
  return Status::ok();
}

/// A variant record's parameters: [index into parameter_keys, a string
/// value for each key].
Status parametersFromJson(const nlohmann::json &jp, const UnreadEntries &unread,
                          BundleVariant &v, const std::string &vwhere) {
  if (!jp.is_array() || jp.empty())
    return errorf(vwhere, ": parameters are [keys, values...], got ",
                  jp.dump().substr(0, 200));
  Result<size_t> keys =
      tableIndex(jp[0], unread.parameterKeys.size(), "parameter_keys", vwhere);
  if (!keys)
    return keys.status();
  const std::vector<std::string> &names = unread.parameterKeys[*keys];
  if (jp.size() != names.size() + 1)
    return errorf(vwhere, ": ", jp.size() - 1, " parameter values for ",
                  names.size(), " keys");
  for (size_t i = 0; i < names.size(); ++i) {
    if (!jp[i + 1].is_string())
      return errorf(vwhere, ": parameter ", names[i], " must be a string");
    v.parameters[names[i]] = jp[i + 1].get<std::string>();
  }
  return Status::ok();
}

/// Adds the kernels an entry's runs name (those whose count is a number;
/// the rest are refused when the entry is read) to unread's references,
/// which may not pass the manifest's size.
Status countKernelReferences(const nlohmann::json &runs, UnreadEntries &unread,
                             const std::string &vwhere) {
  uint64_t limit = unread.textBytes;
  for (size_t r = 1; r < runs.size(); r += 2) {
    if (!runs[r].is_number_unsigned())
      continue;
    uint64_t count = runs[r].get<uint64_t>();
    if (count > limit - unread.kernelReferences)
      return errorf(vwhere, ": the entries name more kernels (",
                    unread.kernelReferences, " and ", count,
                    ") than the manifest has bytes (", limit, ")");
    unread.kernelReferences += count;
  }
  return Status::ok();
}

/// One record of "variants", [name, parameters, entries] (the entries, one
/// per subgroup size, share the name and parameters), as the headers of its
/// entries: each entry's shape, subgroup size and cache key checked, the
/// rest left for Bundle::entry.
Status variantFromJson(const nlohmann::json &jv, size_t index,
                       UnreadEntries &unread, Bundle &bundle) {
  if (!jv.is_array() || jv.size() != 3 || !jv[0].is_string() ||
      !jv[2].is_array())
    return errorf(unread.where, ", variants[", index,
                  "]: a variant is [name, parameters, entries], got ",
                  jv.dump().substr(0, 200));
  BundleVariant v;
  v.name = jv[0].get<std::string>();
  std::string vwhere = unread.where + ", variant " + v.name;
  ATTN_RETURN_IF_ERROR(parametersFromJson(jv[1], unread, v, vwhere));
  const nlohmann::json &entries = jv[2];
  for (size_t e = 0; e < entries.size(); ++e) {
    const nlohmann::json &je = entries[e];
    if (!je.is_array() || je.size() != 5 || !je[0].is_number_unsigned() ||
        je[0].get<uint64_t>() > 1024 || !je[1].is_string() || !je[4].is_array())
      return errorf(vwhere,
                    ": an entry is [subgroup size in [0, 1024], "
                    "cache key, plan, plan values, kernels], got ",
                    je.dump().substr(0, 200));
    v.subgroupSize = je[0].get<int64_t>();
    v.cacheKey = je[1].get<std::string>();
    ATTN_RETURN_IF_ERROR(countKernelReferences(je[4], unread, vwhere));
    bundle.variants.push_back(v);
    unread.places.push_back({index, e});
  }
  return Status::ok();
}

/// The entries of `unread`'s manifest, as headers; each whole, the first
/// time it is asked for.
Status entriesFromJson(UnreadEntries &unread, Bundle &bundle) {
  const nlohmann::json &variants = unread.manifest["variants"];
  for (size_t i = 0; i < variants.size(); ++i)
    ATTN_RETURN_IF_ERROR(variantFromJson(variants[i], i, unread, bundle));
  unread.whole.resize(bundle.variants.size());
  std::set<std::pair<std::string, int64_t>> seen;
  for (const BundleVariant &v : bundle.variants)
    if (!seen.emplace(v.name, v.subgroupSize).second)
      return errorf(unread.where, ": two entries of variant ", v.name,
                    " are for subgroup size ", v.subgroupSize);
  return Status::ok();
}

/// Every entry of `bundle` read whole into `bundle.variants`.
Status readAllEntries(Bundle &bundle) {
  std::vector<BundleVariant> whole;
  whole.reserve(bundle.variants.size());
  for (size_t i = 0; i < bundle.variants.size(); ++i) {
    Result<const BundleVariant *> v = bundle.entry(i);
    if (!v)
      return v.status();
    whole.push_back(**v);
  }
  bundle.variants = std::move(whole);
  bundle.unread = nullptr;
  return Status::ok();
}

} // namespace

Result<Bundle> manifestFromJson(std::string_view text,
                                const std::string &directory,
                                const BundleTrust &trust, bool unread) {
  auto entries = std::make_shared<UnreadEntries>();
  entries->where = "bundle " + directory + ": manifest.json";
  entries->textBytes = text.size();
  const std::string &where = entries->where;
  entries->manifest =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json &j = entries->manifest;
  if (j.is_discarded())
    return errorf(where, " is not valid JSON");
  Result<std::string> hash = checkManifestHeader(j, text, where);
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
  bundle.readHash = *hash;
  Result<std::string> compiler = getString(j, "compiler", where);
  if (!compiler)
    return compiler.status();
  bundle.compiler = *compiler;
  ATTN_RETURN_IF_ERROR(tablesFromJson(*entries));
  ATTN_RETURN_IF_ERROR(entriesFromJson(*entries, bundle));
  bundle.unread = std::move(entries);
  if (!unread)
    ATTN_RETURN_IF_ERROR(readAllEntries(bundle));
  return bundle;
}

namespace {

/// The text of `directory`/manifest.json, read no further than a bound.
Result<std::string> readManifestText(const std::string &directory) {
  const std::string path = directory + "/manifest.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return errorf("bundle ", directory, ": no manifest.json (is ", directory,
                  " an attn-compile output directory?)");
  Result<std::string> text =
      readFileBounded(path, kMaxManifestBytes, "manifest");
  if (!text)
    return errorf("bundle ", directory, ": ", text.message());
  return text;
}

} // namespace

Result<Bundle> loadManifest(const std::string &directory,
                            const BundleTrust &trust) {
  Result<std::string> text = readManifestText(directory);
  if (!text)
    return text.status();
  return manifestFromJson(*text, directory, trust);
}

Result<Bundle> openManifest(const std::string &directory,
                            const BundleTrust &trust) {
  Result<std::string> text = readManifestText(directory);
  if (!text)
    return text.status();
  return manifestFromJson(*text, directory, trust, /*unread=*/true);
}

bool manifestChanged(const Bundle &bundle) {
  Result<std::string> text = readManifestText(bundle.directory);
  if (!text)
    return true;
  Result<std::string> now = signedPart(*text, bundle.directory);
  return !now || contentHash(*now) != manifestHash(bundle);
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
