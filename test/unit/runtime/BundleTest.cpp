//===- BundleTest.cpp - Bundle manifests and their failure modes ---------===//

#include "runtime/bundle/Bundle.h"
#include "runtime/bundle/BundleMerge.h"
#include "runtime/bundle/BundleSignature.h"
#include "runtime/bundle/BundleWriter.h"
#include "runtime/executor/BundleExecutor.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

using namespace attn;
using namespace attn::runtime;

namespace {

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

/// Replaces `from` by `to` in DIR/manifest.json and stamps the manifest's
/// hash again, as a deliberate editor would: the checks after the hash must
/// catch what the edit breaks.
void editManifest(const std::string &dir, const std::string &from,
                  const std::string &to) {
  std::string text = fileText(dir + "/manifest.json");
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the manifest has no " << from;
    return;
  }
  text.replace(at, from.size(), to);
  writeFile(dir + "/manifest.json", restampManifest(text));
}

/// A bundle with one variant, one plan launching one kernel, in a fresh
/// directory.
class BundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = (std::filesystem::path(::testing::TempDir()) /
           ("attn-bundle-" +
            std::string(::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->name())))
              .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/kernels");
    kernelBytes = "\x03\x02\x23\x07 not really spir-v";
    writeFile(dir + "/kernels/k.spv", kernelBytes);

    Plan plan;
    plan.function = "f";
    plan.arguments = {{DType::F32, {-1}}};
    plan.numSlots = 3;
    PlanOp one;
    one.kind = PlanOpKind::Const;
    one.result = 1;
    one.imm = 1;
    PlanOp launch;
    launch.kind = PlanOpKind::Launch;
    launch.kernel = "m::k";
    launch.operands = {1, 1, 1, 0};
    PlanOp ret;
    ret.kind = PlanOpKind::Return;
    plan.ops = {one, launch, ret};

    BundleVariant v;
    v.name = "f_h8";
    v.parameters = {{"op", "paged_attention"}, {"num_heads", "8"}};
    v.plans = {plan};
    v.kernels = {{"m::k", "spirv", "kernels/k.spv", "k",
                  contentHash(kernelBytes), R"({"workgroup":[32,1,1]})"}};
    bundle.compiler = "attn test";
    bundle.directory = dir;
    bundle.variants = {v};
    ASSERT_TRUE(writeManifest(bundle));
  }

  std::string dir;
  std::string kernelBytes;
  Bundle bundle;
};

} // namespace

TEST_F(BundleTest, RoundTrips) {
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, bundle.variants);
  EXPECT_EQ(loaded->compiler, "attn test");
  Result<std::string> bytes =
      loaded->readKernel(loaded->variants[0].kernels[0]);
  ASSERT_TRUE(bytes) << bytes.message();
  EXPECT_EQ(*bytes, kernelBytes);
}

TEST_F(BundleTest, FindsVariantsByParameters) {
  VariantQuery query;
  query.parameters = {{"op", "paged_attention", VariantParameter::Kind::Text},
                      {"num_heads", "8", VariantParameter::Kind::Int}};
  Result<const BundleVariant *> v = findVariant(bundle, query);
  ASSERT_TRUE(v) << v.message();
  EXPECT_EQ((*v)->name, "f_h8");
  query.parameters[1].value = "16";
  Result<const BundleVariant *> missing = findVariant(bundle, query);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.message(),
            "bundle " + dir +
                " has no paged_attention variant with num_heads=16 (it has: "
                "f_h8 (num_heads=8)); compile one with: attn-compile "
                "--variant op=paged_attention,num_heads=16");
}

TEST_F(BundleTest, MissingManifest) {
  std::filesystem::remove(dir + "/manifest.json");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir + ": no manifest.json (is " + dir +
                " an attn-compile output directory?)");
}

TEST_F(BundleTest, BadJson) {
  writeFile(dir + "/manifest.json", "{\"format_version\": 5,");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir + ": manifest.json is not valid JSON");
}

TEST_F(BundleTest, UnknownFormatVersion) {
  editManifest(dir, "\"format_version\": 6", "\"format_version\": 7");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json: bundle format version 7 is not supported "
                "(this runtime reads format 6; recompile the bundle with this "
                "attn-compile)");
}

