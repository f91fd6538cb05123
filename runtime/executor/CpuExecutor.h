//===- CpuExecutor.h - The runtime's CPU backend ---------------*- C++ -*-===//
//
// Runs the attention ops with the reference op functions (reference/ops),
// which define what each op computes: f64 accumulation, one rounding to the
// output dtype. It is the CPU backend of the runtime and the oracle other
// executors are compared with (DESIGN.md's tolerances). Its device is the
// CPU's host memory (CpuDevice): the reference ops read and write the
// tensors where they are, with no copies.
//
//   FlashAttentionBackend backend;
//   CpuExecutor executor;
//   auto impl = backend.getImpl(layer, executor);
//   auto cache = allocateTensor(executor.device(), DType::BF16, shape);
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H
#define ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H

#include "runtime/device/HostMemory.h"
#include "runtime/executor/KernelExecutor.h"

#include <memory>

namespace attn::runtime {

/// The CPU as a device: host memory, and no kernels (the CPU executor calls
/// the reference ops instead of launching).
class CpuDevice final : public HostMemoryDevice {
public:
  std::string_view name() const override { return "cpu"; }
  Status loadKernelCode(const Bundle &, const BundleKernel &kernel,
                    std::string_view) override;

protected:
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &,
                       const std::array<int64_t, 3> &,
                       std::span<const BufferView>) override;
};

/// A KernelExecutor over the reference op functions. Padded rows are cut
/// before the op runs and left untouched in the outputs. Any number of impls
/// may share one.
class CpuExecutor final : public KernelExecutor {
public:
  /// On a CPU device of its own.
  CpuExecutor();
  /// On `device`, whose memory must be the host's (MemorySpace::Host) and
  /// which must outlive the executor.
  explicit CpuExecutor(PlanDevice &device);

  std::string_view name() const override { return "cpu"; }
  PlanDevice &device() override { return *device_; }

  Status reshapeAndCache(const DeviceTensor &key, const DeviceTensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         const DeviceTensor &kvCache,
                         const KvCacheScales &kvScales) override;
  Status concatAndCacheMla(const DeviceTensor &kvC, const DeviceTensor &kPe,
                           const Tensor &slotMapping,
                           const DeviceTensor &kvCache,
                           const Tensor *kvScale) override;
  Status pagedAttention(const DeviceTensor &query, const DeviceTensor &kvCache,
                        const Tensor &queryStartLoc, const Tensor &seqLens,
                        const Tensor &blockTable,
                        const PagedAttentionParams &params,
                        const DeviceTensor &out,
                        const DeviceTensor *lse) override;
  Status mlaDecode(const DeviceTensor &q, const DeviceTensor &kvCache,
                   const Tensor &blockTable, const Tensor &seqLens,
                   const MlaDecodeParams &params, const DeviceTensor &out,
                   const DeviceTensor *lse) override;
  Status mergeStates(const DeviceTensor &outA, const DeviceTensor &lseA,
                     const DeviceTensor &outB, const DeviceTensor &lseB,
                     const DeviceTensor &out,
                     const DeviceTensor *lse) override;

private:
  std::unique_ptr<CpuDevice> owned_;
  PlanDevice *device_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_EXECUTORS_CPU_CPUEXECUTOR_H
