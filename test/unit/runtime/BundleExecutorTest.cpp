//===- BundleExecutorTest.cpp - Bundle variants served as an executor -----===//
//
// A bundle built in memory whose plans launch kernels that a host fake
// device runs: variant matching, missing variants and targets, and metadata
// rejected before anything reaches the device. No MLIR, no GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/BundleExecutor.h"

#include "HostDevice.h"
#include "runtime/bundle/BundleWriter.h"
#include "runtime/executor/HostCalls.h"
#include "runtime/device/RecordedStep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace attn::runtime {
namespace {

using test::hostData;
using test::HostDevice;
using ::testing::HasSubstr;

constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadSize = 8, kBlockSize = 16;
constexpr int64_t kNumBlocks = 3;

PlanOp op(PlanOpKind kind, int32_t result, std::vector<int32_t> operands,
          int64_t imm = 0) {
  PlanOp o;
  o.kind = kind;
  o.result = result;
  o.operands = std::move(operands);
  o.imm = imm;
  return o;
}

PlanOp alloc(int32_t result, std::vector<int32_t> shape, DType dtype) {
  PlanOp o = op(PlanOpKind::Alloc, result, std::move(shape));
  o.dtype = dtype;
  return o;
}

PlanOp launch(std::string kernel, std::vector<int32_t> operands) {
  PlanOp o = op(PlanOpKind::Launch, -1, std::move(operands));
  o.kernel = std::move(kernel);
  return o;
}

/// @paged_attention as attn-compile lays it out: out and lse allocated from
/// the query's token count, one launch over the tokens.
Plan pagedPlan(const std::string &kernel) {
  Plan p;
  p.function = "paged_attention";
  p.arguments = {{DType::F32, {-1, kHeads, kHeadSize}},
                 {DType::F32, {-1, 2, kBlockSize, kKvHeads, kHeadSize}},
                 {DType::I32, {-1, -1}},
                 {DType::I32, {-1}},
                 {DType::I32, {-1}}};
  p.results = {{DType::F32, {-1, kHeads, kHeadSize}},
               {DType::F32, {-1, kHeads}}};
  p.numSlots = 11;
  p.ops = {
      op(PlanOpKind::Dim, 5, {0}, 0),
      op(PlanOpKind::Const, 6, {}, kHeads),
      op(PlanOpKind::Const, 7, {}, kHeadSize),
      alloc(8, {5, 6, 7}, DType::F32),
      alloc(9, {5, 6}, DType::F32),
      op(PlanOpKind::Const, 10, {}, 1),
      launch(kernel, {5, 10, 10, 0, 1, 2, 3, 4, 8, 9}),
      op(PlanOpKind::Return, -1, {8, 9}),
  };
  return p;
}

/// @reshape_and_cache: one launch over the tokens; the cache argument is the
/// result.
Plan cachePlan() {
  Plan p;
  p.function = "reshape_and_cache";
  p.arguments = {{DType::F32, {-1, kKvHeads, kHeadSize}},
                 {DType::F32, {-1, kKvHeads, kHeadSize}},
                 {DType::F32, {-1, 2, kBlockSize, kKvHeads, kHeadSize}},
                 {DType::I64, {-1}}};
  p.results = {{DType::F32, {-1, 2, kBlockSize, kKvHeads, kHeadSize}}};
  p.numSlots = 6;
  p.ops = {
      op(PlanOpKind::Dim, 4, {3}, 0),
      op(PlanOpKind::Const, 5, {}, 1),
      launch("cache::write", {4, 5, 5, 0, 1, 2, 3}),
      op(PlanOpKind::Return, -1, {2}),
  };
  return p;
}

/// The manifest parameters attn-compile writes for a paged_attention
/// variant of this test's shape (canonical: every key, values as text).
std::map<std::string, std::string> pagedParameters(std::string scale) {
  return {{"op", "paged_attention"}, {"num_heads", "4"},
          {"num_kv_heads", "2"},     {"head_size", "8"},
          {"block_size", "16"},      {"dtype", "f32"},
          {"layout", "nhd"},         {"causal", "true"},
          {"window_left", "-1"},     {"window_right", "-1"},
          {"soft_cap", "0"},         {"alibi", "false"},
          {"sinks", "false"},        {"scale", std::move(scale)}};
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class BundleExecutorTest : public ::testing::Test {
protected:
  void SetUp() override {
    bundle.directory =
        (std::filesystem::path(::testing::TempDir()) /
         ("attn-bundle-executor-" +
          std::string(
              ::testing::UnitTest::GetInstance()->current_test_info()->name())))
            .string();
    std::filesystem::remove_all(bundle.directory);
    std::filesystem::create_directories(bundle.directory);
    bundle.compiler = "attn test";

    // The scale attn-compile prints for 1/sqrt(8): the f32 value, 9 digits.
    addPagedVariant("pa_default_scale", "0.353553385", "pa1::main", "copy");
    addPagedVariant("pa_scale_quarter", "0.25", "pa2::main", "copy-lse2");
    BundleVariant cache;
    cache.name = "cache";
    cache.parameters = {
        {"op", "reshape_and_cache"}, {"num_kv_heads", "2"}, {"head_size", "8"},
        {"block_size", "16"},        {"dtype", "f32"},      {"layout", "nhd"}};
    cache.plans = {cachePlan()};
    cache.kernels = {kernelFile("cache::write", "cache-write")};
    bundle.variants.push_back(cache);

    // What the kernel files "contain", as the device would run it.
    device.library["copy"] = [](const std::array<uint32_t, 3> &grid,
                         std::span<const BufferView> args) {
      copyQuery(grid, args, 1.0f);
    };
    device.library["copy-lse2"] = [](const std::array<uint32_t, 3> &grid,
                              std::span<const BufferView> args) {
      copyQuery(grid, args, 2.0f);
    };
    device.library["cache-write"] = [](const std::array<uint32_t, 3> &grid,
                                std::span<const BufferView> args) {
      const float *key = hostData<float>(args[0]);
      float *cache = hostData<float>(args[2]);
      const int64_t *slots = hostData<int64_t>(args[3]);
      const int64_t row = kKvHeads * kHeadSize;
      for (uint32_t t = 0; t < grid[0]; ++t) {
        if (slots[t] < 0)
          continue;
        int64_t block = slots[t] / kBlockSize, offset = slots[t] % kBlockSize;
        std::copy(key + t * row, key + (t + 1) * row,
                  cache + ((block * 2) * kBlockSize + offset) * row);
      }
    };

    query = Tensor(DType::F32, {3, kHeads, kHeadSize});
    for (int64_t i = 0; i < query.numElements(); ++i)
      query.setFloat(i, 0.5 * i);
    kvCache =
        Tensor(DType::F32, {kNumBlocks, 2, kBlockSize, kKvHeads, kHeadSize});
    queryStartLoc = ints({0, 2, 3}, {3});
    seqLens = ints({2, 17}, {2});
    blockTable = ints({0, 0, 1, 2}, {2, 2});
    out = Tensor(DType::F32, {3, kHeads, kHeadSize});
    lse = Tensor(DType::F32, {3, kHeads});
    params.scale = 1.0 / std::sqrt(8.0);
  }

  static void copyQuery(const std::array<uint32_t, 3> &grid,
                        std::span<const BufferView> args, float lseValue) {
    const float *q = hostData<float>(args[0]);
    float *o = hostData<float>(args[5]);
    float *l = hostData<float>(args[6]);
    for (uint32_t t = 0; t < grid[0]; ++t) {
      for (int64_t i = 0; i < kHeads * kHeadSize; ++i)
        o[t * kHeads * kHeadSize + i] = q[t * kHeads * kHeadSize + i];
      for (int64_t h = 0; h < kHeads; ++h)
        l[t * kHeads + h] = lseValue;
    }
  }

  static Tensor ints(std::vector<int64_t> values, std::vector<int64_t> shape,
                     DType dtype = DType::I32) {
    Tensor t(dtype, std::move(shape));
    for (size_t i = 0; i < values.size(); ++i)
      t.setInt(i, values[i]);
    return t;
  }

  BundleKernel kernelFile(const std::string &symbol, const std::string &body) {
    std::string file = symbol.substr(0, symbol.find(':')) + ".spv";
    writeFile(bundle.directory + "/" + file, body);
    return {symbol, "spirv", file, "main", contentHash(body),
            HostDevice::kNoBoundsFacts};
  }

  void addPagedVariant(const std::string &name, const std::string &scale,
                       const std::string &symbol, const std::string &body) {
    BundleVariant v;
    v.name = name;
    v.parameters = pagedParameters(scale);
    v.plans = {pagedPlan(symbol)};
    v.kernels = {kernelFile(symbol, body)};
    bundle.variants.push_back(std::move(v));
  }

  std::unique_ptr<BundleExecutor> makeExecutor(std::string target = "spirv") {
    return std::make_unique<BundleExecutor>(bundle, std::move(target), device);
  }

  /// The paged call on device copies of the fixture's tensors; `out` and
  /// `lse` get what the call wrote, callAllocations what it allocated.
  Status runPaged(BundleExecutor &executor) {
    Result<DeviceTensor> q = toDevice(device, query);
    Result<DeviceTensor> cache = toDevice(device, kvCache);
    Result<DeviceTensor> o = toDevice(device, out), l = toDevice(device, lse);
    if (!q || !cache || !o || !l)
      return Status::error("upload failed");
    int before = device.allocations;
    Status s = executor.pagedAttention(*q, *cache, queryStartLoc, seqLens,
                                       blockTable, params, *o, &*l);
    callAllocations = device.allocations - before;
    if (!s)
      return s;
    out = *toHost(*o);
    lse = *toHost(*l);
    return Status::ok();
  }

  Bundle bundle;
  HostDevice device;

  Tensor query, kvCache, queryStartLoc, seqLens, blockTable, out, lse;
  PagedAttentionParams params;
  int callAllocations = 0;
};

TEST_F(BundleExecutorTest, RunsThePlanOfTheMatchingVariant) {
  auto executor = makeExecutor();
  EXPECT_EQ(executor->name(), "host (spirv bundle)");
  Status s = runPaged(*executor);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(device.launched, std::vector<std::string>{"pa1::main"});
  EXPECT_EQ(out, query);
  EXPECT_EQ(lse.getFloat(0), 1.0);
  EXPECT_EQ(executor->lastRunStats().launches, 1);

  // A second call reuses the loaded kernel.
  ASSERT_TRUE(runPaged(*executor));
  EXPECT_EQ(device.loaded, std::vector<std::string>{"pa1::main"});
  EXPECT_EQ(device.launched.size(), 2u);
}

// The cache, query and outputs stay on the device: a call moves the
// metadata (and the plan's params) to it and nothing back.
TEST_F(BundleExecutorTest, PagedAttentionMovesOnlyMetadata) {
  auto executor = makeExecutor();
  Result<DeviceTensor> q = toDevice(device, query);
  Result<DeviceTensor> cache = toDevice(device, kvCache);
  Result<DeviceTensor> o = toDevice(device, out), l = toDevice(device, lse);
  ASSERT_TRUE(q && cache && o && l);
  device.resetTransfers();
  Status s = executor->pagedAttention(*q, *cache, queryStartLoc, seqLens,
                                      blockTable, params, *o, &*l);
  ASSERT_TRUE(s) << s.message();
  uint64_t metadata =
      queryStartLoc.numBytes() + seqLens.numBytes() + blockTable.numBytes();
  EXPECT_EQ(device.transfers().bytesToHost, 0u);
  EXPECT_GE(device.transfers().bytesToDevice, metadata);
  EXPECT_LE(device.transfers().bytesToDevice, metadata + 256)
      << "more than the metadata and a few params went to the device";
  EXPECT_LT(device.transfers().bytesToDevice, kvCache.numBytes());
  EXPECT_EQ(*toHost(*o), query);
}

// A paged call recorded once replays over new metadata and a new query
// written in place, giving what a fresh call gives; bad metadata is still
// refused at replay, before anything runs.
TEST_F(BundleExecutorTest, RecordedCallsReplayOverNewMetadata) {
  auto executor = makeExecutor();
  DeviceTensor q = *toDevice(device, query);
  DeviceTensor cache = *toDevice(device, kvCache);
  DeviceTensor o = *toDevice(device, out), l = *toDevice(device, lse);
  auto call = [&] {
    return executor->pagedAttention(q, cache, queryStartLoc, seqLens,
                                    blockTable, params, o, &l);
  };
  // Loads the kernel, so that the recording has only the step's work.
  ASSERT_TRUE(call());
  auto recorded = RecordedStep::record(device, call);
  ASSERT_TRUE(recorded) << recorded.message();

  Tensor next = query;
  for (int64_t i = 0; i < next.numElements(); ++i)
    next.setFloat(i, -1.0 * i);
  ASSERT_TRUE(upload(next, q));
  seqLens = ints({3, 18}, {2});
  Status s = (*recorded)->replay(call);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(*toHost(o), next);
  EXPECT_EQ(device.replays, 1);

  blockTable = ints({0, 0, 1, 3}, {2, 2});
  Status bad = (*recorded)->replay(call);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.message(), HasSubstr("block_table[1][1] = 3 is outside"));
  EXPECT_EQ(device.replays, 1);
}

TEST_F(BundleExecutorTest, ComparesScaleAsF32) {
  // "0.353553385" is not the text of 1/sqrt(8) as a double, but is its f32.
  Result<const BundleVariant *> v =
      findVariant(bundle, pagedAttentionQuery(query, kvCache, params));
  ASSERT_TRUE(v) << v.message();
  EXPECT_EQ((*v)->name, "pa_default_scale");

  params.scale = 0.25;
  auto executor = makeExecutor();
  ASSERT_TRUE(runPaged(*executor));
  EXPECT_EQ(device.launched, std::vector<std::string>{"pa2::main"});
  EXPECT_EQ(lse.getFloat(0), 2.0);

  // One f32 ulp away is another variant.
  params.scale = std::nextafter(0.25f, 1.0f);
  Status s = runPaged(*executor);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("scale=0.25000003 (it has:"));
}