// A bundle of an older format (5: a record per kernel and named
// parameters; 4: hex hashes, whole launch bounds, a hash
// over the parsed manifest; 3: FNV-1a hashes, no signatures, whole plans;
// 2: one record per kernel and entry) is refused by its version before
// anything else is read of it.
TEST_F(BundleTest, OldFormatIsRefusedByName) {
  for (int version : {2, 3, 4, 5}) {
    writeFile(dir + "/manifest.json",
              "{\"format_version\": " + std::to_string(version) +
                  R"(, "compiler": "attn-compile 0.3.0", "kernels": [],
                  "plans": [], "variants": [],
                  "manifest_hash": "0000000000000000"})");
    EXPECT_EQ(loadBundle(dir).message(),
              "bundle " + dir + ": manifest.json: bundle format version " +
                  std::to_string(version) +
                  " is not supported (this runtime reads format 6; recompile "
                  "the bundle with this attn-compile)");
  }
}

// A version that only equals the supported one after truncation to 32 bits
// is not supported either.
// Found by the bundle and plan fuzzers: re-stamping a manifest without a
// format_version (or compiler) read a missing member and aborted.
TEST_F(BundleTest, RestampWritesMissingMembersNull) {
  std::string text = restampManifest(R"({"compiler": "x", "kinds": []})");
  EXPECT_EQ(text.substr(0, text.find('\n')), "{\"format_version\": null,");
  writeFile(dir + "/manifest.json", text);
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir + ": manifest.json: expected an object with "
                              "\"format_version\"");
  EXPECT_EQ(restampManifest("[]"), "");
}

TEST_F(BundleTest, FormatVersionIsNotTruncated) {
  editManifest(dir, "\"format_version\": 6", "\"format_version\": 4294967300");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json: bundle format version 4294967300 is not "
                "supported (this runtime reads format 6; recompile the bundle "
                "with this attn-compile)");
}

TEST_F(BundleTest, MissingKernelFile) {
  std::filesystem::remove(dir + "/kernels/k.spv");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": missing kernel file kernels/k.spv (m::k, spirv)");
}

TEST_F(BundleTest, HashMismatch) {
  writeFile(dir + "/kernels/k.spv", kernelBytes + "!");
  Result<Bundle> r = loadBundle(dir);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("kernel file kernels/k.spv does not match its "
                             "hash"),
            std::string::npos)
      << r.message();
}

TEST_F(BundleTest, PlanLaunchesAnUnknownKernel) {
  editManifest(dir, "\"m::k\"", "\"m::x\"");
  Result<Bundle> r = loadBundle(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "bundle " + dir +
                             ": manifest.json, variant f_h8 (subgroup size "
                             "0): plan f launches "
                             "m::x, which the bundle does not contain");
}

// The manifest carries its own hash: an edit (a plan's grid, a launch's
// arguments) that does not restamp it is refused before anything is used.
TEST_F(BundleTest, EditedManifestIsRefused) {
  std::string text = fileText(dir + "/manifest.json");
  // The plan's constant 1, among its values (PlanTemplate.h).
  text.replace(text.find("\"f32\",-1,1"), 11, "\"f32\",-1,9");
  writeFile(dir + "/manifest.json", text);
  Result<Bundle> r = loadBundle(dir);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("manifest.json does not match its "
                             "manifest_hash"),
            std::string::npos)
      << r.message();
}

// A directory where a kernel file should be is not the empty kernel.
TEST_F(BundleTest, KernelFileThatIsADirectory) {
  std::filesystem::create_directories(dir + "/kernels/empty");
  editManifest(dir, "kernels/k.spv", "kernels/empty");
  editManifest(dir, hashToBase64(contentHash(kernelBytes)),
               hashToBase64(contentHash("")));
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": kernel file kernels/empty is not a regular file");
}

