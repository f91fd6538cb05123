//===- HostExample.cpp - A serving loop of several models on one device ---===//
//
// What a vLLM-shaped engine does with the runtime, in one file. Three models
// share one device, each with its own impl, metadata builder and KV cache,
// the caches on the device for the whole run:
//   llama     GQA, f16: 8 query heads over 2 kv heads of 64
//   gemma     bf16, 8 over 4 heads of 128, soft cap 30, sliding window 48
//   deepseek  MLA, bf16: 16 heads over the 576-wide latent cache (512 + 64)
// The engine side is Engine.h / Engine.cpp (under 150 lines): a Session
// (runtime/host/Session.h) opens the device and the bundles once, and
// each model's layer gets its backend from the registry, its cache in the
// backend's shape, and an impl checked against the bundles, so a missing
// variant fails at start-up naming the attn-compile --variant to add. This
// file is the harness around it: steps of prefill, chunked prefill and
// decode with requests that arrive, grow and finish (MLA decodes only: its
// prompts go into the latent cache on arrival, as an engine's prefill path
// would). Every step runs on the device and on the reference ops (a CPU
// session without bundles, whatever the device under test is) and is
// compared with DESIGN.md's tolerances; forward moves only metadata to the
// device and nothing back (checked every step). With --kv-cache-dtype fp8
// (or fp8_e4m3, fp8_e5m2) every model's cache is fp8 with fixed per-layer
// scales, on the device and on the CPU alike. --device cpu without a bundle
// checks the reference against itself; with one, the CPU device serves the
// cpu target's kernels.
//
//   attn-host-example --device cpu
//   attn-host-example --device cpu --bundle host-cpu.attnb
//   attn-host-example --device vulkan --bundle host.attnb [--bundle ...]
//   attn-host-example --device vulkan --bundle fp8.attnb --kv-cache-dtype fp8
//   attn-host-example --device tenstorrent --bundle host-tt.attnb
//
// examples/host/grid.json lists the variants (attn-compile --grid,
// --targets=cpu --cpu-isa=host for the first bundle above). Exit
// status: 0 when every step matches, 1 on a mismatch or an error, 2 on bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "core/Version.h"
#include "Engine.h"
#include "reference/testing/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::example;
using namespace attn::runtime;

