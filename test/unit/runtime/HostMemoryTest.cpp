//===- HostMemoryTest.cpp - Host buffers, small and large -----------------===//

#include "runtime/device/HostMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

using namespace attn;
using namespace attn::runtime;

namespace {

/// Every byte of `buffer` is zero.
bool allZero(const HostBuffer &buffer) {
  for (uint64_t i = 0; i < buffer.size(); ++i)
    if (buffer.data()[i] != 0)
      return false;
  return true;
}

TEST(HostMemory, SmallBuffersAreZeroFilled) {
  Result<std::shared_ptr<HostBuffer>> buffer = HostBuffer::create(4096);
  ASSERT_TRUE(buffer) << buffer.message();
  EXPECT_EQ((*buffer)->size(), 4096u);
  EXPECT_TRUE(allZero(**buffer));
}

// Buffers of a huge page or more (a KV cache) are mapped on Linux, aligned
// to 2 MiB so that transparent huge pages can back them; they are zero-
// filled and writable to their last byte like the small ones.
TEST(HostMemory, LargeBuffersAreZeroFilledAndWritable) {
  const uint64_t bytes = (uint64_t(5) << 20) + 12345;
  Result<std::shared_ptr<HostBuffer>> buffer = HostBuffer::create(bytes);
  ASSERT_TRUE(buffer) << buffer.message();
  HostBuffer &b = **buffer;
  EXPECT_EQ(b.size(), bytes);
  EXPECT_TRUE(allZero(b));
  b.data()[0] = 1;
  b.data()[bytes - 1] = 2;
  EXPECT_EQ(b.data()[bytes - 1], 2);
#ifdef __linux__
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (uintptr_t(2) << 20), 0u);
#endif
}

TEST(HostMemory, BuffersPastTheLimitAreRefused) {
  Result<std::shared_ptr<HostBuffer>> buffer =
      HostBuffer::create(kMaxTensorBytes + 1);
  ASSERT_FALSE(buffer);
  EXPECT_NE(buffer.message().find("exceeds the limit"), std::string::npos);
}

} // namespace
