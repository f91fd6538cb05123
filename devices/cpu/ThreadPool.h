//===- ThreadPool.h - The CPU device's launch threads ----------*- C++ -*-===//
//
// A fixed set of threads that run the work items of one launch at a time.
// The threads are made once, when the pool is, and wait between launches,
// so a launch creates no thread and allocates nothing: run() publishes the
// job, the workers and the calling thread take chunks of items from one
// atomic counter, and run() returns when every worker has finished its part.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_CPU_THREADPOOL_H
#define ATTN_DEVICES_CPU_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace attn::cpu {

class ThreadPool {
public:
  /// What run() calls for each item.
  using ItemFn = void (*)(void *context, int64_t item);

  /// `threads` threads in all, the caller of run() being one of them (so
  /// threads - 1 workers); at least 1.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned threads() const { return unsigned(workers_.size()) + 1; }

  /// Calls `fn(context, i)` once for each i in [0, count), on the pool's
  /// threads and the calling one, in any order; returns when all are done.
  /// One run at a time (the device's queue is in order).
  void run(int64_t count, ItemFn fn, void *context);

private:
  /// Takes chunks of the current job until none is left.
  void drain();
  void workerLoop();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  /// Workers wait here for a new job (or for the pool to stop).
  std::condition_variable wake_;
  /// run() waits here for the workers to finish the job.
  std::condition_variable done_;
  /// The current job; written by run() under the mutex before the workers
  /// are woken, read by them after.
  ItemFn fn_ = nullptr;
  void *context_ = nullptr;
  int64_t count_ = 0;
  int64_t chunk_ = 1;
  std::atomic<int64_t> next_{0};
  /// Bumped per job, so a worker tells a new job from the one it did.
  uint64_t generation_ = 0;
  /// Workers still on the current job.
  unsigned busy_ = 0;
  bool stop_ = false;
};

/// The CPUs this process may run on (its affinity mask); at least 1.
unsigned availableCpus();

} // namespace attn::cpu

#endif // ATTN_DEVICES_CPU_THREADPOOL_H