namespace {

constexpr int64_t kBlockSize = 16;
constexpr int64_t kNumBlocks = 64;
/// Prompt tokens one request may prefill per step (chunked prefill).
constexpr int64_t kPrefillChunk = 24;

/// The models of the deployment: one attention layer each (every layer of a
/// model runs the same variants), with caches of vLLM's `kvCacheDtype`.
std::vector<AttentionLayer> models(const std::string &kvCacheDtype) {
  AttentionLayer llama;
  llama.name = "llama.layers.0.self_attn";
  llama.numHeads = 8;
  llama.numKvHeads = 2;
  llama.headSize = 64;
  llama.dtype = DType::F16;
  AttentionLayer gemma;
  gemma.name = "gemma.layers.0.self_attn";
  gemma.numHeads = 8;
  gemma.numKvHeads = 4;
  gemma.headSize = 128;
  gemma.dtype = DType::BF16;
  gemma.logitsSoftCap = 30.0;
  gemma.slidingWindow = 48;
  AttentionLayer deepseek;
  deepseek.name = "deepseek.layers.0.self_attn";
  deepseek.numHeads = 16;
  deepseek.numKvHeads = 1;
  deepseek.headSize = 576;
  deepseek.kvLoraRank = 512;
  deepseek.dtype = DType::BF16;
  std::vector<AttentionLayer> layers = {llama, gemma, deepseek};
  for (AttentionLayer &layer : layers) {
    layer.scale = 1.0 / std::sqrt(static_cast<double>(layer.headSize));
    // Keys and values are drawn from [-1, 1]: these scales put them at up
    // to 250 and 200 of e4m3's 448, where its steps are finest relative.
    layer.kvCacheDtype = kvCacheDtype;
    layer.kScale = 0.004f;
    layer.vScale = 0.005f;
  }
  return layers;
}

bool isMla(const AttentionLayer &layer) { return layer.kvLoraRank > 0; }

struct Options {
  std::string device = "cpu";
  std::vector<std::string> bundles;
  int64_t steps = 8;
  uint64_t seed = 1;
  std::string kvCacheDtype = "auto";
};

void usage(std::FILE *out) {
  std::fprintf(out, "usage: attn-host-example "
                    "[--device cpu|vulkan|tenstorrent|cuda] "
                    "[--bundle DIR]... [--steps N] [--seed S] "
                    "[--kv-cache-dtype auto|fp8|fp8_e4m3|fp8_e5m2]\n"
                    "       attn-host-example --help | --version\n");
}

std::optional<Options> parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      std::printf(
          "Serves three models (GQA f16, bf16 with a soft cap and a "
          "sliding window,\nMLA bf16) on one device for --steps steps and "
          "checks every step against\nthe reference ops on the CPU. Without "
          "--bundle, --device cpu runs the\nreference ops (a check of the "
          "harness). Exit status: 0 when every step\nmatches, 1 on a "
          "mismatch or an error, 2 on bad arguments.\n");
      std::exit(0);
    }
    if (arg == "--version") {
      std::printf("attn-host-example %s\n", attn::version());
      std::exit(0);
    }
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg.starts_with("--") && i + 1 < argc) {
      value = argv[++i];
    }
    if (arg == "--device") {
      o.device = value;
    } else if (arg == "--bundle") {
      o.bundles.push_back(value);
    } else if (arg == "--steps") {
      o.steps = std::atoll(value.c_str());
    } else if (arg == "--seed") {
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (arg == "--kv-cache-dtype") {
      o.kvCacheDtype = value;
    } else {
      std::fprintf(stderr, "attn-host-example: unknown argument '%s'\n",
                   argv[i]);
      return std::nullopt;
    }
  }
  if (o.steps < 1 || o.steps > 1000) {
    std::fprintf(stderr, "attn-host-example: --steps must be in [1, 1000]\n");
    return std::nullopt;
  }
  return o;
}

/// DESIGN.md's device-vs-reference tolerances (vLLM's defaults).
struct Tolerance {
  double atol, rtol;
};
Tolerance toleranceOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return {1e-5, 1.3e-6};
  case DType::BF16:
    return {1e-3, 1.6e-2};
  default:
    return {1e-3, 1e-3};
  }
}

/// A request of the simulated engine.
struct Request {
  int64_t promptLen = 0;
  int64_t maxNewTokens = 0;
  /// Tokens in the cache before this step.
  int64_t computed = 0;
  std::vector<int32_t> blocks;

  int64_t total() const { return promptLen + maxNewTokens; }
  bool prefilling() const { return computed < promptLen; }
};

/// One model's requests: admits them, hands out blocks from a free list,
/// and retires finished ones.
class Scheduler {
public:
  explicit Scheduler(Random &random) : random_(random) {
    for (int32_t b = kNumBlocks - 1; b >= 0; --b)
      freeBlocks_.push_back(b);
  }

  /// Two requests arrive at the start, then one every other step, while
  /// there is room. Returns the new ones' indices.
  std::vector<size_t> admit(int64_t step) {
    std::vector<size_t> arrived;
    int64_t arrivals = step == 0 ? 2 : step % 2 == 0 ? 1 : 0;
    for (int64_t i = 0; i < arrivals && running_.size() < 5; ++i) {
      Request r;
      r.promptLen = random_.uniformInt(3, 60);
      r.maxNewTokens = random_.uniformInt(2, 6);
      arrived.push_back(running_.size());
      running_.push_back(r);
    }
    return arrived;
  }

