//===- BundleSignature.cpp - Keys, hashes and signatures of bundles -------===//

#include "runtime/bundle/BundleSignature.h"

#include "core/FileReader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sodium.h>
#include <unistd.h>

namespace attn::runtime {

namespace {

/// libsodium's one-time set-up (thread-safe, idempotent); the generator of
/// keys needs it.
void initSodium() {
  static const int status = sodium_init();
  (void)status;
}

std::string toHex(const uint8_t *bytes, size_t size) {
  std::string hex(2 * size + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), bytes, size);
  hex.pop_back();
  return hex;
}

/// Exactly `N` bytes from 2N lowercase or uppercase hex digits.
template <size_t N>
Result<std::array<uint8_t, N>> fromHex(std::string_view hex, const char *what) {
  std::array<uint8_t, N> bytes{};
  size_t size = 0;
  const char *end = nullptr;
  if (hex.size() != 2 * N ||
      sodium_hex2bin(bytes.data(), N, hex.data(), hex.size(), nullptr, &size,
                     &end) != 0 ||
      size != N || end != hex.data() + hex.size())
    return errorf("expected ", what, " as ", 2 * N, " hex digits, got \"",
                  hex.substr(0, 2 * N + 8), hex.size() > 2 * N + 8 ? "..." : "",
                  "\"");
  return bytes;
}

constexpr std::string_view kPublicTag = "attn-ed25519-public ";
constexpr std::string_view kSecretTag = "attn-ed25519-secret ";

/// The hex digits of the key file at `path`: its one line after `tag`.
Result<std::string> readKeyLine(const std::string &path, std::string_view tag,
                                const char *what) {
  Result<std::string> text = readFileBounded(path, 4096, what);
  if (!text)
    return errorf(what, ": ", text.message());
  std::string line = *text;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  if (!line.starts_with(tag))
    return errorf(what, " ", path, " does not start with \"", tag,
                  "\" (make keys with attn-bundle keygen)");
  return line.substr(tag.size());
}

/// Writes `text` to a new file `path` with `mode`; an existing file is
/// never replaced (a key would be lost).
Status writeNewFile(const std::string &path, const std::string &text,
                    mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return errorf("cannot create ", path, ": ", std::strerror(errno),
                  errno == EEXIST ? " (a key is never overwritten)" : "");
  // The umask may have cleared bits of `mode`, never added any; set it
  // exactly.
  bool ok = ::fchmod(fd, mode) == 0 &&
            ::write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size());
  int error = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok)
    return errorf("cannot write ", path, ": ", std::strerror(error));
  return Status::ok();
}

/// What a manifest signature signs: a domain tag, then the manifest's hash.
std::string signedMessage(std::string_view manifestHash) {
  return "attn bundle manifest " + std::string(manifestHash);
}

} // namespace

std::string contentHash(std::string_view bytes) {
  std::array<uint8_t, 32> digest;
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const unsigned char *>(bytes.data()),
                     bytes.size(), nullptr, 0);
  return toHex(digest.data(), digest.size());
}

namespace {
constexpr int kHashBase64 = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
} // namespace

std::string hashToBase64(std::string_view hexHash) {
  Result<std::array<uint8_t, 32>> bytes = fromHex<32>(hexHash, "a hash");
  if (!bytes)
    return std::string(hexHash);
  std::string text(sodium_base64_ENCODED_LEN(32, kHashBase64), '\0');
  sodium_bin2base64(text.data(), text.size(), bytes->data(), bytes->size(),
                    kHashBase64);
  text.resize(std::char_traits<char>::length(text.c_str()));
  return text;
}

Result<std::string> hashFromBase64(std::string_view base64) {
  std::array<uint8_t, 32> bytes{};
  size_t size = 0;
  const char *end = nullptr;
  if (base64.size() != kHashBase64Length ||
      sodium_base642bin(bytes.data(), bytes.size(), base64.data(),
                        base64.size(), nullptr, &size, &end,
                        kHashBase64) != 0 ||
      size != bytes.size() || end != base64.data() + base64.size())
    return errorf("expected a hash as 43 URL-safe base64 characters, got \"",
                  base64.substr(0, 60), "\"");
  std::string hex = toHex(bytes.data(), bytes.size());
  if (hashToBase64(hex) != base64)
    return errorf("hash \"", base64, "\" is not spelled canonically");
  return hex;
}

std::string PublicKey::hex() const { return toHex(bytes.data(), bytes.size()); }

PublicKey SecretKey::publicKey() const {
  PublicKey key;
  crypto_sign_ed25519_sk_to_pk(key.bytes.data(), bytes.data());
  return key;
}

SecretKey::~SecretKey() { sodium_memzero(bytes.data(), bytes.size()); }

Result<PublicKey> publicKeyFromHex(std::string_view hex) {
  Result<std::array<uint8_t, 32>> bytes = fromHex<32>(hex, "a public key");
  if (!bytes)
    return bytes.status();
  return PublicKey{*bytes};
}

SecretKey generateSecretKey() {
  initSodium();
  SecretKey key;
  std::array<uint8_t, 32> pub;
  crypto_sign_keypair(pub.data(), key.bytes.data());
  return key;
}

SecretKey secretKeyFromSeed(const std::array<uint8_t, 32> &seed) {
  SecretKey key;
  std::array<uint8_t, 32> pub;
  crypto_sign_seed_keypair(pub.data(), key.bytes.data(), seed.data());
  return key;
}

