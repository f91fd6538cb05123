//===- main.cpp - One decode step through an installed attn --------------===//
//
// Selects the CPU backend, allocates its cache, writes a few tokens and runs
// one decode step. With BUNDLE_DIR (WITH_BUNDLE=ON), runs the same step on
// Vulkan from the bundle attn_add_bundle compiled and compares.
//
//===----------------------------------------------------------------------===//

#include "reference/ops/Random.h"
#include "runtime/Backend.h"
#include "runtime/Registry.h"
#include "runtime/executors/cpu/CpuExecutor.h"

#ifdef BUNDLE_DIR
#include "runtime/BundleExecutor.h"
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#include <cstring>
#endif

#include <cmath>
#include <cstdio>

using namespace attn;
using namespace attn::runtime;

namespace {

constexpr int64_t kHeads = 8, kHeadSize = 64, kBlockSize = 16;

int fail(const char *what, const Status &s) {
  std::fprintf(stderr, "decode-step: %s: %s\n", what, s.message().c_str());
  return 1;
}

/// One decode token for each of two requests with 5 and 20 cached tokens.
Result<Tensor> decode(DeviceType device, KernelExecutor &executor) {
  SelectionRequest request;
  request.headSize = kHeadSize;
  request.dtype = DType::F32;
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(device, request);
  if (!backend)
    return backend.status();
  AttentionLayer layer;
  layer.name = "layer0";
  layer.numHeads = kHeads;
  layer.numKvHeads = kHeads;
  layer.headSize = kHeadSize;
  layer.scale = 1.0 / std::sqrt(double(kHeadSize));
  layer.dtype = DType::F32;
  Result<std::unique_ptr<AttentionImpl>> impl =
      (*backend)->getImpl(layer, executor);
  if (!impl)
    return impl.status();
  Result<std::vector<int64_t>> shape =
      (*backend)->getKvCacheShape(4, kBlockSize, kHeads, kHeadSize);
  if (!shape)
    return shape.status();
  Tensor cache(DType::F32, *shape);
  Random random(42);
  random.fill(cache, -1, 1);

  FlashAttentionMetadata md;
  md.numReqs = 2;
  md.numActualTokens = 2;
  md.maxQueryLen = 1;
  md.maxSeqLen = 21;
  md.queryStartLoc = toTensor(std::vector<int32_t>{0, 1, 2});
  md.seqLens = toTensor(std::vector<int32_t>{6, 21});
  md.blockTable = *toTensor(std::vector<int32_t>{2, 0, 1, 3}, {2, 2});
  md.slotMapping = toTensor(std::vector<int64_t>{2 * 16 + 5, 3 * 16 + 4});
  Tensor query(DType::F32, {2, kHeads, kHeadSize});
  random.fill(query, -1, 1);
  Tensor output(DType::F32, query.shape());
  ATTN_RETURN_IF_ERROR(
      (*impl)->forward(layer, query, Tensor(), Tensor(), cache, md, output));
  return output;
}

} // namespace

int main() {
  CpuExecutor cpu;
  Result<Tensor> expected = decode(DeviceType::CPU, cpu);
  if (!expected)
    return fail("cpu", expected.status());
  std::printf("cpu decode step: ok\n");
#ifdef BUNDLE_DIR
  Result<Bundle> bundle = loadBundle(BUNDLE_DIR);
  if (!bundle)
    return fail("bundle", bundle.status());
  Result<std::unique_ptr<VulkanPlanDevice>> device = VulkanPlanDevice::create();
  if (!device)
    return fail("vulkan", device.status());
  VulkanPlanDevice &vk = **device;
  BundleExecutor executor(
      std::move(*bundle), "spirv", vk,
      vk.kernelLoader());
  Result<Tensor> got = decode(DeviceType::VULKAN, executor);
  if (!got)
    return fail("vulkan", got.status());
  for (int64_t i = 0; i < got->numElements(); ++i) {
    double d = got->getFloat(i), r = expected->getFloat(i);
    if (!(std::fabs(d - r) <= 1e-5 + 1.3e-6 * std::fabs(r))) {
      std::fprintf(stderr, "decode-step: vulkan element %lld is %g, cpu %g\n",
                   static_cast<long long>(i), d, r);
      return 1;
    }
  }
  std::printf("vulkan decode step matches cpu\n");
#endif
  return 0;
}
