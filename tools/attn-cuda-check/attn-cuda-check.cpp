//===- AttnCudaCheck.cpp - A PTX bundle on a GPU against the reference ----===//
//
// attn-cuda-check BUNDLE.attnb [--bench] ...: what scripts/gpu-check runs on
// a GPU machine without MLIR. The bundle was compiled elsewhere
// (scripts/gpu-bundle, attn-compile --targets=ptx).
//
// Check: for every variant of the bundle, seeded random inputs
// (reference/testing/Random.h) go through the host API's call for the variant's
// op twice, on the bundle's PTX kernels (BundleExecutor on a CudaPlanDevice)
// and on the CPU reference (CpuExecutor); every output is compared with
// reference/testing/Compare.h at the output dtype's default tolerance, an
// fp8 cache (written with per-layer scales) bit for bit.
//
// Bench (--bench): paged decode at Llama-3-8B's shape (H 32, G 8, D 128,
// block 16, bf16 query) over batch x context with a bf16 cache and with an
// e4m3 one (per-layer scales), MLA decode at DeepSeek-V3's shape (H 128,
// L 512, P 64, block 64, bf16), and a causal prefill; kernel time from CUDA
// events (launches repeated, inputs uploaded once), reported as GB/s of KV
// cache bytes read against the device's peak, and TFLOP/s for prefill.
//
// Dry run (--dry-run): everything up to the first driver call, on any
// machine: the bundle loads, each variant is one the checker runs, each
// benchmark finds its variant and a small batch of its inputs passes the
// variant's plan's type check (scripts/gpu-check --dry-run).
//
// Exit status: 0 when every check passed (and the bench ran), 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "core/LaunchFacts.h"
#include "core/Target.h"
#include "core/Version.h"
#include "devices/cuda/CudaPlanDevice.h"
#include "reference/testing/Compare.h"
#include "reference/testing/Random.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/executor/BundleExecutor.h"
#include "runtime/executor/CpuExecutor.h"
#include "runtime/executor/HostCalls.h"
#include "runtime/host/Backend.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::runtime;
using namespace attn::cuda;

namespace {

/// The target whose kernels this tool checks.
const std::string_view kPtx = toString(Target::PTX);

struct Options {
  std::string bundle;
  uint64_t seed = 1;
  bool check = true;
  bool bench = false;
  double peakGBps = 0.0;
  int repeats = 20;
  std::string benchOut;
  std::string driver = "libcuda.so.1";
  int device = 0;
  /// Bench shapes: smaller ones for a quick run.
  bool quick = false;
  /// The reference on both sides: checks, without a GPU, that every variant
  /// of the bundle can be set up and run.
  bool referenceOnly = false;
  /// Everything up to the first driver call: the bundle loads, its
  /// variants are ones the checker runs, each benchmark finds its variant.
  bool dryRun = false;
};

const char *kUsage = R"(usage: attn-cuda-check BUNDLE.attnb [options]

Checks every variant of a bundle's PTX kernels on the CUDA device against
the CPU reference, and with --bench measures decode and prefill.
  --seed=N          seed of the random inputs (1)
  --bench           also run the benchmark
  --bench-only      only the benchmark
  --quick           small benchmark shapes (a smoke test)
  --repeats=N       timed runs of each kernel per measurement (20)
  --peak-gbps=X     peak memory bandwidth in GB/s (default: from the device)
  --bench-out=FILE  also write the benchmark rows as TSV
  --driver=LIB      the CUDA driver library (libcuda.so.1)
  --device=N        the CUDA device (0)
  --reference-only  run the CPU reference in place of the GPU (no GPU
                    needed: checks the inputs of every variant can be made)
  --dry-run         stop before the first driver call: load the bundle,
                    list the variants to check (and their chips) and the
                    benchmarks' variants (with --bench: each checked
                    against a small batch of its inputs); exit 1 when one
                    is missing or cannot be checked
  --version         print attn's version
)";

std::optional<Options> parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (a.rfind(prefix, 0) == 0)
        return a.substr(prefix.size());
      return std::nullopt;
    };
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--version") {
      std::cout << "attn-cuda-check " << attn::version() << "\n";
      std::exit(0);
    } else if (a == "--bench") {
      o.bench = true;
    } else if (a == "--bench-only") {
      o.bench = true;
      o.check = false;
    } else if (a == "--dry-run") {
      o.dryRun = true;
    } else if (a == "--reference-only") {
      o.referenceOnly = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (auto v = value("--seed")) {
      o.seed = std::strtoull(v->c_str(), nullptr, 10);
    } else if (auto v = value("--repeats")) {
      o.repeats = std::atoi(v->c_str());
    } else if (auto v = value("--peak-gbps")) {
      o.peakGBps = std::atof(v->c_str());
    } else if (auto v = value("--bench-out")) {
      o.benchOut = *v;
    } else if (auto v = value("--driver")) {
      o.driver = *v;
    } else if (auto v = value("--device")) {
      o.device = std::atoi(v->c_str());
    } else if (!a.empty() && a[0] != '-' && o.bundle.empty()) {
      o.bundle = a;
    } else {
      std::cerr << "attn-cuda-check: unknown argument '" << a << "'\n"
                << kUsage;
      return std::nullopt;
    }
  }
  if (o.bundle.empty()) {
    std::cerr << kUsage;
    return std::nullopt;
  }
  if (o.repeats < 1)
    o.repeats = 1;
  return o;
}

