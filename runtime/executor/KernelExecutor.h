//===- KernelExecutor.h - What a device must run for attention ------------===//
//
// The seam between the device-independent host API (backends, impls,
// metadata builders) and one device. An executor runs the attention ops of
// the reference on its device; AttentionImpl::forward validates its
// operands and metadata, then calls these. Two executors implement it:
// CpuExecutor (the reference op functions, on the CPU device's host memory)
// and BundleExecutor (a bundle's compiled plans, on any PlanDevice: Vulkan,
// CUDA, Metal, Tenstorrent).
//
// Contract shared by every method:
//  - Activations, outputs and caches are device tensors on device(); the
//    batch metadata (query_start_loc, seq_lens, block table, slot mapping)
//    and the per-head ALiBi slopes and sinks are host tensors: the host
//    checks them and the executor uploads what its kernels read (a few KB).
//  - Operand shapes and dtypes are those of the reference (DESIGN.md,
//    "Semantics"): T tokens, R requests, H query heads, G kv heads, D head
//    size, B block size. The caller has already checked ranks, head counts,
//    dtype agreement and that every used block and slot is inside the cache,
//    so an executor may rely on them; it still returns an error rather than
//    crashing on anything it cannot run (a dtype it has no kernel for, ...).
//  - Query and output rows at or beyond queryStartLoc[R] (or, for
//    reshapeAndCache and concatAndCacheMla, beyond the slot mapping's
//    length) are padding: they are neither read nor written.
//  - Methods enqueue their work on the device's queue and return; outputs
//    are complete once the device synchronizes (a read of them waits).
//    Nothing crosses to the host but the metadata going the other way.
//  - An executor is used from one thread at a time: its callers hold the
//    device's lock (PlanDevice::mutex) around each call, as the impls'
//    forward and Session do, so that threads sharing a session may call.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_KERNELEXECUTOR_H
#define ATTN_RUNTIME_KERNELEXECUTOR_H

#include "core/KvCache.h"
#include "core/OpParams.h"
#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/device/Device.h"

#include <cstdint>
#include <string_view>

namespace attn::runtime {

/// Where a kv cache keeps the token axis relative to the head axis: NHD
/// [num_blocks, 2, B, G, D] (FlashAttention's, the default) or HND
/// [num_blocks, 2, G, B, D]. core/KvCache.h's enum, under the runtime's
/// name.
using KvCacheLayout = KvLayout;

/// The knobs of one paged attention call: core/OpParams.h's (layout, scale,
/// causal, windows, soft cap) and the
/// per-head tensors it takes beside them. `scale` must be set (> 0).
struct PagedAttentionParams : attn::PagedAttentionParams {
  /// [H] f32 ALiBi slopes, or null.
  const Tensor *alibiSlopes = nullptr;
  /// [H] f32 attention sink logits, or null.
  const Tensor *sinks = nullptr;
  /// An fp8 cache's k_scale / v_scale ([1] or [G] f32); null otherwise.
  KvCacheScales kvScales;
};

/// The knobs of one MLA decode call: core/OpParams.h's (scale, kv_lora_rank
/// and the split count, which schedules work only) and an fp8 latent
/// cache's scale.
struct MlaDecodeParams : attn::MlaDecodeParams {
  /// [1] f32: an fp8 latent cache's k_scale; null otherwise.
  const Tensor *kvScale = nullptr;
};

struct VariantQuery;

/// Runs attention ops on one device. See the file comment for the contract.
class KernelExecutor {
public:
  virtual ~KernelExecutor() = default;

  /// A short name for messages: "cpu", "vulkan:lavapipe", ...
  virtual std::string_view name() const = 0;
  /// The device whose tensors the methods take.
  virtual PlanDevice &device() = 0;
  /// The bundle whose kernels this executor runs; null for one that runs no
  /// compiled kernels (the CPU reference).
  virtual const Bundle *servingBundle() const { return nullptr; }

  /// Ok when the executor can run the op call `call` describes
  /// (runtime/executor/VariantQuery.h); otherwise why not. Impls ask this for every
  /// call they will make when they are created. Executors that run any
  /// shape (the CPU reference) keep the default.
  virtual Status checkServes(const VariantQuery &call) const {
    return Status::ok();
  }

  /// Puts on the device now what serving `call` needs (a bundle's kernels
  /// for its variant), so that the first step does not; a session calls it
  /// for every call of a layer when the layer is created. Executors that
  /// need nothing keep the default.
  virtual Status prepare(const VariantQuery &call) { return Status::ok(); }

  /// Writes key[t] and value[t] ([T, G, D]) into kvCache at block
  /// slot / B, offset slot % B, for every t < slotMapping.dim(0) whose
  /// slot = slotMapping[t] ([T] i64) is not negative. An fp8 cache stores
  /// fp8(x / scale) with `kvScales` (both null for any other cache).
  virtual Status reshapeAndCache(const DeviceTensor &key,
                                 const DeviceTensor &value,
                                 const Tensor &slotMapping,
                                 KvCacheLayout layout,
                                 const DeviceTensor &kvCache,
                                 const KvCacheScales &kvScales) = 0;

  /// The MLA cache write (vLLM's concat_and_cache_mla): writes the latent
  /// row concat(kvC[t], kPe[t]) — kvC [T, L], kPe [T, P], the cache's dtype —
  /// into kvCache [num_blocks, B, L + P] at block slot / B, offset slot % B,
  /// for every t < slotMapping.dim(0) whose slot = slotMapping[t] ([T] i64)
  /// is not negative. An fp8 cache stores fp8(x / kvScale[0]) (null for any
  /// other cache).
  virtual Status concatAndCacheMla(const DeviceTensor &kvC,
                                   const DeviceTensor &kPe,
                                   const Tensor &slotMapping,
                                   const DeviceTensor &kvCache,
                                   const Tensor *kvScale) = 0;

  /// Varlen paged attention (prefill, chunked prefill and decode in one
  /// call): query [T, H, D], kvCache in `params.layout`, queryStartLoc
  /// [R + 1] i32, seqLens [R] i32, blockTable [R, M] i32. Writes out
  /// [T, H, D] and, when lse is not null, lse [T, H] f32 (natural log).
  virtual Status pagedAttention(const DeviceTensor &query,
                                const DeviceTensor &kvCache,
                                const Tensor &queryStartLoc,
                                const Tensor &seqLens, const Tensor &blockTable,
                                const PagedAttentionParams &params,
                                const DeviceTensor &out,
                                const DeviceTensor *lse) = 0;

  /// MLA decode, one query per request: q [R, H, L + P], kvCache
  /// [num_blocks, B, L + P], blockTable [R, M] i32, seqLens [R] i32. Writes
  /// out [R, H, L] and, when lse is not null, lse [R, H] f32.
  virtual Status mlaDecode(const DeviceTensor &q, const DeviceTensor &kvCache,
                           const Tensor &blockTable, const Tensor &seqLens,
                           const MlaDecodeParams &params,
                           const DeviceTensor &out,
                           const DeviceTensor *lse) = 0;

  /// Combines two partial results over disjoint key sets, (outA, lseA) and
  /// (outB, lseB), each [N, H, D] / [N, H] f32, into the attention over their
  /// union: rows [0, N) of out (and of lse, when not null). Cascade attention
  /// reduces its prefix and suffix passes with it.
  virtual Status mergeStates(const DeviceTensor &outA,
                             const DeviceTensor &lseA,
                             const DeviceTensor &outB,
                             const DeviceTensor &lseB, const DeviceTensor &out,
                             const DeviceTensor *lse) = 0;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_KERNELEXECUTOR_H
