//===- cpu_decode.cpp - CPU decode against the machine's read bandwidth ---===//
//
// One decode step at Llama-3-8B's attention shape (H 32, G 8, D 128, bf16,
// NHD, 16-token blocks), 64 requests of 2048 tokens (one new): 512 MiB of K
// and V, far past the caches. Every figure comes from the same process, so
// the ratios hold on a loaded machine:
//
//  - BM_MachineLimits/threads:T: the probes of MachineLimits.h on T
//    threads (read bandwidth over a buffer as large as the KV cache, f32
//    FMA peak, bf16 dot-product peak where the host has AVX-512 BF16);
//  - BM_DecodeReference/threads:T: reference/ops pagedAttention;
//  - BM_DecodeCpu/<isa>/threads:T: the paged_attention variant compiled for
//    target cpu at ISA level <isa> (each level this host runs), on a CPU
//    device of T threads, timed from the plan's first launch to its last
//    one done, on inputs uploaded once;
//  - BM_DecodeCpuFp8/<isa>/threads:T: the same step over an e4m3 cache (the
//    bf16 cache quantized with k_scale = v_scale = 1/256,
//    kv_cache_dtype=fp8), at the widest level: half the bytes to read;
//  - BM_MlaDecodeCpu/<isa>/requests:R/threads:T: DeepSeek-V3's MLA decode
//    (128 heads, kv_lora_rank 512 + rope 64, bf16, 64-token blocks), R
//    requests of 2048 tokens, at the widest level: R = 64 is 144 MiB of
//    latent cache, R = 8 (18 MiB) a short run for smoke tests. 128 heads
//    share each latent row, so the step is bound by arithmetic, not loads.
//
// kv_GB/s (latent_GB/s for MLA) is the cache bytes the step must read over
// its time; read_GB/s the read bandwidth measured on as many threads right
// after the step's runs, and pct_read_bw their ratio. x_reference is the
// reference's step time on as many threads over the step's, x_1_thread the
// step's time on 1 thread over its time on T, x_bf16 (fp8 rows) the bf16
// step's time over the fp8 step's. MLA also reports GFLOP/s (2 per
// multiply-add of QK^T and PV) against the f32 FMA peak. Each compiled step
// is checked against the reference (vLLM's tolerance; fp8 against the
// reference over the same fp8 cache) before it is timed. A table of the
// rows closes the run.
//
//===----------------------------------------------------------------------===//
#include "bench/CpuStep.h"
#include "bench/DecodeStep.h"
#include "bench/MachineLimits.h"
#include "reference/testing/Compare.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace {

using attn::bench::CpuStep;

const attn::Problem &decodeStep() {
  static const attn::Problem problem = attn::bench::makeDecodeStep(64);
  return problem;
}

const attn::bench::Fp8Step &fp8DecodeStep() {
  static const attn::bench::Fp8Step step =
      attn::bench::makeFp8Step(decodeStep());
  return step;
}

/// DeepSeek-V3's MLA: kv_lora_rank L and rope dim P of its latent cache.
constexpr int64_t kMlaHeads = 128, kMlaRank = 512, kMlaRope = 64;
/// The MLA steps' request counts.
constexpr int64_t kMlaRequests[] = {8, 64};

/// The MLA step with `requests` requests, made once per count.
const attn::Problem &mlaStep(int64_t requests) {
  static std::map<int64_t, attn::Problem> problems;
  if (auto it = problems.find(requests); it != problems.end())
    return it->second;
  attn::ProblemShape shape;
  shape.numHeads = kMlaHeads;
  shape.numKvHeads = 1;
  shape.blockSize = 64;
  shape.kvLoraRank = kMlaRank;
  shape.ropeDim = kMlaRope;
  attn::ProblemOptions options;
  options.seed = 1;
  options.numReqs = requests;
  options.minContextLen = 2047;
  options.maxContextLen = 2047;
  options.decodeFraction = 1.0;
  options.extraFreeBlocks = 0;
  attn::Result<attn::Problem> p = attn::generateProblem(shape, options);
  if (!p) {
    std::fprintf(stderr, "generateProblem: %s\n", p.message().c_str());
    std::exit(1);
  }
  return problems.emplace(requests, std::move(p).value()).first->second;
}

/// Latent bytes the MLA step reads (every request's rows once), and its
/// FLOPs: per query head and key, L + P multiply-adds for the score and L
/// for the output.
int64_t latentBytes(const attn::Problem &p) {
  int64_t rows = 0;
  for (int64_t r = 0; r < p.seqLens.dim(0); ++r)
    rows += p.seqLens.getInt(r);
  return rows * p.kvCache.dim(2) *
         static_cast<int64_t>(attn::byteWidth(p.kvCache.dtype()));
}
double mlaFlops(const attn::Problem &p) {
  double keys = 0;
  for (int64_t r = 0; r < p.seqLens.dim(0); ++r)
    keys += static_cast<double>(p.seqLens.getInt(r));
  return 2.0 * kMlaHeads * keys * (2 * kMlaRank + kMlaRope);
}