/// A variant's manifest parameters, read with defaults.
struct Params {
  const std::map<std::string, std::string> &map;
  std::string text(const std::string &k, const std::string &d) const {
    auto it = map.find(k);
    return it == map.end() ? d : it->second;
  }
  int64_t integer(const std::string &k, int64_t d) const {
    auto it = map.find(k);
    return it == map.end() ? d : std::strtoll(it->second.c_str(), nullptr, 10);
  }
  double real(const std::string &k, double d) const {
    auto it = map.find(k);
    return it == map.end() ? d : std::strtod(it->second.c_str(), nullptr);
  }
  bool boolean(const std::string &k, bool d) const {
    auto it = map.find(k);
    return it == map.end() ? d : (it->second == "true" || it->second == "1");
  }
};

/// One compared output.
struct Row {
  std::string variant;
  std::string output;
  TensorDiff diff;
  std::string error;
};

void compare(const std::string &variant, const std::string &name,
             const Tensor &got, const Tensor &want, std::vector<Row> &rows,
             Tolerance tolerance) {
  Row row{variant, name, {}, {}};
  Result<TensorDiff> diff = compareTensors(got, want, tolerance);
  if (diff)
    row.diff = *diff;
  else
    row.error = diff.message();
  rows.push_back(std::move(row));
}

/// Makes `shape` MLA's: one latent kv head of kv_lora_rank + rope_dim
/// values (DeepSeek's 512 + 64 by default).
void setMlaShape(ProblemShape &shape, const Params &p) {
  shape.kvLoraRank = p.integer("kv_lora_rank", 512);
  shape.ropeDim = p.integer("rope_dim", 64);
  shape.numKvHeads = 1;
}

/// What a variant's check runs: both executors, the seed, the rows.
struct CheckContext {
  const BundleVariant &variant;
  KernelExecutor &device;
  KernelExecutor &reference;
  uint64_t seed;
  std::vector<Row> &rows;

  /// At the output dtype's default tolerance; an fp8 cache bit for bit
  /// (PTX divides by the scale in f32 correctly rounded, as the reference).
  void compareOutput(const std::string &name, const Tensor &got,
                     const Tensor &want) const {
    compare(variant.name, name, got, want, rows,
            isFp8(want.dtype()) ? Tolerance{} : defaultTolerance(want.dtype()));
  }
  KernelExecutor *executor(int i) const {
    return i == 0 ? &device : &reference;
  }
};

/// The problem shape of a variant's parameters (the MLA form's latent
/// head where it has kv_lora_rank), and the random inputs' options.
Result<ProblemShape> problemShape(const Params &p) {
  std::optional<DType> dtype = parseDType(p.text("dtype", "bf16"));
  if (!dtype)
    return errorf("unknown dtype ", p.text("dtype", ""));
  std::optional<KvLayout> layout = parseKvLayout(p.text("layout", "nhd"));
  if (!layout)
    return errorf("unknown layout ", p.text("layout", ""));
  ProblemShape shape;
  shape.numHeads = p.integer("num_heads", 32);
  shape.numKvHeads = p.integer("num_kv_heads", 8);
  shape.headSize = p.integer("head_size", 128);
  shape.blockSize = p.integer("block_size", 16);
  shape.dtype = *dtype;
  shape.layout = *layout;
  if (p.text("op", "") == "mla_decode" || p.integer("kv_lora_rank", 0) > 0)
    setMlaShape(shape, p);
  return shape;
}

ProblemOptions problemOptions(uint64_t seed) {
  ProblemOptions options;
  options.seed = seed;
  options.numReqs = 5;
  options.maxContextLen = 200;
  options.maxPrefillQueryLen = 24;
  return options;
}

/// An fp8 variant's per-layer scales (kv_cache_dtype fp8, fp8_e4m3 or
/// fp8_e5m2; within attn-run's [0.01, 0.03)); none for "auto".
struct CacheScales {
  bool fp8 = false;
  Tensor k{DType::F32, {1}}, v{DType::F32, {1}};
  KvCacheScales paged() const {
    return fp8 ? KvCacheScales{&k, &v} : KvCacheScales{};
  }
  const Tensor *latent() const { return fp8 ? &k : nullptr; }
  /// `cache` (in the model dtype) as an fp8 cache of `type`, quantized
  /// with these scales, which it sets.
  Tensor quantize(const Tensor &cache, DType type) {
    fp8 = true;
    k.setFloat(0, 0.02);
    v.setFloat(0, 0.025);
    return quantizeCache(cache, type, k.getFloat(0), v.getFloat(0));
  }
};

