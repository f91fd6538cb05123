//===- Bundle.h - Ahead-of-time kernel bundles -----------------*- C++ -*-===//
//
// A bundle is what attn-compile writes and a serving engine loads at start-up:
// a directory with manifest.json and one file per kernel and target.
//
//   manifest.json
//     format_version   kBundleFormatVersion
//     compiler         the attn-compile version that wrote it
//     variants[]       one per compiled variant:
//       name           unique in the bundle ("paged_attention.h32.g8...")
//       cache_key      hash of what produced it (for incremental builds)
//       parameters     the variant's key/values (op, num_heads, dtype, ...)
//       plans[]        one runtime::Plan per function (runtime/Plan.h)
//       kernels[]      symbol ("module::func", what plans launch), target
//                      ("spirv", "ptx", "msl", "tt"), file (relative),
//                      entry point, hash (FNV-1a 64 of the file, hex), and
//                      target-specific launch facts in `launch` (for MSL:
//                      which buffer index holds which argument)
//
// Loading checks the format version, the JSON's structure, every plan, and
// every kernel file against its hash, so a corrupt bundle is an error naming
// what is wrong, never a launch of a bad kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "reference/ops/Status.h"
#include "runtime/Plan.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

inline constexpr int kBundleFormatVersion = 1;

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
  /// Identifies the compiler input and options that produced the variant;
  /// attn-compile reuses a variant whose key has not changed.
  std::string cacheKey;
  std::map<std::string, std::string> parameters;
  std::vector<Plan> plans;
  std::vector<BundleKernel> kernels;

  const Plan *findPlan(std::string_view function) const;
  const BundleKernel *findKernel(std::string_view symbol,
                                 std::string_view target) const;
  bool operator==(const BundleVariant &) const = default;
};

struct Bundle {
  int formatVersion = kBundleFormatVersion;
  std::string compiler;
  /// Where the bundle was loaded from or is written to.
  std::string directory;
  std::vector<BundleVariant> variants;

  /// The variant whose parameters include every key/value of `query`, or an
  /// error listing the variants there are.
  Result<const BundleVariant *>
  find(const std::map<std::string, std::string> &query) const;
  const BundleVariant *findByName(std::string_view name) const;

  /// Reads a kernel file and checks it against its hash.
  Result<std::string> readKernel(const BundleKernel &kernel) const;
};

/// Loads and checks `directory`/manifest.json and the kernel files.
Result<Bundle> loadBundle(const std::string &directory);

/// The manifest text of a bundle, and its parse (no file checks).
std::string manifestToJson(const Bundle &bundle);
Result<Bundle> manifestFromJson(std::string_view json,
                                const std::string &directory);

/// Writes manifest.json into bundle.directory (which must exist). Kernel
/// files are written by the caller (attn-compile) before the manifest, so a
/// manifest never names a file that is not there.
Status writeManifest(const Bundle &bundle);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_H
