//===- ProgramTest.cpp - Runtime arguments of TT programs ----------------===//
#include "devices/tt/Program.h"

#include <gtest/gtest.h>

using namespace attn::tt;

namespace {

Program twoCoreProgram() {
  Program p;
  p.description.name = "p";
  p.description.gridX = 2;
  p.description.gridY = 1;
  p.description.runtimeArgs = {"a", "b", "num_units"};
  for (int f = 0; f < 9; ++f)
    p.description.unitArgs.push_back("f" + std::to_string(f));
  p.description.kernels.resize(3);
  return p;
}

std::vector<std::map<std::string, uint32_t>> units(int n) {
  std::vector<std::map<std::string, uint32_t>> out;
  for (int u = 0; u < n; ++u) {
    std::map<std::string, uint32_t> m;
    for (int f = 0; f < 9; ++f)
      m["f" + std::to_string(f)] = uint32_t(u);
    out.push_back(m);
  }
  return out;
}

/// (341 - 3) / 9 = 37 units fit a core's arguments: 100 units on 2 cores
/// take two launches, 37 + 37 and 13 + 13.
TEST(TTProgram, UnitsPastTheArgumentLimitTakeSeveralLaunches) {
  auto launches = layOutRuntimeArgs(twoCoreProgram(), {{"a", 7}, {"b", 8}},
                                    units(100));
  ASSERT_TRUE(launches.isOk()) << launches.message();
  ASSERT_EQ(launches->size(), 2u);
  for (const LaunchArgs &launch : *launches)
    for (const auto &core : launch)
      for (const auto &kernel : core)
        EXPECT_LE(kernel.size(), kMaxRuntimeArgs);
  EXPECT_EQ((*launches)[0][0][0][2], 37u); // num_units of core 0
  EXPECT_EQ((*launches)[1][1][0][2], 13u);
  // The last unit of the second launch is unit 99.
  EXPECT_EQ((*launches)[1][1][0].back(), 99u);
  EXPECT_EQ((*launches)[0][0][0][0], 7u);
}

TEST(TTProgram, MissingNamedArgumentIsAnError) {
  auto launches = layOutRuntimeArgs(twoCoreProgram(), {{"a", 7}}, units(1));
  ASSERT_FALSE(launches.isOk());
  EXPECT_NE(launches.message().find("wants runtime argument 'b'"),
            std::string::npos);
}

} // namespace