/// Makes `problem`'s cache the variant's: for an fp8 kv_cache_dtype, its
/// values quantized with `scales`, which it sets.
Status useCacheDType(const Params &p, const ProblemShape &shape,
                     Problem &problem, CacheScales &scales) {
  Result<DType> type =
      kvCacheElementType(p.text("kv_cache_dtype", "auto"), shape.dtype);
  if (!type)
    return type.status();
  if (!isFp8(*type))
    return Status::ok();
  problem.kvCache = scales.quantize(problem.kvCache, *type);
  return Status::ok();
}

/// reshape_and_cache, either form: the cache each executor writes.
Status checkCacheWrite(const CheckContext &c, const Params &p,
                       const Problem &problem, KvCacheLayout layout,
                       const CacheScales &scales) {
  Tensor caches[2] = {problem.kvCache, problem.kvCache};
  bool mla = p.integer("kv_lora_rank", 0) > 0;
  for (int i = 0; i < 2; ++i)
    ATTN_RETURN_IF_ERROR(
        mla ? host::concatAndCacheMla(*c.executor(i), problem.key,
                                      problem.value, problem.slotMapping,
                                      caches[i], scales.latent())
            : host::reshapeAndCache(*c.executor(i), problem.key, problem.value,
                                    problem.slotMapping, layout, caches[i],
                                    scales.paged()));
  c.compareOutput("kv_cache", caches[0], caches[1]);
  return Status::ok();
}

Status checkPagedAttention(const CheckContext &c, const Params &p,
                           const Problem &problem, KvCacheLayout layout,
                           const CacheScales &scales) {
  runtime::PagedAttentionParams params;
  params.kvScales = scales.paged();
  params.scale = p.real("scale", problem.scale);
  params.causal = p.boolean("causal", true);
  params.windowLeft = p.integer("window_left", -1);
  params.windowRight = p.integer("window_right", -1);
  params.softCap = p.real("soft_cap", 0.0);
  params.alibiSlopes =
      p.boolean("alibi", false) ? &problem.alibiSlopes : nullptr;
  params.sinks = p.boolean("sinks", false) ? &problem.sinks : nullptr;
  params.layout = layout;
  const Tensor &q = problem.query;
  Tensor out[2] = {Tensor(q.dtype(), q.shape()), Tensor(q.dtype(), q.shape())};
  Tensor lse[2] = {Tensor(DType::F32, {q.dim(0), q.dim(1)}),
                   Tensor(DType::F32, {q.dim(0), q.dim(1)})};
  for (int i = 0; i < 2; ++i)
    ATTN_RETURN_IF_ERROR(host::pagedAttention(
        *c.executor(i), q, problem.kvCache, problem.queryStartLoc,
        problem.seqLens, problem.blockTable, params, out[i], &lse[i]));
  c.compareOutput("out", out[0], out[1]);
  c.compareOutput("lse", lse[0], lse[1]);
  return Status::ok();
}

Status checkMlaDecode(const CheckContext &c, const Params &p,
                      const ProblemShape &shape, const Problem &problem,
                      const CacheScales &scales) {
  runtime::MlaDecodeParams params;
  params.kvScale = scales.latent();
  params.scale = p.real("scale", problem.scale);
  params.kvLoraRank = shape.kvLoraRank;
  params.numKvSplits = p.integer("num_kv_splits", 1);
  const Tensor &q = problem.query;
  int64_t r = q.dim(0), h = q.dim(1);
  Tensor out[2] = {Tensor(q.dtype(), {r, h, shape.kvLoraRank}),
                   Tensor(q.dtype(), {r, h, shape.kvLoraRank})};
  Tensor lse[2] = {Tensor(DType::F32, {r, h}), Tensor(DType::F32, {r, h})};
  for (int i = 0; i < 2; ++i)
    ATTN_RETURN_IF_ERROR(host::mlaDecode(*c.executor(i), q, problem.kvCache,
                                         problem.blockTable, problem.seqLens,
                                         params, out[i], &lse[i]));
  c.compareOutput("out", out[0], out[1]);
  c.compareOutput("lse", lse[0], lse[1]);
  return Status::ok();
}

/// merge_states over random states, with empty sides: one row each, and
/// one row empty on both.
Status checkMergeStates(const CheckContext &c, const ProblemShape &shape) {
  int64_t n = 37, h = shape.numHeads, d = shape.headSize;
  DType dtype = shape.dtype;
  Random random(c.seed);
  Tensor outA(dtype, {n, h, d}), outB(dtype, {n, h, d});
  Tensor lseA(DType::F32, {n, h}), lseB(DType::F32, {n, h});
  random.fill(outA, -1, 1);
  random.fill(outB, -1, 1);
  random.fill(lseA, -4, 4);
  random.fill(lseB, -4, 4);
  for (int64_t j = 0; j < h; ++j) {
    lseA.setFloat(lseA.offset({0, j}), -INFINITY);
    lseB.setFloat(lseB.offset({1, j}), -INFINITY);
    lseA.setFloat(lseA.offset({2, j}), -INFINITY);
    lseB.setFloat(lseB.offset({2, j}), -INFINITY);
  }
  Tensor out[2] = {Tensor(dtype, {n, h, d}), Tensor(dtype, {n, h, d})};
  Tensor lse[2] = {Tensor(DType::F32, {n, h}), Tensor(DType::F32, {n, h})};
  for (int i = 0; i < 2; ++i)
    ATTN_RETURN_IF_ERROR(host::mergeStates(*c.executor(i), outA, lseA, outB,
                                           lseB, out[i], &lse[i]));
  c.compareOutput("out", out[0], out[1]);
  c.compareOutput("lse", lse[0], lse[1]);
  return Status::ok();
}