  /// This step's query length of every running request.
  std::vector<int64_t> queryLens() const {
    std::vector<int64_t> lens;
    for (const Request &r : running_)
      lens.push_back(r.prefilling()
                         ? std::min(kPrefillChunk, r.promptLen - r.computed)
                         : 1);
    return lens;
  }

  /// Gives request `i` the blocks `tokens` cached tokens need.
  Status reserve(size_t i, int64_t tokens) {
    Request &r = running_[i];
    while (static_cast<int64_t>(r.blocks.size()) * kBlockSize < tokens) {
      if (freeBlocks_.empty())
        return errorf("out of cache blocks");
      r.blocks.push_back(freeBlocks_.back());
      freeBlocks_.pop_back();
    }
    return Status::ok();
  }

  /// This step's batch for `lens`, with the blocks it needs reserved.
  Result<Batch> batch(const std::vector<int64_t> &lens) {
    Batch b;
    for (size_t i = 0; i < running_.size(); ++i) {
      Request &r = running_[i];
      ATTN_RETURN_IF_ERROR(reserve(i, r.computed + lens[i]));
      b.queryLens.push_back(lens[i]);
      b.computed.push_back(r.computed);
      b.blocks.push_back(r.blocks);
      for (int64_t p = r.computed; p < r.computed + lens[i]; ++p)
        b.slots.push_back(slot(i, p));
    }
    return b;
  }

  int64_t slot(size_t i, int64_t position) const {
    const Request &r = running_[i];
    return r.blocks[position / kBlockSize] * kBlockSize + position % kBlockSize;
  }

  /// Advances every request by its query length, retires finished ones and
  /// frees their blocks.
  void advance(const std::vector<int64_t> &queryLens) {
    std::vector<Request> still;
    for (size_t i = 0; i < running_.size(); ++i) {
      Request &r = running_[i];
      r.computed += queryLens[i];
      if (r.computed >= r.total()) {
        freeBlocks_.insert(freeBlocks_.end(), r.blocks.begin(), r.blocks.end());
        continue;
      }
      still.push_back(std::move(r));
    }
    running_ = std::move(still);
  }

  std::vector<Request> &running() { return running_; }

private:
  Random &random_;
  std::vector<Request> running_;
  std::vector<int32_t> freeBlocks_;
};

/// One model, served by the device's engine and by the CPU's.
struct Model {
  AttentionLayer config;
  /// Its index in both engines.
  size_t index;
  Scheduler scheduler;
};

/// The engine under test and the reference engine it is compared with.
struct Engines {
  std::unique_ptr<Engine> device, reference;
};

/// Elements outside atol + rtol * |reference|, and the largest error.
struct Comparison {
  double maxAbsError = 0;
  int64_t mismatches = 0;
};
Comparison compare(const Tensor &device, const Tensor &reference,
                   Tolerance tol) {
  Comparison c;
  for (int64_t i = 0; i < device.numElements(); ++i) {
    double d = device.getFloat(i), r = reference.getFloat(i);
    double err = std::fabs(d - r);
    if (!(err <= tol.atol + tol.rtol * std::fabs(r)))
      ++c.mismatches;
    if (err > c.maxAbsError || std::isnan(err))
      c.maxAbsError = err;
  }
  return c;
}

/// The step's activations (what the model computed), on `engine`'s device.
Result<DeviceTensor> onDevice(Engine &engine, const Tensor &host) {
  return toDevice(engine.device(), host);
}