// attn-compile's workers are threads of one process, and two variants may
// write the same content-addressed kernel at once: each writes a temporary
// of its own (once they shared one per process, and a rename found it gone).
TEST_F(BundleTest, ThreadsWriteOneContentAddressedFileAtOnce) {
  for (int round = 0; round < 20; ++round) {
    std::string bytes(1 << 18, static_cast<char>('a' + round));
    std::string name = contentAddressedName("k", bytes, "spv");
    std::atomic<int> failures{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
      writers.emplace_back([&] {
        if (!writeFileAtomically(dir, "kernels/" + name, bytes))
          ++failures;
      });
    for (std::thread &w : writers)
      w.join();
    EXPECT_EQ(failures.load(), 0) << "round " << round;
    EXPECT_EQ(fileText(dir + "/kernels/" + name), bytes);
  }
}

// The bundle writer: files appear whole under their final names, files no
// manifest names go after the manifest changed.
TEST_F(BundleTest, WriterKeepsFilesWholeAndRemovesUnnamedOnes) {
  std::string name = contentAddressedName("k", kernelBytes, "spv");
  EXPECT_EQ(name, "k." + contentHash(kernelBytes) + ".spv");
  ASSERT_TRUE(writeFileAtomically(dir, "kernels/" + name, kernelBytes));
  ASSERT_TRUE(writeFileAtomically(dir, "kernels/" + name, kernelBytes))
      << "writing the same file again is fine";
  EXPECT_EQ(fileText(dir + "/kernels/" + name), kernelBytes);
  bundle.variants[0].kernels[0].file = "kernels/" + name;
  ASSERT_TRUE(writeManifest(bundle));
  ASSERT_TRUE(removeUnnamedKernelFiles(bundle));
  EXPECT_FALSE(std::filesystem::exists(dir + "/kernels/k.spv"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/kernels/" + name));
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos)
        << entry.path();
}

// One writer at a time: a second one waits (and says so) until the first
// lets go.
std::atomic<bool> secondWriterWaits = false;

TEST_F(BundleTest, LockIsExclusiveUntilReleased) {
  std::optional<BundleLock> first;
  {
    Result<BundleLock> r = BundleLock::acquire(dir);
    ASSERT_TRUE(r) << r.message();
    first.emplace(std::move(*r));
  }
  std::atomic<bool> secondHasIt = false;
  std::thread second([&] {
    Result<BundleLock> r = BundleLock::acquire(
        dir, [](const std::string &) { secondWriterWaits = true; });
    EXPECT_TRUE(r) << r.message();
    secondHasIt = true;
  });
  while (!secondWriterWaits)
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(secondHasIt) << "the second writer did not wait";
  first.reset();
  second.join();
  EXPECT_TRUE(secondHasIt);
}

// A writer whose run failed removes the directory it created, lock file
// included; a writer waiting for its lock then starts over and creates the
// directory anew, rather than holding a lock on the removed file.
std::atomic<bool> freshWriterWaits = false;

TEST_F(BundleTest, WaiterStartsOverWhenTheDirectoryIsRemoved) {
  std::string fresh = dir + "/fresh.attnb";
  std::optional<BundleLock> first;
  {
    Result<BundleLock> r = BundleLock::acquire(fresh);
    ASSERT_TRUE(r) << r.message();
    EXPECT_TRUE(r->createdDirectory());
    first.emplace(std::move(*r));
  }
  std::thread second([&] {
    Result<BundleLock> r = BundleLock::acquire(
        fresh, [](const std::string &) { freshWriterWaits = true; });
    ASSERT_TRUE(r) << r.message();
    EXPECT_TRUE(r->createdDirectory());
    EXPECT_TRUE(std::filesystem::exists(fresh + "/.lock"));
  });
  while (!freshWriterWaits)
    std::this_thread::yield();
  Status removed = first->removeCreatedDirectory();
  EXPECT_TRUE(removed) << removed.message();
  EXPECT_FALSE(std::filesystem::exists(fresh));
  first.reset();
  second.join();
}

TEST_F(BundleTest, LockNeverRemovesADirectoryThatWasThere) {
  Result<BundleLock> lock = BundleLock::acquire(dir);
  ASSERT_TRUE(lock) << lock.message();
  EXPECT_FALSE(lock->createdDirectory());
  EXPECT_FALSE(lock->removeCreatedDirectory());
  EXPECT_TRUE(std::filesystem::exists(dir + "/kernels/k.spv"));
}

TEST_F(BundleTest, KernelFileOutsideTheBundle) {
  editManifest(dir, "kernels/k.spv", "../../etc/pwd");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, kernels[0]: file must be inside the "
                "bundle, got ../../etc/pwd");
}

namespace {

/// `entries` copies of the fixture's variant as attn-compile writes them:
/// names v0, v1, ..., each at subgroup sizes 8 and 16, symbols unique to the
/// entry's compile, one kernel file and one plan body shared by all.
Bundle entriesSharingOneKernel(const Bundle &base, int entries) {
  Bundle b = base;
  b.variants.clear();
  for (int i = 0; i < entries; ++i)
    for (int64_t sg : {8, 16}) {
      BundleVariant v = base.variants.front();
      v.name = "v" + std::to_string(i);
      v.subgroupSize = sg;
      v.cacheKey = contentHash(v.name + std::to_string(sg));
      std::string symbol = v.name + "@" + v.cacheKey + "/m::k";
      v.kernels.front().symbol = symbol;
      v.plans.front().ops[1].kernel = symbol;
      b.variants.push_back(std::move(v));
    }
  return b;
}

} // namespace

// Identical kernel records and plans are written once, whatever the number
// of entries: an entry costs its name, parameters and references.
TEST_F(BundleTest, EntriesShareKernelRecordsAndPlans) {
  Bundle many = entriesSharingOneKernel(bundle, 50);
  ASSERT_TRUE(writeManifest(many));
  nlohmann::json j = nlohmann::json::parse(fileText(dir + "/manifest.json"));
  EXPECT_EQ(j["kinds"].size(), 1u);
  EXPECT_EQ(j["kernels"]["kinds"].size(), 1u);
  EXPECT_EQ(j["plans"].size(), 1u);
  // Each variant's two subgroup sizes share its record.
  EXPECT_EQ(j["variants"].size(), 50u);
  // Its entries' kernels as runs [first, count].
  EXPECT_EQ(j["variants"][3][2][1][4], nlohmann::json::parse("[0,1]"));
  // Cache keys of 64 digits here (attn-compile writes 16).
  size_t perEntry = manifestToJson(many).size() / many.variants.size();
  EXPECT_LT(perEntry, 150u);
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  // Read back in the manifest's order (v0, v1, v10, ...), each whole.
  std::sort(many.variants.begin(), many.variants.end(),
            [](const BundleVariant &a, const BundleVariant &b) {
              return std::tie(a.name, a.subgroupSize) <
                     std::tie(b.name, b.subgroupSize);
            });
  EXPECT_TRUE(loaded->variants == many.variants);
}

// A serving engine opens a bundle of hundreds of entries and uses a few:
// openManifest reads none of their plans and kernel records, entry() reads
// one the first time it is asked for, and a damaged entry fails only when
// it is used, naming itself.
TEST_F(BundleTest, OpenReadsAnEntryOnlyWhenAsked) {
  Bundle many = entriesSharingOneKernel(bundle, 20);
  ASSERT_TRUE(writeManifest(many));
  Result<Bundle> whole = loadBundle(dir);
  ASSERT_TRUE(whole) << whole.message();
  EXPECT_EQ(whole->entriesRead(), 0u);

  Result<Bundle> open = openManifest(dir);
  ASSERT_TRUE(open) << open.message();
  ASSERT_EQ(open->variants.size(), 40u);
  EXPECT_EQ(open->entriesRead(), 0u);
  EXPECT_TRUE(open->variants[5].plans.empty());
  EXPECT_TRUE(open->variants[5].kernels.empty());
  EXPECT_EQ(open->variants[5].parameters, whole->variants[5].parameters);

  Result<const BundleVariant *> v = open->entry(5);
  ASSERT_TRUE(v) << v.message();
  EXPECT_EQ(**v, whole->variants[5]);
  EXPECT_EQ(open->entriesRead(), 1u);
  Result<const BundleVariant *> again = open->entry(open->variants[5]);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *v);
  EXPECT_EQ(open->entriesRead(), 1u);

  // findVariant reads only the entries whose parameters match: none of
  // these do.
  VariantQuery query;
  query.parameters = {{"op", "paged_attention", VariantParameter::Kind::Text},
                      {"num_heads", "4", VariantParameter::Kind::Int}};
  EXPECT_FALSE(findVariant(*open, query));
  EXPECT_EQ(open->entriesRead(), 1u);

  // v0's first entry refers to a plan the manifest does not have.
  editManifest(dir, "[8,\"" + many.variants[0].cacheKey + "\",0,",
               "[8,\"" + many.variants[0].cacheKey + "\",9,");
  Result<Bundle> damaged = openManifest(dir);
  ASSERT_TRUE(damaged) << damaged.message();
  Result<const BundleVariant *> bad = damaged->entry(0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(),
            "bundle " + dir +
                ": manifest.json, variant v0 (subgroup size "
                "8): 9 is not an index into \"plans\" (1 records)");
  EXPECT_TRUE(damaged->entry(1)) << damaged->entry(1).message();
  EXPECT_EQ(loadBundle(dir).message(), bad.message());
}

