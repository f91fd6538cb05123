//===- HostExample.cpp - A serving loop of several models on one device ---===//
//
// What a vLLM-shaped engine does with the runtime, in one file. Three models
// share one device, each with its own executor, impl, metadata builder and
// KV cache, all served from one bundle:
//   llama     GQA, f16: 8 query heads over 2 kv heads of 64
//   gemma     bf16, 8 over 4 heads of 128, soft cap 30, sliding window 48
//   deepseek  MLA, bf16: 16 heads over the 576-wide latent cache (512 + 64)
// Each model picks its backend from the registry (FLASH_ATTN, TRITON_MLA),
// allocates its cache in the shape the backend dictates, and has its impl
// checked against the executor at creation, so a bundle without a variant
// fails at start-up naming the attn-compile --variant to add. Then steps of
// prefill, chunked prefill and decode with requests that arrive, grow and
// finish (MLA decodes only: its prompts are written into the latent cache on
// arrival, as an engine's prefill path would). Every step runs on the device
// and on the CPU backend and is compared with DESIGN.md's tolerances.
//
//   attn-host-example --device cpu
//   attn-host-example --device vulkan --bundle host.attnb
//   attn-host-example --device tenstorrent --bundle host-tt.attnb
//
// tenstorrent runs the bundle's TT programs on the host emulator of
// tt/emulator (runtime/executors/tt/TTPlanDevice.h), through the same
// BundleExecutor and plans as Vulkan.
//
// examples/host/grid.json lists the variants (attn-compile --grid). Exit
// status: 0 when every step matches, 1 on a mismatch or an error, 2 on bad
// arguments.
//
//===----------------------------------------------------------------------===//

#include "reference/ops/Random.h"
#include "runtime/Backend.h"
#include "runtime/Metadata.h"
#include "runtime/Registry.h"
#include "runtime/executors/cpu/CpuExecutor.h"

#include "runtime/BundleExecutor.h"
#ifdef ATTN_HAVE_VULKAN
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#endif
#ifdef ATTN_HAVE_TT
#include "runtime/executors/tt/EmulatorDevice.h"
#include "runtime/executors/tt/TTPlanDevice.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
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
  std::string bundle;
  int64_t steps = 8;
  uint64_t seed = 1;
};