enum class Kind { Bf16, Fp8, Mla };

/// A step: its kind, and for MLA its requests.
struct StepKey {
  Kind kind;
  int64_t mlaRequests = 0;
  auto operator<=>(const StepKey &) const = default;
};

const char *const kPagedSpec =
    "op=paged_attention,num_heads=32,num_kv_heads=8,head_size=128,"
    "block_size=16,dtype=bf16,layout=nhd";

std::string specOf(Kind kind) {
  switch (kind) {
  case Kind::Bf16:
    return kPagedSpec;
  case Kind::Fp8:
    return std::string(kPagedSpec) + ",kv_cache_dtype=fp8";
  case Kind::Mla:
    return "op=mla_decode,num_heads=128,kv_lora_rank=512,rope_dim=64,"
           "block_size=64,dtype=bf16";
  }
  return "";
}

const attn::Problem &problemOf(StepKey key) {
  switch (key.kind) {
  case Kind::Bf16:
    return decodeStep();
  case Kind::Fp8:
    return fp8DecodeStep().problem;
  case Kind::Mla:
    return mlaStep(key.mlaRequests);
  }
  return decodeStep();
}

std::vector<attn::Tensor> inputsOf(StepKey key) {
  const attn::Problem &p = problemOf(key);
  Kind kind = key.kind;
  if (kind == Kind::Mla)
    return {p.query, p.kvCache, p.blockTable, p.seqLens};
  std::vector<attn::Tensor> in = {p.query, p.kvCache, p.blockTable, p.seqLens,
                                  p.queryStartLoc};
  if (kind == Kind::Fp8)
    in.insert(in.end(), {fp8DecodeStep().kScale, fp8DecodeStep().vScale});
  return in;
}

/// The reference's output of `key`'s step (2 threads), computed once.
const attn::Tensor *referenceOf(StepKey key, std::string &error) {
  static std::map<StepKey, attn::Tensor> outs;
  if (auto it = outs.find(key); it != outs.end())
    return &it->second;
  const attn::Problem &p = problemOf(key);
  Kind kind = key.kind;
  attn::Result<attn::AttentionOutput> want = attn::Status::error("unset");
  if (kind == Kind::Mla) {
    attn::MlaDecodeParams params;
    params.scale = p.scale;
    params.kvLoraRank = kMlaRank;
    attn::setReferenceThreadCount(attn::bench::kThreads);
    want = attn::mlaDecode(p.query, p.kvCache, p.blockTable, p.seqLens, params);
    attn::setReferenceThreadCount(0);
  } else if (kind == Kind::Fp8) {
    const attn::bench::Fp8Step &fp8 = fp8DecodeStep();
    want = attn::bench::runReference(p, {&fp8.kScale, &fp8.vScale});
  } else {
    want = attn::bench::runReference(p);
  }
  if (!want) {
    error = want.message();
    return nullptr;
  }
  return &outs.emplace(key, std::move(want->out)).first->second;
}

/// A compiled step, its inputs on its device, and whether its result
/// matched the reference.
struct Entry {
  CpuStep step;
  std::vector<attn::runtime::DeviceTensor> args;
  bool checked = false;
};

/// `key`'s step at ISA level `isa`, compiled, loaded and given its inputs
/// once; its error says why not.
Entry &entryOf(StepKey key, const std::string &isa) {
  static std::map<std::pair<StepKey, std::string>, Entry> entries;
  auto at = std::make_pair(key, isa);
  if (auto it = entries.find(at); it != entries.end())
    return it->second;
  Entry &e = entries[at];
  e.step = attn::bench::makeCpuStep(specOf(key.kind), isa);
  if (!e.step.error.empty())
    return e;
  std::vector<attn::Tensor> inputs = inputsOf(key);
  attn::Result<std::vector<attn::runtime::DeviceTensor>> args =
      attn::bench::uploadInputs(*e.step.device, inputs);
  if (!args)
    e.step.error = args.message();
  else
    e.args = std::move(*args);
  return e;
}

/// The buffer the bandwidth probe reads: as large as the largest cache here,
/// the bf16 one (64 requests x 2048 tokens x K and V x G 8 x D 128 x 2
/// bytes), sized without making it.
const attn::bench::ReadBuffer &readBuffer() {
  static const attn::bench::ReadBuffer buffer(size_t{64} * 2048 * 2 * 8 * 128 *
                                              2);
  return buffer;
}

