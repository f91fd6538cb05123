//===- LaunchFactsTest.cpp - A kernel's launch facts, written and read ----===//

#include "core/LaunchFacts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

LaunchFacts gpuFacts() {
  LaunchFacts facts;
  facts.workgroup = {128, 1, 1};
  facts.subgroupSize = 32;
  return facts;
}

TEST(LaunchFacts, SpirvRoundTrip) {
  LaunchFacts facts = gpuFacts();
  facts.addressedBuffers = 9;
  std::string json = writeLaunchFacts(facts, "spirv");
  EXPECT_EQ(json, R"({"abi":"buffer_address","num_buffers":9,)"
                  R"("subgroup_size":32,"workgroup_size":[128,1,1]})");
  Result<LaunchFacts> read = readLaunchFacts(json, "spirv");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->workgroup, facts.workgroup);
  EXPECT_EQ(read->subgroupSize, 32u);
  EXPECT_EQ(read->addressedBuffers, 9u);

  // Without an abi the kernel takes descriptor bindings.
  Result<LaunchFacts> bound = readLaunchFacts(
      writeLaunchFacts(gpuFacts(), "spirv"), "spirv");
  ASSERT_TRUE(bound) << bound.message();
  EXPECT_FALSE(bound->addressedBuffers.has_value());
}

TEST(LaunchFacts, PtxRoundTrip) {
  LaunchFacts facts = gpuFacts();
  facts.chip = "sm_90";
  facts.argElementBytes = {2, 2, 4, 8};
  Result<LaunchFacts> read =
      readLaunchFacts(writeLaunchFacts(facts, "ptx"), "ptx");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->workgroup, facts.workgroup);
  EXPECT_EQ(read->chip, "sm_90");
  EXPECT_THAT(read->argElementBytes, ElementsAre(2, 2, 4, 8));
}

TEST(LaunchFacts, MslRoundTrip) {
  LaunchFacts facts = gpuFacts();
  facts.entryPoint = "f16_paged_attention";
  facts.mslMajor = 2;
  facts.mslMinor = 1;
  facts.bufferIndices = {0, 1, 2, 30};
  std::string json = writeLaunchFacts(facts, "msl");
  EXPECT_THAT(json, HasSubstr(R"("msl_version":"2.1")"));
  Result<LaunchFacts> read = readLaunchFacts(json, "msl");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->entryPoint, facts.entryPoint);
  EXPECT_EQ(read->mslMajor, 2u);
  EXPECT_EQ(read->mslMinor, 1u);
  EXPECT_THAT(read->bufferIndices, ElementsAre(0, 1, 2, 30));
}

TEST(LaunchFacts, TtRoundTrip) {
  LaunchFacts facts;
  facts.program = "llama_layer";
  facts.description = "program.json";
  std::string json = writeLaunchFacts(facts, "tt");
  EXPECT_EQ(json, R"({"description":"program.json","program":"llama_layer"})");
  Result<LaunchFacts> read = readLaunchFacts(json, "tt");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->program, "llama_layer");
}

TEST(LaunchFacts, RejectsWhatATargetCannotLaunch) {
  struct Case {
    const char *target;
    const char *json;
    const char *message;
  } cases[] = {
      {"ptx", "[]", "ptx launch facts are not a JSON object"},
      {"ptx", "{", "not a JSON object"},
      {"ptx", R"({"abi": "memref_descriptor", "arg_element_bytes": []})",
       "'workgroup_size' must be 3 integers"},
      {"ptx",
       R"({"workgroup_size": [32, 0, 1], "subgroup_size": 32,
           "abi": "memref_descriptor", "arg_element_bytes": []})",
       "'workgroup_size' must be 3 integers in [1, "},
      {"ptx",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "abi": "bare_pointer", "arg_element_bytes": []})",
       "'abi' must be \"memref_descriptor\""},
      {"ptx",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "abi": "memref_descriptor"})",
       "'arg_element_bytes' must be a list of integers"},
      {"ptx",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "abi": "memref_descriptor", "arg_element_bytes": [2, -1]})",
       "'arg_element_bytes' must be"},
      {"ptx",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "abi": "memref_descriptor", "arg_element_bytes": [],
           "chip": "gfx90a"})",
       "not an SM name"},
      {"spirv", R"({"workgroup_size": [32, 1, 1]})",
       "'subgroup_size' must be an integer"},
      {"spirv",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 8,
           "abi": "buffer_address"})",
       "'num_buffers' must be an integer in [0, 16]"},
      {"spirv",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 8,
           "abi": "descriptor_heap"})",
       "'abi' must be \"buffer_address\" or absent"},
      {"msl",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "entry_point": "k", "msl_version": "2", "buffer_indices": []})",
       "'msl_version' must be \"MAJOR.MINOR\""},
      {"msl",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "entry_point": "k", "msl_version": "2.1",
           "buffer_indices": [31]})",
       "'buffer_indices' must be a list of integers in [0, 30]"},
      {"msl",
       R"({"workgroup_size": [32, 1, 1], "subgroup_size": 32,
           "msl_version": "2.1", "buffer_indices": []})",
       "'entry_point' must be a non-empty string"},
      {"tt", R"({"program": "p"})", "'description' must be"},
      {"vulkan", "{}", "no launch facts are defined for target 'vulkan'"},
  };
  for (const Case &c : cases) {
    Result<LaunchFacts> facts = readLaunchFacts(c.json, c.target);
    ASSERT_FALSE(facts) << c.json;
    EXPECT_THAT(facts.message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(LaunchFacts, SpirvElementBytesCoverEveryBuffer) {
  LaunchFacts facts = gpuFacts();
  facts.addressedBuffers = 2;
  facts.argElementBytes = {2, 4};
  Result<LaunchFacts> read =
      readLaunchFacts(writeLaunchFacts(facts, "spirv"), "spirv");
  ASSERT_TRUE(read) << read.message();
  EXPECT_THAT(read->argElementBytes, ElementsAre(2, 4));
  Result<LaunchFacts> short_ = readLaunchFacts(
      R"({"workgroup_size": [32, 1, 1], "subgroup_size": 8,
          "abi": "buffer_address", "num_buffers": 2,
          "arg_element_bytes": [2]})",
      "spirv");
  ASSERT_FALSE(short_);
  EXPECT_THAT(short_.message(), HasSubstr("'arg_element_bytes' must be 2"));
}