/// Writes the prompts of newly arrived MLA requests into both latent caches
/// (an engine's prefill path), so that every step of the model is a decode.
Status prefillLatents(Engines &engines, Model &m,
                      const std::vector<size_t> &arrived, Random &random) {
  int64_t rank = m.config.kvLoraRank, rope = m.config.headSize - rank;
  for (size_t i : arrived) {
    Request &r = m.scheduler.running()[i];
    ATTN_RETURN_IF_ERROR(m.scheduler.reserve(i, r.promptLen));
    std::vector<int64_t> slots;
    for (int64_t p = 0; p < r.promptLen; ++p)
      slots.push_back(m.scheduler.slot(i, p));
    Tensor kvC(m.config.dtype, {r.promptLen, rank});
    Tensor kPe(m.config.dtype, {r.promptLen, rope});
    random.fill(kvC, -1.0, 1.0);
    random.fill(kPe, -1.0, 1.0);
    for (Engine *engine : {engines.device.get(), engines.reference.get()}) {
      Result<DeviceTensor> c = onDevice(*engine, kvC),
                           p = onDevice(*engine, kPe);
      if (!c || !p)
        return !c ? c.status() : p.status();
      ATTN_RETURN_IF_ERROR(engine->writeLatents(m.index, *c, *p, slots));
    }
    r.computed = r.promptLen;
  }
  return Status::ok();
}

/// One forward of `model` on `engine` over device tensors; returns its
/// output read back, after checking that forward moved no cache bytes:
/// metadata to the device only, nothing back.
Result<Tensor> forward(Engine &engine, size_t model,
                       const CommonAttentionMetadata &cam, const Tensor &query,
                       const Tensor &key, const Tensor &value,
                       int64_t valueWidth) {
  const AttentionLayer &l = engine.layer(model).config;
  PlanDevice &device = engine.device();
  Result<DeviceTensor> q = onDevice(engine, query), k = onDevice(engine, key),
                       v = onDevice(engine, value);
  Result<DeviceTensor> out =
      allocateTensor(device, l.dtype, {query.dim(0), l.numHeads, valueWidth});
  for (const Result<DeviceTensor> *t : {&q, &k, &v, &out})
    if (!*t)
      return t->status();
  device.resetTransfers();
  ATTN_RETURN_IF_ERROR(engine.forward(model, cam, *q, *k, *v, *out));
  // The metadata (and ALiBi slopes or sinks, if the layer had them), plus
  // the plans' params: a few integers per launch.
  uint64_t metadataBytes =
      4 * (cam.queryStartLoc.size() + cam.seqLens.size() +
           cam.blockTable.size()) +
      8 * cam.slotMapping.size() +
      4 * (l.alibiSlopes.size() + l.sinks.size());
  TransferStats moved = device.transfers();
  if (moved.bytesToHost != 0 || moved.bytesToDevice > metadataBytes + 4096)
    return errorf("forward moved ", moved.bytesToDevice, " bytes to ",
                  device.name(), " and ", moved.bytesToHost, " back; only the ",
                  metadataBytes, " bytes of metadata should move");
  return toHost(*out);
}

/// Runs one step of `m` on both engines; returns whether the outputs agree.
Result<bool> runStep(Engines &engines, Model &m, int64_t step,
                     Random &random) {
  std::vector<size_t> arrived = m.scheduler.admit(step);
  if (isMla(m.config))
    ATTN_RETURN_IF_ERROR(prefillLatents(engines, m, arrived, random));
  if (m.scheduler.running().empty()) {
    std::printf("step %lld %s: idle\n", static_cast<long long>(step),
                m.config.name.c_str());
    return true;
  }
  std::vector<int64_t> lens = m.scheduler.queryLens();
  Result<Batch> batch = m.scheduler.batch(lens);
  if (!batch)
    return batch.status();
  Result<CommonAttentionMetadata> cam = Engine::metadata(*batch);
  if (!cam)
    return cam.status();

  // The new tokens: MLA's key and value are kv_c [T, L] and k_pe [T, P].
  const AttentionLayer &l = m.config;
  int64_t tokens = cam->numActualTokens;
  Tensor query(l.dtype, {tokens, l.numHeads, l.headSize});
  Tensor key = isMla(l) ? Tensor(l.dtype, {tokens, l.kvLoraRank})
                        : Tensor(l.dtype, {tokens, l.numKvHeads, l.headSize});
  Tensor value =
      isMla(l) ? Tensor(l.dtype, {tokens, l.headSize - l.kvLoraRank})
               : Tensor(l.dtype, {tokens, l.numKvHeads, l.headSize});
  for (Tensor *t : {&query, &key, &value})
    random.fill(*t, -1.0, 1.0);
  int64_t valueWidth = isMla(l) ? l.kvLoraRank : l.headSize;
  Result<Tensor> got =
      forward(*engines.device, m.index, *cam, query, key, value, valueWidth);
  if (!got)
    return got.status();
  Result<Tensor> want = forward(*engines.reference, m.index, *cam, query, key,
                                value, valueWidth);
  if (!want)
    return want.status();

  Comparison c = compare(*got, *want, toleranceOf(l.dtype));
  int64_t prefills = 0;
  for (int64_t len : lens)
    prefills += len > 1;
  std::printf("step %lld %s: %zu requests (%lld prefilling), %lld tokens, "
              "max |err| %.3g: %s\n",
              static_cast<long long>(step), l.name.c_str(), lens.size(),
              static_cast<long long>(prefills), static_cast<long long>(tokens),
              c.maxAbsError, c.mismatches == 0 ? "ok" : "MISMATCH");
  if (c.mismatches)
    std::printf("  %lld of %lld elements outside the tolerance\n",
                static_cast<long long>(c.mismatches),
                static_cast<long long>(got->numElements()));
  m.scheduler.advance(lens);
  return c.mismatches == 0;
}