TEST_F(BundleExecutorTest, MatchesEveryParameterByValue) {
  BundleVariant &v = bundle.variants[0];
  v.parameters["block_size"] = "016";
  v.parameters["causal"] = "1";
  v.parameters["soft_cap"] = "0.0";
  v.parameters["kv_lora_rank"] = "512"; // keys of other ops do not matter
  Result<const BundleVariant *> found =
      findVariant(bundle, pagedAttentionQuery(query, kvCache, params));
  ASSERT_TRUE(found) << found.message();
  EXPECT_EQ((*found)->name, "pa_default_scale");

  // Causal attention ignores window_right (FLASH_ATTN passes 0 with a
  // sliding window); attn-compile writes -1 for causal variants.
  params.windowRight = 0;
  EXPECT_TRUE(findVariant(bundle, pagedAttentionQuery(query, kvCache, params)));
  params.causal = false;
  EXPECT_FALSE(
      findVariant(bundle, pagedAttentionQuery(query, kvCache, params)));
}

TEST_F(BundleExecutorTest, NamesWhatNoVariantHas) {
  Tensor sinks(DType::F32, {kHeads});
  params.sinks = &sinks;
  auto executor = makeExecutor();
  Status s = runPaged(*executor);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "bundle " + bundle.directory +
                " has no paged_attention variant with num_heads=4,"
                "num_kv_heads=2,head_size=8,block_size=16,dtype=f32,"
                "kv_cache_dtype=auto,layout=nhd,causal=true,window_left=-1,"
                "soft_cap=0,"
                "alibi=false,sinks=true,scale=0.353553385 (it has: "
                "pa_default_scale (sinks=false); pa_scale_quarter "
                "(sinks=false, scale=0.25)); compile one with: attn-compile "
                "--variant op=paged_attention,num_heads=4,num_kv_heads=2,"
                "head_size=8,block_size=16,dtype=f32,kv_cache_dtype=auto,"
                "layout=nhd,causal=true,"
                "window_left=-1,soft_cap=0,alibi=false,sinks=true,"
                "scale=0.353553385");
  EXPECT_TRUE(device.launched.empty());
  EXPECT_TRUE(device.loaded.empty());

  Tensor q(DType::F32, {1, 2, 576}), cache(DType::F32, {2, 16, 576});
  MlaDecodeParams mla;
  mla.scale = 0.04;
  mla.kvLoraRank = 512;
  Result<const BundleVariant *> none =
      findVariant(bundle, mlaDecodeQuery(q, cache, mla));
  ASSERT_FALSE(none);
  EXPECT_THAT(none.message(),
              HasSubstr("(it has: no mla_decode variant, only "
                        "pa_default_scale, pa_scale_quarter, cache)"));
}

