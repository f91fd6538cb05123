//===- Random.h - Seeded, platform-independent random problems -----------===//
//
// Realistic attention steps for tests, benchmarks and attn-run: a mix of
// decode, prefill and chunked-prefill requests over a paged cache, with
// consistent metadata. Every number comes from std::mt19937_64's raw 64-bit
// draws through our own conversions (the standard distributions are
// implementation-defined), so a seed gives the same problem everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_TESTING_RANDOM_H
#define ATTN_REFERENCE_TESTING_RANDOM_H

#include "core/KvCache.h"
#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>
#include <optional>
#include <random>

namespace attn {

/// Uniform draws from std::mt19937_64, defined bit for bit.
class Random {
public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  /// The next raw 64-bit draw.
  uint64_t next() { return engine_(); }
  /// Uniform in [0, 1), a multiple of 2^-53.
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// Uniform integer in [lo, hi] (inclusive), without modulo bias.
  int64_t uniformInt(int64_t lo, int64_t hi);

  /// Fills a float tensor with uniform [lo, hi) values, each rounded once to
  /// its dtype, in row-major order.
  void fill(Tensor &t, double lo, double hi);

private:
  std::mt19937_64 engine_;
};

/// What the model and cache look like.
struct ProblemShape {
  int64_t numHeads = 32;  // H
  int64_t numKvHeads = 8; // G; forced to 1 for MLA
  int64_t headSize = 128; // D; ignored for MLA (the row is L + P)
  int64_t blockSize = 16; // B
  DType dtype = DType::BF16;
  KvLayout layout = KvLayout::NHD;
  /// MLA when > 0: L (kv_lora_rank) and P (rope dim) of the latent cache.
  int64_t kvLoraRank = 0;
  int64_t ropeDim = 0;
  /// The attention's window_left (< 0: none). Draws nothing: it only says
  /// which slots ProblemOptions::unreadFill fills.
  int64_t windowLeft = -1;

  bool isMla() const { return kvLoraRank > 0; }
};

/// Bounds on ProblemOptions, so a generated step stays a size the host holds
/// and the reference runs in minutes at most.
inline constexpr int64_t kMaxRandomRequests = 65536;
inline constexpr int64_t kMaxRandomTokens = int64_t{1} << 20;
inline constexpr int64_t kMaxRandomBlocks = int64_t{1} << 20;
/// Bound on a generated step's tokens, cache blocks and block-table entries.
inline constexpr int64_t kMaxRandomProblemBlocks = int64_t{1} << 24;

/// What the step looks like.
struct ProblemOptions {
  uint64_t seed = 0;
  int64_t numReqs = 4;
  /// Context (tokens cached before this step) of decode and chunked-prefill
  /// requests is drawn from [minContextLen, maxContextLen].
  int64_t minContextLen = 1;
  int64_t maxContextLen = 256;
  /// Chance that a request is a decode (q_len 1); the rest are split evenly
  /// between prefill (context 0) and chunked prefill (context > 0,
  /// q_len > 1). MLA problems are all decode.
  double decodeFraction = 0.5;
  /// Query length of prefill requests is drawn from [2, maxPrefillQueryLen].
  int64_t maxPrefillQueryLen = 64;
  /// Chance that a request is a cross-attention one (drawn before the
  /// decode/prefill kind; MLA problems have none): q_len from
  /// [2, maxPrefillQueryLen] over seq_len (the encoder's length) from
  /// [1, q_len - 1], so its context is negative, and its tokens' slots are
  /// padding. Only non-causal attention accepts such a batch.
  double crossFraction = 0.0;
  /// When > 0, the first sharedPrefixBlocks blocks of every request are the
  /// same physical blocks (a cached common prefix); every request's context
  /// then covers them (at least sharedPrefixBlocks * B tokens).
  int64_t sharedPrefixBlocks = 0;
  /// Blocks in the cache that no request uses.
  int64_t extraFreeBlocks = 4;
  /// When set, every cache slot no request reads (the tail of a request's
  /// last block, the free blocks and, with a window, the slots before the
  /// window of the request's first query token) holds this value instead of
  /// a random one, and block-table entries past a request's last block point
  /// at the free blocks (in turn) instead of block 0: the uninitialised
  /// memory of a real cache, as vLLM's kernel tests fill it with NaN, and
  /// the null block vLLM's sliding-window manager points freed blocks at.
  /// Attention must not depend on it.
  std::optional<double> unreadFill;
};

/// One consistent step. The cache holds random values everywhere, including
/// at the new tokens' slots: run reshapeAndCache(key, value, ...) first to
/// get the state paged attention expects.
struct Problem {
  /// [T, H, D]; MLA: [R, H, L + P].
  Tensor query;
  /// New tokens' keys and values, [T, G, D]; MLA: key is the compressed
  /// latent kv_c [T, L] and value the rotary key part k_pe [T, P] (the new
  /// latent rows are concat(key[t], value[t])).
  Tensor key;
  Tensor value;
  /// NHD [NB, 2, B, G, D] or HND [NB, 2, G, B, D]; MLA: [NB, B, L + P].
  Tensor kvCache;
  /// [R, M] i32, unused entries 0 (free blocks with unreadFill); blocks are
  /// never reused across requests except the shared prefix blocks.
  Tensor blockTable;
  Tensor seqLens;       // [R] i32
  Tensor queryStartLoc; // [R + 1] i32
  Tensor slotMapping;   // [T] i64, the new tokens' slots
  Tensor alibiSlopes;   // [H] f32, the standard geometric ALiBi slopes
  Tensor sinks;         // [H] f32, uniform in [-1, 1)
  /// 1 / sqrt(D) (MLA: 1 / sqrt(L + P)).
  double scale = 1.0;
};

/// `cache` (a problem's, in the model dtype) as an fp8 cache of `dtype`:
/// fp8(x / kScale) in the key half of a paged cache (axis 1 is keys, values
/// in both layouts) and in every row of a latent cache, fp8(x / vScale) in
/// the value half.
Tensor quantizeCache(const Tensor &cache, DType dtype, double kScale,
                     double vScale);

/// Draws a problem; an error when the options cannot be met.
Result<Problem> generateProblem(const ProblemShape &shape,
                                const ProblemOptions &options);

} // namespace attn

#endif // ATTN_REFERENCE_TESTING_RANDOM_H
