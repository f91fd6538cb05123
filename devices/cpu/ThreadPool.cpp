//===- ThreadPool.cpp - The CPU device's launch threads -------------------===//

#include "devices/cpu/ThreadPool.h"

#include <algorithm>

#include <sched.h>

namespace attn::cpu {

unsigned availableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, CPU_COUNT(&set));
}

ThreadPool::ThreadPool(unsigned threads) {
  unsigned workers = std::max(1u, threads) - 1;
  workers_.reserve(workers);
  for (unsigned i = 0; i < workers; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void ThreadPool::drain() {
  for (;;) {
    int64_t first = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (first >= count_)
      return;
    int64_t last = std::min(count_, first + chunk_);
    for (int64_t i = first; i < last; ++i)
      fn_(context_, i);
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
    }
    drain();
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0)
      done_.notify_one();
  }
}

void ThreadPool::run(int64_t count, ItemFn fn, void *context) {
  if (count <= 0)
    return;
  if (workers_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i)
      fn(context, i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    context_ = context;
    count_ = count;
    // A few chunks per thread: items of uneven cost still spread, and the
    // counter is not touched once per item.
    chunk_ = std::max<int64_t>(1, count / (int64_t(threads()) * 4));
    next_.store(0, std::memory_order_relaxed);
    busy_ = unsigned(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  drain();
  // Every worker takes part in every job, so none still reads it once this
  // returns and the next run() rewrites it.
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
}

} // namespace attn::cpu