TEST_F(BundleExecutorTest, NamesTheClosestVariantsOnce) {
  // Five more windowed variants, each listed twice (as a bundle lists a
  // variant per subgroup size): the message names each entry once, the
  // closest first, four of them, and says how many it left out; a window
  // that differs reminds of vLLM's sliding_window.
  for (int i = 0; i < 2; ++i)
    for (int w : {7, 15, 31, 63, 127}) {
      BundleVariant v;
      v.name = "pa_window" + std::to_string(w);
      v.parameters = pagedParameters("0.25");
      v.parameters["window_left"] = std::to_string(w);
      bundle.variants.push_back(std::move(v));
    }
  params.windowLeft = 4095;
  Result<const BundleVariant *> none =
      findVariant(bundle, pagedAttentionQuery(query, kvCache, params));
  ASSERT_FALSE(none);
  EXPECT_THAT(none.message(),
              HasSubstr("(it has: pa_default_scale (window_left=-1); "
                        "pa_scale_quarter (window_left=-1, scale=0.25); "
                        "pa_window7 (window_left=7, scale=0.25); "
                        "pa_window15 (window_left=15, scale=0.25); and 3 "
                        "more); compile one with: attn-compile --variant "));
  EXPECT_THAT(none.message(),
              HasSubstr("window_left=4095,"));
  EXPECT_TRUE(none.message().ends_with(
      " (window_left is vLLM's sliding_window - 1)"));
}