// A kernel's hash in the manifest is 43 URL-safe base64 characters, and a
// launch bounds record is [shape, its numbers]; anything else is refused by
// name.
TEST_F(BundleTest, MalformedHashAndBoundsAreRefused) {
  std::string hash = hashToBase64(contentHash(kernelBytes));
  editManifest(dir, "\"" + hash + "\"", "\"" + hash.substr(0, 42) + "+\"");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, kernels[0]: expected a hash "
                "as 43 URL-safe base64 characters, got \"" +
                hash.substr(0, 42) + "+\"");

  bundle.variants[0].kernels[0].launchJson =
      R"({"bounds":{"arguments":["a"],"checks":[{"max":"bytes0","min":null,)"
      R"("of":["g0"],"plus":4,"times":2}]},"workgroup":[32,1,1]})";
  ASSERT_TRUE(writeManifest(bundle));
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, bundle.variants);
  // Each damaged record, and what the reader says of it.
  const std::pair<const char *, const char *> damaged[] = {
      {"[0,[null,4]]",
       "the launch bounds template takes 3 values, the record gives 2"},
      {"[3,[null,4,2]]", "3 is not an index into \"bound_shapes\" (1 records)"},
      {"{\"shape\":0}", "launch bounds are [shape, values], got {\"shape\":0}"},
  };
  for (const auto &[record, message] : damaged) {
    ASSERT_TRUE(writeManifest(bundle));
    editManifest(dir, "[0,[null,4,2]]", record);
    EXPECT_EQ(loadBundle(dir).message(),
              "bundle " + dir + ": manifest.json, bounds[0]: " + message);
  }
}

