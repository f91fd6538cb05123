//===- HostCalls.h - Executor calls on host tensors ------------*- C++ -*-===//
//
// The KernelExecutor methods for callers whose operands live on the host:
// tools that diff a device against the reference (attn-diff,
// attn-cuda-check) and tests. Each call copies its operands onto the
// executor's device, makes the call, waits for it, and copies what the call
// wrote back into the host tensors. A serving engine does not use these: it
// keeps its cache and activations on the device (runtime/device/Device.h) and
// calls the executor, or the impl, directly.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_HOSTCALLS_H
#define ATTN_RUNTIME_HOSTCALLS_H

#include "runtime/executor/KernelExecutor.h"

namespace attn::runtime::host {

/// KernelExecutor::reshapeAndCache; `kvCache` is updated in place (an fp8
/// cache with its `kvScales`).
Status reshapeAndCache(KernelExecutor &executor, const Tensor &key,
                       const Tensor &value, const Tensor &slotMapping,
                       KvCacheLayout layout, Tensor &kvCache,
                       const KvCacheScales &kvScales = {});
/// KernelExecutor::concatAndCacheMla; `kvCache` is updated in place (an fp8
/// cache with its `kvScale`).
Status concatAndCacheMla(KernelExecutor &executor, const Tensor &kvC,
                         const Tensor &kPe, const Tensor &slotMapping,
                         Tensor &kvCache, const Tensor *kvScale = nullptr);
/// KernelExecutor::pagedAttention into `out` (and `lse` when not null),
/// which keep their shapes: rows the call does not write keep their values.
Status pagedAttention(KernelExecutor &executor, const Tensor &query,
                      const Tensor &kvCache, const Tensor &queryStartLoc,
                      const Tensor &seqLens, const Tensor &blockTable,
                      const PagedAttentionParams &params, Tensor &out,
                      Tensor *lse);
/// KernelExecutor::mlaDecode into `out` (and `lse`).
Status mlaDecode(KernelExecutor &executor, const Tensor &q,
                 const Tensor &kvCache, const Tensor &blockTable,
                 const Tensor &seqLens, const MlaDecodeParams &params,
                 Tensor &out, Tensor *lse);
/// KernelExecutor::mergeStates into `out` (and `lse`).
Status mergeStates(KernelExecutor &executor, const Tensor &outA,
                   const Tensor &lseA, const Tensor &outB, const Tensor &lseB,
                   Tensor &out, Tensor *lse);

} // namespace attn::runtime::host

#endif // ATTN_RUNTIME_HOSTCALLS_H
