//===- FakeExecutor.h - A KernelExecutor that records its calls -----------===//
//
// Lets the runtime tests see what AttentionImpl::forward dispatched, without
// any device or reference kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H
#define ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H

#include "runtime/KernelExecutor.h"

#include <optional>
#include <string>
#include <vector>

namespace attn::runtime::test {

struct PagedCall {
  Tensor queryStartLoc;
  Tensor seqLens;
  Tensor blockTable;
  PagedAttentionParams params;
  bool wantsLse = false;
};

class FakeExecutor : public KernelExecutor {
public:
  std::string_view name() const override { return "fake"; }

  Status reshapeAndCache(const Tensor &key, const Tensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         Tensor &kvCache) override {
    ++cacheWrites;
    lastSlotMapping = slotMapping;
    return Status::ok();
  }

  Status concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                           const Tensor &slotMapping,
                           Tensor &kvCache) override {
    ++mlaCacheWrites;
    order.push_back("concat_and_cache_mla");
    lastSlotMapping = slotMapping;
    lastKvC = kvC;
    lastKPe = kPe;
    return Status::ok();
  }

  Status pagedAttention(const Tensor &query, const Tensor &kvCache,
                        const Tensor &queryStartLoc, const Tensor &seqLens,
                        const Tensor &blockTable,
                        const PagedAttentionParams &params, Tensor &out,
                        Tensor *lse) override {
    if (failWith)
      return Status::error(*failWith);
    pagedCalls.push_back(
        {queryStartLoc, seqLens, blockTable, params, lse != nullptr});
    return Status::ok();
  }

  Status mlaDecode(const Tensor &q, const Tensor &kvCache,
                   const Tensor &blockTable, const Tensor &seqLens,
                   const MlaDecodeParams &params, Tensor &out,
                   Tensor *lse) override {
    ++mlaCalls;
    order.push_back("mla_decode");
    lastMlaParams = params;
    return Status::ok();
  }

  Status mergeStates(const Tensor &outA, const Tensor &lseA, const Tensor &outB,
                     const Tensor &lseB, Tensor &out, Tensor *lse) override {
    ++merges;
    return Status::ok();
  }

  int cacheWrites = 0;
  int mlaCacheWrites = 0;
  /// The MLA calls (concat_and_cache_mla, mla_decode) in the order made.
  std::vector<std::string> order;
  Tensor lastKvC, lastKPe;
  Tensor lastSlotMapping;
  std::vector<PagedCall> pagedCalls;
  int mlaCalls = 0;
  MlaDecodeParams lastMlaParams;
  int merges = 0;
  std::optional<std::string> failWith;
};

} // namespace attn::runtime::test

#endif // ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H