Status writeKeyPair(const SecretKey &key, const std::string &name) {
  // Both files are new: a NAME.pub left from another key would not match.
  if (::access((name + ".pub").c_str(), F_OK) == 0)
    return errorf("cannot create ", name, ".pub: File exists (a key is never "
                  "overwritten)");
  std::string secret = std::string(kSecretTag) +
                       toHex(key.bytes.data(), key.bytes.size()) + "\n";
  Status s = writeNewFile(name + ".key", secret, 0600);
  sodium_memzero(secret.data(), secret.size());
  ATTN_RETURN_IF_ERROR(s);
  return writeNewFile(name + ".pub",
                      std::string(kPublicTag) + key.publicKey().hex() + "\n",
                      0644);
}

Result<PublicKey> readPublicKey(const std::string &path) {
  Result<std::string> hex = readKeyLine(path, kPublicTag, "public key file");
  if (!hex)
    return hex.status();
  Result<PublicKey> key = publicKeyFromHex(*hex);
  if (!key)
    return errorf("public key file ", path, ": ", key.message());
  return key;
}

Result<SecretKey> readSecretKey(const std::string &path) {
  Result<std::string> hex = readKeyLine(path, kSecretTag, "secret key file");
  if (!hex)
    return hex.status();
  Result<std::array<uint8_t, 64>> bytes = fromHex<64>(*hex, "a secret key");
  sodium_memzero(hex->data(), hex->size());
  if (!bytes)
    return errorf("secret key file ", path, ": expected 128 hex digits");
  SecretKey key;
  key.bytes = *bytes;
  sodium_memzero(bytes->data(), bytes->size());
  // The second half is the public key of the first: a damaged file would
  // sign with a key nobody can verify.
  std::array<uint8_t, 32> pub, seedKey;
  std::array<uint8_t, 64> again;
  crypto_sign_ed25519_sk_to_seed(seedKey.data(), key.bytes.data());
  crypto_sign_seed_keypair(pub.data(), again.data(), seedKey.data());
  bool consistent = sodium_memcmp(again.data(), key.bytes.data(), 64) == 0;
  sodium_memzero(seedKey.data(), seedKey.size());
  sodium_memzero(again.data(), again.size());
  if (!consistent)
    return errorf("secret key file ", path,
                  ": its public half does not belong to its secret half "
                  "(the file is damaged)");
  return key;
}

std::string ManifestSignature::valueHex() const {
  return toHex(value.data(), value.size());
}

Result<ManifestSignature> manifestSignatureFromHex(std::string_view keyHex,
                                                   std::string_view valueHex) {
  Result<PublicKey> key = publicKeyFromHex(keyHex);
  if (!key)
    return key.status();
  Result<std::array<uint8_t, 64>> value =
      fromHex<64>(valueHex, "an Ed25519 signature");
  if (!value)
    return value.status();
  return ManifestSignature{*key, *value};
}

ManifestSignature signManifestHash(std::string_view manifestHash,
                                   const SecretKey &key) {
  std::string message = signedMessage(manifestHash);
  ManifestSignature signature;
  signature.key = key.publicKey();
  crypto_sign_detached(signature.value.data(), nullptr,
                       reinterpret_cast<const unsigned char *>(message.data()),
                       message.size(), key.bytes.data());
  return signature;
}

bool verifyManifestHash(std::string_view manifestHash,
                        const ManifestSignature &signature) {
  std::string message = signedMessage(manifestHash);
  // libsodium refuses small-order keys and non-canonical signatures, so no
  // crafted key verifies every message.
  return crypto_sign_verify_detached(
             signature.value.data(),
             reinterpret_cast<const unsigned char *>(message.data()),
             message.size(), signature.key.bytes.data()) == 0;
}

Result<BundleTrust>
BundleTrust::fromKeyFiles(const std::vector<std::string> &keyFiles,
                          bool requireSignature) {
  BundleTrust trust;
  trust.requireSignature = requireSignature;
  for (const std::string &file : keyFiles) {
    Result<PublicKey> key = readPublicKey(file);
    if (!key)
      return key.status();
    trust.trustedKeys.push_back(*key);
  }
  if (requireSignature && trust.trustedKeys.empty())
    return Status::error("signatures are required, but no key is trusted "
                         "(give the public keys that sign the bundles)");
  return trust;
}

Status checkManifestTrust(const std::string &where,
                          std::string_view manifestHash,
                          const ManifestSignature *signature,
                          const BundleTrust &trust) {
  if (!signature) {
    if (trust.requireSignature)
      return errorf(where, " is not signed, and signatures are required "
                           "(sign the bundle: attn-compile --sign-key)");
    return Status::ok();
  }
  if (trust.requireSignature && trust.trustedKeys.empty())
    return errorf(where, ": signatures are required, but no key is trusted");
  bool trusted = trust.trustedKeys.empty();
  std::string trustedList;
  for (const PublicKey &key : trust.trustedKeys) {
    trusted |= key == signature->key;
    trustedList += (trustedList.empty() ? "" : ", ") + key.fingerprint();
  }
  if (!trusted)
    return errorf(where, " is signed by key ", signature->key.fingerprint(),
                  ", which is not trusted (trusted: ", trustedList, ")");
  // Without trusted keys a signature still has to hold: it then shows that
  // the manifest is whole, not who wrote it.
  if (!verifyManifestHash(manifestHash, *signature))
    return errorf(where, " has a bad signature (key ",
                  signature->key.fingerprint(),
                  "): the manifest was changed after it was signed");
  return Status::ok();
}

} // namespace attn::runtime
