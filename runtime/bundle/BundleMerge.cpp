//===- BundleMerge.cpp - One bundle from several ---------------------------===//

#include "runtime/bundle/BundleMerge.h"

#include "runtime/bundle/BundleWriter.h"

#include <map>
#include <set>
#include <utility>

namespace attn::runtime {

Result<MergedBundle> mergeBundles(const std::vector<Bundle> &inputs,
                                  std::string directory) {
  if (inputs.empty())
    return Status::error("a merge needs at least one bundle");
  MergedBundle merged;
  merged.bundle.compiler = inputs.front().compiler;
  merged.bundle.directory = std::move(directory);
  std::map<std::pair<std::string, int64_t>, size_t> index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Bundle &input = inputs[i];
    if (input.compiler != merged.bundle.compiler)
      return errorf("bundle ", input.directory, " was written by '",
                    input.compiler, "' and bundle ", inputs.front().directory,
                    " by '", merged.bundle.compiler,
                    "': bundles merge only from one attn-compile");
    for (const BundleVariant &v : input.variants) {
      auto [it, inserted] =
          index.try_emplace({v.name, v.subgroupSize},
                            merged.bundle.variants.size());
      if (inserted) {
        merged.bundle.variants.push_back(v);
        merged.source.push_back(i);
        continue;
      }
      if (merged.bundle.variants[it->second] != v)
        return errorf("bundles ", inputs[merged.source[it->second]].directory,
                      " and ", input.directory, " both have variant ", v.name,
                      " at subgroup size ", v.subgroupSize,
                      ", compiled differently (cache keys ",
                      merged.bundle.variants[it->second].cacheKey, " and ",
                      v.cacheKey, "): merge one of them only");
    }
  }
  return merged;
}

Status writeMergedBundle(const MergedBundle &merged,
                         const std::vector<Bundle> &inputs) {
  const Bundle &out = merged.bundle;
  Result<BundleLock> lock = BundleLock::acquire(out.directory);
  if (!lock)
    return lock.status();
  auto copyKernels = [&]() -> Status {
    std::set<std::string> written;
    for (size_t e = 0; e < out.variants.size(); ++e)
      for (const BundleKernel &k : out.variants[e].kernels) {
        if (!written.insert(k.file).second)
          continue;
        Result<std::string> bytes = inputs[merged.source[e]].readKernelFile(k);
        if (!bytes)
          return bytes.status();
        ATTN_RETURN_IF_ERROR(
            writeFileAtomically(out.directory, k.file, *bytes));
      }
    return writeManifest(out);
  };
  if (Status s = copyKernels(); !s) {
    if (lock->createdDirectory())
      (void)lock->removeCreatedDirectory();
    return s;
  }
  return removeUnnamedKernelFiles(out);
}

} // namespace attn::runtime
