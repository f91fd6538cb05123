//===- BundleSignature.h - Keys, hashes, signatures --------*- C++ -*-===//
//
// A bundle is code a device runs, so an engine may want to run only bundles
// its own build signed. The primitives come from libsodium: BLAKE2b-256
// (crypto_generichash) hashes kernel files and the manifest, Ed25519
// (crypto_sign) signs the manifest, whose hashes name every kernel file's
// content. DESIGN.md ("Signed bundles") says what that protects and what not.
//
// Key files are one line of text each, so that they can be read, diffed and
// passed through configuration systems:
//   NAME.pub  "attn-ed25519-public <64 hex digits>"   (the 32-byte key)
//   NAME.key  "attn-ed25519-secret <128 hex digits>"  (libsodium's 64-byte
//             secret key: seed, then public key), mode 0600
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLE_BUNDLESIGNATURE_H
#define ATTN_RUNTIME_BUNDLE_BUNDLESIGNATURE_H

#include "core/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// BLAKE2b-256 of `bytes`, as 64 lowercase hex digits: the one content hash
/// of bundles (kernel files, their content-addressed names, the manifest,
/// attn-compile's cache keys).
std::string contentHash(std::string_view bytes);

/// A contentHash as a manifest writes it: its 32 bytes in URL-safe base64
/// without padding (43 characters, two thirds of the hex), and back; the
/// error says what is wrong (only the canonical spelling is accepted, so
/// that one hash has one spelling). A string that is not 64 hex digits is
/// returned as it is, for the reader to refuse by name.
std::string hashToBase64(std::string_view hexHash);
inline constexpr size_t kHashBase64Length = 43;
Result<std::string> hashFromBase64(std::string_view base64);

/// An Ed25519 public key.
struct PublicKey {
  std::array<uint8_t, 32> bytes{};

  /// 64 hex digits.
  std::string hex() const;
  /// The first 16 hex digits, for messages.
  std::string fingerprint() const { return hex().substr(0, 16); }
  bool operator==(const PublicKey &) const = default;
};

/// An Ed25519 secret key (libsodium's form: seed, then public key), wiped
/// when destroyed.
struct SecretKey {
  std::array<uint8_t, 64> bytes{};

  PublicKey publicKey() const;
  SecretKey() = default;
  SecretKey(const SecretKey &) = default;
  SecretKey &operator=(const SecretKey &) = default;
  ~SecretKey();
};

/// A public key from 64 hex digits; the error says what is wrong.
Result<PublicKey> publicKeyFromHex(std::string_view hex);

/// A new random key pair.
SecretKey generateSecretKey();
/// The key pair of a 32-byte seed (deterministic: for tests).
SecretKey secretKeyFromSeed(const std::array<uint8_t, 32> &seed);

/// Writes `name`.key (mode 0600) and `name`.pub; refused when either exists.
Status writeKeyPair(const SecretKey &key, const std::string &name);

/// Reads a key file written by writeKeyPair; errors name the file.
Result<PublicKey> readPublicKey(const std::string &path);
Result<SecretKey> readSecretKey(const std::string &path);

/// An Ed25519 signature of a manifest, with the key that made it.
struct ManifestSignature {
  PublicKey key;
  std::array<uint8_t, 64> value{};

  /// The signature as 128 hex digits.
  std::string valueHex() const;
  bool operator==(const ManifestSignature &) const = default;
};

/// A signature from the hex digits of its key and of its value.
Result<ManifestSignature> manifestSignatureFromHex(std::string_view keyHex,
                                                   std::string_view valueHex);

/// Signs the manifest whose hash (contentHash of its signed part) is
/// `manifestHash`.
ManifestSignature signManifestHash(std::string_view manifestHash,
                                   const SecretKey &key);

/// Whether `signature` is `signature.key`'s signature of `manifestHash`.
bool verifyManifestHash(std::string_view manifestHash,
                        const ManifestSignature &signature);

/// Which bundles an engine runs. With no trusted keys and no requirement,
/// any bundle whose hashes hold (a signature present must still verify).
/// With keys, a signed bundle must be signed by one of them. With
/// requireSignature (which needs keys), an unsigned bundle is refused.
struct BundleTrust {
  std::vector<PublicKey> trustedKeys;
  bool requireSignature = false;

  /// Reads each public key file of `keyFiles` into a trust.
  static Result<BundleTrust>
  fromKeyFiles(const std::vector<std::string> &keyFiles, bool requireSignature);
};

/// Checks the signature of the manifest at `where` (a bundle's
/// manifest.json, for messages) whose content hashes to `manifestHash`
/// against `trust`: all of it before any kernel file is read.
Status checkManifestTrust(const std::string &where,
                          std::string_view manifestHash,
                          const ManifestSignature *signature,
                          const BundleTrust &trust);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_BUNDLESIGNATURE_H