/// The ops checkVariant runs.
bool isCheckedOp(std::string_view op) {
  return op == "reshape_and_cache" || op == "paged_attention" ||
         op == "mla_decode" || op == "merge_states";
}

/// Runs one variant's op on both executors and compares the outputs.
Status checkVariant(const BundleVariant &v, KernelExecutor &device,
                    KernelExecutor &reference, uint64_t seed,
                    std::vector<Row> &rows) {
  Params p{v.parameters};
  std::string op = p.text("op", "");
  if (!isCheckedOp(op))
    return errorf("variant has op '", op, "', which this checker cannot run");
  Result<ProblemShape> shape = problemShape(p);
  if (!shape)
    return shape.status();
  CheckContext c{v, device, reference, seed, rows};
  if (op == "merge_states")
    return checkMergeStates(c, *shape);
  Result<Problem> problem = generateProblem(*shape, problemOptions(seed));
  if (!problem)
    return problem.status();
  CacheScales scales;
  ATTN_RETURN_IF_ERROR(useCacheDType(p, *shape, *problem, scales));
  KvCacheLayout layout = shape->layout;
  if (op == "reshape_and_cache")
    return checkCacheWrite(c, p, *problem, layout, scales);
  if (op == "paged_attention")
    return checkPagedAttention(c, p, *problem, layout, scales);
  return checkMlaDecode(c, p, *shape, *problem, scales);
}

int runChecks(const Bundle &bundle, KernelExecutor &device,
              const Options &options) {
  CpuExecutor reference;
  std::vector<Row> rows;
  int failures = 0;
  for (const BundleVariant &v : bundle.variants) {
    bool hasPtx = false;
    for (const BundleKernel &k : v.kernels)
      hasPtx |= ::attn::parseTarget(k.target) == ::attn::Target::PTX;
    if (!hasPtx)
      continue;
    if (Status s = checkVariant(v, device, reference, options.seed, rows); !s) {
      rows.push_back({v.name, "-", {}, s.message()});
    }
  }
  std::printf("\n%-56s %-9s %10s %10s %8s  %s\n", "variant", "output",
              "max abs", "max rel", "bad", "verdict");
  for (const Row &row : rows) {
    bool ok = row.error.empty() && row.diff.passed();
    failures += !ok;
    if (!row.error.empty()) {
      std::printf("%-56s %-9s %10s %10s %8s  FAIL: %s\n", row.variant.c_str(),
                  row.output.c_str(), "-", "-", "-", row.error.c_str());
      continue;
    }
    std::printf("%-56s %-9s %10.3g %10.3g %8lld  %s", row.variant.c_str(),
                row.output.c_str(), row.diff.maxAbsError, row.diff.maxRelError,
                static_cast<long long>(row.diff.numMismatches),
                ok ? "ok" : "FAIL");
    if (!ok)
      std::printf(" (worst at %s: got %.6g, want %.6g)",
                  formatIndex(row.diff.worstIndex).c_str(), row.diff.worstGot,
                  row.diff.worstWant);
    std::printf("\n");
  }
  std::printf("check: %zu outputs, %d failed\n", rows.size(), failures);
  return failures;
}

//===----------------------------------------------------------------------===//
// Benchmark
//===----------------------------------------------------------------------===//

/// Fills `t` with copies of `pattern`'s bytes, back to back.
void tileBytes(Tensor &t, const Tensor &pattern) {
  size_t chunk = pattern.numBytes();
  for (size_t at = 0; at < t.numBytes(); at += chunk)
    std::memcpy(t.data() + at, pattern.data(),
                std::min(chunk, t.numBytes() - at));
}

/// Fills a tensor quickly with valid values: a random 1 MiB pattern, tiled.
/// Kernel time does not depend on the values.
void tileRandom(Tensor &t, Random &random) {
  size_t patternElems = std::min<int64_t>(t.numElements(), 1 << 19);
  Tensor pattern(t.dtype(), {static_cast<int64_t>(patternElems)});
  random.fill(pattern, -1, 1);
  tileBytes(t, pattern);
}

/// Block table [R, M] over a shuffled pool of R * M blocks.
Tensor shuffledBlockTable(int64_t reqs, int64_t blocksPerReq, Random &random) {
  std::vector<int32_t> pool(reqs * blocksPerReq);
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i] = static_cast<int32_t>(i);
  for (size_t i = pool.size(); i > 1; --i)
    std::swap(pool[i - 1], pool[random.uniformInt(0, i - 1)]);
  Tensor table(DType::I32, {reqs, blocksPerReq});
  std::memcpy(table.data(), pool.data(), pool.size() * sizeof(int32_t));
  return table;
}

