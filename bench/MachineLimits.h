//===- MachineLimits.h - What the host's cores can do, measured -*- C++ -*-===//
//
// The yardsticks the CPU benchmarks divide by, measured in the benchmark's
// own process on the CPU device's ThreadPool with the thread count of the
// kernel they are compared with:
//
//  - read bandwidth: a streaming sum over a buffer of a given size (as large
//    as the KV cache), in slices the pool's threads take as they take a
//    launch's work items;
//  - f32 FMA peak: a loop of fused multiply-adds on registers only, with
//    more independent accumulators than the FMA latency times the FMA ports
//    needs;
//  - bf16 dot-product peak: the same loop with vdpbf16ps, where the host
//    has AVX-512 BF16.
//
// Each probe has an AVX-512 and an AVX2 body, chosen at run time, and
// reports the best of a few passes: a limit, not an average. x86-64 only;
// elsewhere the probes report nothing. Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_BENCH_MACHINELIMITS_H
#define ATTN_BENCH_MACHINELIMITS_H

#include "devices/cpu/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace attn::bench {

namespace limits {

/// Seconds `fn` takes, once.
template <typename Fn> double secondsOf(Fn fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The best rate (`work` per second) of `fn` over at least `passes` passes
/// and `minSeconds` in all.
template <typename Fn>
double bestRate(double work, int passes, double minSeconds, Fn fn) {
  double best = 0, total = 0;
  for (int i = 0; i < passes || total < minSeconds; ++i) {
    double s = secondsOf(fn);
    total += s;
    best = std::max(best, work / s);
  }
  return best;
}

#if defined(__x86_64__)
/// The sum of `v`'s lanes (not _mm512_reduce_add_ps, whose GCC 12 body
/// warns of an uninitialized value).
__attribute__((target("avx512f"))) inline float sumLanes(__m512 v) {
  float lanes[16];
  _mm512_storeu_ps(lanes, v);
  float sum = 0;
  for (float l : lanes)
    sum += l;
  return sum;
}

/// Sums `bytes` bytes (a multiple of 256, 64-byte aligned) as 64-bit
/// integers: integer adds cost less than the loads, so the loads set the
/// pace.
__attribute__((target("avx512f"))) inline uint64_t
sumAvx512(const uint8_t *data, size_t bytes) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes; i += 256) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(data + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(data + i + 64));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(data + i + 128));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(data + i + 192));
  }
  __m512i s =
      _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
  uint64_t lanes[8];
  _mm512_storeu_si512(lanes, s);
  uint64_t sum = 0;
  for (uint64_t l : lanes)
    sum += l;
  return sum;
}

__attribute__((target("avx2"))) inline uint64_t sumAvx2(const uint8_t *data,
                                                        size_t bytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  const auto *v = reinterpret_cast<const __m256i *>(data);
  for (size_t i = 0; i < bytes / 32; i += 4) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(v + i));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(v + i + 1));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(v + i + 2));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(v + i + 3));
  }
  __m256i s =
      _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

/// FMA iterations per work item of the compute probes.
constexpr int64_t kComputeIterations = int64_t{1} << 20;

/// kComputeIterations steps of 12 independent 16-wide FMAs: 12 chains cover
/// a 4-cycle FMA on 2 ports with room to spare. Returns a value derived
/// from every accumulator so that none can be dropped.
__attribute__((target("avx512f"))) inline float fmaLoopAvx512(float seed) {
  __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a[12];
  for (int k = 0; k < 12; ++k)
    a[k] = _mm512_set1_ps(seed + static_cast<float>(k));
  for (int64_t i = 0; i < kComputeIterations; ++i)
    for (int k = 0; k < 12; ++k)
      a[k] = _mm512_fmadd_ps(a[k], m, c);
  __m512 s = a[0];
  for (int k = 1; k < 12; ++k)
    s = _mm512_add_ps(s, a[k]);
  return sumLanes(s);
}

/// The same on 8-wide registers; 12 accumulators leave 4 of the 16 ymm
/// registers for the operands.
__attribute__((target("avx2,fma"))) inline float fmaLoopAvx2(float seed) {
  __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a[12];
  for (int k = 0; k < 12; ++k)
    a[k] = _mm256_set1_ps(seed + static_cast<float>(k));
  for (int64_t i = 0; i < kComputeIterations; ++i)
    for (int k = 0; k < 12; ++k)
      a[k] = _mm256_fmadd_ps(a[k], m, c);
  __m256 s = a[0];
  for (int k = 1; k < 12; ++k)
    s = _mm256_add_ps(s, a[k]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float sum = 0;
  for (float l : lanes)
    sum += l;
  return sum;
}

/// kComputeIterations steps of 12 independent vdpbf16ps: each adds 16
/// lanes' two bf16 products, 64 FLOPs.
__attribute__((target("avx512f,avx512bf16"))) inline float
bf16DotLoop(float seed) {
  __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(seed), _mm512_set1_ps(0.5f));
  __m512bh y =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(-1e-3f));
  __m512 a[12];
  for (int k = 0; k < 12; ++k)
    a[k] = _mm512_set1_ps(static_cast<float>(k));
  for (int64_t i = 0; i < kComputeIterations; ++i)
    for (int k = 0; k < 12; ++k)
      a[k] = _mm512_dpbf16_ps(a[k], x, y);
  __m512 s = a[0];
  for (int k = 1; k < 12; ++k)
    s = _mm512_add_ps(s, a[k]);
  return sumLanes(s);
}
#endif

