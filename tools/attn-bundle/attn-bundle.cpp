//===- attn-bundle.cpp - Merge bundles, and see where their bytes go -----===//
//
//   attn-bundle merge -o OUT IN...
//   attn-bundle show DIR
//   attn-bundle stats DIR
//
// merge: the entries of every IN in one bundle OUT (runtime/bundle/
// BundleMerge.h), e.g. the shards of `attn-compile --shard I/N`, whose merge
// is byte for byte the bundle one attn-compile of the whole grid writes.
// OUT is written as attn-compile writes a bundle (a reader finds the old
// bundle or the new one); it may be one of the INs, to add to it.
//
// show: every entry whole (plan, kernels with full symbols and launch
// facts), as the runtime holds it: what the manifest's shared tables mean.
// It reads the manifest only, so it shows a bundle whose kernel files are
// damaged.
//
// stats: where a bundle's bytes go: the manifest, and the kernel files by
// target, by subgroup size, by SPIR-V ABI form and by kernel (entry point),
// each file counted once, under the first entry that names it.
//
// MLIR-free, as every tool that only reads bundles. Exit status: 0 on
// success, 1 when a bundle cannot be read, merged or written, 2 on bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "core/Version.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/bundle/BundleMerge.h"
#include "tools/attn-bundle/BundleReport.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace rt = attn::runtime;

constexpr const char *kUsage =
    "usage: attn-bundle merge -o OUT IN...\n"
    "       attn-bundle show DIR\n"
    "       attn-bundle stats DIR\n"
    "       attn-bundle --version | --help\n"
    "\n"
    "merge  the entries of the bundles IN in one bundle OUT (shards of\n"
    "       attn-compile --shard I/N merge into the whole compile's bundle,\n"
    "       byte for byte); OUT may be one of the INs. Refused: bundles of\n"
    "       different attn-compile versions, and a variant two INs compiled\n"
    "       differently.\n"
    "show   every entry of DIR whole, as JSON: parameters, plan, kernels\n"
    "       (full symbols, files, launch facts); reads the manifest only.\n"
    "stats  the bytes of the manifest and of the kernel files, by target,\n"
    "       subgroup size, SPIR-V ABI form and kernel.\n";

int usageError(const char *why) {
  std::fprintf(stderr, "attn-bundle: %s\n%s", why, kUsage);
  return 2;
}

int merge(int argc, char **argv) {
  std::string out;
  std::vector<std::string> dirs;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (arg.starts_with("-"))
      return usageError(("merge: unknown option " + arg).c_str());
    else
      dirs.push_back(arg);
  }
  if (out.empty() || dirs.empty())
    return usageError("merge needs -o OUT and at least one IN");
  std::vector<rt::Bundle> inputs;
  for (const std::string &dir : dirs) {
    attn::Result<rt::Bundle> bundle = rt::loadBundle(dir);
    if (!bundle) {
      std::fprintf(stderr, "attn-bundle: %s\n", bundle.message().c_str());
      return 1;
    }
    inputs.push_back(std::move(*bundle));
  }
  attn::Result<rt::MergedBundle> merged = rt::mergeBundles(inputs, out);
  if (merged)
    if (attn::Status s = rt::writeMergedBundle(*merged, inputs); !s)
      merged = s;
  if (!merged) {
    std::fprintf(stderr, "attn-bundle: merge: %s\n", merged.message().c_str());
    return 1;
  }
  std::printf("attn-bundle: %zu entries of %zu bundles in %s\n",
              merged->bundle.variants.size(), inputs.size(), out.c_str());
  return 0;
}

/// Reads the one bundle directory of `argv` with `load` and prints what
/// `describe` makes of it (show, stats).
int report(const char *command, int argc, char **argv,
           attn::Result<rt::Bundle> (*load)(const std::string &),
           std::string (*describe)(const rt::Bundle &)) {
  if (argc != 1 || argv[0][0] == '-')
    return usageError(
        (std::string(command) + " takes one bundle directory").c_str());
  attn::Result<rt::Bundle> bundle = load(argv[0]);
  if (!bundle) {
    std::fprintf(stderr, "attn-bundle: %s\n", bundle.message().c_str());
    return 1;
  }
  std::fputs(describe(*bundle).c_str(), stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string command = argc > 1 ? argv[1] : "";
  if (command == "--version") {
    std::printf("attn-bundle %s\n", attn::version());
    return 0;
  }
  if (command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "merge")
    return merge(argc - 2, argv + 2);
  // show reads the manifest only, so that it shows a bundle whose kernel
  // files are damaged; stats sizes the files, checked.
  if (command == "show")
    return report("show", argc - 2, argv + 2, rt::loadManifest,
                  attn::tools::expandedManifest);
  if (command == "stats")
    return report("stats", argc - 2, argv + 2, rt::loadBundle,
                  attn::tools::describeBundleBytes);
  return usageError(command.empty() ? "no command"
                                    : ("unknown command " + command).c_str());
}