struct BenchRow {
  std::string name;
  double ms = 0.0;
  /// GB/s of KV read, or TFLOP/s.
  double rate = 0.0;
  std::string unit;
  double percentOfPeak = -1.0;
  std::string error;
};

/// Fills `row` from a timed run: its time and `amount / 1e9` (bytes for
/// GB/s) or `amount / 1e12` (FLOPs for TFLOP/s) per second by `unit`, and
/// the percentage of `peak` GB/s when it is positive.
void fillRow(BenchRow &row, const Result<double> &ms, double amount,
             double peak) {
  if (!ms) {
    row.error = ms.message();
    return;
  }
  row.ms = *ms;
  row.rate = amount / (*ms * 1e-3) / (row.unit == "GB/s" ? 1e9 : 1e12);
  if (peak > 0)
    row.percentOfPeak = 100.0 * row.rate / peak;
}

/// Llama-3-8B's attention: query heads, kv heads and head size.
constexpr int64_t kLlamaHeads = 32, kLlamaKvHeads = 8, kLlamaHeadSize = 128;

/// Where an fp8 cache's k_scale and v_scale sit among llamaBatch's inputs.
constexpr size_t kLlamaKScaleInput = 5, kLlamaVScaleInput = 6;

/// A Llama-3-8B NHD cache of `blocks` blocks of `block` tokens in `type`:
/// random bf16 values, or for an fp8 type those of up to 32 blocks quantized
/// with `scales` as the checks' caches are (which sets them), tiled whole
/// blocks at a time so that keys and values keep their scales.
Tensor llamaCache(int64_t blocks, int64_t block, DType type,
                  CacheScales &scales, Random &random) {
  const int64_t g = kLlamaKvHeads, d = kLlamaHeadSize;
  Tensor cache(type, {blocks, 2, block, g, d});
  if (!isFp8(type)) {
    tileRandom(cache, random);
    return cache;
  }
  Tensor pattern(DType::BF16, {std::min<int64_t>(blocks, 32), 2, block, g, d});
  random.fill(pattern, -1, 1);
  tileBytes(cache, scales.quantize(pattern, type));
  return cache;
}

/// Llama-3-8B's paged attention inputs, in the plan's order (query, cache,
/// block table, seq_lens, query_start_loc, and for an fp8 cache its k_scale
/// and v_scale): `reqs` requests of `seqLen` tokens, the last `queryLen` of
/// them new, a bf16 query, the cache in `cacheType` blocks of `block`.
std::vector<Tensor> llamaBatch(int64_t reqs, int64_t queryLen, int64_t seqLen,
                               int64_t block, DType cacheType, Random &random) {
  const int64_t h = kLlamaHeads, d = kLlamaHeadSize;
  int64_t m = (seqLen + block - 1) / block;
  Tensor query(DType::BF16, {reqs * queryLen, h, d});
  random.fill(query, -1, 1);
  CacheScales scales;
  Tensor cache = llamaCache(reqs * m, block, cacheType, scales, random);
  Tensor table = shuffledBlockTable(reqs, m, random);
  Tensor lens(DType::I32, {reqs}), qsl(DType::I32, {reqs + 1});
  for (int64_t r = 0; r < reqs; ++r) {
    lens.setInt(r, seqLen);
    qsl.setInt(r + 1, (r + 1) * queryLen);
  }
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(query));
  inputs.push_back(std::move(cache));
  inputs.push_back(std::move(table));
  inputs.push_back(std::move(lens));
  inputs.push_back(std::move(qsl));
  if (scales.fp8) {
    inputs.push_back(scales.k);
    inputs.push_back(scales.v);
  }
  return inputs;
}

/// Loads what `plan` launches from `variant` (for each symbol the PTX of
/// the newest chip the GPU runs) and runs it with timed repeats; returns
/// the summed mean kernel time in ms.
Result<double> timePlan(const Bundle &bundle, const BundleVariant &variant,
                        std::string_view function, CudaPlanDevice &cuda,
                        std::vector<Tensor> inputs, int repeats) {
  const Plan *plan = variant.plan();
  if (!plan)
    return errorf("variant ", variant.name, " has no plan for ", function);
  for (const BundleKernel &k : variant.kernels) {
    if (!cuda.runsKernel(k))
      continue;
    Result<std::string> bytes = bundle.readKernel(k);
    if (!bytes)
      return bytes.status();
    ATTN_RETURN_IF_ERROR(cuda.loadKernel(bundle, k, *bytes));
  }
  cuda.clearTimings();
  cuda.setTimedRepeats(repeats);
  Result<std::vector<Tensor>> results = runPlan(*plan, cuda, inputs);
  cuda.setTimedRepeats(0);
  if (!results)
    return results.status();
  double ms = 0.0;
  for (const auto &[symbol, timing] : cuda.timings())
    ms += timing.milliseconds;
  return ms;
}