TEST_F(BundleExecutorTest, NamesAMissingTarget) {
  auto executor = makeExecutor("ptx");
  Status s = runPaged(*executor);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "bundle " + bundle.directory +
                             ": variant pa_default_scale has no ptx kernels "
                             "(compiled for: spirv); recompile with "
                             "--targets including ptx");
  EXPECT_TRUE(device.launched.empty());

  Status all = executor->loadAllKernels();
  ASSERT_FALSE(all);
  EXPECT_EQ(all.message(), "bundle " + bundle.directory +
                               " has no kernels for target ptx (it has: "
                               "spirv)");
}

TEST_F(BundleExecutorTest, LoadsEverythingUpFront) {
  auto executor = makeExecutor();
  ASSERT_TRUE(executor->loadAllKernels());
  EXPECT_EQ(device.loaded.size(), 3u);
  ASSERT_TRUE(runPaged(*executor));
  EXPECT_EQ(device.loaded.size(), 3u);
}

// What a session does when a layer is created: the kernels of the entry
// serving each call, and nothing else, once.
TEST_F(BundleExecutorTest, PrepareLoadsTheKernelsOfTheCallOnly) {
  auto executor = makeExecutor();
  ASSERT_TRUE(executor->checkRunnable());
  EXPECT_TRUE(device.loaded.empty());
  params.scale = 0.25;
  VariantQuery call = pagedAttentionQuery(query, kvCache, params);
  ASSERT_TRUE(executor->prepare(call));
  EXPECT_EQ(device.loaded, std::vector<std::string>{"pa2::main"});
  ASSERT_TRUE(executor->prepare(call));
  EXPECT_EQ(executor->loadedKernels(), 1u);
  ASSERT_TRUE(runPaged(*executor));
  EXPECT_EQ(device.loaded, std::vector<std::string>{"pa2::main"});
}

