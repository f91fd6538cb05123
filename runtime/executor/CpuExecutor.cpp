//===- CpuExecutor.cpp - The runtime's CPU backend -----------------------===//

#include "runtime/executor/CpuExecutor.h"

#include "reference/ops/Ops.h"
#include "runtime/bundle/Bundle.h"

#include <algorithm>
#include <cstring>

namespace attn::runtime {

Status CpuDevice::enqueueLaunch(std::string_view kernel,
                                const std::array<uint32_t, 3> &,
                                const std::array<int64_t, 3> &,
                                std::span<const BufferView>) {
  return errorf("the cpu device runs no kernels (asked for ", kernel,
                "): the cpu executor calls the reference ops");
}

Status CpuDevice::loadKernelCode(const Bundle &, const BundleKernel &kernel,
                             std::string_view) {
  return errorf("the reference's cpu device runs no ", kernel.target,
                " kernels: cpu bundles run on the cpu device of devices/cpu "
                "(CpuPlanDevice)");
}

namespace {

/// The tokens a batch really has (queryStartLoc[R]), or `rows` when the
/// tensor cannot say (the reference op then reports what is wrong with it).
int64_t batchTokens(const Tensor &queryStartLoc, int64_t rows) {
  if (queryStartLoc.rank() != 1 || queryStartLoc.dim(0) < 1 ||
      queryStartLoc.dtype() != DType::I32)
    return rows;
  int64_t tokens = queryStartLoc.getInt(queryStartLoc.dim(0) - 1);
  return tokens >= 0 && tokens < rows ? tokens : rows;
}

/// The host tensor over `t`'s first `rows` rows (all when rows < 0): the
/// CPU device's memory, not a copy. Refused inside a recorded step: the
/// reference ops compute on the host, which a replay would not repeat.
Result<Tensor> view(const DeviceTensor &t, int64_t rows = -1) {
  if (t.device && t.device->inRecordedStep())
    return errorf("the reference ops run on the host and cannot be recorded "
                  "for replay on ", t.device->name(),
                  " (a session with cpu bundles records their kernels)");
  if (rows >= 0 && t.rank() >= 1 && rows < t.dim(0))
    return hostView(t.leadingRows(rows));
  return hostView(t);
}

/// Copies an op's result into the first rows of the caller's tensor.
Status deliver(const Tensor &result, const DeviceTensor &dst,
               std::string_view name) {
  if (dst.dtype != result.dtype() || dst.rank() != result.rank() ||
      dst.rank() < 1 || dst.dim(0) < result.dim(0))
    return errorf(name, " is ", dst.describe(), ", the op's result ",
                  result.describe());
  for (int64_t i = 1; i < dst.rank(); ++i)
    if (dst.dim(i) != result.dim(i))
      return errorf(name, " is ", dst.describe(), ", the op's result ",
                    result.describe());
  Result<Tensor> target = view(dst, result.dim(0));
  if (!target)
    return target.status();
  std::memcpy(target->data(), result.data(), result.numBytes());
  return Status::ok();
}

Status deliver(const Result<AttentionOutput> &result, const DeviceTensor &out,
               const DeviceTensor *lse) {
  if (!result)
    return result.status();
  ATTN_RETURN_IF_ERROR(deliver(result->out, out, "out"));
  if (lse)
    ATTN_RETURN_IF_ERROR(deliver(result->lse, *lse, "lse"));
  return Status::ok();
}

#define ATTN_VIEW(name, expr)                                                  \
  Result<Tensor> name##View = (expr);                                          \
  if (!name##View)                                                             \
    return name##View.status();                                                \
  Tensor &name = *name##View;

} // namespace

CpuExecutor::CpuExecutor()
    : owned_(std::make_unique<CpuDevice>()), device_(owned_.get()) {}

CpuExecutor::CpuExecutor(PlanDevice &device) : device_(&device) {}

Status CpuExecutor::reshapeAndCache(const DeviceTensor &key,
                                    const DeviceTensor &value,
                                    const Tensor &slotMapping,
                                    KvCacheLayout layout,
                                    const DeviceTensor &kvCache,
                                    const KvCacheScales &kvScales) {
  // Tokens past the slot mapping are padding.
  int64_t tokens = slotMapping.rank() == 1 ? slotMapping.dim(0) : -1;
  ATTN_VIEW(k, view(key, tokens));
  ATTN_VIEW(v, view(value, tokens));
  ATTN_VIEW(cache, view(kvCache));
  return attn::reshapeAndCache(k, v, cache, slotMapping, layout, kvScales);
}

Status CpuExecutor::concatAndCacheMla(const DeviceTensor &kvC,
                                      const DeviceTensor &kPe,
                                      const Tensor &slotMapping,
                                      const DeviceTensor &kvCache,
                                      const Tensor *kvScale) {
  int64_t tokens = slotMapping.rank() == 1 ? slotMapping.dim(0) : -1;
  ATTN_VIEW(c, view(kvC, tokens));
  ATTN_VIEW(p, view(kPe, tokens));
  ATTN_VIEW(cache, view(kvCache));
  return attn::concatAndCacheMla(c, p, cache, slotMapping, kvScale);
}

Status CpuExecutor::pagedAttention(const DeviceTensor &query,
                                   const DeviceTensor &kvCache,
                                   const Tensor &queryStartLoc,
                                   const Tensor &seqLens,
                                   const Tensor &blockTable,
                                   const PagedAttentionParams &params,
                                   const DeviceTensor &out,
                                   const DeviceTensor *lse) {
  int64_t rows = query.rank() >= 1 ? query.dim(0) : 0;
  ATTN_VIEW(q, view(query, batchTokens(queryStartLoc, rows)));
  ATTN_VIEW(cache, view(kvCache));
  return deliver(attn::pagedAttention(q, cache, blockTable, seqLens,
                                      queryStartLoc, params.alibiSlopes,
                                      params.sinks, params, params.kvScales),
                 out, lse);
}

Status CpuExecutor::mlaDecode(const DeviceTensor &q,
                              const DeviceTensor &kvCache,
                              const Tensor &blockTable, const Tensor &seqLens,
                              const MlaDecodeParams &params,
                              const DeviceTensor &out,
                              const DeviceTensor *lse) {
  ATTN_VIEW(query, view(q));
  ATTN_VIEW(cache, view(kvCache));
  return deliver(attn::mlaDecode(query, cache, blockTable, seqLens, params,
                                 params.kvScale),
                 out, lse);
}

Status CpuExecutor::mergeStates(const DeviceTensor &outA,
                                const DeviceTensor &lseA,
                                const DeviceTensor &outB,
                                const DeviceTensor &lseB,
                                const DeviceTensor &out,
                                const DeviceTensor *lse) {
  ATTN_VIEW(a, view(outA));
  ATTN_VIEW(la, view(lseA));
  ATTN_VIEW(b, view(outB));
  ATTN_VIEW(lb, view(lseB));
  return deliver(attn::mergeStates(a, la, b, lb), out, lse);
}

} // namespace attn::runtime
