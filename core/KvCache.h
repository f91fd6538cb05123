//===- KvCache.h - Where a token's key and value live in a paged cache ----===//
//
// A paged K/V cache is num_blocks blocks of block_size token slots. Slot s is
// block s / B, offset s % B. Two layouts:
//   NHD (FlashAttention, the seed's): [num_blocks, 2, B, G, D]
//   HND:                              [num_blocks, 2, G, B, D]
// Index 0 of the second axis holds keys, 1 values. A head's D elements are
// contiguous in both.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_KVCACHE_H
#define ATTN_CORE_KVCACHE_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <optional>
#include <string_view>

namespace attn {

enum class KvLayout { NHD, HND };

/// "nhd" / "hnd".
std::string_view toString(KvLayout layout);
std::optional<KvLayout> parseKvLayout(std::string_view s);

/// Which half of the cache's second axis.
enum class KvPart { Key = 0, Value = 1 };

/// The dimensions of a paged K/V cache and the offsets of its rows.
struct KvCacheGeometry {
  KvLayout layout = KvLayout::NHD;
  int64_t numBlocks = 0;
  int64_t blockSize = 0;
  int64_t numKvHeads = 0;
  int64_t headSize = 0;

  /// Reads the geometry of `cache` (a rank-5 float tensor with 2 on axis 1).
  static Result<KvCacheGeometry> of(const Tensor &cache, KvLayout layout);
  /// The geometry of a cache of `shape`: rank 5, 2 on axis 1, a block size
  /// of at least 1 (`what` describes the cache in messages).
  static Result<KvCacheGeometry> ofShape(const std::vector<int64_t> &shape,
                                         KvLayout layout,
                                         std::string_view what);

  /// Flat index of element 0 of the `part` row of kv head `head` at
  /// `offset` within `block`.
  int64_t rowOffset(KvPart part, int64_t block, int64_t offset,
                    int64_t head) const;
};

} // namespace attn

#endif // ATTN_CORE_KVCACHE_H
