//===- main.cpp - One decode step through an installed attn --------------===//
//
// What an engine outside the tree writes: a Session on the CPU device
// (devices/cpu, running the reference ops: no bundle), a layer with its
// cache on the device, one decode step for two requests.
// With BUNDLE_DIR (WITH_BUNDLE=ON), the same step from the bundle
// attn_add_bundle compiled: in a CPU session, which serves the bundle's cpu
// kernels, and (WITH_VULKAN) in a Vulkan session; each compared with the
// reference ops'.
//
//===----------------------------------------------------------------------===//

#include "devices/cpu/CpuPlanDevice.h"
#include "reference/testing/Random.h"
#include "runtime/host/Session.h"

#ifdef WITH_VULKAN
#include "devices/vulkan/VulkanPlanDevice.h"
#endif

#include <cmath>
#include <cstdio>

// CMakeLists.txt sets no language level: attn's exported targets carry it.
static_assert(__cplusplus >= 202002L,
              "attn's targets should compile their users at C++20");

using namespace attn;
using namespace attn::runtime;

namespace {

constexpr int64_t kHeads = 8, kHeadSize = 64, kBlockSize = 16;

int fail(const char *what, const Status &s) {
  std::fprintf(stderr, "decode-step: %s: %s\n", what, s.message().c_str());
  return 1;
}

/// One decode token for each of two requests with 5 and 20 cached tokens.
Result<Tensor> decode(Session &session) {
  AttentionLayer layer;
  layer.name = "layer0";
  layer.numHeads = kHeads;
  layer.numKvHeads = kHeads;
  layer.headSize = kHeadSize;
  layer.scale = 1.0 / std::sqrt(double(kHeadSize));
  layer.dtype = DType::F32;
  KvCacheSpec spec{kBlockSize, kHeads, kHeadSize, DType::F32, "auto"};
  Result<std::unique_ptr<SessionLayer>> l =
      session.createLayer(layer, spec, /*numBlocks=*/4);
  if (!l)
    return l.status();

  // Cached tokens from earlier steps, and this step's queries.
  Random random(42);
  Tensor cache(DType::F32, (*l)->kvCache.shape);
  random.fill(cache, -1, 1);
  ATTN_RETURN_IF_ERROR(upload(cache, (*l)->kvCache));
  Tensor query(DType::F32, {2, kHeads, kHeadSize});
  random.fill(query, -1, 1);
  Result<DeviceTensor> q = toDevice(session.device(), query);
  Result<DeviceTensor> out = session.allocate(DType::F32, query.shape());
  if (!q || !out)
    return q ? out.status() : q.status();

  FlashAttentionMetadata md;
  md.numReqs = 2;
  md.numActualTokens = 2;
  md.maxQueryLen = 1;
  md.maxSeqLen = 21;
  md.queryStartLoc = toTensor(std::vector<int32_t>{0, 1, 2});
  md.seqLens = toTensor(std::vector<int32_t>{6, 21});
  md.blockTable = *toTensor(std::vector<int32_t>{2, 0, 1, 3}, {2, 2});
  md.slotMapping = toTensor(std::vector<int64_t>{2 * 16 + 5, 3 * 16 + 4});
  ATTN_RETURN_IF_ERROR(
      (*l)->impl->forward(layer, *q, {}, {}, (*l)->kvCache, md, *out));
  return toHost(*out);
}

/// Runs the step in `session` (on `device`) and compares it with the
/// reference ops' `expected`; returns the exit status.
int check(const char *device, Result<std::unique_ptr<Session>> session,
          const Tensor &expected) {
  if (!session)
    return fail(device, session.status());
  Result<Tensor> got = decode(**session);
  if (!got)
    return fail(device, got.status());
  for (int64_t i = 0; i < got->numElements(); ++i) {
    double d = got->getFloat(i), r = expected.getFloat(i);
    if (!(std::fabs(d - r) <= 1e-5 + 1.3e-6 * std::fabs(r))) {
      std::fprintf(stderr, "decode-step: %s element %lld is %g, reference %g\n",
                   device, static_cast<long long>(i), d, r);
      return 1;
    }
  }
  std::printf("%s decode step from the bundle matches the reference\n", device);
  return 0;
}

} // namespace

int main() {
  Result<std::unique_ptr<cpu::CpuPlanDevice>> cpuDevice =
      cpu::CpuPlanDevice::create();
  if (!cpuDevice)
    return fail("cpu", cpuDevice.status());
  Result<std::unique_ptr<Session>> cpu =
      Session::open(DeviceType::CPU, std::move(*cpuDevice));
  if (!cpu)
    return fail("cpu", cpu.status());
  Result<Tensor> expected = decode(**cpu);
  if (!expected)
    return fail("cpu", expected.status());
  std::printf("cpu decode step: ok\n");
#ifdef BUNDLE_DIR
  // Only bundles signed by the build's key run.
  Result<PublicKey> key = readPublicKey(BUNDLE_KEY);
  if (!key)
    return fail("key", key.status());
  BundleTrust trust{{*key}, /*requireSignature=*/true};
  // Another key is refused before a kernel is read.
  cpuDevice = cpu::CpuPlanDevice::create();
  if (!cpuDevice)
    return fail("cpu", cpuDevice.status());
  if (Session::open(DeviceType::CPU, std::move(*cpuDevice), {BUNDLE_DIR},
                    BundleTrust{{generateSecretKey().publicKey()}, true}))
    return fail("cpu", Status::error("a bundle signed by an untrusted key "
                                     "was opened"));
  // The bundle's cpu kernels on a CPU device of their own.
  cpuDevice = cpu::CpuPlanDevice::create();
  if (!cpuDevice)
    return fail("cpu", cpuDevice.status());
  if (int rc = check("cpu",
                     Session::open(DeviceType::CPU, std::move(*cpuDevice),
                                   {BUNDLE_DIR}, trust),
                     *expected))
    return rc;
#endif
#ifdef WITH_VULKAN
  Result<std::unique_ptr<vulkan::VulkanPlanDevice>> device =
      vulkan::VulkanPlanDevice::create();
  if (!device)
    return fail("vulkan", device.status());
  if (int rc = check(
          "vulkan",
          Session::open(DeviceType::VULKAN, std::move(*device), {BUNDLE_DIR},
                        trust),
          *expected))
    return rc;
#endif
  return 0;
}
