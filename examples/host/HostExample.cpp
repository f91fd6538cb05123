//===- HostExample.cpp - A serving loop of several models on one device ---===//
//
// What a vLLM-shaped engine does with the runtime, in one file. Three models
// share one device, each with its own impl, metadata builder and KV cache,
// the caches on the device for the whole run:
//   llama     GQA, f16: 8 query heads over 2 kv heads of 64
//   gemma     bf16, 8 over 4 heads of 128, soft cap 30, sliding window 48
//   deepseek  MLA, bf16: 16 heads over the 576-wide latent cache (512 + 64)
// The engine side is a Session (runtime/session/Session.h): it opens the
// device and the bundles once, and each model's layer gets its backend from
// the registry, its cache in the backend's shape, and an impl checked
// against the bundles, so a missing variant fails at start-up naming the
// attn-compile --variant to add. Then steps of prefill, chunked prefill and
// decode with requests that arrive, grow and finish (MLA decodes only: its
// prompts go into the latent cache on arrival, as an engine's prefill path
// would). Every step runs on the device and on the CPU backend and is
// compared with DESIGN.md's tolerances; forward moves only metadata to the
// device and nothing back (checked every step).
//
//   attn-host-example --device cpu
//   attn-host-example --device vulkan --bundle host.attnb [--bundle ...]
//   attn-host-example --device tenstorrent --bundle host-tt.attnb
//
// examples/host/grid.json lists the variants (attn-compile --grid). Exit
// status: 0 when every step matches, 1 on a mismatch or an error, 2 on bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "reference/ops/Random.h"
#include "runtime/Metadata.h"
#include "runtime/session/Devices.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::runtime;

namespace {

constexpr int64_t kBlockSize = 16;
constexpr int64_t kNumBlocks = 64;
/// Prompt tokens one request may prefill per step (chunked prefill).
constexpr int64_t kPrefillChunk = 24;

/// The models of the deployment: one attention layer each (every layer of a
/// model runs the same variants).
std::vector<AttentionLayer> models() {
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
  for (AttentionLayer &layer : layers)
    layer.scale = 1.0 / std::sqrt(static_cast<double>(layer.headSize));
  return layers;
}

bool isMla(const AttentionLayer &layer) { return layer.kvLoraRank > 0; }

struct Options {
  std::string device = "cpu";
  std::vector<std::string> bundles;
  int64_t steps = 8;
  uint64_t seed = 1;
};

void usage() {
  std::fprintf(stderr, "usage: attn-host-example "
                       "[--device cpu|vulkan|tenstorrent|cuda] "
                       "[--bundle DIR]... [--steps N] [--seed S]\n");
}

std::optional<Options> parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
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

/// One model, served by the device's session and by the CPU's.
struct Model {
  AttentionLayer config;
  std::unique_ptr<SessionLayer> device, reference;
  Scheduler scheduler;
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

/// The step's activations (what the model computed), on the layer's device.
Result<DeviceTensor> onDevice(SessionLayer &layer, const Tensor &host) {
  return toDevice(layer.executor->device(), host);
}

/// Writes the prompts of newly arrived MLA requests into both latent caches
/// (an engine's prefill path), so that every step of the model is a decode.
Status prefillLatents(Model &m, const std::vector<size_t> &arrived,
                      Random &random) {
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
    for (SessionLayer *layer : {m.device.get(), m.reference.get()}) {
      Result<DeviceTensor> c = onDevice(*layer, kvC), p = onDevice(*layer, kPe);
      if (!c || !p)
        return !c ? c.status() : p.status();
      ATTN_RETURN_IF_ERROR(layer->executor->concatAndCacheMla(
          *c, *p, toTensor(slots), layer->kvCache));
    }
    r.computed = r.promptLen;
  }
  return Status::ok();
}

/// The step's metadata, as the engine's model runner fills it.
Result<CommonAttentionMetadata> stepMetadata(Model &m,
                                             const std::vector<int64_t> &lens) {
  std::vector<Request> &reqs = m.scheduler.running();
  StepInputs inputs;
  inputs.queryStartLoc = {0};
  std::vector<int64_t> slots;
  int64_t cols = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    Request &r = reqs[i];
    ATTN_RETURN_IF_ERROR(m.scheduler.reserve(i, r.computed + lens[i]));
    inputs.queryStartLoc.push_back(
        static_cast<int32_t>(inputs.queryStartLoc.back() + lens[i]));
    inputs.seqLens.push_back(static_cast<int32_t>(r.computed + lens[i]));
    for (int64_t p = r.computed; p < r.computed + lens[i]; ++p)
      slots.push_back(m.scheduler.slot(i, p));
    cols = std::max<int64_t>(cols, r.blocks.size());
  }
  inputs.slotMapping = {slots};
  std::vector<int32_t> blockTable(reqs.size() * cols, 0);
  for (size_t i = 0; i < reqs.size(); ++i)
    std::copy(reqs[i].blocks.begin(), reqs[i].blocks.end(),
              blockTable.begin() + i * cols);
  return makeCommonAttentionMetadata(inputs, blockTable,
                                     static_cast<int32_t>(cols));
}