// Plans that differ only in numbers and element types (a workgroup size,
// a constant, an argument's dtype and dims) share one shape; each entry
// keeps its own values and reads back whole.
TEST_F(BundleTest, PlansOfOneShapeShareTheirRecord) {
  Bundle many = entriesSharingOneKernel(bundle, 2);
  Plan &plan = many.variants[1].plans.front();
  plan.ops[0].imm = 7;
  plan.ops[1].block = {64, 2, 1};
  plan.arguments[0] = {DType::BF16, {-1}};
  ASSERT_TRUE(writeManifest(many));
  nlohmann::json j = nlohmann::json::parse(fileText(dir + "/manifest.json"));
  EXPECT_EQ(j["plans"].size(), 1u);
  // The second entry of v0 differs from the first in most of its values:
  // it writes them all, which is shorter than the changed positions
  // (ChangedPlanValuesNameTheirPositions has the object).
  EXPECT_EQ(j["variants"][0][2][0][3],
            nlohmann::json::parse(R"(["f32",-1,1,1,1,1])"));
  EXPECT_EQ(j["variants"][0][2][1][3],
            nlohmann::json::parse(R"(["bf16",-1,7,64,2,1])"));
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants[1].plans, many.variants[1].plans);
}

TEST_F(BundleTest, ChangedPlanValuesNameTheirPositions) {
  Bundle many = entriesSharingOneKernel(bundle, 1);
  many.variants[1].plans.front().ops[0].imm = 7;
  ASSERT_TRUE(writeManifest(many));
  editManifest(dir, "{\"2\":7}", "{\"6\":7}");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, variant v0 (subgroup size 16): \"6\" is not "
                "a position among the 6 plan values");
  ASSERT_TRUE(writeManifest(many));
  editManifest(dir, "[\"f32\",-1,1,1,1,1]", "{\"2\":7}");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, variant v0 (subgroup size 8): plan values "
                "are an array, or after a variant's first entry an object of "
                "changed positions");
}

