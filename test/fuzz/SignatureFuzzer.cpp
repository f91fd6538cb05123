//===- SignatureFuzzer.cpp - Fuzz target: a manifest's signature check ----===//
//
// Input: one line of trust, then a manifest —
//
//   signer other require <64 hex digits> ...
//   <manifest.json>
//
// Trust tokens: "signer" trusts the key that signed the reference manifest,
// "other" a key that signed nothing, "require" sets requireSignature, 64 hex
// digits trust that public key (any 32 bytes, small-order points
// included). A manifest whose "manifest_hash" is "restamp" gets its true
// hash, so that edits reach the signature check behind it.
//
// The signer has signed one manifest only: the reference (a one-entry
// bundle, built here). The property: manifestFromJson never accepts a
// signed manifest whose content is not the reference's, nor one signed by
// any other key, nor one whose key the trust leaves out, nor an unsigned
// one when signatures are required; and it never crashes.
//
// ATTN_FUZZ_WRITE_SEEDS=DIR attn-fuzz-signature writes the seeds (the
// reference accepted, tampered, unsigned, untrusted, a small-order key) to
// DIR and exits.
//
//===----------------------------------------------------------------------===//

#include "runtime/bundle/Bundle.h"
#include "test/fuzz/Restamp.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

using namespace attn;
using namespace attn::runtime;

namespace {

SecretKey keyOf(uint8_t fill) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  return secretKeyFromSeed(seed);
}

const SecretKey &signer() {
  static const SecretKey key = keyOf(1);
  return key;
}

const PublicKey &otherKey() {
  static const PublicKey key = keyOf(2).publicKey();
  return key;
}

/// The one manifest the signer signed.
const Bundle &reference() {
  static const Bundle bundle = [] {
    Bundle b;
    b.compiler = "attn-compile fuzz";
    b.directory = "fuzz";
    BundleVariant v;
    v.name = "merge_states.h4.d32.f32";
    v.cacheKey = contentHash("cache key");
    v.parameters = {{"op", "merge_states"}, {"num_heads", "4"}};
    v.kernels.push_back({entrySymbolPrefix(v) + "m::k", "spirv",
                         "kernels/k.spv", "main", contentHash("kernel"),
                         R"({"subgroup_size":8})"});
    b.variants.push_back(std::move(v));
    signBundle(b, signer());
    return b;
  }();
  return bundle;
}

/// The trust of the input's first line.
BundleTrust trustOf(std::string_view line) {
  BundleTrust trust;
  std::istringstream tokens{std::string(line)};
  for (std::string token; tokens >> token;) {
    if (token == "signer")
      trust.trustedKeys.push_back(signer().publicKey());
    else if (token == "other")
      trust.trustedKeys.push_back(otherKey());
    else if (token == "require")
      trust.requireSignature = true;
    else if (Result<PublicKey> key = publicKeyFromHex(token))
      trust.trustedKeys.push_back(*key);
  }
  return trust;
}

/// The manifest with "manifest_hash": "restamp" stamped, else as it is.
std::string restamped(std::string_view text) {
  std::string stamped = attn::fuzz::restamp(text);
  return stamped.empty() ? std::string(text) : stamped;
}

[[noreturn]] void violated(const char *what) {
  std::fprintf(stderr, "signature: accepted %s\n", what);
  std::abort();
}

void writeSeed(const std::string &dir, const char *name,
               const std::string &trust, const std::string &manifest) {
  std::ofstream(dir + "/" + name, std::ios::binary)
      << trust << "\n" << manifest;
}

/// Gives the first variant of manifest `j` 64 heads.
void claimSixtyFourHeads(nlohmann::json &j) {
  nlohmann::json &parameters = j["variants"][0][1];
  const nlohmann::json &keys = j["parameter_keys"][parameters[0].get<size_t>()];
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == "num_heads")
      parameters[i + 1] = "64";
}

/// The reference's manifest as JSON, changed by `edit` and re-stamped.
std::string edited(void (*edit)(nlohmann::json &)) {
  nlohmann::json j = nlohmann::json::parse(manifestToJson(reference()));
  edit(j);
  j["manifest_hash"] = "restamp";
  return j.dump(1);
}

void writeSeeds(const std::string &dir) {
  std::string signedText = manifestToJson(reference());
  writeSeed(dir, "signed.sig", "signer require", signedText);
  writeSeed(dir, "signed-no-trust.sig", "", signedText);
  writeSeed(dir, "untrusted.sig", "other require", signedText);
  std::string tampered = edited(claimSixtyFourHeads);
  writeSeed(dir, "tampered.sig", "signer", tampered);
  writeSeed(dir, "tampered-no-trust.sig", "", tampered);
  writeSeed(dir, "unsigned.sig", "signer require",
            edited([](nlohmann::json &j) { j.erase("signature"); }));
  // The identity point as the key and (R = identity, S = 0) as the
  // signature: a verifier that accepts small-order keys accepts it for any
  // message.
  std::string identity = "01" + std::string(62, '0');
  writeSeed(dir, "small-order-key.sig", identity + " require",
            edited([](nlohmann::json &j) {
              std::string key = "01" + std::string(62, '0');
              j["signature"] = {{"key", key},
                                {"ed25519", key + std::string(64, '0')}};
              claimSixtyFourHeads(j);
            }));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *dir = std::getenv("ATTN_FUZZ_WRITE_SEEDS")) {
    writeSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  size_t eol = text.find('\n');
  BundleTrust trust = trustOf(text.substr(0, eol));
  std::string manifest =
      restamped(eol == std::string_view::npos ? std::string_view()
                                              : text.substr(eol + 1));
  static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE");
  Result<Bundle> bundle = manifestFromJson(manifest, "fuzz", trust);
  if (verbose)
    std::fprintf(stderr, "signature: %s\n",
                 bundle ? "accepted" : bundle.message().c_str());
  if (!bundle)
    return 0;
  if (trust.requireSignature && !bundle->signature)
    violated("an unsigned manifest, with signatures required");
  if (!bundle->signature)
    return 0;
  const ManifestSignature &sig = *bundle->signature;
  if (!(sig.key == signer().publicKey()))
    violated("a signature by a key that signed nothing");
  if (!trust.trustedKeys.empty() &&
      std::find(trust.trustedKeys.begin(), trust.trustedKeys.end(), sig.key) ==
          trust.trustedKeys.end())
    violated("a signature by an untrusted key");
  if (manifestHash(*bundle) != manifestHash(reference()))
    violated("a signed manifest that is not the one signed");
  return 0;
}
