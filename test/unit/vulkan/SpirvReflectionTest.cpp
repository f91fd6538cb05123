//===- SpirvReflectionTest.cpp - Reading the lowered kernels' SPIR-V ------===//
//
// Needs no Vulkan device: these run everywhere the kernels could be lowered.
//
//===----------------------------------------------------------------------===//

#include "devices/vulkan/SpirvReflection.h"
#include "test/unit/vulkan/TestKernels.h"

#include <gtest/gtest.h>

using namespace attn;
using namespace attn::vulkan;

namespace {

TEST(SpirvReflection, AxpyHasOneBindingPerArgument) {
  std::vector<uint32_t> words = test::readKernel("axpy");
  ASSERT_FALSE(words.empty()) << "kernels/axpy.spv was not built";
  auto info = reflectSpirv(words);
  ASSERT_TRUE(info) << info.message();
  EXPECT_EQ(info->versionMajor, 1u);
  EXPECT_EQ(info->versionMinor, 0u);
  ASSERT_EQ(info->entryPoints.size(), 1u);
  const SpirvEntryPoint &entry = info->entryPoints[0];
  EXPECT_EQ(entry.name, "axpy");
  ASSERT_TRUE(entry.workgroupSize.has_value());
  EXPECT_EQ(*entry.workgroupSize, (std::array<uint32_t, 3>{64, 1, 1}));

  // a, b, s, n, out: scalars included, set 0, binding = argument index, all
  // in the StorageBuffer class (12).
  auto bindings = info->bindingsOf(entry);
  ASSERT_TRUE(bindings.has_value());
  ASSERT_EQ(bindings->size(), 5u);
  std::vector<bool> seen(5, false);
  for (const SpirvBinding &b : *bindings) {
    EXPECT_EQ(b.set, 0u);
    EXPECT_EQ(b.storageClass, 12u);
    ASSERT_LT(b.binding, 5u);
    seen[b.binding] = true;
  }
  EXPECT_EQ(seen, std::vector<bool>(5, true));
  EXPECT_FALSE(info->usesPushConstants);
}

TEST(SpirvReflection, SubgroupKernelDeclaresItsCapabilities) {
  std::vector<uint32_t> words = test::readKernel("subgroup_sum");
  ASSERT_FALSE(words.empty()) << "kernels/subgroup_sum.spv was not built";
  auto info = reflectSpirv(words);
  ASSERT_TRUE(info) << info.message();
  EXPECT_EQ(info->versionMinor, 3u);
  EXPECT_TRUE(info->hasCapability(spirv_cap::Float16));
  EXPECT_TRUE(info->hasCapability(spirv_cap::StorageBuffer16BitAccess));
  EXPECT_TRUE(info->hasCapability(spirv_cap::GroupNonUniformArithmetic));
  EXPECT_FALSE(info->hasCapability(spirv_cap::Int64));
  ASSERT_NE(info->findEntryPoint("subgroup_sum"), nullptr);
  EXPECT_EQ(info->findEntryPoint("axpy"), nullptr);
  auto bindings = info->bindingsOf(*info->findEntryPoint("subgroup_sum"));
  ASSERT_TRUE(bindings.has_value());
  EXPECT_EQ(bindings->size(), 4u);
}

TEST(SpirvReflection, RejectsMalformedBlobs) {
  auto empty = reflectSpirv({});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("too short"), std::string::npos);

  std::vector<uint32_t> garbage = {1, 2, 3, 4, 5, 6, 7, 8};
  auto bad = reflectSpirv(garbage);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("not a SPIR-V blob"), std::string::npos);

  std::vector<uint32_t> words = test::readKernel("axpy");
  ASSERT_FALSE(words.empty());
  std::vector<uint32_t> swapped = words;
  for (uint32_t &w : swapped)
    w = __builtin_bswap32(w);
  auto wrongOrder = reflectSpirv(swapped);
  ASSERT_FALSE(wrongOrder);
  EXPECT_NE(wrongOrder.message().find("byte order"), std::string::npos);

  // The first instruction claims more words than the blob has.
  std::vector<uint32_t> runaway = words;
  runaway[5] = (0xffffu << 16) | (runaway[5] & 0xffff);
  auto truncated = reflectSpirv(runaway);
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.message().find("runs past the end"), std::string::npos);
}

} // namespace
