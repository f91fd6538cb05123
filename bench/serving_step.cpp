//===- serving_step.cpp - attn-serving-step: one serving step, three ways -===//
//
// A decode step at Llama-3-8B's attention shape (32 query heads over 8 kv
// heads of 128, bf16, 16-token blocks) for `--batch` requests of
// `--context` cached tokens, padded to `--padded-batch` requests, with the
// layer's forward (cache write of the new token + paged attention) called
// `--layers` times per step on one cache (one layer's worth of cache, the
// calls of a whole model). The same steps run three ways, in one process:
//
//   host      executor calls on host tensors (runtime/executor/HostCalls.h): the
//             cache goes to the device and back on every call, as every
//             call did before the runtime kept tensors on the device;
//   device    forward on device tensors, one synchronize per step;
//   replay    the step recorded once (runtime/device/RecordedStep.h) and replayed.
//
// It prints the start-up first: opening the device, the session over the
// bundles (their manifests), and creating the layer (its kernels), and
// then, per way, the wall time per step, the device's own time for the
// step's work (Vulkan timestamps; 0 where the device has none), the share of
// the step that is runtime overhead, and the bytes that crossed to the
// device and back. With --check it also compares every step's output and
// cache: device against host bit for bit, replay against device bit for
// bit, and the padded requests' rows and the cache slots of no live request
// untouched. Exit status: 0 when the checks pass, 1 otherwise, 2 on bad
// arguments.
//
//   attn-compile -o step.attnb
//     --variant op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,block_size=16,dtype=bf16
//     --variant op=reshape_and_cache,num_kv_heads=8,head_size=128,block_size=16,dtype=bf16
//   attn-serving-step --bundle step.attnb --batch 64 --context 256
//
//===----------------------------------------------------------------------===//

#include "core/Version.h"
#include "devices/Devices.h"
#include "reference/testing/Random.h"
#include "runtime/device/RecordedStep.h"
#include "runtime/executor/HostCalls.h"
#include "runtime/host/Metadata.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::runtime;

namespace {

constexpr int64_t kHeads = 32, kKvHeads = 8, kHeadSize = 128, kBlock = 16;

struct Options {
  std::string device = "vulkan";
  std::vector<std::string> bundles;
  /// --trust-key files and --require-signature (Session::open's trust).
  std::vector<std::string> trustKeys;
  bool requireSignature = false;
  int64_t layers = 32, batch = 64, paddedBatch = 0, context = 256, steps = 3;
  bool check = false;
  bool skipHost = false;
};

int usage(const char *argv0, int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: %s --bundle DIR [--device vulkan|cuda|cpu] [--layers N] "
               "[--batch R] [--padded-batch P] [--context L] [--steps S] "
               "[--check] [--skip-host] [--trust-key NAME.pub]... "
               "[--require-signature] | --version\n"
               "One decode step of Llama-3-8B's attention, --layers forward "
               "calls, timed on host tensors, on device tensors and as a "
               "recorded step replayed. See bench/README.md.\n"
               "--trust-key: a bundle signed by another key is refused; "
               "--require-signature: an unsigned one too.\n",
               argv0);
  return status;
}

/// The step's requests: `batch` live ones, each owning blocks
/// [r * M, (r + 1) * M), and padding requests (no tokens, seq_len 0) up to
/// the padded batch. Tokens: one per live request, then a padding token per
/// padding request (slot -1), so the query has paddedBatch rows.
struct Batch {
  int64_t live, padded, blocksPerReq;
  int64_t numBlocks() const { return padded * blocksPerReq; }

  Result<CommonAttentionMetadata> metadata(int64_t step, int64_t context) const {
    StepInputs in;
    in.queryStartLoc = {0};
    std::vector<int64_t> slots;
    for (int64_t r = 0; r < padded; ++r) {
      bool isLive = r < live;
      int64_t len = context + step + 1; // this step's token included
      in.queryStartLoc.push_back(in.queryStartLoc.back() + (isLive ? 1 : 0));
      in.seqLens.push_back(isLive ? static_cast<int32_t>(len) : 0);
      if (isLive)
        slots.push_back(r * blocksPerReq * kBlock + len - 1);
    }
    slots.resize(padded, -1);
    in.slotMapping = {slots};
    std::vector<int32_t> table(padded * blocksPerReq, 0);
    for (int64_t r = 0; r < live; ++r)
      for (int64_t b = 0; b < blocksPerReq; ++b)
        table[r * blocksPerReq + b] = static_cast<int32_t>(r * blocksPerReq + b);
    return makeCommonAttentionMetadata(in, table,
                                       static_cast<int32_t>(blocksPerReq));
  }
};

