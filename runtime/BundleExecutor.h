//===- BundleExecutor.h - Bundle plans as a KernelExecutor ----*- C++ -*-===//
//
// The executor of every compiled device: each KernelExecutor call is served
// by the bundle variant compiled for it. A call picks its variant by the
// manifest parameters it implies (op, heads, kv heads, head size, block size,
// dtype, layout, causal, windows, ALiBi / sinks presence; scale and soft cap
// compared as f32 values, since the manifest prints them as text), checks
// its metadata against the cache with the reference's checks, makes sure the
// kernels the variant's plan launches are loaded on the device, and runs the
// plan with runPlan.
//
//   Result<Bundle> bundle = loadBundle("llama.attnb");
//   VulkanPlanDevice &vk = ...;
//   BundleExecutor executor(*bundle, "spirv", vk, vk.kernelLoader());
//   auto impl = backend->getImpl(layer, executor);
//
// examples/host/HostExample.cpp does this in full.
//
// Nothing is launched for a call whose metadata would read or write outside
// the cache: block tables, slots and query_start_loc are checked first.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLEEXECUTOR_H
#define ATTN_RUNTIME_BUNDLEEXECUTOR_H

#include "runtime/Bundle.h"
#include "runtime/KernelExecutor.h"
#include "runtime/PlanRunner.h"
#include "runtime/VariantQuery.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// Makes one kernel of a bundle launchable on a device under kernel.symbol
/// (what plans' Launch ops name). `bytes` is the kernel file, already checked
/// against its hash; kernel.entryPoint and kernel.launchJson say how to
/// enter it. VulkanPlanDevice::addKernel fits behind it.
using KernelLoader =
    std::function<Status(const BundleKernel &kernel, std::string_view bytes)>;

/// The entry of `bundle` that serves `query` with kernels for `target`
/// (empty: any) on a device running `subgroups`: its parameters match, it
/// has the target's kernels, and the device runs its subgroup size (the
/// native size first). Otherwise an error saying which of these failed; when
/// no variant matches, it names, for every variant of the same op, the
/// parameters where it differs, and the attn-compile --variant that would
/// compile one.
Result<const BundleVariant *> findVariant(const Bundle &bundle,
                                          const VariantQuery &query,
                                          std::string_view target = {},
                                          const SubgroupSizes &subgroups = {});

/// A KernelExecutor that runs the plans of one bundle on a PlanDevice.
class BundleExecutor final : public KernelExecutor {
public:
  /// Serves calls from `bundle`'s kernels for `target` ("spirv", "ptx",
  /// "msl", "tt") on `device`, which must outlive the executor; `loader`
  /// puts kernels on the device.
  BundleExecutor(Bundle bundle, std::string target, PlanDevice &device,
                 KernelLoader loader);

  /// "<device name> (<target> bundle)".
  std::string_view name() const override { return name_; }

  Status reshapeAndCache(const Tensor &key, const Tensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         Tensor &kvCache) override;
  /// Served by the reshape_and_cache variant compiled for the latent cache
  /// (attn-compile's op=reshape_and_cache with kv_lora_rank and rope_dim);
  /// shapes and every slot are checked against the cache first.
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

  /// Ok when the bundle has an entry serving `call` on the device.
  Status checkServes(const VariantQuery &call) const override;

  /// Loads now (a serving engine's start-up check) instead of on first use
  /// every kernel of the target that the device would run: for each
  /// variant, the entry of the device's subgroup size. A bundle without
  /// kernels for the target, or a variant with no entry the device runs, is
  /// an error.
  Status loadAllKernels();

  const Bundle &bundle() const { return bundle_; }
  /// How many kernels this executor has put on the device.
  size_t loadedKernels() const { return loaded_.size(); }
  /// What the last plan run measured.
  const PlanRunStats &lastRunStats() const { return lastStats_; }

private:
  /// The entry serving `query` on this executor's target and device.
  Result<const BundleVariant *> select(const VariantQuery &query) const;
  /// Loads what the plan of `variant` (which computes `op`) launches and
  /// runs it on `inputs`.
  Result<std::vector<Tensor>> run(const BundleVariant &variant,
                                  std::string_view op,
                                  std::span<const Tensor> inputs);
  Status load(const BundleVariant &variant, const BundleKernel &kernel);
  /// Runs @reshape_and_cache of `variant` on the first `tokens` rows of
  /// `key` and `value` (paged form: key and value; latent form: kv_c and
  /// k_pe). The cache is moved in and back, never copied, and restored
  /// whatever happens.
  Status runCacheWrite(const BundleVariant &variant, const Tensor &key,
                       const Tensor &value, int64_t tokens,
                       const Tensor &slotMapping, Tensor &kvCache);

  Bundle bundle_;
  std::string target_;
  PlanDevice &device_;
  KernelLoader loader_;
  std::string name_;
  /// Kernels on the device by symbol and entry point, with the hash of what
  /// was loaded under each.
  std::map<std::string, uint64_t, std::less<>> loaded_;
  PlanRunStats lastStats_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLEEXECUTOR_H
