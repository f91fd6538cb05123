//===- Limits.h - Upper bounds on the sizes of attn ops ---------*- C++ -*-===//
//
// The largest sizes an attn op may have. They keep every index a kernel
// computes inside 32 bits where the kernels index with i32 (head rows,
// positions inside a block, positions inside a sequence) and keep compile
// time and kernel size bounded. The verifiers, attn-compile's variant parser
// and the runtime's size checks all read these, so a size is rejected in the
// same way wherever it enters. The values are far above every model we know
// of (DeepSeek-V3: 128 heads, rows of 576; block sizes up to 256).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DIALECT_LIMITS_H
#define ATTN_DIALECT_LIMITS_H

#include <cstdint>

namespace mlir::attn {

/// Query heads H and kv heads G.
inline constexpr int64_t kMaxHeads = 4096;
/// Head size D, and the latent row L + P of MLA.
inline constexpr int64_t kMaxHeadSize = 4096;
/// Tokens per cache block B.
inline constexpr int64_t kMaxBlockSize = 4096;
/// num_kv_splits of mla_decode.
inline constexpr int64_t kMaxKvSplits = 1024;
/// Sliding windows (window_left, window_right), in tokens: positions are i32.
inline constexpr int64_t kMaxWindow = (int64_t{1} << 31) - 1;
/// A backend's reorder_batch_threshold, a query length: query_start_loc is
/// i32, and the kernels compare with it in 32-bit indices (SPIR-V).
inline constexpr int64_t kMaxReorderBatchThreshold = (int64_t{1} << 31) - 1;

} // namespace mlir::attn

#endif // ATTN_DIALECT_LIMITS_H
