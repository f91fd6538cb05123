//===- FakeExecutor.h - A KernelExecutor that records its calls -----------===//
//
// Lets the runtime tests see what AttentionImpl::forward dispatched, without
// running a kernel. Its tensors live on a CPU device (host memory), so a
// test can look at what a call was given.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H
#define ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H

#include "runtime/executor/KernelExecutor.h"
#include "runtime/executor/CpuExecutor.h"

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
  PlanDevice &device() override { return cpu; }

  Status reshapeAndCache(const DeviceTensor &key, const DeviceTensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         const DeviceTensor &kvCache,
                         const KvCacheScales &kvScales) override {
    ++cacheWrites;
    lastSlotMapping = slotMapping;
    return Status::ok();
  }

  Status concatAndCacheMla(const DeviceTensor &kvC, const DeviceTensor &kPe,
                           const Tensor &slotMapping,
                           const DeviceTensor &kvCache,
                           const Tensor *kvScale) override {
    ++mlaCacheWrites;
    order.push_back("concat_and_cache_mla");
    lastSlotMapping = slotMapping;
    lastKvC = *toHost(kvC);
    lastKPe = *toHost(kPe);
    return Status::ok();
  }

  Status pagedAttention(const DeviceTensor &query,
                        const DeviceTensor &kvCache,
                        const Tensor &queryStartLoc, const Tensor &seqLens,
                        const Tensor &blockTable,
                        const PagedAttentionParams &params,
                        const DeviceTensor &out,
                        const DeviceTensor *lse) override {
    if (failWith)
      return Status::error(*failWith);
    pagedCalls.push_back(
        {queryStartLoc, seqLens, blockTable, params, lse != nullptr});
    return Status::ok();
  }

  Status mlaDecode(const DeviceTensor &q, const DeviceTensor &kvCache,
                   const Tensor &blockTable, const Tensor &seqLens,
                   const MlaDecodeParams &params, const DeviceTensor &out,
                   const DeviceTensor *lse) override {
    ++mlaCalls;
    order.push_back("mla_decode");
    lastMlaParams = params;
    return Status::ok();
  }

  Status mergeStates(const DeviceTensor &outA, const DeviceTensor &lseA,
                     const DeviceTensor &outB, const DeviceTensor &lseB,
                     const DeviceTensor &out,
                     const DeviceTensor *lse) override {
    ++merges;
    return Status::ok();
  }

  CpuDevice cpu;
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

/// A copy of `t` on the CPU device of `executor`; a default-constructed
/// tensor (rank 0, no elements) stays an undefined device tensor.
inline DeviceTensor onDevice(FakeExecutor &executor, const Tensor &t) {
  if (t.rank() == 0)
    return {};
  return *toDevice(executor.device(), t);
}

} // namespace attn::runtime::test

#endif // ATTN_TEST_UNIT_RUNTIME_FAKEEXECUTOR_H
