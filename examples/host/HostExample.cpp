//===- HostExample.cpp - A serving loop on an attn backend ----------------===//
//
// What a vLLM-shaped engine does with the runtime, in one file: pick the
// attention backend of a device, allocate the KV cache in the shape the
// backend dictates, then run steps of mixed prefill, chunked prefill and
// decode with growing sequences (requests arrive, grow and finish; their
// blocks are reused). Each step writes the new keys and values and runs
// attention through AttentionImpl::forward, on the selected device and on
// the CPU backend, and compares the outputs with DESIGN.md's tolerances.
//
//   attn-host-example --device cpu
//   attn-host-example --device vulkan --bundle host.attnb
//
// The Vulkan path runs a bundle that attn-compile made for this model:
//   op=paged_attention,num_heads=8,num_kv_heads=2,head_size=64,
//     block_size=16,dtype=f16
//   op=reshape_and_cache,num_kv_heads=2,head_size=64,block_size=16,dtype=f16
// (examples/host/grid.json lists them for attn-compile --grid). Exit status: 0
// when every step matches, 1 on a mismatch or an error, 2 on bad arguments.
//
//===----------------------------------------------------------------------===//

#include "reference/ops/Random.h"
#include "runtime/Backend.h"
#include "runtime/Metadata.h"
#include "runtime/Registry.h"
#include "runtime/executors/cpu/CpuExecutor.h"

#ifdef ATTN_HAVE_VULKAN
#include "runtime/BundleExecutor.h"
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
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

/// The model: one attention layer of a small GQA model.
constexpr int64_t kNumHeads = 8;
constexpr int64_t kNumKvHeads = 2;
constexpr int64_t kHeadSize = 64;
constexpr int64_t kBlockSize = 16;
constexpr int64_t kNumBlocks = 64;
/// Prompt tokens one request may prefill per step (chunked prefill).
constexpr int64_t kPrefillChunk = 24;

struct Options {
  std::string device = "cpu";
  std::string bundle;
  int64_t steps = 8;
  uint64_t seed = 1;
  DType dtype = DType::F16;
};

