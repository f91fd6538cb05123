//===- BundleExecutor.h - Bundle plans as a KernelExecutor ----*- C++ -*-===//
//
// The executor of every compiled device: each KernelExecutor call is served
// by the bundle variant compiled for it. A call picks its variant by the
// manifest parameters it implies (op, heads, kv heads, head size, block size,
// dtype, layout, causal, windows, ALiBi / sinks presence; scale and soft cap
// compared as f32 values, since the manifest prints them as text), checks
// its metadata (on the host) against the cache with core/Metadata.h's checks,
// makes sure the kernels the variant's plan launches are loaded on the
// device, stages the metadata onto the device, and enqueues the plan with
// runPlan over the caller's device tensors: the cache never leaves the
// device, the results are copied into the caller's outputs there.
//
//   Result<Bundle> bundle = loadBundle("llama.attnb");
//   VulkanPlanDevice &vk = ...;
//   BundleExecutor executor(*bundle, "spirv", vk);
//   auto impl = backend->getImpl(layer, executor, &cacheSpec);
//
// runtime/Session.h does this for an engine; examples/host shows it.
//
// Nothing is launched for a call whose metadata would read or write outside
// the cache: block tables, slots and query_start_loc are checked first.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLEEXECUTOR_H
#define ATTN_RUNTIME_BUNDLEEXECUTOR_H

#include "runtime/bundle/Bundle.h"
#include "runtime/executor/KernelExecutor.h"
#include "runtime/device/PlanRunner.h"
#include "runtime/executor/VariantQuery.h"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

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
  /// "msl", "tt") on `device`, which must outlive the executor and loads
  /// the kernels (PlanDevice::loadKernel).
  BundleExecutor(Bundle bundle, std::string target, PlanDevice &device);

  /// "<device name> (<target> bundle)".
  std::string_view name() const override { return name_; }
  PlanDevice &device() override { return device_; }

  /// Ok when the bundle has an entry serving `call` on the device.
  Status checkServes(const VariantQuery &call) const override;

  Status reshapeAndCache(const DeviceTensor &key, const DeviceTensor &value,
                         const Tensor &slotMapping, KvCacheLayout layout,
                         const DeviceTensor &kvCache,
                         const KvCacheScales &kvScales) override;
  /// Served by the reshape_and_cache variant compiled for the latent cache
  /// (attn-compile's op=reshape_and_cache with kv_lora_rank and rope_dim);
  /// shapes and every slot are checked against the cache first.
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

  /// Loads the kernels of the entry serving `call`, unless they are loaded.
  Status prepare(const VariantQuery &call) override;

  /// Checks that the bundle has kernels for the target, and that the
  /// device runs some of them (PlanDevice::runsKernel on their kinds; if
  /// none, the first entry with the target's kernels has the device say
  /// why): a session's check when it opens the bundle, which otherwise
  /// reads no entry whole. Whether the device runs a given entry (its
  /// subgroup size, its kernels' ISA) is checked when a layer or call
  /// selects it, or by loadAllKernels.
  Status checkRunnable();

  /// Loads now every kernel of the target that the device would run (for
  /// each variant, the entry of the device's subgroup size), instead of
  /// when a layer or call first needs it: what attn-bundle-check and
  /// attn-vulkan-info --bundle do to check a whole bundle. Fails as
  /// checkRunnable() does; when a variant has no entry the device runs
  /// (its subgroup size, and for each symbol a kernel the device takes, by
  /// PlanDevice::runsKernel); or on the first kernel that does not load.
  Status loadAllKernels();

  const Bundle *servingBundle() const override { return &bundle_; }
  /// How many kernel files this executor has put on the device (a SPIR-V
  /// kernel in both ABI forms counts twice).
  size_t loadedKernels() const { return loaded_.size(); }
  /// What the last plan run measured.
  const PlanRunStats &lastRunStats() const { return lastStats_; }

private:
  /// The entry serving `query` on this executor's target and device.
  Result<const BundleVariant *> select(const VariantQuery &query) const;
  /// Loads what the plan of `variant` (which computes `op`) launches and
  /// enqueues it on `args`.
  Result<std::vector<DeviceTensor>> run(const BundleVariant &variant,
                                        std::string_view op,
                                        std::span<const DeviceTensor> args);
  Status load(const BundleVariant &variant, const BundleKernel &kernel);
  /// Per variant name, the entry the device runs (null: none), as select()
  /// picks it, every entry read whole; an error when the bundle has no
  /// kernels for the target.
  Result<std::map<std::string, const BundleVariant *>> runnableEntries();
  /// loadAllKernels's check of every variant: an entry the device runs,
  /// with a kernel it takes for each symbol; returns those entries. Reads
  /// no kernel file unless one fails, to have the device's reason.
  Result<std::vector<const BundleVariant *>> checkAllRunnable();
  /// Whether the device takes a kernel of each of `entry`'s symbols for the
  /// target; else the device's reason, from loading one.
  Status checkEntryRunnable(const BundleVariant &entry);
  /// Loads every kernel of `entry` for the target that the device runs.
  Status loadEntry(const BundleVariant &entry);
  /// Loads the kernels of `symbol` in `variant` that the device runs
  /// (PlanDevice::runsKernel), or the first when it runs none.
  Status loadSymbol(const BundleVariant &variant, std::string_view symbol);
  /// A device copy of host metadata (the staging path: its bytes are the
  /// metadata's).
  Result<DeviceTensor> stage(const Tensor &host);
  /// Puts a plan's result into the caller's tensor (a device copy of its
  /// rows, or nothing when the plan wrote it in place).
  Status deliver(const DeviceTensor &result, const DeviceTensor &dst,
                 std::string_view what);
  Status deliverAttention(const std::vector<DeviceTensor> &results,
                          const DeviceTensor &out, const DeviceTensor *lse);
  /// Runs @reshape_and_cache of `variant` on the first `tokens` rows of
  /// `key` and `value` (paged form: key and value; latent form: kv_c and
  /// k_pe), with an fp8 cache's `scales` (null entries are skipped); the
  /// plan writes the cache in place.
  Status runCacheWrite(const BundleVariant &variant, const DeviceTensor &key,
                       const DeviceTensor &value, int64_t tokens,
                       const Tensor &slotMapping, const DeviceTensor &kvCache,
                       std::span<const Tensor *const> scales);
  /// Stages each of `hosts` that is not null and appends it to `args`.
  Status stageAll(std::span<const Tensor *const> hosts,
                  std::vector<DeviceTensor> &args);

  Bundle bundle_;
  std::string target_;
  PlanDevice &device_;
  std::string name_;
  /// Kernels on the device by symbol, entry point and launch facts, with
  /// the hash of what was loaded under each.
  std::map<std::string, std::string, std::less<>> loaded_;
  PlanRunStats lastStats_;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLEEXECUTOR_H