/// What one way of running measured over the steps.
struct Figures {
  double wallSeconds = 0, deviceSeconds = 0;
  uint64_t toDevice = 0, toHost = 0;
  int64_t steps = 0;
};

void print(const char *way, const Figures &f) {
  double wall = f.wallSeconds / f.steps, dev = f.deviceSeconds / f.steps;
  double overhead = wall > 0 && dev > 0 ? (wall - dev) / wall * 100 : 0;
  std::printf("%-7s %9.2f ms/step  device %9.2f ms/step  overhead %5.1f%%  "
              "to device %10.0f B/step  to host %10.0f B/step\n",
              way, wall * 1e3, dev * 1e3, overhead,
              double(f.toDevice) / f.steps, double(f.toHost) / f.steps);
}

/// The tensors of one way: its cache and activations, on the device.
struct Lane {
  DeviceTensor cache, query, key, value, out;
};

Result<Lane> makeLane(Session &s, const SessionLayer &layer, const Tensor &q,
                      const Tensor &k, const Tensor &v, const Tensor &cache,
                      const Tensor &out) {
  Lane lane;
  PlanDevice &d = s.device();
  for (auto [dst, src] : {std::pair{&lane.cache, &cache}, {&lane.query, &q},
                          {&lane.key, &k}, {&lane.value, &v},
                          {&lane.out, &out}}) {
    Result<DeviceTensor> t = toDevice(d, *src);
    if (!t)
      return t.status();
    *dst = std::move(*t);
  }
  return lane;
}

