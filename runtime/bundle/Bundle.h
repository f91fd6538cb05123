//===- Bundle.h - Ahead-of-time kernel bundles -----------------*- C++ -*-===//
//
// A bundle is what attn-compile writes and a serving engine loads at start-up:
// a directory with manifest.json and one file per kernel and target.
//
//   manifest.json (format 6; one record per line, so diffs read well, and
//   readers rely on that layout: the hash covers the text)
//     format_version   kBundleFormatVersion
//     compiler         the attn-compile version that wrote it
//     manifest_hash    (the third line) contentHash (BLAKE2b-256) of the
//                      manifest's text without this line and the
//                      signature's (the fourth, when signed): an edited
//                      or damaged manifest is refused
//     signature        when signed (attn-compile --sign-key): {"key": the
//                      Ed25519 public key, "ed25519": its signature of the
//                      manifest hash}, both hex (runtime/bundle/
//                      BundleSignature.h). In the manifest itself, so that
//                      the rename that replaces a manifest replaces its
//                      signature with it
//     kinds[]          every distinct kind of kernel once: [target ("spirv",
//                      "ptx", "msl", "cpu", "tt"), entry point, launch facts
//                      (target specific: workgroup size, subgroup size, ABI
//                      form, argument element sizes, ...; the launch
//                      bounds are the record's), the extension of
//                      its files' names (".spv", ".spv.zst"; "" where files
//                      are not named "kernels/<entry point>.<hash><ext>",
//                      as TT programs' are not)]
//     bound_shapes[]   every distinct shape of launch bounds once (the
//                      launch facts' "bounds", core/LaunchBounds.h, with
//                      every number null: PlanTemplate.h's splitNumbers)
//     bounds[]         every distinct set of launch bounds once: [index
//                      into bound_shapes[], its numbers in order] (they
//                      differ with a variant's sizes where the rest of a
//                      kind's facts do not)
//     kernels          every distinct kernel file's record once, as
//                      columns (one line each), kernel i being:
//       kinds[i]       its index into kinds[],
//       bounds[i]      its index into bounds[] (null: none),
//       hashes         the 43 characters from 43 * i: contentHash of the
//                      file as stored, in URL-safe base64 (hashToBase64;
//                      file names keep the hex),
//       symbols{"i"}   its symbol relative to the entry (a trailing "::"
//                      continues with the entry point; absent or "" is
//                      "./<entry point>::<entry point>"),
//       files{"i"}     its file, relative (present exactly when its kind
//                      has no extension)
//     plans[]          every distinct plan shape once: a host plan
//                      (runtime/bundle/Plan.h) with its numbers and element
//                      types left null (runtime/bundle/PlanTemplate.h)
//     parameter_keys[] every distinct list of parameter names once, in
//                      ascending order
//     variants[]       one record per variant, in order of name, an array
//                      [name, parameters, entries]:
//       name           the variant ("paged_attention.h32.g8...")
//       parameters     the variant's key/values (op, num_heads, dtype, ...),
//                      what the runtime matches a call against: [index into
//                      parameter_keys[], a string value per key in order]
//       entries[]      one per subgroup size, ascending, each an array
//                      [subgroup size (what the GPU kernels were built for:
//                        8, 16, 32, 64, ...; 0: no subgroup-dependent
//                        kernels, as for target tt),
//                       cache key (hash of what produced it, for
//                        incremental builds),
//                       index into plans[] (null for tt-only entries),
//                       the plan's values in PlanTemplate.h's order
//                        (after a variant's first entry, where shorter, an
//                        object of the positions that differ from the
//                        entry before, {"31": 16}; with "n", their number,
//                        where that differs, every position past the
//                        entry before's end given),
//                       its kernels as runs of indices into kernels:
//                        [first, count, first, count, ...]]
//                      A kernel's symbol is what plans launch, unique to the
//                      entry's compile ("<name>@<cache key>/<module>::
//                      <kernel>", so kernels of several bundles can share a
//                      device); the manifest writes that prefix as "./".
//
// An entry costs its cache key, its plan's numbers and its references,
// whatever the size of its kernels and plan: identical kernels, launch facts
// and plan shapes across subgroup sizes and variants are written once. In
// memory every entry (a variant at one subgroup size) holds its own copy of
// its parameters, plan and kernel records, with full symbols.
//
// Loading checks the format version, the manifest's own hash, its
// signature against the engine's BundleTrust (before anything else of the
// manifest is parsed, and before any kernel file is read), the JSON's
// structure, every plan, and every kernel file (a regular file) against its
// hash, so a corrupt bundle is an error naming what is wrong, never a launch
// of a bad kernel. A kernel file is read once into memory, checked, and
// those bytes are what a device loads. runtime/bundle/BundleWriter.h writes
// bundles.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLE_H
#define ATTN_RUNTIME_BUNDLE_H

#include "core/Status.h"
#include "runtime/bundle/BundleSignature.h"
#include "runtime/bundle/Plan.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// 2: one entry per subgroup size, one plan per entry, symbols unique per
/// compile. 3: kernel records and plans in shared tables, entries in a
/// canonical order. 4: BLAKE2b-256 hashes, Ed25519 signatures; a variant's
/// subgroup sizes share its record, plans shared as shapes with per-entry
/// values, kernel kinds (target, entry point, launch facts) in their own
/// table; a kernel's launch facts hold its launch bounds
/// (core/LaunchBounds.h), without which no plan launches it.
/// 5: the manifest hash over its text, kernel hashes in base64, launch
/// bounds as shapes with numbers; entries read when used (openManifest).
/// 6: the kernel table as columns, hashes one string; a variant record an
/// array, its parameters values for a shared list of keys; an entry's
/// kernels as runs.
inline constexpr int kBundleFormatVersion = 6;