// A kernel file that went away after the manifest was read, because the
// bundle was rewritten, says so.
TEST_F(BundleExecutorTest, NamesABundleRewrittenSinceItWasOpened) {
  ASSERT_TRUE(writeManifest(bundle));
  Result<Bundle> opened = loadManifest(bundle.directory);
  ASSERT_TRUE(opened) << opened.message();
  BundleExecutor executor(*opened, "spirv", device);
  bundle.compiler = "attn test, again";
  ASSERT_TRUE(writeManifest(bundle));
  std::filesystem::remove(bundle.directory + "/pa1.spv");
  Status s = runPaged(executor);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(),
              HasSubstr("missing kernel file pa1.spv (pa1::main, spirv); the "
                        "bundle was rewritten since it was opened: open it "
                        "again"));
}

TEST_F(BundleExecutorTest, ReportsAFailedLoadAndACorruptKernel) {
  writeFile(bundle.directory + "/pa1.spv", "tampered");
  auto executor = makeExecutor();
  Status s = runPaged(*executor);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("does not match its hash"));
  EXPECT_TRUE(device.loaded.empty());

  device.library.erase("copy-lse2");
  params.scale = 0.25;
  s = runPaged(*executor);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(),
              HasSubstr("loading kernel pa2::main (pa2.spv) of variant "
                        "pa_scale_quarter on host: not a kernel"));
}

TEST_F(BundleExecutorTest, RejectsBadMetadataBeforeAnyLaunch) {
  auto executor = makeExecutor();
  auto expectRejected = [&](const std::string &what) {
    Status s = runPaged(*executor);
    ASSERT_FALSE(s);
    EXPECT_THAT(s.message(), HasSubstr(what));
    EXPECT_TRUE(device.launched.empty());
    EXPECT_EQ(callAllocations, 0);
  };
  // Request 1 reads key positions 16.. from block_table[1][1].
  blockTable = ints({0, 0, 1, 3}, {2, 2});
  expectRejected("block_table[1][1] = 3 is outside [0, num_blocks = 3)");
  blockTable = ints({0, 0, -1, 2}, {2, 2});
  expectRejected("block_table[1][0] = -1 is outside");
  blockTable = ints({0, 0, 1, 2}, {2, 2});

  seqLens = ints({2, 40}, {2});
  expectRejected("block_table has 2 columns, but request 1");
  seqLens = ints({1, 17}, {2});
  expectRejected("seq_lens[0] = 1 is less than the query length 2");
  seqLens = ints({2, 17}, {2});

  queryStartLoc = ints({0, 2, 4}, {3});
  expectRejected("query_start_loc[2] = 4 exceeds the query's 3 tokens");
  queryStartLoc = ints({0, 2, 1}, {3});
  expectRejected("query_start_loc is decreasing");
  queryStartLoc = ints({0, 2, 3}, {3});

  EXPECT_TRUE(runPaged(*executor));
}