int run(const Options &o) {
  auto fail = [](const char *what, const Status &s) {
    std::fprintf(stderr, "attn-serving-step: %s: %s\n", what,
                 s.message().c_str());
    return 1;
  };
  std::optional<DeviceType> type = parseDeviceType(o.device);
  if (!type)
    return fail("--device", Status::error("unknown device " + o.device));
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  Result<BundleTrust> trust =
      BundleTrust::fromKeyFiles(o.trustKeys, o.requireSignature);
  if (!trust)
    return fail("--trust-key", trust.status());
  Clock::time_point opening = Clock::now();
  Result<std::unique_ptr<PlanDevice>> opened = devices::openDevice(*type);
  if (!opened)
    return fail(o.device.c_str(), opened.status());
  Clock::time_point deviceOpen = Clock::now();
  Result<std::unique_ptr<Session>> session =
      Session::open(*type, std::move(*opened), o.bundles, *trust);
  if (!session)
    return fail(o.device.c_str(), session.status());
  Clock::time_point sessionOpen = Clock::now();
  Session &s = **session;

  Batch batch{o.batch, o.paddedBatch ? o.paddedBatch : o.batch,
              (o.context + o.steps + kBlock - 1) / kBlock};
  if (batch.padded < batch.live)
    return fail("--padded-batch", Status::error("is below --batch"));
  AttentionLayer config;
  config.name = "llama.layers.0.self_attn";
  config.numHeads = kHeads;
  config.numKvHeads = kKvHeads;
  config.headSize = kHeadSize;
  config.scale = 1.0 / std::sqrt(double(kHeadSize));
  config.dtype = DType::BF16;
  KvCacheSpec spec{kBlock, kKvHeads, kHeadSize, DType::BF16, "auto"};
  Result<std::unique_ptr<SessionLayer>> made =
      s.createLayer(config, spec, batch.numBlocks());
  if (!made)
    return fail("createLayer", made.status());
  SessionLayer &layer = **made;
  // Start-up: a session reads its bundles' manifests, a layer creates the
  // kernels of its variants (Session.h), whatever the bundles' size.
  auto *served = dynamic_cast<const BundleExecutor *>(layer.executor);
  std::printf("start-up: device %.1f ms, session over %zu bundle(s) %.1f "
              "ms, layer %.1f ms (%zu kernels created)\n",
              ms(opening, deviceOpen), o.bundles.size(),
              ms(deviceOpen, sessionOpen), ms(sessionOpen, Clock::now()),
              served ? served->loadedKernels() : size_t{0});
  std::printf("%s on %s: %lld live + %lld padding requests x %lld tokens, "
              "%lld calls per step, cache %s (%.1f MiB), cudagraph support "
              "%s\n",
              config.name.c_str(), std::string(s.device().name()).c_str(),
              (long long)batch.live, (long long)(batch.padded - batch.live),
              (long long)o.context, (long long)o.layers,
              layer.kvCache.describe().c_str(),
              layer.kvCache.numBytes() / double(1 << 20),
              std::string(toString(layer.builder->getCudagraphSupport()))
                  .c_str());

  // The cache before the first step and the step's activations.
  Random random(7);
  Tensor cache(DType::BF16, layer.kvCache.shape);
  random.fill(cache, -1, 1);
  Tensor q(DType::BF16, {batch.padded, kHeads, kHeadSize});
  Tensor k(DType::BF16, {batch.padded, kKvHeads, kHeadSize});
  Tensor v(DType::BF16, k.shape());
  random.fill(q, -1, 1);
  random.fill(k, -1, 1);
  random.fill(v, -1, 1);
  // Padding rows of the output hold a marker that must survive.
  Tensor out(DType::BF16, q.shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFloat(i, -3.5);

  Result<Lane> device = makeLane(s, layer, q, k, v, cache, out);
  Result<Lane> replayed = makeLane(s, layer, q, k, v, cache, out);
  if (!device || !replayed)
    return fail("allocating", device ? replayed.status() : device.status());
  Tensor hostCache = cache, hostOut = out;

  std::unique_ptr<AttentionMetadata> md;
  auto forwardAll = [&](Lane &lane) -> Status {
    for (int64_t l = 0; l < o.layers; ++l)
      ATTN_RETURN_IF_ERROR(layer.impl->forward(config, lane.query, lane.key,
                                               lane.value, lane.cache, *md,
                                               lane.out));
    return Status::ok();
  };
  auto hostAll = [&]() -> Status {
    const auto &fa = static_cast<const FlashAttentionMetadata &>(*md);
    runtime::PagedAttentionParams params;
    params.scale = config.scale;
    for (int64_t l = 0; l < o.layers; ++l) {
      ATTN_RETURN_IF_ERROR(host::reshapeAndCache(
          *layer.executor, k, v, fa.slotMapping, KvCacheLayout::NHD,
          hostCache));
      ATTN_RETURN_IF_ERROR(host::pagedAttention(
          *layer.executor, q, hostCache, fa.queryStartLoc, fa.seqLens,
          fa.blockTable, params, hostOut, nullptr));
    }
    return Status::ok();
  };
  auto timed = [&](Figures &f, const std::function<Status()> &work) {
    s.device().resetTransfers();
    double dev0 = s.device().deviceSeconds();
    auto t0 = std::chrono::steady_clock::now();
    Status st = work();
    if (st)
      st = s.synchronize();
    auto t1 = std::chrono::steady_clock::now();
    f.wallSeconds += std::chrono::duration<double>(t1 - t0).count();
    f.deviceSeconds += s.device().deviceSeconds() - dev0;
    f.toDevice += s.device().transfers().bytesToDevice;
    f.toHost += s.device().transfers().bytesToHost;
    ++f.steps;
    return st;
  };

  Figures hostF, deviceF, replayF;
  std::unique_ptr<RecordedStep> recorded;
  int failures = 0;
  for (int64_t step = 0; step < o.steps; ++step) {
    Result<CommonAttentionMetadata> cam = batch.metadata(step, o.context);
    if (!cam)
      return fail("metadata", cam.status());
    Result<std::unique_ptr<AttentionMetadata>> built =
        layer.builder->build(0, *cam);
    if (!built)
      return fail("build", built.status());
    md = std::move(*built);

    if (!o.skipHost)
      if (Status st = timed(hostF, hostAll); !st)
        return fail("host", st);
    if (Status st = timed(deviceF, [&] { return forwardAll(*device); }); !st)
      return fail("device", st);
    if (!recorded &&
        layer.builder->getCudagraphSupport() != AttentionCGSupport::NEVER) {
      // Recording runs the host side once; the work runs at each replay.
      // The builder says whether the layer's steps can be recorded (the
      // device records, and its executor launches compiled kernels).
      auto r = RecordedStep::record(s.device(),
                                    [&] { return forwardAll(*replayed); });
      if (!r)
        return fail("record", r.status());
      recorded = std::move(*r);
    }
    if (recorded)
      if (Status st = timed(replayF,
                            [&] { return recorded->replay([&] {
                                return forwardAll(*replayed);
                              }); });
          !st)
        return fail("replay", st);

    if (!o.check)
      continue;
    Tensor devOut = *toHost(device->out), devCache = *toHost(device->cache);
    auto expectSame = [&](const char *what, const Tensor &a, const Tensor &b) {
      bool same = a.numBytes() == b.numBytes() &&
                  std::memcmp(a.data(), b.data(), a.numBytes()) == 0;
      std::printf("step %lld: %s: %s\n", (long long)step, what,
                  same ? "identical" : "DIFFERENT");
      failures += !same;
    };
    if (!o.skipHost) {
      expectSame("device out vs host out", devOut, hostOut);
      expectSame("device cache vs host cache", devCache, hostCache);
    }
    if (recorded) {
      expectSame("replay out vs device out", *toHost(replayed->out), devOut);
      expectSame("replay cache vs device cache", *toHost(replayed->cache),
                 devCache);
    }
    // Padding rows keep their marker; the blocks of padding requests keep
    // the cache's first contents.
    int64_t row = kHeads * kHeadSize, blockElems = cache.numElements() /
                                                   batch.numBlocks();
    bool untouched = true;
    for (int64_t i = batch.live * row; i < devOut.numElements(); ++i)
      untouched &= devOut.getFloat(i) == -3.5;
    for (int64_t i = batch.live * batch.blocksPerReq * blockElems;
         i < cache.numElements(); ++i)
      untouched &= devCache.getFloat(i) == cache.getFloat(i);
    std::printf("step %lld: padding rows and padding requests' blocks: %s\n",
                (long long)step, untouched ? "untouched" : "WRITTEN");
    failures += !untouched;
  }
  if (!o.skipHost)
    print("host", hostF);
  print("device", deviceF);
  if (recorded) {
    print("replay", replayF);
    std::printf("recorded step: %zu launches and copies, %zu buffers\n",
                recorded->workItems(), recorded->allocations());
  }
  if (!o.skipHost && deviceF.wallSeconds > 0)
    std::printf("host/device wall time: %.2fx\n",
                hostF.wallSeconds / deviceF.wallSeconds);
  if (recorded && replayF.wallSeconds > 0)
    std::printf("device/replay wall time: %.2fx\n",
                deviceF.wallSeconds / replayF.wallSeconds);
  if (o.check)
    std::printf("%s\n", failures ? "CHECKS FAILED" : "all checks passed");
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      return i + 1 < argc ? argv[++i] : std::string();
    };
    auto number = [&](int64_t &dst) {
      std::string v = value();
      char *end = nullptr;
      long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > (1 << 24))
        return false;
      dst = n;
      return true;
    };
    bool ok = true;
    if (arg == "--bundle")
      o.bundles.push_back(value());
    else if (arg == "--trust-key")
      o.trustKeys.push_back(value());
    else if (arg == "--require-signature")
      o.requireSignature = true;
    else if (arg == "--device")
      o.device = value();
    else if (arg == "--layers")
      ok = number(o.layers) && o.layers > 0;
    else if (arg == "--batch")
      ok = number(o.batch) && o.batch > 0;
    else if (arg == "--padded-batch")
      ok = number(o.paddedBatch);
    else if (arg == "--context")
      ok = number(o.context);
    else if (arg == "--steps")
      ok = number(o.steps) && o.steps > 0;
    else if (arg == "--check")
      o.check = true;
    else if (arg == "--skip-host")
      o.skipHost = true;
    else if (arg == "--help" || arg == "-h")
      return usage(argv[0], 0);
    else if (arg == "--version") {
      std::printf("attn-serving-step %s\n", attn::version());
      return 0;
    }
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "attn-serving-step: bad argument %s\n", arg.c_str());
      return usage(argv[0], 2);
    }
  }
  return run(o);
}
