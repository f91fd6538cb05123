//===- CpuExecutor.h - The runtime's CPU backend ---------------*- C++ -*-===//
//
// Runs the attention ops with the reference op functions (reference/ops),
// which define what each op computes: f64 accumulation, one rounding to the
// output dtype. It is the CPU backend of the runtime and the oracle other
// executors are compared with (DESIGN.md's tolerances).
//
//   FlashAttentionBackend backend;
//   CpuExecutor executor;
//   auto impl = backend.getImpl(layer, executor);
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H
#define ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H

#include "runtime/KernelExecutor.h"
#include "runtime/Registry.h"

namespace attn::runtime {

/// A KernelExecutor over the reference op functions. Padded rows are cut
/// before the op runs and left untouched in the outputs. Stateless: any
/// number of impls may share one.
class CpuExecutor final : public KernelExecutor {
public:
  std::string_view name() const override { return "cpu"; }

  Status reshapeAndCache(const Tensor &key, const Tensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         Tensor &kvCache) override;
  Status concatAndCacheMla(const Tensor &kvC, const Tensor &kPe,
                           const Tensor &slotMapping, Tensor &kvCache) override;
  Status pagedAttention(const Tensor &query, const Tensor &kvCache,
                        const Tensor &queryStartLoc, const Tensor &seqLens,
                        const Tensor &blockTable,
                        const PagedAttentionParams &params, Tensor &out,
                        Tensor *lse) override;
  Status mlaDecode(const Tensor &q, const Tensor &kvCache,
                   const Tensor &blockTable, const Tensor &seqLens,
                   const MlaDecodeParams &params, Tensor &out,
                   Tensor *lse) override;
  Status mergeStates(const Tensor &outA, const Tensor &lseA, const Tensor &outB,
                     const Tensor &lseB, Tensor &out, Tensor *lse) override;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H