// An entry whose plan has more values than the entry before (a cpu entry's
// plan, then a GPU entry's) gives the positions that differ, those past
// the end included, and their number "n".
TEST_F(BundleTest, PlanValuesOfAnotherLengthGiveTheirTail) {
  Bundle many = entriesSharingOneKernel(bundle, 1);
  Plan &longer = many.variants[1].plans.front();
  PlanOp five;
  five.kind = PlanOpKind::Const;
  five.result = 2;
  five.imm = 5;
  longer.ops.insert(longer.ops.end() - 1, five);
  ASSERT_TRUE(writeManifest(many));
  nlohmann::json j = nlohmann::json::parse(fileText(dir + "/manifest.json"));
  EXPECT_EQ(j["plans"].size(), 2u);
  EXPECT_EQ(j["variants"][0][2][1][3],
            nlohmann::json::parse(R"({"6":5,"n":7})"));
  Result<Bundle> loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, many.variants);

  // The other way round, a shorter plan after a longer one gives "n" only.
  Bundle shorter = entriesSharingOneKernel(bundle, 1);
  std::vector<PlanOp> &ops = shorter.variants[0].plans.front().ops;
  ops.insert(ops.end() - 1, five);
  ASSERT_TRUE(writeManifest(shorter));
  j = nlohmann::json::parse(fileText(dir + "/manifest.json"));
  EXPECT_EQ(j["variants"][0][2][1][3], nlohmann::json::parse(R"({"n":6})"));
  loaded = loadBundle(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, shorter.variants);

  const std::pair<const char *, const char *> damaged[] = {
      {R"({"n":7})", "1 plan values past the 6 before are not all given"},
      {R"({"6":5,"n":9})", "\"n\" must be the number of plan values, got 9"},
      {R"({"06":5,"n":7})", "\"06\" is not a position among the 7 plan values"},
      {R"({"6":5,"n":-7})", "\"n\" must be the number of plan values, got -7"},
  };
  for (const auto &[values, message] : damaged) {
    ASSERT_TRUE(writeManifest(many));
    editManifest(dir, R"({"6":5,"n":7})", values);
    EXPECT_EQ(loadBundle(dir).message(),
              "bundle " + dir +
                  ": manifest.json, variant v0 (subgroup size 16): " + message);
  }
}

TEST_F(BundleTest, PlanValuesMustFitTheShape) {
  editManifest(dir, "[\"f32\",-1,1,1,1,1]", "[\"f32\",-1,1,1,1]");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, variant f_h8 (subgroup size 0): the plan "
                "template takes 6 values, the entry gives 5");
  ASSERT_TRUE(writeManifest(bundle));
  editManifest(dir, "\"imm\":null", "\"imm\":1");
  EXPECT_EQ(loadBundle(dir).message(),
            "bundle " + dir +
                ": manifest.json, variant f_h8 (subgroup size 0): a plan "
                "template holds a value where each entry gives its own (it "
                "must be null)");
  ASSERT_TRUE(writeManifest(bundle));
  editManifest(dir, "[\"f32\",-1,1,1,1,1]", "[\"f32\",-1,1,1,1,\"x\"]");
  Result<Bundle> r = loadBundle(dir);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("variant f_h8 (subgroup size 0): plan"),
            std::string::npos)
      << r.message();
}

// The manifest lists entries by name and subgroup size, whatever order they
// were compiled in, so that the same entries make the same bytes.
TEST_F(BundleTest, ManifestOrderIsCanonical) {
  Bundle many = entriesSharingOneKernel(bundle, 3);
  Bundle reversed = many;
  std::reverse(reversed.variants.begin(), reversed.variants.end());
  EXPECT_EQ(manifestToJson(reversed), manifestToJson(many));
}

TEST_F(BundleTest, ReferenceOutsideATableIsRefused) {
  // An entry's kernels are runs [first, count] of the kernel table.
  const std::pair<const char *, const char *> damaged[] = {
      {"[1,1]", "1 is not an index into \"kernels\" (1 records)"},
      {"[0,2]", "a run of 2 kernels from 0 is not in \"kernels\" (1 records)"},
      {"[0,0]", "a run of 0 kernels from 0 is not in \"kernels\" (1 records)"},
      {"[0]", "kernels are runs [first, count, ...], got [0]"},
  };
  for (const auto &[runs, message] : damaged) {
    ASSERT_TRUE(writeManifest(bundle));
    editManifest(dir, "1,1,1,1],[0,1]", std::string("1,1,1,1],") + runs);
    EXPECT_EQ(
        loadBundle(dir).message(),
        "bundle " + dir +
            ": manifest.json, variant f_h8 (subgroup size 0): " + message);
  }
}

