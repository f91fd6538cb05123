//===- LaunchBoundsTest.cpp - What a launch may ask of a kernel ----------===//

#include "core/LaunchBounds.h"
#include "core/LaunchFacts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn {
namespace {

using ::testing::HasSubstr;

/// A kernel reading seq_lens[r] for r < num_reqs (at least one) and
/// query row grid.x of 64 f32, with a params buffer of one i32.
LaunchBounds twoChecks() {
  LaunchBounds b;
  b.params = {"num_reqs"};
  b.arguments = {"query", "seq_lens", "params"};
  b.checks.push_back({{LaunchQuantity::param(0)}, 4, 0, 4,
                      LaunchQuantity::bytes(1)});
  b.checks.push_back({{LaunchQuantity::grid(0)}, 256, 0, 0,
                      LaunchQuantity::bytes(0)});
  b.checks.push_back({{LaunchQuantity::grid(1)}, 1, 0, 0,
                      LaunchQuantity::number(8)});
  return b;
}

Status check(const LaunchBounds &b, std::array<uint32_t, 3> grid,
             std::vector<uint64_t> bytes, std::vector<int32_t> params) {
  return checkLaunchBounds(b, "m::k", {grid, bytes, params});
}

TEST(LaunchBounds, RoundTrip) {
  LaunchBounds b = twoChecks();
  std::string text = writeLaunchBounds(b);
  EXPECT_EQ(text,
            R"({"arguments":["query","seq_lens","params"],"checks":[)"
            R"({"max":"bytes1","min":4,"of":["p0"],"plus":0,"times":4},)"
            R"({"max":"bytes0","min":0,"of":["g0"],"plus":0,"times":256},)"
            R"({"max":8,"min":0,"of":["g1"],"plus":0,"times":1}],)"
            R"("params":["num_reqs"]})");
  Result<LaunchBounds> back = parseLaunchBounds(text);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, b);
}

TEST(LaunchBounds, LaunchFactsCarryThem) {
  LaunchFacts facts;
  facts.workgroup = {32, 1, 1};
  facts.subgroupSize = 32;
  facts.bounds = twoChecks();
  Result<LaunchFacts> read =
      readLaunchFacts(writeLaunchFacts(facts, Target::SPIRV), Target::SPIRV);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->bounds, facts.bounds);
  // Facts without them read as none; the runner refuses their launches.
  facts.bounds.reset();
  read = readLaunchFacts(writeLaunchFacts(facts, Target::SPIRV),
                         Target::SPIRV);
  ASSERT_TRUE(read) << read.message();
  EXPECT_FALSE(read->bounds);
}

TEST(LaunchBounds, AcceptsALaunchWithinThem) {
  EXPECT_TRUE(check(twoChecks(), {4, 8, 1}, {1024, 4, 4}, {1}));
  EXPECT_TRUE(check(twoChecks(), {4, 8, 1}, {4096, 400, 4}, {100}));
}

TEST(LaunchBounds, NamesTheKernelTheParameterAndTheBuffer) {
  Status s = check(twoChecks(), {4, 8, 1}, {1024, 4, 4}, {1048576});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "kernel m::k: parameter p0 (num_reqs) = 1048576 reaches past the "
            "bytes of argument #1 (seq_lens): 0 + 4 * p0 = 4194304 exceeds 4");
  s = check(twoChecks(), {5, 8, 1}, {1024, 4, 4}, {1});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel m::k: grid.x = 5 reaches past the bytes of "
                         "argument #0 (query): 0 + 256 * g0 = 1280 exceeds "
                         "1024");
  s = check(twoChecks(), {4, 9, 1}, {1024, 4, 4}, {1});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel m::k: grid.y = 9 reaches past 8: 0 + 1 * g1 "
                         "= 9 exceeds 8");
}

TEST(LaunchBounds, RefusesNegativeZeroAndMissingParams) {
  Status s = check(twoChecks(), {4, 8, 1}, {1024, 4, 4}, {-1});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "kernel m::k: parameter p0 (num_reqs) = -1 is negative");
  s = check(twoChecks(), {4, 8, 1}, {1024, 4, 4}, {0});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel m::k: parameter p0 (num_reqs) = 0 is out of "
                         "range: 0 + 4 * p0 = 0 must be at least 4");
  s = check(twoChecks(), {4, 8, 1}, {1024, 4, 4}, {});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("its params buffer (0 values) lacks "
                                     "parameter p0 (num_reqs)"));
  s = check(twoChecks(), {4, 8, 1}, {1024}, {1});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("the launch binds 1 arguments"));
}

// Products past 64 bits are refused, not wrapped below the bound.
TEST(LaunchBounds, ProductsDoNotWrap) {
  LaunchBounds b;
  b.params = {"a", "b", "c"};
  b.arguments = {"x"};
  b.checks.push_back({{LaunchQuantity::param(0), LaunchQuantity::param(1),
                       LaunchQuantity::param(2), LaunchQuantity::grid(0)},
                      std::numeric_limits<int64_t>::max(), 0, 0,
                      LaunchQuantity::bytes(0)});
  Status s = check(b, {4294967295u, 1, 1}, {~uint64_t(0)},
                   {2147483647, 2147483647, 2147483647});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("= more than 2^64 exceeds"));
}

TEST(LaunchBounds, RejectsMalformedText) {
  for (auto [text, wanted] : std::vector<std::pair<std::string, std::string>>{
           {"[]", "bounds: must be a JSON object"},
           {R"({"params":[],"arguments":[]})", "'checks' must be a list"},
           {R"({"params":[],"arguments":[],"checks":[{"of":["p0"],"times":1,"plus":0,"min":0,"max":1}]})",
            "'p0' names no declared parameter"},
           {R"({"params":[],"arguments":["x"],"checks":[{"of":["g3"],"times":1,"plus":0,"min":0,"max":"bytes0"}]})",
            "'g3' names no grid dimension"},
           {R"({"params":[],"arguments":["x"],"checks":[{"of":["bytes0"],"times":1,"plus":0,"min":0,"max":"bytes0"}]})",
            "'of' holds parameters and grid dimensions"},
           {R"({"params":[],"arguments":["x"],"checks":[{"of":[],"times":-1,"plus":0,"min":0,"max":"bytes0"}]})",
            "'times' must be a non-negative integer"},
           {R"({"params":[],"arguments":["x"],"checks":[{"of":[],"times":1,"plus":0,"min":0}]})",
            "a check needs 'max'"},
           {R"({"params":[],"arguments":["x"],"checks":[{"of":[],"times":1,"plus":0,"min":0,"max":"q1"}]})",
            "'q1' is not p<k>, g<d> or bytes<j>"},
       }) {
    Result<LaunchBounds> b = parseLaunchBounds(text);
    ASSERT_FALSE(b) << text;
    EXPECT_THAT(b.message(), HasSubstr(wanted)) << text;
  }
}

} // namespace
} // namespace attn
