//===- HostCalls.cpp - Executor calls on host tensors ---------------------===//

#include "runtime/executor/HostCalls.h"

namespace attn::runtime::host {

namespace {

/// Copies a device result back into the host tensor it came from.
Status readBack(const DeviceTensor &src, Tensor &dst) {
  ATTN_RETURN_IF_ERROR(src.device->synchronize());
  Result<Tensor> host = toHost(src);
  if (!host)
    return host.status();
  dst = std::move(*host);
  return Status::ok();
}

/// Copies of `out` and, when `lse` is not null, `lse` on the device.
struct Outputs {
  DeviceTensor out, lse;

  static Result<Outputs> upload(PlanDevice &device, const Tensor &out,
                                const Tensor *lse) {
    Outputs o;
    Result<DeviceTensor> d = toDevice(device, out);
    if (!d)
      return d.status();
    o.out = std::move(*d);
    if (lse) {
      Result<DeviceTensor> l = toDevice(device, *lse);
      if (!l)
        return l.status();
      o.lse = std::move(*l);
    }
    return o;
  }
  /// The lse argument of the executor call.
  const DeviceTensor *lseArg() const { return lse.defined() ? &lse : nullptr; }

  Status readBack(Tensor &out, Tensor *lse) const {
    ATTN_RETURN_IF_ERROR(host::readBack(this->out, out));
    return lse ? host::readBack(this->lse, *lse) : Status::ok();
  }
};

} // namespace

Status reshapeAndCache(KernelExecutor &executor, const Tensor &key,
                       const Tensor &value, const Tensor &slotMapping,
                       KvCacheLayout layout, Tensor &kvCache) {
  PlanDevice &device = executor.device();
  Result<DeviceTensor> k = toDevice(device, key);
  Result<DeviceTensor> v = k ? toDevice(device, value) : k;
  Result<DeviceTensor> cache = v ? toDevice(device, kvCache) : v;
  if (!cache)
    return cache.status();
  ATTN_RETURN_IF_ERROR(
      executor.reshapeAndCache(*k, *v, slotMapping, layout, *cache, {}));
  return readBack(*cache, kvCache);
}

Status concatAndCacheMla(KernelExecutor &executor, const Tensor &kvC,
                         const Tensor &kPe, const Tensor &slotMapping,
                         Tensor &kvCache) {
  PlanDevice &device = executor.device();
  Result<DeviceTensor> c = toDevice(device, kvC);
  Result<DeviceTensor> pe = c ? toDevice(device, kPe) : c;
  Result<DeviceTensor> cache = pe ? toDevice(device, kvCache) : pe;
  if (!cache)
    return cache.status();
  ATTN_RETURN_IF_ERROR(
      executor.concatAndCacheMla(*c, *pe, slotMapping, *cache, nullptr));
  return readBack(*cache, kvCache);
}

Status pagedAttention(KernelExecutor &executor, const Tensor &query,
                      const Tensor &kvCache, const Tensor &queryStartLoc,
                      const Tensor &seqLens, const Tensor &blockTable,
                      const PagedAttentionParams &params, Tensor &out,
                      Tensor *lse) {
  PlanDevice &device = executor.device();
  Result<DeviceTensor> q = toDevice(device, query);
  Result<DeviceTensor> cache = q ? toDevice(device, kvCache) : q;
  if (!cache)
    return cache.status();
  Result<Outputs> o = Outputs::upload(device, out, lse);
  if (!o)
    return o.status();
  ATTN_RETURN_IF_ERROR(executor.pagedAttention(*q, *cache, queryStartLoc,
                                               seqLens, blockTable, params,
                                               o->out, o->lseArg()));
  return o->readBack(out, lse);
}

Status mlaDecode(KernelExecutor &executor, const Tensor &q,
                 const Tensor &kvCache, const Tensor &blockTable,
                 const Tensor &seqLens, const MlaDecodeParams &params,
                 Tensor &out, Tensor *lse) {
  PlanDevice &device = executor.device();
  Result<DeviceTensor> dq = toDevice(device, q);
  Result<DeviceTensor> cache = dq ? toDevice(device, kvCache) : dq;
  if (!cache)
    return cache.status();
  Result<Outputs> o = Outputs::upload(device, out, lse);
  if (!o)
    return o.status();
  ATTN_RETURN_IF_ERROR(executor.mlaDecode(*dq, *cache, blockTable, seqLens,
                                          params, o->out, o->lseArg()));
  return o->readBack(out, lse);
}

Status mergeStates(KernelExecutor &executor, const Tensor &outA,
                   const Tensor &lseA, const Tensor &outB, const Tensor &lseB,
                   Tensor &out, Tensor *lse) {
  PlanDevice &device = executor.device();
  Result<DeviceTensor> a = toDevice(device, outA);
  Result<DeviceTensor> la = a ? toDevice(device, lseA) : a;
  Result<DeviceTensor> b = la ? toDevice(device, outB) : la;
  Result<DeviceTensor> lb = b ? toDevice(device, lseB) : b;
  if (!lb)
    return lb.status();
  Result<Outputs> o = Outputs::upload(device, out, lse);
  if (!o)
    return o.status();
  ATTN_RETURN_IF_ERROR(
      executor.mergeStates(*a, *la, *b, *lb, o->out, o->lseArg()));
  return o->readBack(out, lse);
}

} // namespace attn::runtime::host