// The kernel table is columns of one length each, and a variant's
// parameters are values for a record of parameter_keys; a manifest whose
// columns or parameters do not fit is refused by name when opened.
TEST_F(BundleTest, MalformedColumnsAndParametersAreRefused) {
  std::string hash = hashToBase64(contentHash(kernelBytes));
  const std::pair<std::pair<std::string, std::string>, std::string> damaged[] =
      {
          {{"\"" + hash + "\"", "\"" + hash + "A\""},
           "kernels: 1 kinds, 1 bounds and 44 characters of hashes do not make "
           "whole records (43 characters a hash)"},
          {{"\"kinds\": [0]", "\"kinds\": [0,0]"},
           "kernels: 2 kinds, 1 bounds and 43 characters of hashes do not make "
           "whole records (43 characters a hash)"},
          {{"\"files\": {\"0\"", "\"files\": {\"00\""},
           "kernels, files: \"00\" is not a kernel's index (1 records) with a "
           "string"},
          {{"\"symbols\": {\"0\":", "\"symbols\": {\"1\":"},
           "kernels, symbols: \"1\" is not a kernel's index (1 records) with "
           "a string"},
          {{"\"kernels\": {", "\"kernels\": {\"x\":1,"},
           "kernels: expected columns {\"kinds\": [...], \"bounds\": [...], "
           "\"hashes\": \"...\", \"symbols\": {...}, \"files\": {...}}"},
          {{"[\"num_heads\",\"op\"]", "[\"op\",\"num_heads\"]"},
           "parameter_keys[0]: parameter keys are names in ascending order, "
           "got [\"op\",\"num_heads\"]"},
          {{"[0,\"8\",\"paged_attention\"]", "[1,\"8\",\"f\"]"},
           "variant f_h8: 1 is not an index into \"parameter_keys\" (1 "
           "records)"},
          {{"[0,\"8\",\"paged_attention\"]", "[0,\"8\"]"},
           "variant f_h8: 1 parameter values for 2 keys"},
          {{"[0,\"8\",\"paged_attention\"]", "[0,8,\"f\"]"},
           "variant f_h8: parameter num_heads must be a string"},
          {{"[\"f_h8\",", "[7,"},
           "variants[0]: a variant is [name, parameters, entries], got "
           "[7,[0,\"8\",\"paged_attention\"],[[0,\"\",0,[\"f32\",-1,1,1,1,1],["
           "0,1]]]]"},
      };
  for (const auto &[edit, message] : damaged) {
    ASSERT_TRUE(writeManifest(bundle));
    editManifest(dir, edit.first, edit.second);
    EXPECT_EQ(openManifest(dir).message(),
              "bundle " + dir + ": manifest.json, " + message);
  }
}

// A run names many kernels in a few bytes; all runs together may name no
// more kernels than the manifest has bytes (a list of indices, as format 5
// wrote, costs two bytes each), so that a small manifest cannot make the
// reader copy kernel records without end.
TEST_F(BundleTest, RunsNameNoMoreKernelsThanTheManifestHasBytes) {
  editManifest(dir, "1,1,1,1],[0,1]", "1,1,1,1],[0,99999999]");
  std::string bytes = std::to_string(fileText(dir + "/manifest.json").size());
  EXPECT_EQ(openManifest(dir).message(),
            "bundle " + dir +
                ": manifest.json, variant f_h8: the entries name more kernels "
                "(0 and 99999999) than the manifest has bytes (" +
                bytes + ")");
}

// "files" gives a kernel's file exactly where its kind has no extension
// (the kind's extension and the hash name it otherwise).
TEST_F(BundleTest, FilesColumnMatchesTheKind) {
  editManifest(dir, "\"files\": {\"0\":\"kernels/k.spv\"}", "\"files\": {}");
  EXPECT_EQ(loadManifest(dir).message(),
            "bundle " + dir +
                ": manifest.json, kernels[0]: a kernel of a kind without a "
                "file extension has its file in \"files\"");

  BundleKernel &k = bundle.variants[0].kernels[0];
  k.file = "kernels/k." + k.hash + ".spv";
  ASSERT_TRUE(writeManifest(bundle));
  Result<Bundle> named = loadManifest(dir);
  ASSERT_TRUE(named) << named.message();
  EXPECT_EQ(named->variants, bundle.variants);
  editManifest(dir, "\"files\": {}", "\"files\": {\"0\":\"kernels/x\"}");
  EXPECT_EQ(loadManifest(dir).message(),
            "bundle " + dir +
                ": manifest.json, kernels[0]: its kind names the file, "
                "\"files\" must not");
}

