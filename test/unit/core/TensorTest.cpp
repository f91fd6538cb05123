//===- TensorTest.cpp - Tensor sizes ---------------------------------------===//

#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace attn;

// [2^62, 5] f32: the element count overflows int64, and the old product
// wrapped it to 2^62 elements, whose 4-byte size wrapped to a 0-byte buffer
// (UBSan: signed overflow in Tensor.cpp's product). Now create() rejects the
// shape and the constructor refuses to allocate it.
TEST(Tensor, ElementCountsPastInt64AreRejected) {
  const std::vector<int64_t> shape = {int64_t{1} << 62, 5};
  EXPECT_FALSE(Tensor::create(DType::F32, shape));
#ifdef NDEBUG
  EXPECT_THROW(Tensor(DType::F32, shape), std::length_error);
#else
  EXPECT_DEATH(Tensor(DType::F32, shape), "invalid shape");
#endif
}

TEST(Tensor, ZeroDimsMakeEmptyTensors) {
  Tensor t(DType::BF16, {int64_t{1} << 40, 0});
  EXPECT_EQ(t.numElements(), 0);
  EXPECT_EQ(t.numBytes(), 0u);
}
