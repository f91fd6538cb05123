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

/// Device copies of a call's inputs, in order.
using Inputs = std::vector<DeviceTensor>;

/// Device copies of `tensors`.
Result<Inputs> upload(PlanDevice &device,
                      std::initializer_list<const Tensor *> tensors) {
  Inputs copies;
  for (const Tensor *t : tensors) {
    Result<DeviceTensor> copy = toDevice(device, *t);
    if (!copy)
      return copy.status();
    copies.push_back(std::move(*copy));
  }
  return copies;
}

/// Uploads `inputs` and the outputs, runs `call` on the copies (the inputs
/// in order, out, and lse or null) and reads the outputs back.
template <typename Call>
Status runOnCopies(KernelExecutor &executor,
                   std::initializer_list<const Tensor *> inputs, Tensor &out,
                   Tensor *lse, Call call) {
  Result<Inputs> in = upload(executor.device(), inputs);
  if (!in)
    return in.status();
  Result<Outputs> o = Outputs::upload(executor.device(), out, lse);
  if (!o)
    return o.status();
  ATTN_RETURN_IF_ERROR(call(*in, o->out, o->lseArg()));
  return o->readBack(out, lse);
}

/// Uploads a cache write's two inputs and `kvCache`, runs `write` on the
/// copies and reads the cache back.
template <typename Write>
Status writeCache(KernelExecutor &executor, const Tensor &a, const Tensor &b,
                  Tensor &kvCache, Write write) {
  Result<Inputs> in = upload(executor.device(), {&a, &b, &kvCache});
  if (!in)
    return in.status();
  ATTN_RETURN_IF_ERROR(write((*in)[0], (*in)[1], (*in)[2]));
  return readBack((*in)[2], kvCache);
}

} // namespace

Status reshapeAndCache(KernelExecutor &executor, const Tensor &key,
                       const Tensor &value, const Tensor &slotMapping,
                       KvCacheLayout layout, Tensor &kvCache,
                       const KvCacheScales &kvScales) {
  return writeCache(executor, key, value, kvCache,
                    [&](const DeviceTensor &k, const DeviceTensor &v,
                        const DeviceTensor &cache) {
                      return executor.reshapeAndCache(k, v, slotMapping, layout,
                                                      cache, kvScales);
                    });
}

Status concatAndCacheMla(KernelExecutor &executor, const Tensor &kvC,
                         const Tensor &kPe, const Tensor &slotMapping,
                         Tensor &kvCache, const Tensor *kvScale) {
  return writeCache(executor, kvC, kPe, kvCache,
                    [&](const DeviceTensor &c, const DeviceTensor &pe,
                        const DeviceTensor &cache) {
                      return executor.concatAndCacheMla(c, pe, slotMapping,
                                                        cache, kvScale);
                    });
}

Status pagedAttention(KernelExecutor &executor, const Tensor &query,
                      const Tensor &kvCache, const Tensor &queryStartLoc,
                      const Tensor &seqLens, const Tensor &blockTable,
                      const PagedAttentionParams &params, Tensor &out,
                      Tensor *lse) {
  return runOnCopies(
      executor, {&query, &kvCache}, out, lse,
      [&](const Inputs &in, const DeviceTensor &o, const DeviceTensor *l) {
        return executor.pagedAttention(in[0], in[1], queryStartLoc, seqLens,
                                       blockTable, params, o, l);
      });
}

Status mlaDecode(KernelExecutor &executor, const Tensor &q,
                 const Tensor &kvCache, const Tensor &blockTable,
                 const Tensor &seqLens, const MlaDecodeParams &params,
                 Tensor &out, Tensor *lse) {
  return runOnCopies(
      executor, {&q, &kvCache}, out, lse,
      [&](const Inputs &in, const DeviceTensor &o, const DeviceTensor *l) {
        return executor.mlaDecode(in[0], in[1], blockTable, seqLens, params, o,
                                  l);
      });
}

Status mergeStates(KernelExecutor &executor, const Tensor &outA,
                   const Tensor &lseA, const Tensor &outB, const Tensor &lseB,
                   Tensor &out, Tensor *lse) {
  return runOnCopies(
      executor, {&outA, &lseA, &outB, &lseB}, out, lse,
      [&](const Inputs &in, const DeviceTensor &o, const DeviceTensor *l) {
        return executor.mergeStates(in[0], in[1], in[2], in[3], o, l);
      });
}

} // namespace attn::runtime::host