TEST_F(BundleExecutorTest, PaddedQueryRowsAreNeitherReadNorWritten) {
  query = Tensor(DType::F32, {5, kHeads, kHeadSize});
  for (int64_t i = 0; i < query.numElements(); ++i)
    query.setFloat(i, i);
  out = Tensor(DType::F32, {5, kHeads, kHeadSize});
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFloat(i, -7);
  auto executor = makeExecutor();
  Status s = runPaged(*executor);
  ASSERT_TRUE(s) << s.message();
  int64_t row = kHeads * kHeadSize;
  EXPECT_EQ(out.getFloat(3 * row - 1), 3 * row - 1);
  EXPECT_EQ(out.getFloat(3 * row), -7);
  EXPECT_EQ(out.getFloat(5 * row - 1), -7);
}

TEST_F(BundleExecutorTest, ReshapeAndCacheUpdatesTheCallersCache) {
  Tensor key(DType::F32, {3, kKvHeads, kHeadSize});
  for (int64_t i = 0; i < key.numElements(); ++i)
    key.setFloat(i, 1 + i);
  Tensor value = key;
  // Two real tokens (one of them padding) and a padded third row.
  Tensor slots = ints({17, -1}, {2}, DType::I64);
  auto executor = makeExecutor();
  Status s =
      host::reshapeAndCache(*executor, key, value, slots, KvCacheLayout::NHD, kvCache);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(device.launched, std::vector<std::string>{"cache::write"});
  int64_t row = kKvHeads * kHeadSize;
  int64_t at = ((1 * 2) * kBlockSize + 1) * row; // block 1, offset 1
  EXPECT_EQ(kvCache.getFloat(at), 1);
  EXPECT_EQ(kvCache.getFloat(at + row - 1), row);
  EXPECT_EQ(kvCache.getFloat(0), 0);

  Tensor bad = ints({17, 48}, {2}, DType::I64);
  device.launched.clear();
  Status rejected =
      host::reshapeAndCache(*executor, key, value, bad, KvCacheLayout::NHD, kvCache);
  ASSERT_FALSE(rejected);
  EXPECT_THAT(rejected.message(), HasSubstr("slot_mapping[1] = 48 is outside"));
  EXPECT_TRUE(device.launched.empty());
  EXPECT_EQ(kvCache.numElements(),
            kNumBlocks * 2 * kBlockSize * kKvHeads * kHeadSize);
}

TEST_F(BundleExecutorTest, Fp8ScalesGoWithFp8CachesOnly) {
  // A scale for a cache that is not fp8 (and an fp8 cache without one) is
  // refused before any variant is looked for or launched.
  Tensor key(DType::F32, {1, kKvHeads, kHeadSize});
  Tensor scale(DType::F32, {1});
  scale.setFloat(0, 0.5);
  auto executor = makeExecutor();
  Result<DeviceTensor> k = toDevice(device, key);
  Result<DeviceTensor> cache = toDevice(device, kvCache);
  ASSERT_TRUE(k && cache);
  Status s = executor->reshapeAndCache(*k, *k, ints({3}, {1}, DType::I64),
                                       KvCacheLayout::NHD, *cache,
                                       {&scale, nullptr});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("k_scale given for kv cache"));
  EXPECT_THAT(s.message(), HasSubstr("which is not fp8"));

  Tensor fp8Cache(DType::F8E4M3FN, kvCache.shape());
  Result<DeviceTensor> fp8 = toDevice(device, fp8Cache);
  ASSERT_TRUE(fp8);
  Status missing = executor->reshapeAndCache(
      *k, *k, ints({3}, {1}, DType::I64), KvCacheLayout::NHD, *fp8,
      {&scale, nullptr});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(), HasSubstr("is fp8 but no v_scale was given"));
  EXPECT_TRUE(device.launched.empty());
}

//===----------------------------------------------------------------------===//
// concatAndCacheMla: the latent form of reshape_and_cache
//===----------------------------------------------------------------------===//

constexpr int64_t kLoraRank = 4, kRopeDim = 2, kLatent = kLoraRank + kRopeDim;

