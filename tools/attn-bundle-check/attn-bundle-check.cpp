//===- BundleCheck.cpp - attn-bundle-check: does a bundle load? ----------===//
//
//   attn-bundle-check DIR
//
// Loads DIR as the runtime does (format, the manifest's hash, structure,
// plans, every kernel file against its hash) and prints what it holds. For
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

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("attn-bundle-check %s\n", attn::version());
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    std::FILE *out = argc == 2 ? stdout : stderr;
    std::fprintf(out, "usage: attn-bundle-check DIR | --version\nLoads the "
                      "bundle DIR as the runtime does and prints what it "
                      "holds.\n");
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  attn::Result<attn::runtime::Bundle> bundle =
      attn::runtime::loadBundle(argv[1]);
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
  std::printf("bundle %s: %zu variants (%zu entries), %zu kernel files, "
              "targets %s: loads\n",
              argv[1], variants.size(), bundle->variants.size(), files.size(),
              targetList.empty() ? "none" : targetList.c_str());
  return 0;
}
