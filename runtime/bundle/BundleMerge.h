//===- BundleMerge.h - One bundle from several ---------------*- C++ -*-===//
//
// A grid too large for one machine is compiled in shards (attn-compile
// --shard I/N, one deterministic slice of the grid's variants each), and the
// shards merged into the bundle the whole compile would have written, byte
// for byte: the manifest lists entries in a canonical order and names its
// kernel files by content, so the union of the shards' entries is the whole.
//
// The same merges bundles of different grids, as long as one attn-compile
// wrote them (cache keys and symbols carry the compiler's version). An
// entry (variant name and subgroup size) found in several inputs must be
// the same in each; else the merge is refused, naming both bundles.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLEMERGE_H
#define ATTN_RUNTIME_BUNDLEMERGE_H

#include "runtime/bundle/Bundle.h"

#include <string>
#include <vector>

namespace attn::runtime {

struct MergedBundle {
  Bundle bundle;
  /// For each entry of `bundle`, the input it was taken from (the first
  /// that has it).
  std::vector<size_t> source;
};

/// The entries of every input in one bundle at `directory` (nothing is
/// written). At least one input.
Result<MergedBundle> mergeBundles(const std::vector<Bundle> &inputs,
                                  std::string directory);

/// Writes `merged` to its directory as attn-compile writes a bundle
/// (BundleWriter.h): under the directory's lock, every kernel file copied
/// from its input (checked against its hash), then the manifest, then the
/// removal of files no entry names. A failure before the manifest leaves a
/// directory this call created removed, and any other as it was.
Status writeMergedBundle(const MergedBundle &merged,
                         const std::vector<Bundle> &inputs);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLEMERGE_H