TEST(LaunchFacts, ThirtyTwoBitIndicesReachTwoToTheThirtyOneElements) {
  LaunchFacts facts;
  facts.argElementBytes = {2, 4};
  const uint64_t limit = (uint64_t(1) << 31) - 1;
  // A bf16 cache of 2^31 - 1 elements (4 GiB - 2 bytes) is the largest.
  uint64_t fits[] = {limit * 2, 64};
  EXPECT_TRUE(checkIndexRange(facts, "spirv", fits));
  uint64_t tooMany[] = {limit * 2 + 2, 64};
  Status s = checkIndexRange(facts, "spirv", tooMany);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(),
              HasSubstr("argument #0 holds 2147483648 elements of 2 bytes"));
  // Without element sizes every byte counts as an element.
  uint64_t unknown[] = {limit + 1};
  EXPECT_FALSE(checkIndexRange(LaunchFacts(), "msl", unknown));
  // PTX indexes with 64 bits.
  EXPECT_TRUE(checkIndexRange(facts, "ptx", tooMany));
}

TEST(LaunchFacts, SmVersions) {
  EXPECT_EQ(*parseSmVersion("sm_90"), 90);
  EXPECT_EQ(*parseSmVersion("sm_90a"), 90);
  EXPECT_EQ(*parseSmVersion("sm_120"), 120);
  EXPECT_FALSE(parseSmVersion("sm_"));
  EXPECT_FALSE(parseSmVersion("sm_9x"));
  EXPECT_FALSE(parseSmVersion("compute_90"));
}

TEST(LaunchFacts, PtxRunsOnItsChipAndNewer) {
  EXPECT_TRUE(ptxRunsOn("sm_90", 90));
  EXPECT_TRUE(ptxRunsOn("sm_80", 121)); // JIT-compiled for the newer SM
  EXPECT_FALSE(ptxRunsOn("sm_120", 100));
  EXPECT_FALSE(ptxRunsOn("sm_90", 89));
  // Arch-specific PTX runs on its own SM only.
  EXPECT_TRUE(ptxRunsOn("sm_90a", 90));
  EXPECT_FALSE(ptxRunsOn("sm_90a", 100));
  // Unrecorded: any; unreadable: none.
  EXPECT_TRUE(ptxRunsOn("", 80));
  EXPECT_FALSE(ptxRunsOn("compute_90", 90));
}

TEST(LaunchFacts, BestPtxChipIsTheNewestTheDeviceRuns) {
  std::vector<std::string> all(ptxChips().begin(), ptxChips().end());
  auto best = [&](int sm) -> std::string {
    std::optional<size_t> i = bestPtxChip(all, sm);
    return i ? all[*i] : "none";
  };
  EXPECT_EQ(best(75), "none");
  EXPECT_EQ(best(80), "sm_80");
  EXPECT_EQ(best(86), "sm_80");
  EXPECT_EQ(best(89), "sm_89");
  EXPECT_EQ(best(90), "sm_90");
  EXPECT_EQ(best(100), "sm_100");
  EXPECT_EQ(best(103), "sm_103");
  EXPECT_EQ(best(110), "sm_103");
  EXPECT_EQ(best(120), "sm_120");
  EXPECT_EQ(best(121), "sm_121");
  EXPECT_EQ(best(130), "sm_121");
  // An unrecorded chip ranks below every named one the device runs.
  std::vector<std::string> mixed = {"", "sm_80", "sm_120"};
  EXPECT_EQ(*bestPtxChip(mixed, 90), 1u);
  EXPECT_EQ(*bestPtxChip({mixed.data(), 1}, 90), 0u);
  EXPECT_EQ(*bestPtxChip(std::vector<std::string>{"sm_90a", "sm_89"}, 90), 0u);
}

} // namespace
} // namespace attn
