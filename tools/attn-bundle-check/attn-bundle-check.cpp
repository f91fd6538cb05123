//===- BundleCheck.cpp - attn-bundle-check: does a bundle load? ----------===//
//
//   attn-bundle-check [--trust-key NAME.pub]... [--require-signature] DIR
//
// Loads DIR as the runtime does (format, the manifest's hash, its signature
// against the trusted keys, structure, plans, every kernel file against its
// hash) and prints what it holds and who signed it. For
// serving engineers checking what they ship, and for the tests that kill and
// race attn-compile. No device needed (attn-vulkan-info --bundle also loads
// the kernels onto a Vulkan device). --version prints attn's version.
// Exit status: 0 when the bundle loads, 1 when it does not, 2 on bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "core/Version.h"
#include "runtime/bundle/Bundle.h"

#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace {

int usage(bool asked) {
  std::fprintf(asked ? stdout : stderr,
               "usage: attn-bundle-check [--trust-key NAME.pub]... "
               "[--require-signature] DIR | --version\n"
               "Loads the bundle DIR as the runtime does and prints what it "
               "holds.\n"
               "--trust-key          a public key whose signatures are "
               "trusted (repeatable);\n"
               "                     a bundle signed by another is refused\n"
               "--require-signature  refuse an unsigned bundle (needs "
               "--trust-key)\n");
  return asked ? 0 : 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("attn-bundle-check %s\n", attn::version());
    return 0;
  }
  std::vector<std::string> keyFiles;
  bool requireSignature = false;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help")
      return usage(true);
    if (arg == "--trust-key" && i + 1 < argc)
      keyFiles.push_back(argv[++i]);
    else if (arg == "--require-signature")
      requireSignature = true;
    else if (arg.starts_with("-") || !dir.empty())
      return usage(false);
    else
      dir = arg;
  }
  if (dir.empty())
    return usage(false);
  attn::Result<attn::runtime::BundleTrust> trust =
      attn::runtime::BundleTrust::fromKeyFiles(keyFiles, requireSignature);
  if (!trust) {
    std::fprintf(stderr, "attn-bundle-check: %s\n", trust.message().c_str());
    return 2;
  }
  attn::Result<attn::runtime::Bundle> bundle =
      attn::runtime::loadBundle(dir, *trust);
  if (!bundle) {
    std::fprintf(stderr, "attn-bundle-check: %s\n", bundle.message().c_str());
    return 1;
  }
  std::set<std::string> variants, targets, files;
  for (const attn::runtime::BundleVariant &v : bundle->variants) {
    variants.insert(v.name);
    for (const attn::runtime::BundleKernel &k : v.kernels) {
      targets.insert(k.target);
      files.insert(k.file);
    }
  }
  std::string targetList;
  for (const std::string &t : targets)
    targetList += (targetList.empty() ? "" : ", ") + t;
  std::string signer =
      bundle->signature
          ? ", signed by key " + bundle->signature->key.fingerprint()
          : std::string();
  std::printf("bundle %s: %zu variants (%zu entries), %zu kernel files, "
              "targets %s: loads%s\n",
              dir.c_str(), variants.size(), bundle->variants.size(),
              files.size(), targetList.empty() ? "none" : targetList.c_str(),
              signer.c_str());
  return 0;
}