/// The figures of each row, for the counters that compare rows and the
/// closing table.
struct Row {
  unsigned threads = 0;
  double stepSeconds = 0, cpuSeconds = 0, bytesPerSecond = 0, readBandwidth = 0;
  double flops = 0, fmaPeak = 0;
};
std::map<std::string, Row> &rows() {
  static std::map<std::string, Row> r;
  return r;
}
/// Names rows by kind, level and threads: "cpu/x86-64-v4/2", "reference/1".
std::string rowName(const std::string &what, unsigned threads) {
  return what + "/" + std::to_string(threads);
}
std::optional<Row> findRow(const std::string &name) {
  auto it = rows().find(name);
  if (it == rows().end())
    return std::nullopt;
  return it->second;
}

/// Sets the counters of a step that read `bytes` in `seconds` per
/// iteration on `threads` threads, after measuring the read bandwidth on
/// as many; records the row as `name`.
Row recordStep(benchmark::State &state, const std::string &name,
               unsigned threads, double seconds, double cpuSeconds,
               int64_t bytes, const char *bytesCounter) {
  double iterations = static_cast<double>(state.iterations());
  Row row;
  row.threads = threads;
  row.stepSeconds = seconds / iterations;
  row.cpuSeconds = cpuSeconds / iterations;
  row.bytesPerSecond = static_cast<double>(bytes) / row.stepSeconds;
  row.readBandwidth = attn::bench::measureReadBandwidth(
      attn::bench::probePool(threads), readBuffer());
  state.counters["step_ms"] = row.stepSeconds * 1e3;
  state.counters["cpu_ms"] = row.cpuSeconds * 1e3;
  state.counters[bytesCounter] = row.bytesPerSecond / 1e9;
  state.counters["read_GB/s"] = row.readBandwidth / 1e9;
  if (row.readBandwidth > 0)
    state.counters["pct_read_bw"] =
        100 * row.bytesPerSecond / row.readBandwidth;
  rows()[rowName(name, threads)] = row;
  return row;
}

void BM_MachineLimits(benchmark::State &state) {
  unsigned threads = static_cast<unsigned>(state.range(0));
  attn::cpu::ThreadPool &pool = attn::bench::probePool(threads);
  double read = 0, fma = 0;
  std::optional<double> bf16;
  for (auto _ : state) {
    read = attn::bench::measureReadBandwidth(pool, readBuffer());
    fma = attn::bench::measureFmaPeak(pool);
    bf16 = attn::bench::measureBf16DotPeak(pool);
  }
  state.counters["read_GB/s"] = read / 1e9;
  state.counters["fma_GFLOP/s"] = fma / 1e9;
  if (bf16)
    state.counters["bf16_GFLOP/s"] = *bf16 / 1e9;
  state.SetLabel(std::string(attn::bench::hostHasAvx512() ? "avx512" : "avx2") +
                 (bf16 ? ", avx512_bf16" : ", no avx512_bf16"));
}

void BM_DecodeReference(benchmark::State &state) {
  unsigned threads = static_cast<unsigned>(state.range(0));
  const attn::Problem &p = decodeStep();
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeReference(state, p, seconds, static_cast<int>(threads)))
    return;
  recordStep(state, "reference", threads, seconds.wall, seconds.cpu,
             attn::bench::kvBytes(p), "kv_GB/s");
}

/// Times `key`'s step at `isa` on `threads` threads, checked first.
void runDecodeCpu(benchmark::State &state, StepKey key, const std::string &isa,
                  unsigned threads) {
  Kind kind = key.kind;
  Entry &e = entryOf(key, isa);
  if (!e.step.error.empty()) {
    state.SkipWithError(e.step.error.c_str());
    return;
  }
  if (attn::Status st = e.step.device->setThreads(threads); !st) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  if (!e.checked) {
    std::string error;
    const attn::Tensor *want = referenceOf(key, error);
    if (!attn::bench::matchesReference(state, e.step, e.args, want, error))
      return;
    e.checked = true;
  }
  attn::bench::StepSeconds seconds;
  if (!attn::bench::timeCpuPlanRuns(state, e.step, e.args, seconds))
    return;
  const attn::Problem &p = problemOf(key);
  std::string name = kind == Kind::Bf16 ? "cpu/" + isa
                     : kind == Kind::Fp8
                         ? "cpu_fp8/" + isa
                         : "mla" + std::to_string(key.mlaRequests) + "/" + isa;
  bool mla = kind == Kind::Mla;
  Row row = recordStep(state, name, threads, seconds.kernel, seconds.cpu,
                       mla ? latentBytes(p) : attn::bench::kvBytes(p),
                       mla ? "latent_GB/s" : "kv_GB/s");
  if (mla) {
    row.flops = mlaFlops(p) / row.stepSeconds;
    row.fmaPeak = attn::bench::measureFmaPeak(attn::bench::probePool(threads));
    state.counters["GFLOP/s"] = row.flops / 1e9;
    if (row.fmaPeak > 0)
      state.counters["pct_fma_peak"] = 100 * row.flops / row.fmaPeak;
    rows()[rowName(name, threads)] = row;
  }
  if (std::optional<Row> ref = findRow(rowName("reference", threads));
      ref && !mla)
    state.counters["x_reference"] = ref->stepSeconds / row.stepSeconds;
  if (std::optional<Row> one = findRow(rowName(name, 1)); one && threads > 1)
    state.counters["x_1_thread"] = one->stepSeconds / row.stepSeconds;
  if (std::optional<Row> bf16 = findRow(rowName("cpu/" + isa, threads));
      bf16 && kind == Kind::Fp8)
    state.counters["x_bf16"] = bf16->stepSeconds / row.stepSeconds;
  state.SetLabel(isa);
}