/// @reshape_and_cache of the latent form: (kv_c, k_pe, cache, slots), one
/// launch over the tokens; the cache argument is the result.
Plan latentCachePlan(int64_t rank, int64_t rope, const std::string &kernel) {
  Plan p;
  p.function = "reshape_and_cache";
  p.arguments = {{DType::F32, {-1, rank}},
                 {DType::F32, {-1, rope}},
                 {DType::F32, {-1, kBlockSize, rank + rope}},
                 {DType::I64, {-1}}};
  p.results = {{DType::F32, {-1, kBlockSize, rank + rope}}};
  p.numSlots = 6;
  p.ops = {
      op(PlanOpKind::Dim, 4, {3}, 0),
      op(PlanOpKind::Const, 5, {}, 1),
      launch(kernel, {4, 5, 5, 0, 1, 2, 3}),
      op(PlanOpKind::Return, -1, {2}),
  };
  return p;
}

class ConcatAndCacheMlaTest : public BundleExecutorTest {
protected:
  void SetUp() override {
    BundleExecutorTest::SetUp();
    device.library["mla-write"] = [](const std::array<uint32_t, 3> &grid,
                              std::span<const BufferView> args) {
      const float *kvC = hostData<float>(args[0]);
      const float *kPe = hostData<float>(args[1]);
      float *cache = hostData<float>(args[2]);
      const int64_t *slots = hostData<int64_t>(args[3]);
      for (uint32_t t = 0; t < grid[0]; ++t) {
        if (slots[t] < 0)
          continue;
        float *row = cache + slots[t] * kLatent;
        std::copy(kvC + t * kLoraRank, kvC + (t + 1) * kLoraRank, row);
        std::copy(kPe + t * kRopeDim, kPe + (t + 1) * kRopeDim,
                  row + kLoraRank);
      }
    };
    kvC = Tensor(DType::F32, {3, kLoraRank});
    for (int64_t i = 0; i < kvC.numElements(); ++i)
      kvC.setFloat(i, 1 + i);
    kPe = Tensor(DType::F32, {3, kRopeDim});
    for (int64_t i = 0; i < kPe.numElements(); ++i)
      kPe.setFloat(i, -1 - i);
    latentCache = Tensor(DType::F32, {kNumBlocks, kBlockSize, kLatent});
  }

  /// A latent reshape_and_cache variant, as attn-compile's manifest lists
  /// it, put before the others so that the paged one cannot win by order.
  void addLatentVariant(const std::string &name, int64_t rank, int64_t rope,
                        const std::string &symbol) {
    BundleVariant v;
    v.name = name;
    v.parameters = {{"op", "reshape_and_cache"},
                    {"block_size", "16"},
                    {"dtype", "f32"},
                    {"kv_lora_rank", std::to_string(rank)},
                    {"rope_dim", std::to_string(rope)}};
    v.plans = {latentCachePlan(rank, rope, symbol)};
    v.kernels = {kernelFile(symbol, "mla-write")};
    bundle.variants.insert(bundle.variants.begin(), std::move(v));
  }

  Tensor kvC, kPe, latentCache;
};

TEST_F(ConcatAndCacheMlaTest, RunsTheLatentVariantWithMatchingGeometry) {
  addLatentVariant("latent_rope4", kLoraRank, 4, "mla4::write");
  addLatentVariant("latent", kLoraRank, kRopeDim, "mla::write");
  Result<const BundleVariant *> found =
      findVariant(bundle, concatAndCacheMlaQuery(kvC, kPe, latentCache));
  ASSERT_TRUE(found) << found.message();
  EXPECT_EQ((*found)->name, "latent");
  EXPECT_EQ(concatAndCacheMlaQuery(kvC, kPe, latentCache).describe(),
            "op=reshape_and_cache,block_size=16,dtype=f32,"
            "kv_cache_dtype=auto,kv_lora_rank=4,"
            "rope_dim=2");
  // The variant's manifest predates kv_cache_dtype: it serves an auto
  // cache, never an fp8 one.
  OperandType fp8Cache = latentCache;
  fp8Cache.dtype = DType::F8E4M3FN;
  Result<const BundleVariant *> fp8 =
      findVariant(bundle, concatAndCacheMlaQuery(kvC, kPe, fp8Cache));
  ASSERT_FALSE(fp8);
  EXPECT_NE(fp8.message().find("kv_cache_dtype missing"), std::string::npos)
      << fp8.message();

  // Token 0 to block 1 offset 1, token 1 is padding, row 2 is past the
  // slot mapping.
  Tensor slots = ints({17, -1}, {2}, DType::I64);
  auto executor = makeExecutor();
  Status s = host::concatAndCacheMla(*executor, kvC, kPe, slots, latentCache);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(device.launched, std::vector<std::string>{"mla::write"});
  Tensor expected(DType::F32, {kNumBlocks, kBlockSize, kLatent});
  for (int64_t i = 0; i < kLoraRank; ++i)
    expected.setFloat(17 * kLatent + i, 1 + i);
  for (int64_t i = 0; i < kRopeDim; ++i)
    expected.setFloat(17 * kLatent + kLoraRank + i, -1 - i);
  EXPECT_EQ(latentCache, expected);

  // The paged write still finds the paged variant.
  Tensor key(DType::F32, {1, kKvHeads, kHeadSize});
  ASSERT_TRUE(host::reshapeAndCache(*executor, key, key, ints({0}, {1}, DType::I64),
                                        KvCacheLayout::NHD, kvCache));
  EXPECT_EQ(device.launched.back(), "cache::write");
}

