//===- attn-bundle.cpp - Merge bundles, and see where their bytes go -----===//
//
//   attn-bundle merge -o OUT [--sign-key NAME.key] IN...
//   attn-bundle show DIR
//   attn-bundle stats DIR
//   attn-bundle keygen -o NAME
//
// merge: the entries of every IN in one bundle OUT (runtime/bundle/
// BundleMerge.h), e.g. the shards of `attn-compile --shard I/N`, whose merge
// is byte for byte the bundle one attn-compile of the whole grid writes.
// OUT is written as attn-compile writes a bundle (a reader finds the old
// bundle or the new one); it may be one of the INs, to add to it. The merge
// is a new manifest: --sign-key signs it; without it, it is unsigned, but
// for a merge that leaves a signed IN's manifest as it was (its signature
// still holds, and is kept).
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
// keygen: a new Ed25519 key pair for signing bundles: NAME.key (the secret,
// mode 0600; for attn-compile --sign-key) and NAME.pub (for the engines'
// --trust-key). An existing file is never overwritten.
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
#include <optional>
#include <string>
#include <vector>

namespace {

namespace rt = attn::runtime;

constexpr const char *kUsage =
    "usage: attn-bundle merge -o OUT [--sign-key NAME.key] IN...\n"
    "       attn-bundle show DIR\n"
    "       attn-bundle stats DIR\n"
    "       attn-bundle keygen -o NAME\n"
    "       attn-bundle --version | --help\n"
    "\n"
    "merge  the entries of the bundles IN in one bundle OUT (shards of\n"
    "       attn-compile --shard I/N merge into the whole compile's bundle,\n"
    "       byte for byte); OUT may be one of the INs. Refused: bundles of\n"
    "       different attn-compile versions, and a variant two INs compiled\n"
    "       differently. --sign-key signs OUT's manifest; without it OUT\n"
    "       is unsigned (but keeps the signature of an IN it equals).\n"
    "show   every entry of DIR whole, as JSON: parameters, plan, kernels\n"
    "       (full symbols, files, launch facts); reads the manifest only.\n"
    "stats  the bytes of the manifest and of the kernel files, by target,\n"
    "       subgroup size, SPIR-V ABI form and kernel.\n"
    "keygen an Ed25519 key pair to sign bundles with: NAME.key (secret,\n"
    "       mode 0600, for --sign-key) and NAME.pub (for --trust-key).\n";

int usageError(const char *why) {
  std::fprintf(stderr, "attn-bundle: %s\n%s", why, kUsage);
  return 2;
}

/// A merge of `inputs` that leaves the manifest of a signed one as it was
/// keeps its signature, which still holds.
void keepSignature(rt::Bundle &merged, const std::vector<rt::Bundle> &inputs) {
  std::string hash = rt::manifestHash(merged);
  for (const rt::Bundle &input : inputs)
    if (input.signature && rt::manifestHash(input) == hash) {
      merged.signature = input.signature;
      return;
    }
}

int merge(int argc, char **argv) {
  std::string out, signKey;
  std::vector<std::string> dirs;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (arg == "--sign-key" && i + 1 < argc)
      signKey = argv[++i];
    else if (arg.starts_with("-"))
      return usageError(("merge: unknown option " + arg).c_str());
    else
      dirs.push_back(arg);
  }
  if (out.empty() || dirs.empty())
    return usageError("merge needs -o OUT and at least one IN");
  std::optional<rt::SecretKey> key;
  if (!signKey.empty()) {
    attn::Result<rt::SecretKey> read = rt::readSecretKey(signKey);
    if (!read) {
      std::fprintf(stderr, "attn-bundle: merge: --sign-key: %s\n",
                   read.message().c_str());
      return 1;
    }
    key = *read;
  }
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
  if (merged && key)
    rt::signBundle(merged->bundle, *key);
  else if (merged)
    keepSignature(merged->bundle, inputs);
  if (merged)
    if (attn::Status s = rt::writeMergedBundle(*merged, inputs); !s)
      merged = s;
  if (!merged) {
    std::fprintf(stderr, "attn-bundle: merge: %s\n", merged.message().c_str());
    return 1;
  }
  std::printf("attn-bundle: %zu entries of %zu bundles in %s%s\n",
              merged->bundle.variants.size(), inputs.size(), out.c_str(),
              merged->bundle.signature
                  ? (", signed by key " +
                     merged->bundle.signature->key.fingerprint())
                        .c_str()
                  : ", unsigned");
  return 0;
}

int keygen(int argc, char **argv) {
  if (argc != 2 || std::string(argv[0]) != "-o" || argv[1][0] == '\0')
    return usageError("keygen needs -o NAME");
  std::string name = argv[1];
  if (attn::Status s = rt::writeKeyPair(rt::generateSecretKey(), name); !s) {
    std::fprintf(stderr, "attn-bundle: keygen: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("attn-bundle: wrote %s.key (secret: keep it to the build) and "
              "%s.pub (for --trust-key)\n",
              name.c_str(), name.c_str());
  return 0;
}

/// Reads the one bundle directory of `argv` with `load` and prints what
/// `describe` makes of it (show, stats).
int report(const char *command, int argc, char **argv,
           attn::Result<rt::Bundle> (*load)(const std::string &,
                                            const rt::BundleTrust &),
           std::string (*describe)(const rt::Bundle &)) {
  if (argc != 1 || argv[0][0] == '-')
    return usageError(
        (std::string(command) + " takes one bundle directory").c_str());
  attn::Result<rt::Bundle> bundle = load(argv[0], {});
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
  if (command == "keygen")
    return keygen(argc - 2, argv + 2);
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