void printSummary(const std::vector<std::string> &levels) {
  std::printf("\n%-24s %7s %10s %10s %9s %9s %7s %8s %8s\n", "step", "threads",
              "step ms", "cpu ms", "GB/s", "read GB/s", "% bw", "x ref",
              "x 1 thr");
  std::vector<std::string> names = {"reference"};
  for (const std::string &isa : levels)
    names.push_back("cpu/" + isa);
  names.push_back("cpu_fp8/" + levels.back());
  for (int64_t requests : kMlaRequests)
    names.push_back("mla" + std::to_string(requests) + "/" + levels.back());
  for (const std::string &name : names)
    for (unsigned threads : {1u, 2u}) {
      std::optional<Row> row = findRow(rowName(name, threads));
      if (!row)
        continue;
      std::optional<Row> ref = findRow(rowName("reference", threads));
      std::optional<Row> one = findRow(rowName(name, 1));
      std::printf("%-24s %7u %10.1f %10.1f %9.3f %9.2f %6.2f%%", name.c_str(),
                  threads, row->stepSeconds * 1e3, row->cpuSeconds * 1e3,
                  row->bytesPerSecond / 1e9, row->readBandwidth / 1e9,
                  row->readBandwidth > 0
                      ? 100 * row->bytesPerSecond / row->readBandwidth
                      : 0.0);
      if (ref && name.rfind("mla", 0) != 0)
        std::printf(" %7.2fx", ref->stepSeconds / row->stepSeconds);
      else
        std::printf(" %8s", "-");
      if (one)
        std::printf(" %7.2fx", one->stepSeconds / row->stepSeconds);
      if (row->flops > 0)
        std::printf("   %.2f GFLOP/s, %.2f%% of the FMA peak (%.1f)",
                    row->flops / 1e9, 100 * row->flops / row->fmaPeak,
                    row->fmaPeak / 1e9);
      std::printf("\n");
    }
  std::optional<Row> fp8 = findRow(rowName("cpu_fp8/" + levels.back(), 1));
  std::optional<Row> bf16 = findRow(rowName("cpu/" + levels.back(), 1));
  if (fp8 && bf16)
    std::printf("fp8 / bf16 step time at %s, 1 thread: %.2f\n",
                levels.back().c_str(), fp8->stepSeconds / bf16->stepSeconds);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> levels = attn::bench::hostCpuIsaLevels();
  if (levels.empty()) {
    std::fprintf(stderr, "this host runs no cpu ISA level\n");
    return 1;
  }
  benchmark::RegisterBenchmark("BM_MachineLimits", BM_MachineLimits)
      ->ArgName("threads")
      ->DenseRange(1, 2)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_DecodeReference", BM_DecodeReference)
      ->ArgName("threads")
      ->DenseRange(1, 2)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  auto add = [](const std::string &name, StepKey key, const std::string &isa) {
    std::string requests = key.kind == Kind::Mla
                               ? "/requests:" + std::to_string(key.mlaRequests)
                               : "";
    for (unsigned threads : {1u, 2u})
      benchmark::RegisterBenchmark(
          (name + "/" + isa + requests + "/threads:" + std::to_string(threads))
              .c_str(),
          [=](benchmark::State &state) {
            runDecodeCpu(state, key, isa, threads);
          })
          ->Unit(benchmark::kMillisecond)
          ->UseManualTime();
  };
  for (const std::string &isa : levels)
    add("BM_DecodeCpu", {Kind::Bf16}, isa);
  add("BM_DecodeCpuFp8", {Kind::Fp8}, levels.back());
  for (int64_t requests : kMlaRequests)
    add("BM_MlaDecodeCpu", {Kind::Mla, requests}, levels.back());

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  printSummary(levels);
  return 0;
}
