//===- ThreadPoolTest.cpp - The CPU device's launch threads ---------------===//
//
// Every item of a run is done exactly once, whatever the thread count, and
// back-to-back runs (as launches come) never mix their items.
//
//===----------------------------------------------------------------------===//

#include "devices/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace attn::cpu {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
};

void countItem(void *context, int64_t item) {
  static_cast<Counts *>(context)->hits[item].fetch_add(1);
}

TEST(ThreadPool, RunsEveryItemOnce) {
  for (unsigned threads : {1u, 2u, 4u, 7u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t count : {0, 1, 2, 5, 64, 1000, 4099}) {
      Counts counts{size_t(count)};
      pool.run(count, countItem, &counts);
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(counts.hits[i].load(), 1) << "item " << i << " of " << count
                                            << " on " << threads << " threads";
    }
  }
}

TEST(ThreadPool, BackToBackRunsStaySeparate) {
  ThreadPool pool(4);
  Counts counts(17);
  for (int run = 0; run < 2000; ++run)
    pool.run(17, countItem, &counts);
  for (int64_t i = 0; i < 17; ++i)
    EXPECT_EQ(counts.hits[i].load(), 2000) << "item " << i;
}

TEST(ThreadPool, HasAtLeastOneThread) {
  EXPECT_EQ(ThreadPool(0).threads(), 1u);
  EXPECT_GE(availableCpus(), 1u);
}

} // namespace
} // namespace attn::cpu