struct BundleKernel {
  std::string symbol;
  std::string target;
  /// Relative to the bundle directory.
  std::string file;
  std::string entryPoint;
  /// contentHash of the file.
  std::string hash;
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

namespace detail {
struct UnreadEntries;
} // namespace detail

struct Bundle {
  int formatVersion = kBundleFormatVersion;
  std::string compiler;
  /// Where the bundle was loaded from or is written to.
  std::string directory;
  /// Every entry. In a bundle from openManifest, each holds only its name,
  /// subgroup size, cache key and parameters until entry() reads the rest.
  std::vector<BundleVariant> variants;
  /// The manifest's signature, when signed (checked when loaded).
  std::optional<ManifestSignature> signature;
  /// The manifest_hash of the manifest the bundle was read from; "" for a
  /// bundle made in memory.
  std::string readHash;
  /// What openManifest left unread: each entry's plan and kernel records.
  /// Null once every entry is whole (loadManifest, or a bundle made in
  /// memory).
  std::shared_ptr<detail::UnreadEntries> unread;

  /// The entry of variant `name` built for `subgroupSize`, or null.
  const BundleVariant *findEntry(std::string_view name,
                                 int64_t subgroupSize) const;

  /// `variants[i]` whole: itself where it is, else its plan and kernel
  /// records read from the manifest and checked the first time it is asked
  /// for (once, thread-safe), or the error that names what is wrong.
  Result<const BundleVariant *> entry(size_t i) const;
  Result<const BundleVariant *> entry(const BundleVariant &inVariants) const;

  /// Every kernel under `symbol` (any target): those of the entry whose
  /// compile made it ("<name>@<cache key>/...", read whole), or, for a
  /// symbol without an entry's prefix (a bundle made in memory), of every
  /// entry.
  Result<std::vector<const BundleKernel *>>
  kernelsOfSymbol(std::string_view symbol) const;

  /// The kinds of the bundle's kernels, each once, without reading an entry
  /// whole: a target, entry point and launch facts (all the launch
  /// facts a device's runsKernel reads; a kind's launch bounds may be
  /// missing), symbol, file and hash empty.
  std::vector<BundleKernel> kernelKinds() const;

  /// How many of the entries openManifest left unread entry() has read
  /// whole since (0 where every entry was whole from the start).
  size_t entriesRead() const;

  /// Reads a kernel file, checks it against its hash and returns the
  /// kernel (decompressed, for a ".zst" file: runtime/bundle/Compression.h).
  Result<std::string> readKernel(const BundleKernel &kernel) const;
  /// The file as stored, checked against its hash.
  Result<std::string> readKernelFile(const BundleKernel &kernel) const;
};

/// Loads and checks `directory`/manifest.json and the kernel files. An
/// attn-compile rewriting the bundle meanwhile removes, once its manifest
/// is in place, the files only the old one named: a kernel that fails to
/// read while the manifest has changed is retried with the new manifest
/// (up to kBundleLoadAttempts times), so a reader gets the old bundle or
/// the new one.
/// `trust` is checked first, before any kernel file is read.
Result<Bundle> loadBundle(const std::string &directory,
                          const BundleTrust &trust = {});

/// How often a reader tries a bundle that keeps changing under it.
inline constexpr int kBundleLoadAttempts = 8;

/// Whether `bundle.directory`/manifest.json is no longer the manifest
/// `bundle` was read from (rewritten, or gone).
bool manifestChanged(const Bundle &bundle);

/// Reads (no further than a bound: an endless file is refused) and parses
/// `directory`/manifest.json, checked against `trust`, without reading the
/// kernel files. Every entry is whole: its plan parsed and verified, its
/// kernel records built.
Result<Bundle> loadManifest(const std::string &directory,
                            const BundleTrust &trust = {});

/// What a serving engine opens: loadManifest's checks of the manifest as a
/// whole (format, hash, signature, JSON, the shared tables' shape, each
/// entry's name, subgroup size, cache key and parameters), but each entry's
/// plan and kernel records are read when Bundle::entry first asks for them.
/// Opening costs the manifest's parse, whatever the plans' size.
Result<Bundle> openManifest(const std::string &directory,
                            const BundleTrust &trust = {});

/// The manifest text of a bundle whose entries are whole, and its parse
/// (no file checks; the signature checked against `trust` before the rest
/// is parsed; entries whole unless `unread`, as openManifest leaves them).
std::string manifestToJson(const Bundle &bundle);
Result<Bundle> manifestFromJson(std::string_view json,
                                const std::string &directory,
                                const BundleTrust &trust = {},
                                bool unread = false);

/// Manifest `json` (any layout) as the writer lays it out, with its true
/// manifest_hash and its signature as given (members the writer does not
/// write are left out; a missing format_version or compiler is written
/// null); "" when `json` is not a JSON object. For tests and fuzzers that
/// edit manifests on purpose.
std::string restampManifest(std::string_view json);

/// The hash of the signed part of `bundle`'s manifest (all but
/// manifest_hash and signature), as the manifest records it.
std::string manifestHash(const Bundle &bundle);

/// Signs `bundle`'s manifest with `key` (replacing any signature). Sign
/// last: any change to the bundle after it voids the signature.
void signBundle(Bundle &bundle, const SecretKey &key);


} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_H