/// What the benchmarks run on: the bundle, the device (null in a dry run,
/// which finds each benchmark's variant, checks a one-block batch against
/// its plan and runs nothing), the shapes, and the rows they fill.
struct BenchContext {
  const Bundle &bundle;
  CudaPlanDevice *cuda;
  const Options &options;
  double peak;
  Random random;
  std::vector<int64_t> batches, contexts;
  std::vector<BenchRow> rows;

  BenchContext(const Bundle &bundle, CudaPlanDevice *cuda,
               const Options &options)
      : bundle(bundle), cuda(cuda), options(options), random(options.seed) {
    peak = options.peakGBps > 0 || !cuda ? options.peakGBps
                                         : cuda->info().peakBandwidthGBps;
    batches =
        options.quick ? std::vector<int64_t>{4} : std::vector<int64_t>{64, 256};
    contexts = options.quick ? std::vector<int64_t>{256}
                             : std::vector<int64_t>{1024, 4096, 16384};
  }

  /// Times `variant`'s plan on `inputs` into `row` (its rate from
  /// `amount`), or, in a dry run, checks `inputs` (a small batch of the
  /// same signature) against the plan and names the variant it would time.
  void time(BenchRow &row, const BundleVariant &variant,
            std::string_view function, std::vector<Tensor> inputs,
            double amount, int repeats) {
    if (!cuda) {
      const Plan *plan = variant.plan();
      Status fits = plan ? checkPlanInputs(*plan, inputs)
                         : errorf("variant ", variant.name, " has no plan");
      row.error = fits ? "dry run: would time " + variant.name
                       : "inputs do not fit " + variant.name + ": " +
                             fits.message();
    } else {
      fillRow(row,
              timePlan(bundle, variant, function, *cuda, std::move(inputs),
                       repeats),
              amount, row.unit == "GB/s" ? peak : 0);
    }
    rows.push_back(std::move(row));
  }
};

/// Llama-3-8B's paged attention params.
runtime::PagedAttentionParams llamaParams() {
  runtime::PagedAttentionParams llama;
  llama.scale = 1.0 / std::sqrt(static_cast<double>(kLlamaHeadSize));
  return llama;
}

/// The bundle's paged_attention variant for Llama-3-8B with a cache of
/// `cacheType` blocks of `block` (found from a small batch of the same
/// signature; an fp8 cache with per-layer scales).
Result<const BundleVariant *>
findLlamaVariant(const Bundle &bundle, int64_t block, DType cacheType) {
  Random random(1);
  std::vector<Tensor> probe = llamaBatch(1, 1, block, block, cacheType, random);
  runtime::PagedAttentionParams params = llamaParams();
  if (probe.size() > kLlamaVScaleInput)
    params.kvScales = {&probe[kLlamaKScaleInput], &probe[kLlamaVScaleInput]};
  return findVariant(bundle, pagedAttentionQuery(probe[0], probe[1], params),
                     kPtx, SubgroupSizes{32, 32, 32});
}

/// Paged decode at Llama-3-8B's shape over batch x context, the cache in
/// `cacheType` (bf16, or fp8 with per-layer scales): GB/s of the KV bytes
/// read (an fp8 cache reads one byte per element, bf16 two).
void benchLlamaDecode(BenchContext &b, DType cacheType) {
  const int64_t block = 16;
  Result<const BundleVariant *> variant =
      findLlamaVariant(b.bundle, block, cacheType);
  std::string cacheTag = isFp8(cacheType) ? " fp8" : "";
  for (int64_t reqs : b.batches)
    for (int64_t ctx : b.contexts) {
      BenchRow row;
      row.name = "llama3-8b decode" + cacheTag + " b" + std::to_string(reqs) +
                 " ctx" + std::to_string(ctx);
      row.unit = "GB/s";
      if (!variant) {
        row.error = "no variant: " + variant.message();
        b.rows.push_back(row);
        continue;
      }
      std::vector<Tensor> inputs =
          b.cuda ? llamaBatch(reqs, 1, ctx, block, cacheType, b.random)
                 : llamaBatch(1, 1, block, block, cacheType, b.random);
      b.time(row, **variant, "paged_attention", std::move(inputs),
             2.0 * reqs * ctx * kLlamaKvHeads * kLlamaHeadSize *
                 byteWidth(cacheType),
             b.options.repeats);
    }
}

/// DeepSeek-V3's MLA decode shape.
constexpr int64_t kMlaHeads = 128, kMlaLora = 512, kMlaRope = 64,
                  kMlaBlock = 64;