/// One forward of `layer` on device tensors; returns its output read back,
/// after checking that forward moved no cache bytes: metadata to the device
/// only, nothing back.
Result<Tensor> forward(SessionLayer &layer, const CommonAttentionMetadata &cam,
                       const Tensor &query, const Tensor &key,
                       const Tensor &value, int64_t valueWidth) {
  const AttentionLayer &l = layer.config;
  PlanDevice &device = layer.executor->device();
  Result<std::unique_ptr<AttentionMetadata>> md =
      layer.builder->build(/*commonPrefixLen=*/0, cam);
  if (!md)
    return md.status();
  Result<DeviceTensor> q = onDevice(layer, query), k = onDevice(layer, key),
                       v = onDevice(layer, value);
  Result<DeviceTensor> out =
      allocateTensor(device, l.dtype, {query.dim(0), l.numHeads, valueWidth});
  for (const Result<DeviceTensor> *t : {&q, &k, &v, &out})
    if (!*t)
      return t->status();
  device.resetTransfers();
  ATTN_RETURN_IF_ERROR(
      layer.impl->forward(l, *q, *k, *v, layer.kvCache, **md, *out));
  // The metadata (and ALiBi slopes or sinks, if the layer had them), plus
  // the plans' params: a few integers per launch.
  uint64_t metadataBytes =
      4 * (cam.queryStartLoc.size() + cam.seqLens.size() +
           cam.blockTableTensor.size()) +
      8 * cam.slotMapping.size() +
      4 * (l.alibiSlopes.size() + l.sinks.size());
  TransferStats moved = device.transfers();
  if (moved.bytesToHost != 0 || moved.bytesToDevice > metadataBytes + 4096)
    return errorf("forward moved ", moved.bytesToDevice, " bytes to ",
                  device.name(), " and ", moved.bytesToHost, " back; only the ",
                  metadataBytes, " bytes of metadata should move");
  return toHost(*out);
}

/// Runs one step of `m` on both sessions; returns whether the outputs agree.
Result<bool> runStep(Model &m, int64_t step, Random &random) {
  std::vector<size_t> arrived = m.scheduler.admit(step);
  if (isMla(m.config))
    ATTN_RETURN_IF_ERROR(prefillLatents(m, arrived, random));
  if (m.scheduler.running().empty()) {
    std::printf("step %lld %s: idle\n", static_cast<long long>(step),
                m.config.name.c_str());
    return true;
  }
  std::vector<int64_t> lens = m.scheduler.queryLens();
  Result<CommonAttentionMetadata> cam = stepMetadata(m, lens);
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
  Result<Tensor> got = forward(*m.device, *cam, query, key, value, valueWidth);
  if (!got)
    return got.status();
  Result<Tensor> want =
      forward(*m.reference, *cam, query, key, value, valueWidth);
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
  // The engine side: one session per device, a layer per model on each.
  Result<std::unique_ptr<Session>> session =
      openSession(*device, options.bundles);
  if (!session)
    return fail(options.device, session.status());
  Result<std::unique_ptr<Session>> cpu = openSession(DeviceType::CPU);
  if (!cpu)
    return fail("cpu", cpu.status());
  Random random(options.seed);
  std::vector<std::unique_ptr<Model>> served;
  for (const AttentionLayer &layer : models()) {
    KvCacheSpec spec{kBlockSize, layer.numKvHeads, layer.headSize, layer.dtype,
                     "auto"};
    Result<std::unique_ptr<SessionLayer>> onDevice =
        (*session)->createLayer(layer, spec, kNumBlocks);
    if (!onDevice)
      return fail(options.device, onDevice.status());
    Result<std::unique_ptr<SessionLayer>> reference =
        (*cpu)->createLayer(layer, spec, kNumBlocks);
    if (!reference)
      return fail("cpu", reference.status());
    const Bundle *bundle = (*onDevice)->bundle;
    std::printf(
        "%s: %s on %s%s, kv cache %s\n", layer.name.c_str(),
        std::string((*onDevice)->backend->name()).c_str(),
        std::string((*onDevice)->executor->name()).c_str(),
        bundle ? (" from " + bundle->directory).c_str() : "",
        (*onDevice)->kvCache.describe().c_str());
    served.push_back(std::make_unique<Model>(
        Model{layer, std::move(*onDevice), std::move(*reference),
              Scheduler(random)}));
  }

  int64_t failures = 0;
  for (int64_t step = 0; step < options.steps; ++step)
    for (std::unique_ptr<Model> &m : served) {
      Result<bool> ok = runStep(*m, step, random);
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
    usage();
    return 2;
  }
  return run(*options);
}
