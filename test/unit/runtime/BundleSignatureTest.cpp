//===- BundleSignatureTest.cpp - Signed bundles and the engine's trust ----===//
//
// Key files, signing, and what loadBundle, loadManifest and Session::open
// refuse: a signature that does not hold (an edit re-stamped with a fresh
// manifest_hash), a key the engine does not trust, an unsigned bundle when
// signatures are required; each before any kernel file is read or loaded.
//
//===----------------------------------------------------------------------===//

#include "HostDevice.h"

#include "runtime/bundle/Bundle.h"
#include "runtime/bundle/BundleWriter.h"
#include "runtime/host/Session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

using namespace attn;
using namespace attn::runtime;
using ::testing::HasSubstr;

namespace {

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

SecretKey keyOf(uint8_t fill) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  return secretKeyFromSeed(seed);
}

/// A bundle of one variant and one kernel file, signed by keyOf(1).
class BundleSignatureTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = (std::filesystem::path(::testing::TempDir()) /
           ("attn-signature-" +
            std::string(::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name())))
              .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    writeFile(dir + "/k.spv", "copy");
    BundleVariant v;
    v.name = "cache";
    v.parameters = {{"op", "reshape_and_cache"}};
    v.kernels = {{"m::k", "spirv", "k.spv", "main", contentHash("copy"), "{}"}};
    bundle.compiler = "attn test";
    bundle.directory = dir;
    bundle.variants = {v};
    signBundle(bundle, signer);
    ASSERT_TRUE(writeManifest(bundle));
  }

  /// An attacker's edit of the manifest, its manifest_hash stamped again
  /// (as Bundle.h says to compute it), its signature left as it was.
  void tamper() {
    nlohmann::json j =
        nlohmann::json::parse(fileText(dir + "/manifest.json"));
    // The variant's parameters: [keys ["op"], its value].
    j["variants"][0][1][1] = "paged_attention";
    writeFile(dir + "/manifest.json", restampManifest(j.dump()));
  }

  BundleTrust trusting(const SecretKey &key, bool require = true) {
    return BundleTrust{{key.publicKey()}, require};
  }

  std::string where() const { return "bundle " + dir + ": manifest.json"; }

  std::string dir;
  SecretKey signer = keyOf(1);
  Bundle bundle;
};

} // namespace

