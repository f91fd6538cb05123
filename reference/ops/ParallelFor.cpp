//===- ParallelFor.cpp - A minimal parallel loop over independent items --===//
#include "reference/ops/ParallelFor.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace attn {

namespace {
std::atomic<unsigned> configuredThreads{0};
} // namespace

unsigned referenceThreadCount() {
  if (unsigned n = configuredThreads.load())
    return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void setReferenceThreadCount(unsigned count) { configuredThreads = count; }

void parallelFor(int64_t n, const std::function<void(int64_t)> &body) {
  if (n <= 0)
    return;
  const int64_t numThreads =
      std::min<int64_t>(n, static_cast<int64_t>(referenceThreadCount()));
  if (numThreads == 1) {
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
  // Threads take the next unclaimed item until none is left, which balances
  // items of uneven cost (long and short requests).
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t i = next++; i < n; i = next++)
      body(i);
  };
  std::vector<std::thread> threads;
  threads.reserve(numThreads - 1);
  for (int64_t t = 1; t < numThreads; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();
}

} // namespace attn