int run(const Options &options) {
  std::optional<DeviceType> device = parseDeviceType(options.device);
  if (!device) {
    std::fprintf(stderr, "attn-host-example: unknown --device '%s'\n",
                 options.device.c_str());
    return 2;
  }
  auto fail = [](const std::string &what, const Status &s) {
    std::fprintf(stderr, "attn-host-example: %s: %s\n", what.c_str(),
                 s.message().c_str());
    return 1;
  };
  // The engine under test and the reference, each with a layer per model.
  // The reference is a CPU session without bundles: the reference ops, never
  // the kernels under test, even when those run on the CPU device too.
  Engines engines;
  Result<std::unique_ptr<Engine>> onDevice =
      Engine::open(*device, options.bundles, models(options.kvCacheDtype),
                   kNumBlocks, kBlockSize);
  if (!onDevice)
    return fail(options.device, onDevice.status());
  engines.device = std::move(*onDevice);
  Result<std::unique_ptr<Engine>> cpu =
      Engine::open(DeviceType::CPU, {}, models(options.kvCacheDtype),
                   kNumBlocks, kBlockSize);
  if (!cpu)
    return fail("cpu", cpu.status());
  engines.reference = std::move(*cpu);
  Random random(options.seed);
  std::vector<std::unique_ptr<Model>> served;
  for (const AttentionLayer &layer : models(options.kvCacheDtype)) {
    SessionLayer &l = engines.device->layer(served.size());
    std::printf("%s: %s on %s%s, kv cache %s\n", layer.name.c_str(),
                std::string(l.backend->name()).c_str(),
                std::string(l.executor->name()).c_str(),
                l.bundle ? (" from " + l.bundle->directory).c_str() : "",
                l.kvCache.describe().c_str());
    served.push_back(std::make_unique<Model>(
        Model{layer, served.size(), Scheduler(random)}));
  }

  int64_t failures = 0;
  for (int64_t step = 0; step < options.steps; ++step)
    for (std::unique_ptr<Model> &m : served) {
      Result<bool> ok = runStep(engines, *m, step, random);
      if (!ok)
        return fail(m->config.name, ok.status());
      failures += !*ok;
    }
  if (failures) {
    std::printf("%lld model steps mismatched\n",
                static_cast<long long>(failures));
    return 1;
  }
  std::printf("all %lld steps of %zu models match the cpu backend; forward "
              "moved only metadata\n",
              static_cast<long long>(options.steps), served.size());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::optional<Options> options = parseOptions(argc, argv);
  if (!options) {
    usage(stderr);
    return 2;
  }
  return run(*options);
}