void usage() {
  std::fprintf(stderr, "usage: attn-host-example "
                       "[--device cpu|vulkan|tenstorrent] "
                       "[--bundle DIR] [--steps N] [--seed S]\n");
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
      o.bundle = value;
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

/// Makes the executors of one device type: one per model, all on one device.
class ExecutorFactory {
public:
  static Result<ExecutorFactory> create(DeviceType device,
                                        const Options &options);
  Result<std::unique_ptr<KernelExecutor>> make();

private:
  DeviceType device_ = DeviceType::CPU;
  std::optional<Bundle> bundle_;
#ifdef ATTN_HAVE_VULKAN
  std::shared_ptr<VulkanPlanDevice> vulkan_;
#endif
#ifdef ATTN_HAVE_TT
  std::shared_ptr<tt::EmulatorDevice> emulator_;
  std::shared_ptr<tt::TTPlanDevice> tt_;
#endif
};

Result<ExecutorFactory> ExecutorFactory::create(DeviceType device,
                                                const Options &options) {
  ExecutorFactory factory;
  factory.device_ = device;
  if (device == DeviceType::CPU)
    return factory;
  if (options.bundle.empty())
    return errorf("--device ", toString(device),
                  " needs --bundle DIR (a bundle attn-compile wrote with "
                  "--targets=",
                  device == DeviceType::TENSTORRENT ? "tt" : "spirv", ")");
  Result<Bundle> bundle = loadBundle(options.bundle);
  if (!bundle)
    return bundle.status();
  factory.bundle_ = std::move(*bundle);
#ifdef ATTN_HAVE_TT
  if (device == DeviceType::TENSTORRENT) {
    factory.emulator_ = std::make_shared<tt::EmulatorDevice>();
    factory.tt_ = std::make_shared<tt::TTPlanDevice>(*factory.emulator_);
    return factory;
  }
#endif
#ifdef ATTN_HAVE_VULKAN
  if (device == DeviceType::VULKAN) {
    Result<std::unique_ptr<VulkanPlanDevice>> created =
        VulkanPlanDevice::create();
    if (!created)
      return created.status();
    factory.vulkan_ = std::move(*created);
    return factory;
  }
#endif
  return errorf("no executor for --device ", toString(device),
                " in this build");
}

Result<std::unique_ptr<KernelExecutor>> ExecutorFactory::make() {
  if (device_ == DeviceType::CPU)
    return std::unique_ptr<KernelExecutor>(std::make_unique<CpuExecutor>());
  // Every model's executor loads the bundle's kernels at start-up; kernels
  // another executor already put on the device are shared, not reloaded.
  std::unique_ptr<BundleExecutor> executor;
#ifdef ATTN_HAVE_TT
  if (device_ == DeviceType::TENSTORRENT)
    executor = std::make_unique<BundleExecutor>(*bundle_, "tt", *tt_,
                                                tt_->kernelLoader(*bundle_));
#endif
#ifdef ATTN_HAVE_VULKAN
  if (device_ == DeviceType::VULKAN)
    executor = std::make_unique<BundleExecutor>(
        *bundle_, "spirv", *vulkan_, vulkan_->kernelLoader());
#endif
  if (!executor)
    return Status::error("no executor");
  ATTN_RETURN_IF_ERROR(executor->loadAllKernels());
  return std::unique_ptr<KernelExecutor>(std::move(executor));
}

/// One model on one device: its executor, impl, builder and KV cache.
struct Engine {
  std::unique_ptr<KernelExecutor> executor;
  std::unique_ptr<AttentionBackend> backend;
  std::unique_ptr<AttentionImpl> impl;
  std::unique_ptr<AttentionMetadataBuilder> builder;
  Tensor kvCache;
};

Result<Engine> makeEngine(DeviceType device, ExecutorFactory &factory,
                          const AttentionLayer &layer) {
  Engine e;
  Result<std::unique_ptr<KernelExecutor>> executor = factory.make();
  if (!executor)
    return executor.status();
  e.executor = std::move(*executor);
  SelectionRequest request;
  request.headSize = layer.headSize;
  request.dtype = layer.dtype;
  request.blockSize = kBlockSize;
  request.useMla = isMla(layer);
  request.useSlidingWindow = layer.slidingWindow.has_value();
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(device, request);
  if (!backend)
    return backend.status();
  e.backend = std::move(*backend);
  KvCacheSpec spec{kBlockSize, layer.numKvHeads, layer.headSize, layer.dtype,
                   "auto"};
  Result<std::unique_ptr<AttentionImpl>> impl =
      e.backend->getImpl(layer, *e.executor, &spec);
  if (!impl)
    return impl.status();
  e.impl = std::move(*impl);
  Result<std::unique_ptr<AttentionMetadataBuilder>> builder =
      e.backend->getBuilder(spec, {layer.name}, BuilderConfig{});
  if (!builder)
    return builder.status();
  e.builder = std::move(*builder);
  Result<std::vector<int64_t>> shape = e.backend->getKvCacheShape(
      kNumBlocks, kBlockSize, layer.numKvHeads, layer.headSize);
  if (!shape)
    return shape.status();
  e.kvCache = Tensor(layer.dtype, *shape);
  return e;
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

/// One model served on the device and on the CPU, step by step.
struct Model {
  AttentionLayer layer;
  Engine device, reference;
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

/// Writes the prompts of newly arrived MLA requests into both latent caches
/// (an engine's prefill path), so that every step of the model is a decode.
Status prefillLatents(Model &m, const std::vector<size_t> &arrived,
                      Random &random) {
  int64_t rank = m.layer.kvLoraRank, rope = m.layer.headSize - rank;
  for (size_t i : arrived) {
    Request &r = m.scheduler.running()[i];
    ATTN_RETURN_IF_ERROR(m.scheduler.reserve(i, r.promptLen));
    std::vector<int64_t> slots;
    for (int64_t p = 0; p < r.promptLen; ++p)
      slots.push_back(m.scheduler.slot(i, p));
    Tensor kvC(m.layer.dtype, {r.promptLen, rank});
    Tensor kPe(m.layer.dtype, {r.promptLen, rope});
    random.fill(kvC, -1.0, 1.0);
    random.fill(kPe, -1.0, 1.0);
    Tensor slotMapping = toTensor(slots);
    for (Engine *e : {&m.device, &m.reference})
      ATTN_RETURN_IF_ERROR(
          e->executor->concatAndCacheMla(kvC, kPe, slotMapping, e->kvCache));
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

/// Runs one step of `m` on both engines; returns whether the outputs agree.
Result<bool> runStep(Model &m, int64_t step, Random &random) {
  std::vector<size_t> arrived = m.scheduler.admit(step);
  if (isMla(m.layer))
    ATTN_RETURN_IF_ERROR(prefillLatents(m, arrived, random));
  if (m.scheduler.running().empty()) {
    std::printf("step %lld %s: idle\n", static_cast<long long>(step),
                m.layer.name.c_str());
    return true;
  }
  std::vector<int64_t> lens = m.scheduler.queryLens();
  Result<CommonAttentionMetadata> cam = stepMetadata(m, lens);
  if (!cam)
    return cam.status();

  // The new tokens: MLA's key and value are kv_c [T, L] and k_pe [T, P].
  const AttentionLayer &l = m.layer;
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
  Tensor outputs[2] = {Tensor(l.dtype, {tokens, l.numHeads, valueWidth}),
                       Tensor(l.dtype, {tokens, l.numHeads, valueWidth})};
  Engine *engines[2] = {&m.device, &m.reference};
  for (int e = 0; e < 2; ++e) {
    Result<std::unique_ptr<AttentionMetadata>> md =
        engines[e]->builder->build(/*commonPrefixLen=*/0, *cam);
    if (!md)
      return md.status();
    ATTN_RETURN_IF_ERROR(engines[e]->impl->forward(
        l, query, key, value, engines[e]->kvCache, **md, outputs[e]));
  }
  Comparison c = compare(outputs[0], outputs[1], toleranceOf(l.dtype));
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
                static_cast<long long>(outputs[0].numElements()));
  m.scheduler.advance(lens);
  return c.mismatches == 0;
}

int run(const Options &options) {
  std::optional<DeviceType> device = parseDeviceType(options.device);
  if (!device ||
      (*device != DeviceType::CPU && *device != DeviceType::VULKAN &&
       *device != DeviceType::TENSTORRENT)) {
    std::fprintf(stderr,
                 "attn-host-example: --device must be cpu, vulkan or "
                 "tenstorrent, got '%s'\n",
                 options.device.c_str());
    return 2;
  }
  auto fail = [](const std::string &what, const Status &s) {
    std::fprintf(stderr, "attn-host-example: %s: %s\n", what.c_str(),
                 s.message().c_str());
    return 1;
  };
  Result<ExecutorFactory> factory = ExecutorFactory::create(*device, options);
  if (!factory)
    return fail(options.device, factory.status());
  Result<ExecutorFactory> cpu = ExecutorFactory::create(DeviceType::CPU, {});
  Random random(options.seed);
  std::vector<std::unique_ptr<Model>> served;
  for (const AttentionLayer &layer : models()) {
    Result<Engine> engine = makeEngine(*device, *factory, layer);
    if (!engine)
      return fail(options.device, engine.status());
    Result<Engine> reference = makeEngine(DeviceType::CPU, *cpu, layer);
    if (!reference)
      return fail("cpu", reference.status());
    std::printf("%s: %s on %s, kv cache %s\n", layer.name.c_str(),
                std::string(engine->backend->name()).c_str(),
                std::string(engine->executor->name()).c_str(),
                engine->kvCache.describe().c_str());
    served.push_back(std::make_unique<Model>(
        Model{layer, std::move(*engine), std::move(*reference),
              Scheduler(random)}));
  }

  int64_t failures = 0;
  for (int64_t step = 0; step < options.steps; ++step)
    for (std::unique_ptr<Model> &m : served) {
      Result<bool> ok = runStep(*m, step, random);
      if (!ok)
        return fail(m->layer.name, ok.status());
      failures += !*ok;
    }
  if (failures) {
    std::printf("%lld model steps mismatched\n",
                static_cast<long long>(failures));
    return 1;
  }
  std::printf("all %lld steps of %zu models match the cpu backend\n",
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