TEST_F(ConcatAndCacheMlaTest, RejectsBadSlotsAndShapesBeforeAnyLaunch) {
  addLatentVariant("latent", kLoraRank, kRopeDim, "mla::write");
  auto executor = makeExecutor();
  Tensor before = latentCache;
  auto expectRejected = [&](const Tensor &c, const Tensor &p,
                            const Tensor &slots, const std::string &what) {
    Result<DeviceTensor> dc = toDevice(device, c), dp = toDevice(device, p);
    Result<DeviceTensor> cache = toDevice(device, latentCache);
    ASSERT_TRUE(dc && dp && cache);
    int allocations = device.allocations;
    Status s = executor->concatAndCacheMla(*dc, *dp, slots, *cache, nullptr);
    ASSERT_FALSE(s);
    EXPECT_THAT(s.message(), HasSubstr(what));
    EXPECT_TRUE(device.launched.empty());
    EXPECT_EQ(device.allocations, allocations);
    EXPECT_TRUE(device.loaded.empty());
    EXPECT_EQ(*toHost(*cache), before);
  };
  // 3 blocks of 16: slot 48 is the first outside.
  expectRejected(kvC, kPe, ints({17, 48}, {2}, DType::I64),
                 "slot_mapping[1] = 48 is outside");
  expectRejected(kvC, kPe, ints({0, 1}, {2}), "slot_mapping");
  expectRejected(Tensor(DType::F32, {1, kLoraRank}),
                 Tensor(DType::F32, {1, kRopeDim}),
                 ints({0, 1}, {2}, DType::I64),
                 "kv_c has 1 tokens but slot_mapping has 2");
  expectRejected(kvC, Tensor(DType::F32, {3, 3}), ints({0}, {1}, DType::I64),
                 "must be [T, L], [T, P] and [num_blocks, B, L + P]");
  Tensor half(DType::F16, {3, kLoraRank});
  expectRejected(half, kPe, ints({0}, {1}, DType::I64),
                 "must have the kv cache's dtype");

  ASSERT_TRUE(host::concatAndCacheMla(*executor, kvC, kPe, ints({47}, {1}, DType::I64),
                                          latentCache));
}

TEST_F(ConcatAndCacheMlaTest, NamesAMissingLatentVariant) {
  auto executor = makeExecutor();
  Status s = host::concatAndCacheMla(*executor, kvC, kPe, ints({0}, {1}, DType::I64),
                                         latentCache);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "bundle " + bundle.directory +
                             " has no reshape_and_cache variant with "
                             "block_size=16,dtype=f32,kv_cache_dtype=auto,"
                             "kv_lora_rank=4,"
                             "rope_dim=2 (it has: cache (kv_lora_rank "
                             "missing, rope_dim missing)); compile one with: "
                             "attn-compile --variant op=reshape_and_cache,"
                             "block_size=16,dtype=f32,kv_cache_dtype=auto,"
                             "kv_lora_rank=4,"
                             "rope_dim=2");
  EXPECT_TRUE(device.launched.empty());
  EXPECT_TRUE(device.loaded.empty());
}

TEST_F(BundleExecutorTest, MergeStatesChecksRowsBeforeLookingUp) {
  Tensor a(DType::F32, {3, kHeads, kHeadSize}),
      b(DType::F32, {2, kHeads, kHeadSize});
  Tensor lseA(DType::F32, {3, kHeads}), lseB(DType::F32, {3, kHeads});
  auto executor = makeExecutor();
  Status s = host::mergeStates(*executor, a, lseA, b, lseB, out, &lse);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "out_b is [2, 4, 8] f32, expected [3, 4, 8] f32");
  Status none = host::mergeStates(*executor, a, lseA, a, lseB, out, &lse);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.message(), HasSubstr("has no merge_states variant"));
}

} // namespace
} // namespace attn::runtime