void usage() {
  std::fprintf(stderr,
               "usage: attn-host-example [--device cpu|vulkan] [--bundle DIR]"
               " [--steps N] [--seed S] [--dtype f32|f16|bf16]\n");
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
    } else if (arg == "--dtype") {
      std::optional<DType> dtype = parseDType(value);
      if (!dtype || !isFloat(*dtype)) {
        std::fprintf(stderr, "attn-host-example: bad --dtype '%s'\n",
                     value.c_str());
        return std::nullopt;
      }
      o.dtype = *dtype;
    } else {
      std::fprintf(stderr, "attn-host-example: unknown argument '%s'\n",
                   argv[i]);
      return std::nullopt;
    }
  }
  if (o.steps < 1) {
    std::fprintf(stderr, "attn-host-example: --steps must be positive\n");
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

/// One attention layer on one device: its executor, impl and KV cache.
struct Engine {
  std::unique_ptr<KernelExecutor> executor;
  std::unique_ptr<AttentionBackend> backend;
  std::unique_ptr<AttentionImpl> impl;
  std::unique_ptr<AttentionMetadataBuilder> builder;
  Tensor kvCache;
  /// Held by the executor on devices that run bundles.
  std::shared_ptr<void> device;
};

/// Selects `device`'s backend for the layer, makes its impl and metadata
/// builder on `executor`, and allocates the cache in the backend's shape.
Result<Engine> makeEngine(DeviceType device,
                          std::unique_ptr<KernelExecutor> executor,
                          const AttentionLayer &layer) {
  Engine e;
  e.executor = std::move(executor);
  SelectionRequest request;
  request.headSize = layer.headSize;
  request.dtype = layer.dtype;
  request.blockSize = kBlockSize;
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(device, request);
  if (!backend)
    return backend.status();
  e.backend = std::move(*backend);
  Result<std::unique_ptr<AttentionImpl>> impl =
      e.backend->getImpl(layer, *e.executor);
  if (!impl)
    return impl.status();
  e.impl = std::move(*impl);
  KvCacheSpec spec{kBlockSize, layer.numKvHeads, layer.headSize, layer.dtype,
                   "auto"};
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

#ifdef ATTN_HAVE_VULKAN
/// The Vulkan executor: the bundle's SPIR-V kernels on the first Vulkan
/// device, all loaded at start-up so a bundle that lacks one fails now.
Result<std::unique_ptr<KernelExecutor>>
makeVulkanExecutor(const std::string &bundleDir,
                   std::shared_ptr<void> &keepAlive) {
  if (bundleDir.empty())
    return Status::error("--device vulkan needs --bundle DIR (a bundle "
                         "attn-compile wrote with --targets=spirv)");
  Result<Bundle> bundle = loadBundle(bundleDir);
  if (!bundle)
    return bundle.status();
  Result<std::unique_ptr<VulkanPlanDevice>> created =
      VulkanPlanDevice::create();
  if (!created)
    return created.status();
  std::shared_ptr<VulkanPlanDevice> device = std::move(*created);
  keepAlive = device;
  VulkanPlanDevice *raw = device.get();
  auto executor = std::make_unique<BundleExecutor>(
      std::move(*bundle), "spirv", *raw,
      raw->kernelLoader());
  ATTN_RETURN_IF_ERROR(executor->loadAllKernels());
  return std::unique_ptr<KernelExecutor>(std::move(executor));
}
#endif

Result<std::unique_ptr<KernelExecutor>>
makeExecutor(DeviceType device, const Options &options,
             std::shared_ptr<void> &keepAlive) {
  if (device == DeviceType::CPU)
    return std::unique_ptr<KernelExecutor>(std::make_unique<CpuExecutor>());
#ifdef ATTN_HAVE_VULKAN
  if (device == DeviceType::VULKAN)
    return makeVulkanExecutor(options.bundle, keepAlive);
#endif
  return errorf("no executor for --device ", toString(device),
                " in this build");
}

/// A request of the simulated engine.
struct Request {
  int64_t id = 0;
  int64_t promptLen = 0;
  int64_t maxNewTokens = 0;
  /// Tokens in the cache before this step.
  int64_t computed = 0;
  std::vector<int32_t> blocks;

  int64_t total() const { return promptLen + maxNewTokens; }
  bool prefilling() const { return computed < promptLen; }
};

/// Schedules requests, hands out blocks from a free list, and draws the new
/// tokens' queries, keys and values.
class Scheduler {
public:
  explicit Scheduler(uint64_t seed) : random_(seed) {
    for (int32_t b = kNumBlocks - 1; b >= 0; --b)
      freeBlocks_.push_back(b);
  }

  /// Two requests arrive at the start, then one every other step, while
  /// there is room.
  void admit(int64_t step) {
    int64_t arrivals = step == 0 ? 2 : step % 2 == 0 ? 1 : 0;
    for (int64_t i = 0; i < arrivals && running_.size() < 5; ++i) {
      Request r;
      r.id = nextId_++;
      r.promptLen = random_.uniformInt(3, 60);
      r.maxNewTokens = random_.uniformInt(2, 6);
      running_.push_back(r);
    }
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

  /// Gives every request the blocks its sequence needs after this step.
  Status allocate(const std::vector<int64_t> &queryLens) {
    for (size_t i = 0; i < running_.size(); ++i) {
      Request &r = running_[i];
      int64_t need = (r.computed + queryLens[i] + kBlockSize - 1) / kBlockSize;
      while (static_cast<int64_t>(r.blocks.size()) < need) {
        if (freeBlocks_.empty())
          return errorf("out of cache blocks");
        r.blocks.push_back(freeBlocks_.back());
        freeBlocks_.pop_back();
      }
    }
    return Status::ok();
  }

  /// Advances every request by its query length, retires finished ones and
  /// frees their blocks.
  void advance(const std::vector<int64_t> &queryLens) {
    for (size_t i = 0; i < running_.size(); ++i)
      running_[i].computed += queryLens[i];
    std::vector<Request> still;
    for (Request &r : running_) {
      if (r.computed >= r.total()) {
        freeBlocks_.insert(freeBlocks_.end(), r.blocks.begin(), r.blocks.end());
        continue;
      }
      still.push_back(std::move(r));
    }
    running_ = std::move(still);
  }

  const std::vector<Request> &running() const { return running_; }
  Random &random() { return random_; }

private:
  Random random_;
  std::vector<Request> running_;
  std::vector<int32_t> freeBlocks_;
  int64_t nextId_ = 0;
};

/// Largest |device - reference| and whether every element is within
/// atol + rtol * |reference|.
struct Comparison {
  double maxAbsError = 0;
  int64_t mismatches = 0;
};
Comparison compare(const Tensor &device, const Tensor &reference,
                   int64_t elements, Tolerance tol) {
  Comparison c;
  for (int64_t i = 0; i < elements; ++i) {
    double d = device.getFloat(i), r = reference.getFloat(i);
    double err = std::fabs(d - r);
    if (!(err <= tol.atol + tol.rtol * std::fabs(r)))
      ++c.mismatches;
    if (err > c.maxAbsError || std::isnan(err))
      c.maxAbsError = err;
  }
  return c;
}

int run(const Options &options) {
  std::optional<DeviceType> device = parseDeviceType(options.device);
  if (!device ||
      (*device != DeviceType::CPU && *device != DeviceType::VULKAN)) {
    std::fprintf(stderr,
                 "attn-host-example: --device must be cpu or vulkan, "
                 "got '%s'\n",
                 options.device.c_str());
    return 2;
  }
  AttentionLayer layer;
  layer.name = "model.layers.0.self_attn";
  layer.numHeads = kNumHeads;
  layer.numKvHeads = kNumKvHeads;
  layer.headSize = kHeadSize;
  layer.scale = 1.0 / std::sqrt(static_cast<double>(kHeadSize));
  layer.dtype = options.dtype;

  auto fail = [](const std::string &what, const Status &s) {
    std::fprintf(stderr, "attn-host-example: %s: %s\n", what.c_str(),
                 s.message().c_str());
    return 1;
  };
  std::shared_ptr<void> keepAlive;
  Result<std::unique_ptr<KernelExecutor>> executor =
      makeExecutor(*device, options, keepAlive);
  if (!executor)
    return fail(options.device, executor.status());
  Result<Engine> engine = makeEngine(*device, std::move(*executor), layer);
  if (!engine)
    return fail(options.device, engine.status());
  engine->device = keepAlive;
  Result<Engine> reference =
      makeEngine(DeviceType::CPU, std::make_unique<CpuExecutor>(), layer);
  if (!reference)
    return fail("cpu", reference.status());
  std::printf("device %s (%s), backend %s, kv cache %s\n",
              options.device.c_str(),
              std::string(engine->executor->name()).c_str(),
              std::string(engine->backend->name()).c_str(),
              engine->kvCache.describe().c_str());

  Tolerance tol = toleranceOf(options.dtype);
  Scheduler scheduler(options.seed);
  int64_t failures = 0;
  for (int64_t step = 0; step < options.steps; ++step) {
    scheduler.admit(step);
    if (scheduler.running().empty()) {
      std::printf("step %lld: idle\n", static_cast<long long>(step));
      continue;
    }
    std::vector<int64_t> queryLens = scheduler.queryLens();
    if (Status s = scheduler.allocate(queryLens); !s)
      return fail("scheduler", s);

    // The step's metadata, as the engine's model runner fills it.
    const std::vector<Request> &reqs = scheduler.running();
    StepInputs inputs;
    inputs.queryStartLoc = {0};
    std::vector<int64_t> slots;
    int64_t cols = 0, prefills = 0, chunked = 0, decodes = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      const Request &r = reqs[i];
      inputs.queryStartLoc.push_back(
          static_cast<int32_t>(inputs.queryStartLoc.back() + queryLens[i]));
      inputs.seqLens.push_back(static_cast<int32_t>(r.computed + queryLens[i]));
      for (int64_t p = r.computed; p < r.computed + queryLens[i]; ++p)
        slots.push_back(r.blocks[p / kBlockSize] * kBlockSize + p % kBlockSize);
      cols = std::max<int64_t>(cols, r.blocks.size());
      if (!r.prefilling())
        ++decodes;
      else if (r.computed == 0)
        ++prefills;
      else
        ++chunked;
    }
    inputs.slotMapping = {slots};
    std::vector<int32_t> blockTable(reqs.size() * cols, 0);
    for (size_t i = 0; i < reqs.size(); ++i)
      std::copy(reqs[i].blocks.begin(), reqs[i].blocks.end(),
                blockTable.begin() + i * cols);
    Result<CommonAttentionMetadata> cam = makeCommonAttentionMetadata(
        inputs, blockTable, static_cast<int32_t>(cols));
    if (!cam)
      return fail("metadata", cam.status());

    int64_t tokens = inputs.queryStartLoc.back();
    Tensor query(options.dtype, {tokens, kNumHeads, kHeadSize});
    Tensor key(options.dtype, {tokens, kNumKvHeads, kHeadSize});
    Tensor value(options.dtype, {tokens, kNumKvHeads, kHeadSize});
    for (Tensor *t : {&query, &key, &value})
      scheduler.random().fill(*t, -1.0, 1.0);

    Tensor outputs[2] = {Tensor(options.dtype, query.shape()),
                         Tensor(options.dtype, query.shape())};
    Engine *engines[2] = {&*engine, &*reference};
    for (int e = 0; e < 2; ++e) {
      Result<std::unique_ptr<AttentionMetadata>> md =
          engines[e]->builder->build(/*commonPrefixLen=*/0, *cam);
      if (!md)
        return fail("build", md.status());
      Status s = engines[e]->impl->forward(
          layer, query, key, value, engines[e]->kvCache, **md, outputs[e]);
      if (!s)
        return fail(e == 0 ? options.device : "cpu", s);
    }
    Comparison c =
        compare(outputs[0], outputs[1], outputs[0].numElements(), tol);
    bool ok = c.mismatches == 0;
    failures += !ok;
    std::printf("step %lld: %zu requests (%lld prefill, %lld chunked, %lld "
                "decode), %lld tokens, max |err| %.3g: %s\n",
                static_cast<long long>(step), reqs.size(),
                static_cast<long long>(prefills),
                static_cast<long long>(chunked),
                static_cast<long long>(decodes), static_cast<long long>(tokens),
                c.maxAbsError, ok ? "ok" : "MISMATCH");
    if (!ok)
      std::printf("  %lld of %lld elements outside atol %g + rtol %g\n",
                  static_cast<long long>(c.mismatches),
                  static_cast<long long>(outputs[0].numElements()), tol.atol,
                  tol.rtol);
    scheduler.advance(queryLens);
  }
  if (failures) {
    std::printf("%lld of %lld steps mismatched\n",
                static_cast<long long>(failures),
                static_cast<long long>(options.steps));
    return 1;
  }
  std::printf("all %lld steps match the cpu backend\n",
              static_cast<long long>(options.steps));
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
