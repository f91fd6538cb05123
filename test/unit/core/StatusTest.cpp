//===- StatusTest.cpp - Result's value() on an error -----------------------===//

#include "core/Status.h"

#include <gtest/gtest.h>

#include <string>

using namespace attn;

namespace {
Result<std::string> failing() {
  return Status::error("no Vulkan physical device (vkCreateInstance: ...)");
}
} // namespace

TEST(Result, ValueHoldsTheValue) {
  Result<std::string> r(std::string("kernels"));
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r.value(), "kernels");
  EXPECT_EQ(r->size(), 7u);
  EXPECT_EQ(std::move(r).value(), "kernels");
}

// An engine that writes `open(...).value()` and meets an error sees the
// error's message, not std::bad_variant_access from terminate.
TEST(ResultDeathTest, ValueOfAnErrorPrintsItsMessage) {
  const char *expected = "attn: value\\(\\) called on an error: no Vulkan "
                         "physical device \\(vkCreateInstance: \\.\\.\\.\\)";
  EXPECT_DEATH(failing().value(), expected);
  EXPECT_DEATH(
      {
        Result<std::string> r = failing();
        (void)r->size();
      },
      expected);
  EXPECT_DEATH(
      {
        const Result<std::string> r = failing();
        (void)*r;
      },
      expected);
}