/// The bundle's mla_decode variant at DeepSeek-V3's shape with a bf16
/// cache (not an fp8 one, whose plan takes a scale mlaBatch does not give)
/// and the most KV splits (the most parallel decode), or null.
const BundleVariant *findMlaVariant(const Bundle &bundle) {
  const BundleVariant *found = nullptr;
  for (const BundleVariant &v : bundle.variants) {
    Params p{v.parameters};
    if (p.text("op", "") == "mla_decode" &&
        p.integer("num_heads", 0) == kMlaHeads &&
        p.integer("kv_lora_rank", 0) == kMlaLora &&
        p.integer("rope_dim", 0) == kMlaRope &&
        p.integer("block_size", 0) == kMlaBlock &&
        p.text("dtype", "") == "bf16" &&
        p.text("kv_cache_dtype", "auto") == "auto" &&
        (!found || p.integer("num_kv_splits", 1) >
                       Params{found->parameters}.integer("num_kv_splits", 1)))
      found = &v;
  }
  return found;
}

/// MLA decode inputs in the plan's order (q, latent cache, block table,
/// seq_lens): `reqs` requests of `ctx` tokens.
std::vector<Tensor> mlaBatch(int64_t reqs, int64_t ctx, Random &random) {
  int64_t m = (ctx + kMlaBlock - 1) / kMlaBlock;
  Tensor q(DType::BF16, {reqs, kMlaHeads, kMlaLora + kMlaRope});
  random.fill(q, -1, 1);
  Tensor cache(DType::BF16, {reqs * m, kMlaBlock, kMlaLora + kMlaRope});
  tileRandom(cache, random);
  Tensor lens(DType::I32, {reqs});
  for (int64_t r = 0; r < reqs; ++r)
    lens.setInt(r, ctx);
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(q));
  inputs.push_back(std::move(cache));
  inputs.push_back(shuffledBlockTable(reqs, m, random));
  inputs.push_back(std::move(lens));
  return inputs;
}

/// MLA decode at DeepSeek-V3's shape over batch x context: GB/s of the
/// latent cache.
void benchMlaDecode(BenchContext &b) {
  const BundleVariant *variant = findMlaVariant(b.bundle);
  for (int64_t reqs : b.batches)
    for (int64_t ctx : b.contexts) {
      BenchRow row;
      row.name = "deepseek-v3 mla b" + std::to_string(reqs) + " ctx" +
                 std::to_string(ctx);
      row.unit = "GB/s";
      if (!variant) {
        row.error = "no mla_decode variant with H 128, L 512, P 64, block 64, "
                    "bf16 query and cache in the bundle";
        b.rows.push_back(row);
        continue;
      }
      row.name += " s" + Params{variant->parameters}.text("num_kv_splits", "1");
      std::vector<Tensor> inputs = b.cuda ? mlaBatch(reqs, ctx, b.random)
                                          : mlaBatch(1, kMlaBlock, b.random);
      b.time(row, *variant, "mla_decode", std::move(inputs),
             1.0 * reqs * ctx * (kMlaLora + kMlaRope) * 2, b.options.repeats);
    }
}

/// A causal prefill from an empty cache at Llama-3-8B's shape: TFLOP/s.
void benchPrefill(BenchContext &b) {
  const int64_t block = 16;
  int64_t reqs = b.options.quick ? 2 : 8, len = b.options.quick ? 256 : 2048;
  BenchRow row;
  row.name = "llama3-8b prefill b" + std::to_string(reqs) + " len" +
             std::to_string(len);
  row.unit = "TFLOP/s";
  Result<const BundleVariant *> variant =
      findLlamaVariant(b.bundle, block, DType::BF16);
  if (!variant) {
    row.error = "no variant: " + variant.message();
    b.rows.push_back(row);
    return;
  }
  std::vector<Tensor> inputs =
      b.cuda ? llamaBatch(reqs, len, len, block, DType::BF16, b.random)
             : llamaBatch(1, block, block, block, DType::BF16, b.random);
  // QK^T and PV over the visible (causal) keys: 4 * H * D per pair.
  double pairs = reqs * (len * (len + 1) / 2.0);
  b.time(row, **variant, "paged_attention", std::move(inputs),
         4.0 * kLlamaHeads * kLlamaHeadSize * pairs,
         std::max(1, b.options.repeats / 4));
}

/// Prints the rows (and writes them to --bench-out); returns the failed
/// ones, where a dry run's rows count as failed only when their variant is
/// missing.
int printBenchRows(const BenchContext &b) {
  std::printf("%-40s %10s %12s %8s\n", "benchmark", "ms", "rate", "% peak");
  int failures = 0;
  std::ofstream tsv;
  if (!b.options.benchOut.empty())
    tsv.open(b.options.benchOut);
  for (const BenchRow &row : b.rows) {
    if (!row.error.empty()) {
      bool planned = !b.cuda && row.error.rfind("dry run:", 0) == 0;
      failures += !planned;
      std::printf("%-40s  %s%s\n", row.name.c_str(),
                  planned ? "" : "FAIL: ", row.error.c_str());
      if (tsv)
        tsv << row.name << "\t-\t-\t-\t-\n";
      continue;
    }
    char pct[32] = "-";
    if (row.percentOfPeak >= 0)
      std::snprintf(pct, sizeof pct, "%.1f", row.percentOfPeak);
    std::printf("%-40s %10.3f %7.2f %-7s %6s\n", row.name.c_str(), row.ms,
                row.rate, row.unit.c_str(), pct);
    if (tsv)
      tsv << row.name << "\t" << row.ms << "\t" << row.rate << "\t" << row.unit
          << "\t" << pct << "\n";
  }
  return failures;
}

