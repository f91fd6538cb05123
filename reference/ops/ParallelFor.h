//===- ParallelFor.h - A minimal parallel loop over independent items ----===//
//
// The reference ops split their work into independent items (one per request
// and kv head, for example) that write disjoint parts of the output, so the
// result does not depend on how many threads run them or in which order.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_OPS_PARALLELFOR_H
#define ATTN_REFERENCE_OPS_PARALLELFOR_H

#include <cstdint>
#include <functional>

namespace attn {

/// Threads parallelFor uses: the value set by setReferenceThreadCount, or the
/// hardware concurrency when none was set (at least 1).
unsigned referenceThreadCount();
/// Sets the thread count for later parallelFor calls; 0 restores the default.
void setReferenceThreadCount(unsigned count);

/// Calls `body(i)` once for every i in [0, n), on up to
/// referenceThreadCount() threads. Items must not depend on each other.
void parallelFor(int64_t n, const std::function<void(int64_t)> &body);

} // namespace attn

#endif // ATTN_REFERENCE_OPS_PARALLELFOR_H