/// Runs `items` calls of `fn(i)` on `pool`, the results summed into a value
/// the compiler must keep.
template <typename T, typename Fn>
void runItems(cpu::ThreadPool &pool, int64_t items, Fn fn) {
  struct Context {
    Fn *fn;
    std::vector<T> out;
  } context{&fn, std::vector<T>(items)};
  pool.run(
      items,
      [](void *c, int64_t i) {
        auto &ctx = *static_cast<Context *>(c);
        ctx.out[i] = (*ctx.fn)(i);
      },
      &context);
  T sum{};
  for (T v : context.out)
    sum += v;
  // Observed through a volatile store: the sums cannot be elided.
  volatile T sink = sum;
  (void)sink;
}

} // namespace limits

/// Whether this host has the extensions of the AVX-512 (F), AVX2 + FMA and
/// AVX-512 BF16 probes.
inline bool hostHasAvx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}
inline bool hostHasAvx2Fma() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}
inline bool hostHasAvx512Bf16() {
#if defined(__x86_64__)
  return hostHasAvx512() && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

/// A pool of `threads` threads for the probes, made once per count.
inline cpu::ThreadPool &probePool(unsigned threads) {
  static std::map<unsigned, std::unique_ptr<cpu::ThreadPool>> pools;
  std::unique_ptr<cpu::ThreadPool> &pool = pools[threads];
  if (!pool)
    pool = std::make_unique<cpu::ThreadPool>(threads);
  return *pool;
}

/// A buffer for the bandwidth probe: `bytes` rounded up to 2 MiB, 64-byte
/// aligned, every page written (so the probe reads memory, not the zero
/// page).
class ReadBuffer {
public:
  explicit ReadBuffer(size_t bytes)
      : bytes_((bytes + kSlice - 1) / kSlice * kSlice),
        data_(static_cast<uint8_t *>(std::aligned_alloc(64, bytes_))) {
    for (size_t i = 0; i < bytes_; i += 4096)
      std::memset(data_.get() + i, static_cast<int>(i >> 12) | 1, 4096);
  }
  size_t bytes() const { return bytes_; }
  const uint8_t *data() const { return data_.get(); }

  /// Bytes one work item of the probe reads.
  static constexpr size_t kSlice = size_t{2} << 20;

private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  size_t bytes_;
  std::unique_ptr<uint8_t, Free> data_;
};

/// Bytes per second a streaming read of `buffer` reaches on `pool`'s
/// threads, each pass every slice once; 0 on hosts without AVX2.
inline double measureReadBandwidth(cpu::ThreadPool &pool,
                                   const ReadBuffer &buffer,
                                   double minSeconds = 0.2) {
#if defined(__x86_64__)
  bool wide = hostHasAvx512();
  if (!wide && !hostHasAvx2Fma())
    return 0;
  int64_t slices = static_cast<int64_t>(buffer.bytes() / ReadBuffer::kSlice);
  auto pass = [&] {
    limits::runItems<uint64_t>(pool, slices, [&](int64_t i) {
      const uint8_t *slice = buffer.data() + i * ReadBuffer::kSlice;
      return wide ? limits::sumAvx512(slice, ReadBuffer::kSlice)
                  : limits::sumAvx2(slice, ReadBuffer::kSlice);
    });
  };
  pass(); // The first pass after writing may still see dirty lines.
  return limits::bestRate(static_cast<double>(buffer.bytes()), 3, minSeconds,
                          pass);
#else
  return 0;
#endif
}

/// f32 FLOPs per second (an FMA is two) of the register-only FMA loop on
/// `pool`'s threads, at the widest vectors the host has; 0 without AVX2.
inline double measureFmaPeak(cpu::ThreadPool &pool, double minSeconds = 0.1) {
#if defined(__x86_64__)
  bool wide = hostHasAvx512();
  if (!wide && !hostHasAvx2Fma())
    return 0;
  // Several items per thread, so that a thread that starts late still
  // gets its share.
  int64_t items = 4 * static_cast<int64_t>(pool.threads());
  double lanes = wide ? 16 : 8;
  double flops =
      static_cast<double>(items) * limits::kComputeIterations * 12 * lanes * 2;
  return limits::bestRate(flops, 3, minSeconds, [&] {
    limits::runItems<float>(pool, items, [&](int64_t i) {
      float seed = static_cast<float>(i);
      return wide ? limits::fmaLoopAvx512(seed) : limits::fmaLoopAvx2(seed);
    });
  });
#else
  return 0;
#endif
}

/// FLOPs per second of the vdpbf16ps loop on `pool`'s threads (a bf16
/// product and its add are two), or nullopt where the host has no AVX-512
/// BF16.
inline std::optional<double> measureBf16DotPeak(cpu::ThreadPool &pool,
                                                double minSeconds = 0.1) {
#if defined(__x86_64__)
  if (!hostHasAvx512Bf16())
    return std::nullopt;
  int64_t items = 4 * static_cast<int64_t>(pool.threads());
  double flops =
      static_cast<double>(items) * limits::kComputeIterations * 12 * 64;
  return limits::bestRate(flops, 3, minSeconds, [&] {
    limits::runItems<float>(pool, items, [&](int64_t i) {
      return limits::bf16DotLoop(static_cast<float>(i));
    });
  });
#else
  return std::nullopt;
#endif
}

} // namespace attn::bench

#endif // ATTN_BENCH_MACHINELIMITS_H
