//===- Bundle.h - Ahead-of-time kernel bundles -----------------*- C++ -*-===//
//
// A bundle is what attn-compile writes and a serving engine loads at start-up:
// a directory with manifest.json and one file per kernel and target.
//
//   manifest.json (format 4; one record per line, so diffs read well)
//     format_version   kBundleFormatVersion
//     compiler         the attn-compile version that wrote it
//     manifest_hash    FNV-1a 64 of the manifest without this field, as
//                      nlohmann::json dumps it compactly: an edited or
//                      damaged manifest is refused
//     kernels[]        every distinct kernel record once: target ("spirv",
//                      "ptx", "msl", "cpu", "tt"), file (relative), entry
//                      point, hash (FNV-1a 64 of the file, hex) and the
//                      target's launch facts (`launch`, with the bounds
//                      its launches must keep); entries that share
//                      a kernel file and its facts share the record
//     plans[]          every distinct host plan once (runtime/bundle/Plan.h),
//                      its launched symbols relative to the entry
//     variants[]       one entry per compiled variant and subgroup size, in
//                      order of name, then subgroup size:
//       name           the variant ("paged_attention.h32.g8..."); name and
//                      subgroup size are unique together
//       subgroup_size  what the GPU kernels were built for (8, 16, 32, 64,
//                      ...; 0: the entry has no subgroup-dependent kernels,
//                      as for target tt)
//       cache_key      hash of what produced it (for incremental builds)
//       parameters     the variant's key/values (op, num_heads, dtype, ...),
//                      what the runtime matches a call against
//       plan           index into plans[]; absent for tt-only entries
//       kernels[]      [symbol, index into kernels[]] pairs. A symbol is
//                      what plans launch, unique to the entry's compile
//                      ("<name>@<cache key>/<module>::<kernel>", so kernels
//                      of several bundles can share a device); the manifest
//                      writes that prefix as "./"
//
// An entry costs its name, parameters and references, whatever the size of
// its kernels and plan: identical kernels and plans across subgroup sizes
// and variants are written once. In memory every entry holds its own copy
// of its plan and kernel records, with full symbols.
//
// Loading checks the format version, the manifest's own hash, the JSON's
// structure, every plan, and every kernel file (a regular file) against its
// hash, so a corrupt bundle is an error naming what is wrong, never a launch
// of a bad kernel. runtime/bundle/BundleWriter.h writes bundles.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "core/Status.h"
#include "runtime/bundle/Plan.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// 2: one entry per subgroup size, one plan per entry, symbols unique per
/// compile. 3: kernel records and plans in shared tables, entries in a
/// canonical order. 4: a kernel's launch facts hold its launch bounds
/// (core/LaunchBounds.h), without which no plan launches it.
inline constexpr int kBundleFormatVersion = 4;

/// FNV-1a, 64 bits: the content hash of kernel files.
uint64_t contentHash(std::string_view bytes);
std::string hashToHex(uint64_t hash);

struct BundleKernel {
  std::string symbol;
  std::string target;
  /// Relative to the bundle directory.
  std::string file;
  std::string entryPoint;
  uint64_t hash = 0;
  /// Target-specific launch facts, as JSON text ("{}" when none).
  std::string launchJson = "{}";

  bool operator==(const BundleKernel &) const = default;
};

struct BundleVariant {
  std::string name;
  /// The subgroup size the entry's GPU kernels need; 0 when none.
  int64_t subgroupSize = 0;
  /// Identifies the compiler input and options that produced the variant;
  /// attn-compile reuses a variant whose key has not changed.
  std::string cacheKey;
  std::map<std::string, std::string> parameters;
  std::vector<Plan> plans;
  std::vector<BundleKernel> kernels;

  /// The plan of the entry's function, or null for an entry without one.
  const Plan *plan() const { return plans.empty() ? nullptr : &plans.front(); }
  const BundleKernel *findKernel(std::string_view symbol,
                                 std::string_view target) const;
  bool operator==(const BundleVariant &) const = default;
};

/// What the symbols an entry's compile makes unique start with:
/// "<name>@<cache key>/" (attn-compile prefixes them, the manifest writes
/// that prefix as "./").
std::string entrySymbolPrefix(const BundleVariant &v);

struct Bundle {
  int formatVersion = kBundleFormatVersion;
  std::string compiler;
  /// Where the bundle was loaded from or is written to.
  std::string directory;
  std::vector<BundleVariant> variants;

  /// The entry of variant `name` built for `subgroupSize`, or null.
  const BundleVariant *findEntry(std::string_view name,
                                 int64_t subgroupSize) const;

  /// Reads a kernel file and checks it against its hash.
  Result<std::string> readKernel(const BundleKernel &kernel) const;
};

/// Loads and checks `directory`/manifest.json and the kernel files. An
/// attn-compile rewriting the bundle meanwhile removes, once its manifest
/// is in place, the files only the old one named: a kernel that fails to
/// read while the manifest has changed is retried with the new manifest
/// (up to kBundleLoadAttempts times), so a reader gets the old bundle or
/// the new one.
Result<Bundle> loadBundle(const std::string &directory);

/// How often a reader tries a bundle that keeps changing under it.
inline constexpr int kBundleLoadAttempts = 8;

/// Whether `bundle.directory`/manifest.json is no longer the manifest
/// `bundle` was read from (rewritten, or gone).
bool manifestChanged(const Bundle &bundle);

/// Reads (no further than a bound: an endless file is refused) and parses
/// `directory`/manifest.json, without reading the kernel files.
Result<Bundle> loadManifest(const std::string &directory);

/// The manifest text of a bundle, and its parse (no file checks).
std::string manifestToJson(const Bundle &bundle);
Result<Bundle> manifestFromJson(std::string_view json,
                                const std::string &directory);


} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_H