// An entry's kernels are runs of the table: consecutive new records make
// one run, a record shared with an entry before its own.
TEST_F(BundleTest, EntryKernelsAreRunsOfTheTable) {
  Bundle b = bundle;
  BundleVariant &first = b.variants[0];
  first.subgroupSize = 8;
  first.kernels.clear();
  for (const char *name : {"a", "b", "c"})
    first.kernels.push_back({std::string("m::") + name, "spirv",
                             "kernels/" + std::string(name) + ".spv", name,
                             contentHash(name), "{}"});
  BundleVariant second = first;
  second.subgroupSize = 16;
  second.kernels = {
      {"m::d", "spirv", "kernels/d.spv", "d", contentHash("d"), "{}"},
      first.kernels[0],
      {"m::e", "spirv", "kernels/e.spv", "e", contentHash("e"), "{}"}};
  for (BundleVariant *v : {&first, &second})
    v->plans.front().ops[1].kernel = v->kernels[1].symbol;
  b.variants.push_back(second);
  ASSERT_TRUE(writeManifest(b));
  nlohmann::json j = nlohmann::json::parse(fileText(dir + "/manifest.json"));
  EXPECT_EQ(j["variants"][0][2][0][4], nlohmann::json::parse("[0,3]"));
  EXPECT_EQ(j["variants"][0][2][1][4], nlohmann::json::parse("[3,1,0,1,4,1]"));
  Result<Bundle> loaded = loadManifest(dir);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, b.variants);
}

// Shards of one compile merge into the whole compile's manifest, byte for
// byte, whichever order they come in; a shard given twice adds nothing.
TEST_F(BundleTest, ShardsMergeIntoTheWhole) {
  Bundle whole = entriesSharingOneKernel(bundle, 4);
  Bundle a = whole, b = whole;
  a.variants.clear();
  b.variants.clear();
  for (size_t i = 0; i < whole.variants.size(); ++i)
    (i % 2 ? b : a).variants.push_back(whole.variants[i]);
  for (const std::vector<Bundle> &inputs :
       {std::vector<Bundle>{a, b}, std::vector<Bundle>{b, a},
        std::vector<Bundle>{a, b, a}}) {
    Result<MergedBundle> merged = mergeBundles(inputs, dir);
    ASSERT_TRUE(merged) << merged.message();
    EXPECT_EQ(manifestToJson(merged->bundle), manifestToJson(whole));
  }
}

TEST_F(BundleTest, MergeRefusesAVariantCompiledTwiceDifferently) {
  Bundle a = bundle, b = bundle;
  a.directory = "a.attnb";
  b.directory = "b.attnb";
  b.variants.front().cacheKey = "0123456789abcdef";
  Result<MergedBundle> merged = mergeBundles({a, b}, dir);
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.message(),
            "bundles a.attnb and b.attnb both have variant f_h8 at subgroup "
            "size 0, compiled differently (cache keys  and "
            "0123456789abcdef): merge one of them only");
}

TEST_F(BundleTest, MergeRefusesBundlesOfAnotherCompiler) {
  Bundle a = bundle, b = bundle;
  a.directory = "a.attnb";
  b.directory = "b.attnb";
  b.compiler = "attn-compile 0.2.0 (MLIR 22)";
  Result<MergedBundle> merged = mergeBundles({a, b}, dir);
  ASSERT_FALSE(merged);
  EXPECT_EQ(merged.message(),
            "bundle b.attnb was written by 'attn-compile 0.2.0 (MLIR 22)' and "
            "bundle a.attnb by 'attn test': bundles merge only from one "
            "attn-compile");
}

// The merged bundle is written as attn-compile writes one: its kernel files
// copied, its manifest loadable.
TEST_F(BundleTest, MergedBundleLoads) {
  std::string out = dir + "-merged";
  std::filesystem::remove_all(out);
  Result<Bundle> input = loadBundle(dir);
  ASSERT_TRUE(input) << input.message();
  std::vector<Bundle> inputs = {*input};
  Result<MergedBundle> merged = mergeBundles(inputs, out);
  ASSERT_TRUE(merged) << merged.message();
  ASSERT_TRUE(writeMergedBundle(*merged, inputs));
  Result<Bundle> loaded = loadBundle(out);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded->variants, bundle.variants);
  EXPECT_EQ(fileText(out + "/manifest.json"), fileText(dir + "/manifest.json"));
}