/// The benchmarks on `cuda`, or with null their dry run.
int runBench(const Bundle &bundle, CudaPlanDevice *cuda,
             const Options &options) {
  BenchContext b(bundle, cuda, options);
  benchLlamaDecode(b, DType::BF16);
  benchLlamaDecode(b, DType::F8E4M3FN);
  benchMlaDecode(b);
  benchPrefill(b);
  if (cuda)
    std::printf("\n%s, %d SMs, peak %.0f GB/s%s\n",
                std::string(cuda->name()).c_str(), cuda->info().multiprocessors,
                b.peak,
                options.peakGBps > 0 ? " (given)" : " (from the device)");
  else
    std::printf("\nbenchmarks (dry run: nothing is timed)\n");
  return printBenchRows(b);
}

/// What --dry-run says of a variant's cache: "" for a cache in the model
/// dtype, "would check (fp8 cache ...)" for an fp8 one, a FAIL line when
/// its kv_cache_dtype is not one the checker can make.
std::string cacheNote(const Params &p) {
  Result<ProblemShape> shape = problemShape(p);
  if (!shape)
    return "FAIL: " + shape.message();
  Result<DType> type =
      kvCacheElementType(p.text("kv_cache_dtype", "auto"), shape->dtype);
  if (!type)
    return "FAIL: " + type.message();
  if (!isFp8(*type))
    return "";
  return "would check (" + std::string(toString(*type)) +
         " cache, per-layer scales" +
         (p.text("op", "") == "reshape_and_cache" ? ", written bit for bit)"
                                                  : ")");
}

/// --dry-run: what a run would check, up to the first driver call: every
/// variant's op is one the checker runs and has PTX (the chips it has are
/// listed), and every benchmark finds its variant.
int dryRun(const Bundle &bundle, const Options &options) {
  int failures = 0, checked = 0;
  for (const BundleVariant &v : bundle.variants) {
    std::set<std::string> chips;
    for (const BundleKernel &k : v.kernels)
      if (parseTarget(k.target) == Target::PTX) {
        Result<LaunchFacts> facts = readLaunchFacts(k.launchJson, Target::PTX);
        chips.insert(facts && !facts->chip.empty() ? facts->chip : "?");
      }
    if (chips.empty())
      continue;
    Params p{v.parameters};
    std::string op = p.text("op", ""), verdict = "would check";
    if (!isCheckedOp(op))
      verdict = "FAIL: no check for op " + op;
    else if (std::string cache = cacheNote(p); !cache.empty())
      verdict = cache;
    bool ok = verdict.rfind("would check", 0) == 0;
    failures += !ok;
    ++checked;
    std::string list;
    for (const std::string &chip : chips)
      list += (list.empty() ? "" : ",") + chip;
    std::printf("%-56s %s %s\n", v.name.c_str(), list.c_str(),
                verdict.c_str());
  }
  std::printf("check (dry run): %d variants with PTX, %d the checker cannot "
              "run\n",
              checked, failures);
  if (checked == 0) {
    std::printf("check (dry run): FAIL: the bundle has no PTX kernels\n");
    ++failures;
  }
  if (options.bench)
    failures += runBench(bundle, nullptr, options);
  std::printf("dry run: %s; next would be the first driver call (dlopen %s)\n",
              failures ? "FAIL" : "ok", options.driver.c_str());
  return failures;
}

} // namespace

int main(int argc, char **argv) {
  std::optional<Options> options = parseOptions(argc, argv);
  if (!options)
    return 2;
  Result<Bundle> bundle = loadBundle(options->bundle);
  if (!bundle) {
    std::cerr << "attn-cuda-check: " << bundle.message() << "\n";
    return 1;
  }
  if (options->dryRun)
    return dryRun(*bundle, *options) == 0 ? 0 : 1;
  if (options->referenceOnly) {
    CpuExecutor reference;
    return runChecks(*bundle, reference, *options) == 0 ? 0 : 1;
  }
  CudaOptions cudaOptions;
  cudaOptions.driverLibrary = options->driver;
  cudaOptions.device = options->device;
  Result<std::unique_ptr<CudaPlanDevice>> cuda =
      CudaPlanDevice::create(cudaOptions);
  if (!cuda) {
    std::cerr << "attn-cuda-check: " << cuda.message() << "\n";
    return 1;
  }
  std::printf("device: %s, driver %d, %.1f GiB\n",
              std::string((*cuda)->name()).c_str(),
              (*cuda)->info().driverVersion,
              (*cuda)->info().totalMemory / double(1ull << 30));
  int failures = 0;
  if (options->check) {
    BundleExecutor device(*bundle, std::string(kPtx), **cuda);
    failures += runChecks(*bundle, device, *options);
  }
  if (options->bench)
    failures += runBench(*bundle, cuda->get(), *options);
  return failures == 0 ? 0 : 1;
}