TEST(BundleKeys, KeyFilesRoundTripAndTheSecretIsPrivate) {
  std::string name = ::testing::TempDir() + "/attn-keygen-test";
  std::filesystem::remove(name + ".key");
  std::filesystem::remove(name + ".pub");
  SecretKey key = generateSecretKey();
  ASSERT_TRUE(writeKeyPair(key, name));
  struct stat st;
  ASSERT_EQ(::stat((name + ".key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Result<SecretKey> secret = readSecretKey(name + ".key");
  ASSERT_TRUE(secret) << secret.message();
  EXPECT_EQ(secret->bytes, key.bytes);
  Result<PublicKey> pub = readPublicKey(name + ".pub");
  ASSERT_TRUE(pub) << pub.message();
  EXPECT_EQ(*pub, key.publicKey());
  // A key is never overwritten.
  Status again = writeKeyPair(generateSecretKey(), name);
  ASSERT_FALSE(again);
  EXPECT_THAT(again.message(), HasSubstr("a key is never overwritten"));
  EXPECT_EQ(readSecretKey(name + ".key")->bytes, key.bytes);
  // Nor is a public key that another secret would not match.
  std::filesystem::remove(name + ".key");
  Status pubThere = writeKeyPair(generateSecretKey(), name);
  ASSERT_FALSE(pubThere);
  EXPECT_THAT(pubThere.message(), HasSubstr(".pub: File exists"));
  EXPECT_FALSE(std::filesystem::exists(name + ".key"));
}

TEST(BundleKeys, BadKeyFilesAreNamed) {
  std::string path = ::testing::TempDir() + "/attn-bad.pub";
  writeFile(path, "attn-ed25519-public 12zz\n");
  EXPECT_EQ(readPublicKey(path).message(),
            "public key file " + path +
                ": expected a public key as 64 hex digits, got \"12zz\"");
  writeFile(path, "ssh-ed25519 AAAA\n");
  EXPECT_EQ(readPublicKey(path).message(),
            "public key file " + path +
                " does not start with \"attn-ed25519-public \" (make keys "
                "with attn-bundle keygen)");
  // The public half of a secret key file must be the secret's.
  std::string secret = ::testing::TempDir() + "/attn-bad.key";
  SecretKey a = keyOf(3), b = keyOf(4);
  std::copy(b.bytes.begin() + 32, b.bytes.end(), a.bytes.begin() + 32);
  std::filesystem::remove(secret);
  std::filesystem::remove(::testing::TempDir() + "/attn-bad.pub");
  ASSERT_TRUE(writeKeyPair(a, ::testing::TempDir() + "/attn-bad"));
  EXPECT_THAT(readSecretKey(secret).message(),
              HasSubstr("its public half does not belong to its secret half"));
  EXPECT_EQ(readPublicKey(::testing::TempDir() + "/no-such.pub").message(),
            "public key file: " + ::testing::TempDir() +
                "/no-such.pub: cannot open for reading: No such file or "
                "directory");
}

TEST_F(BundleSignatureTest, SignedBundleLoadsWithItsKey) {
  Result<Bundle> loaded = loadBundle(dir, trusting(signer));
  ASSERT_TRUE(loaded) << loaded.message();
  ASSERT_TRUE(loaded->signature);
  EXPECT_EQ(loaded->signature->key, signer.publicKey());
  EXPECT_EQ(loaded->variants, bundle.variants);
  // Without keys a signature still has to hold; it holds.
  EXPECT_TRUE(loadBundle(dir));
  // The manifest round-trips with its signature.
  EXPECT_EQ(manifestToJson(*loaded), manifestToJson(bundle));
}

TEST_F(BundleSignatureTest, ARestampedEditIsRefusedBySignature) {
  tamper();
  std::string message = where() + " has a bad signature (key " +
                        signer.publicKey().fingerprint() +
                        "): the manifest was changed after it was signed";
  EXPECT_EQ(loadBundle(dir, trusting(signer)).message(), message);
  EXPECT_EQ(loadManifest(dir, trusting(signer, false)).message(), message);
  EXPECT_EQ(loadBundle(dir).message(), message);
}

// The signature is checked before any kernel file is read: with the kernel
// file damaged too, the signature is what the error names.
TEST_F(BundleSignatureTest, SignatureIsCheckedBeforeKernelFiles) {
  tamper();
  writeFile(dir + "/k.spv", "damaged");
  EXPECT_THAT(loadBundle(dir, trusting(signer)).message(),
              HasSubstr("has a bad signature"));
}

TEST_F(BundleSignatureTest, AnUntrustedKeyIsRefused) {
  SecretKey other = keyOf(2);
  EXPECT_EQ(loadBundle(dir, trusting(other)).message(),
            where() + " is signed by key " + signer.publicKey().fingerprint() +
                ", which is not trusted (trusted: " +
                other.publicKey().fingerprint() + ")");
  // Re-signed by the attacker's own key: not trusted either.
  tamper();
  Result<Bundle> edited = loadManifest(dir, {});
  ASSERT_FALSE(edited);
  bundle.variants[0].parameters["op"] = "paged_attention";
  signBundle(bundle, other);
  ASSERT_TRUE(writeManifest(bundle));
  EXPECT_TRUE(loadBundle(dir));
  EXPECT_THAT(loadBundle(dir, trusting(signer)).message(),
              HasSubstr("is signed by key " + other.publicKey().fingerprint() +
                        ", which is not trusted"));
}

TEST_F(BundleSignatureTest, UnsignedIsRefusedWhenSignaturesAreRequired) {
  bundle.signature.reset();
  ASSERT_TRUE(writeManifest(bundle));
  EXPECT_TRUE(loadBundle(dir, trusting(signer, /*require=*/false)));
  EXPECT_EQ(loadBundle(dir, trusting(signer)).message(),
            where() + " is not signed, and signatures are required (sign the "
                      "bundle: attn-compile --sign-key)");
  Result<BundleTrust> noKeys = BundleTrust::fromKeyFiles({}, true);
  ASSERT_FALSE(noKeys);
  EXPECT_EQ(noKeys.message(),
            "signatures are required, but no key is trusted (give the public "
            "keys that sign the bundles)");
}

TEST_F(BundleSignatureTest, SignatureFieldsAreChecked) {
  std::string text = fileText(dir + "/manifest.json");
  std::string key = signer.publicKey().hex();
  text.replace(text.find(key), key.size(), key.substr(0, 10));
  writeFile(dir + "/manifest.json", text);
  EXPECT_EQ(loadBundle(dir).message(),
            where() + ", signature: expected a public key as 64 hex digits, "
                      "got \"" +
                key.substr(0, 10) + "\"");
}

/// A device that counts, where the test can see it after the device is
/// gone, every kernel loaded on it.
class CountingDevice : public test::HostDevice {
public:
  explicit CountingDevice(int &loads) : loads_(loads) {}
  Status loadKernelCode(const Bundle &bundle, const BundleKernel &kernel,
                        std::string_view bytes) override {
    ++loads_;
    return HostDevice::loadKernelCode(bundle, kernel, bytes);
  }

private:
  int &loads_;
};

// Session::open refuses a bundle its trust refuses, and no kernel of it is
// loaded on the device (counted); the same bundle with the right key opens.
TEST_F(BundleSignatureTest, SessionRefusesBeforeLoadingAnyKernel) {
  int loads = 0;
  tamper();
  Result<std::unique_ptr<Session>> session =
      Session::open(DeviceType::VULKAN, std::make_unique<CountingDevice>(loads),
                    {dir}, trusting(signer));
  ASSERT_FALSE(session);
  EXPECT_THAT(session.message(), HasSubstr("has a bad signature"));
  Result<std::unique_ptr<Session>> untrusted =
      Session::open(DeviceType::VULKAN, std::make_unique<CountingDevice>(loads),
                    {dir}, trusting(keyOf(2)));
  ASSERT_FALSE(untrusted);
  EXPECT_THAT(untrusted.message(), HasSubstr("which is not trusted"));
  EXPECT_EQ(loads, 0);

  signBundle(bundle, signer);
  ASSERT_TRUE(writeManifest(bundle));
  Result<std::unique_ptr<Session>> opened =
      Session::open(DeviceType::VULKAN, std::make_unique<CountingDevice>(loads),
                    {dir}, trusting(signer));
  ASSERT_TRUE(opened) << opened.message();
}
