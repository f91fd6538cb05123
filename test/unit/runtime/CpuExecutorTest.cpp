//===- CpuExecutorTest.cpp - The CPU backend, end to end -----------------===//
//
// selectBackend(CPU) + getImpl + a metadata builder + forward on the CPU
// executor give what the reference ops give for the same step.
//
//===----------------------------------------------------------------------===//

#include "runtime/executors/cpu/CpuExecutor.h"

#include "reference/ops/Compare.h"
#include "reference/ops/Ops.h"
#include "reference/ops/Random.h"
#include "runtime/Backend.h"
#include "runtime/HostCalls.h"
#include "runtime/Metadata.h"
#include "runtime/Registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using ::testing::HasSubstr;

/// A copy of `t` on `executor`'s device; a default tensor stays undefined.
DeviceTensor dev(CpuExecutor &executor, const Tensor &t) {
  return t.rank() == 0 ? DeviceTensor() : *toDevice(executor.device(), t);
}

template <typename T> std::vector<T> valuesOf(const Tensor &t) {
  std::vector<T> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(static_cast<T>(t.getInt(i)));
  return v;
}

/// The step's CommonAttentionMetadata, as an engine would build it.
CommonAttentionMetadata commonMetadata(const Problem &p) {
  StepInputs step;
  step.queryStartLoc = valuesOf<int32_t>(p.queryStartLoc);
  step.seqLens = valuesOf<int32_t>(p.seqLens);
  step.slotMapping = {valuesOf<int64_t>(p.slotMapping)};
  Result<CommonAttentionMetadata> cam =
      makeCommonAttentionMetadata(step, valuesOf<int32_t>(p.blockTable),
                                  static_cast<int32_t>(p.blockTable.dim(1)));
  EXPECT_TRUE(cam) << cam.message();
  return *cam;
}

TEST(CpuExecutor, FlashAttentionForwardIsTheReference) {
  ProblemShape shape;
  shape.numHeads = 8;
  shape.numKvHeads = 2;
  shape.headSize = 64;
  shape.dtype = DType::F16;
  ProblemOptions options;
  options.seed = 7;
  options.maxContextLen = 40;
  options.maxPrefillQueryLen = 12;
  Result<Problem> problem = generateProblem(shape, options);
  ASSERT_TRUE(problem) << problem.message();
  Problem &p = *problem;

  // Expected: the reference ops called directly.
  Tensor expectedCache = p.kvCache;
  ASSERT_TRUE(reshapeAndCache(p.key, p.value, expectedCache, p.slotMapping,
                              KvLayout::NHD));
  attn::PagedAttentionParams refParams;
  refParams.scale = p.scale;
  Result<AttentionOutput> expected =
      pagedAttention(p.query, expectedCache, p.blockTable, p.seqLens,
                     p.queryStartLoc, nullptr, nullptr, refParams);
  ASSERT_TRUE(expected) << expected.message();

  SelectionRequest request;
  request.headSize = 64;
  request.dtype = DType::F16;
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(DeviceType::CPU, request);
  ASSERT_TRUE(backend) << backend.message();
  AttentionLayer layer;
  layer.name = "layers.0";
  layer.numHeads = 8;
  layer.numKvHeads = 2;
  layer.headSize = 64;
  layer.scale = p.scale;
  layer.dtype = DType::F16;
  CpuExecutor executor;
  Result<std::unique_ptr<AttentionImpl>> impl =
      (*backend)->getImpl(layer, executor);
  ASSERT_TRUE(impl) << impl.message();
  KvCacheSpec spec{16, 2, 64, DType::F16, "auto"};
  Result<std::unique_ptr<AttentionMetadataBuilder>> builder =
      (*backend)->getBuilder(spec, {"layers.0"}, BuilderConfig{});
  ASSERT_TRUE(builder) << builder.message();
  Result<std::unique_ptr<AttentionMetadata>> md =
      (*builder)->build(0, commonMetadata(p));
  ASSERT_TRUE(md) << md.message();

  DeviceTensor cache = dev(executor, p.kvCache);
  DeviceTensor output = dev(executor, Tensor(DType::F16, p.query.shape()));
  Status s = (*impl)->forward(layer, dev(executor, p.query),
                              dev(executor, p.key), dev(executor, p.value),
                              cache, **md, output);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(*toHost(cache), expectedCache);
  EXPECT_EQ(*toHost(output), expected->out);
}

// Cascade attention (a prefix pass over the shared blocks, a suffix pass, a
// merge) computes the same attention as one pass, also when the batch has
// more query tokens than the shared prefix has keys.
TEST(CpuExecutor, CascadeEqualsOnePass) {
  ProblemShape shape;
  shape.numHeads = 4;
  shape.numKvHeads = 2;
  shape.headSize = 32;
  shape.dtype = DType::F32;
  ProblemOptions options;
  options.seed = 11;
  options.numReqs = 5;
  options.sharedPrefixBlocks = 2;
  options.maxContextLen = 60;
  options.maxPrefillQueryLen = 40;
  options.decodeFraction = 0.2;
  Result<Problem> problem = generateProblem(shape, options);
  ASSERT_TRUE(problem) << problem.message();
  Problem &p = *problem;
  ASSERT_GT(p.queryStartLoc.getInt(p.queryStartLoc.dim(0) - 1), 32)
      << "the batch must have more query tokens than the prefix has keys";

  AttentionLayer layer;
  layer.name = "layers.0";
  layer.numHeads = 4;
  layer.numKvHeads = 2;
  layer.headSize = 32;
  layer.scale = p.scale;
  layer.dtype = DType::F32;
  CpuExecutor executor;
  FlashAttentionBackend backend;
  Result<std::unique_ptr<AttentionImpl>> impl =
      backend.getImpl(layer, executor);
  ASSERT_TRUE(impl) << impl.message();
  KvCacheSpec spec{16, 2, 32, DType::F32, "auto"};
  Result<std::unique_ptr<AttentionMetadataBuilder>> builder =
      backend.getBuilder(spec, {"layers.0"}, BuilderConfig{});
  ASSERT_TRUE(builder) << builder.message();

  auto forward = [&](int64_t commonPrefixLen) -> Result<Tensor> {
    Result<std::unique_ptr<AttentionMetadata>> md =
        (*builder)->build(commonPrefixLen, commonMetadata(p));
    if (!md)
      return md.status();
    DeviceTensor cache = dev(executor, p.kvCache);
    DeviceTensor output = dev(executor, Tensor(DType::F32, p.query.shape()));
    ATTN_RETURN_IF_ERROR((*impl)->forward(
        layer, dev(executor, p.query), dev(executor, p.key),
        dev(executor, p.value), cache, **md, output));
    return toHost(output);
  };
  Result<Tensor> onePass = forward(0);
  ASSERT_TRUE(onePass) << onePass.message();
  Result<Tensor> cascade = forward(32);
  ASSERT_TRUE(cascade) << cascade.message();
  Result<TensorDiff> diff =
      compareTensors(*cascade, *onePass, defaultTolerance(DType::F32));
  ASSERT_TRUE(diff) << diff.message();
  EXPECT_TRUE(diff->passed())
      << diff->numMismatches << " elements differ, worst at "
      << formatIndex(diff->worstIndex) << ": " << diff->worstGot << " vs "
      << diff->worstWant;
}

TEST(CpuExecutor, PaddingRowsAreNeitherReadNorWritten) {
  ProblemShape shape;
  shape.numHeads = 4;
  shape.numKvHeads = 4;
  shape.headSize = 32;
  shape.dtype = DType::F32;
  ProblemOptions options;
  options.seed = 3;
  options.numReqs = 3;
  options.maxContextLen = 20;
  options.maxPrefillQueryLen = 5;
  Problem p = *generateProblem(shape, options);
  int64_t tokens = p.query.dim(0);

  // Expected on unpadded tensors.
  Tensor expectedCache = p.kvCache;
  ASSERT_TRUE(reshapeAndCache(p.key, p.value, expectedCache, p.slotMapping,
                              KvLayout::NHD));
  attn::PagedAttentionParams refParams;
  refParams.scale = p.scale;
  Result<AttentionOutput> expected =
      pagedAttention(p.query, expectedCache, p.blockTable, p.seqLens,
                     p.queryStartLoc, nullptr, nullptr, refParams);
  ASSERT_TRUE(expected);

  // Two padding rows on every token tensor, filled with a marker.
  auto padded = [&](const Tensor &t, double fill) {
    std::vector<int64_t> s = t.shape();
    s[0] += 2;
    Tensor out(t.dtype(), s);
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.setFloat(i, i < t.numElements() ? t.getFloat(i) : fill);
    return out;
  };
  Tensor query = padded(p.query, 1e6), key = padded(p.key, 1e6),
         value = padded(p.value, 1e6);
  Tensor out = padded(p.query, -3), lse = padded(expected->lse, -3);
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.setFloat(i, -3);

  CpuExecutor executor;
  ASSERT_TRUE(host::reshapeAndCache(executor, key, value, p.slotMapping,
                                    KvCacheLayout::NHD, p.kvCache));
  EXPECT_EQ(p.kvCache, expectedCache);
  PagedAttentionParams params;
  params.scale = p.scale;
  Status s =
      host::pagedAttention(executor, query, p.kvCache, p.queryStartLoc, p.seqLens,
                              p.blockTable, params, out, &lse);
  ASSERT_TRUE(s) << s.message();
  int64_t row = 4 * 32;
  for (int64_t i = 0; i < tokens * row; ++i)
    ASSERT_EQ(out.getFloat(i), expected->out.getFloat(i)) << i;
  for (int64_t i = tokens * row; i < out.numElements(); ++i)
    ASSERT_EQ(out.getFloat(i), -3) << i;
  for (int64_t i = 0; i < tokens * 4; ++i)
    ASSERT_EQ(lse.getFloat(i), expected->lse.getFloat(i)) << i;
  EXPECT_EQ(lse.getFloat(tokens * 4), -3);
}

TEST(CpuExecutor, ReportsTheReferencesErrors) {
  CpuExecutor executor;
  EXPECT_EQ(executor.name(), "cpu");
  Tensor key(DType::F16, {2, 1, 32}), cache(DType::F16, {2, 2, 16, 1, 32});
  Tensor slots(DType::I64, {2});
  slots.setInt(1, 32);
  Status s =
      host::reshapeAndCache(executor, key, key, slots, KvCacheLayout::NHD,
                            cache);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("slot_mapping[1] = 32 is outside"));

  Tensor out(DType::F32, {2, 1, 32}), lse(DType::F32, {2, 1});
  Tensor other(DType::F16, {2, 1, 32});
  Status merged = host::mergeStates(executor, other, lse, other, lse, out, &lse);
  ASSERT_FALSE(merged);
  EXPECT_THAT(merged.message(), HasSubstr("out is [2, 1, 32] f32"));
}

// TRITON_MLA is a built-in on CPU: the reference serves MLA.
TEST(CpuExecutor, ServesMla) {
  BackendRegistry registry;
  ASSERT_TRUE(registerBuiltinBackends(registry));
  SelectionRequest request;
  request.headSize = 576;
  request.dtype = DType::BF16;
  request.useMla = true;
  EXPECT_EQ(registry.priority(DeviceType::CPU),
            (std::vector<std::string>{"FLASH_ATTN", "TRITON_MLA"}));
  Result<std::unique_ptr<AttentionBackend>> backend =
      registry.selectBackend(DeviceType::CPU, request);
  ASSERT_TRUE(backend) << backend.message();
  EXPECT_EQ((*backend)->name(), "TRITON_MLA");

  ProblemShape shape;
  shape.numHeads = 4;
  shape.kvLoraRank = 512;
  shape.ropeDim = 64;
  shape.dtype = DType::BF16;
  ProblemOptions options;
  options.seed = 11;
  options.numReqs = 3;
  options.maxContextLen = 40;
  Problem p = *generateProblem(shape, options);
  attn::MlaDecodeParams refParams;
  refParams.scale = p.scale;
  refParams.kvLoraRank = 512;
  refParams.numKvSplits = 4;
  Result<AttentionOutput> expected =
      mlaDecode(p.query, p.kvCache, p.blockTable, p.seqLens, refParams);
  ASSERT_TRUE(expected) << expected.message();

  AttentionLayer layer;
  layer.name = "mla.0";
  layer.numHeads = 4;
  layer.numKvHeads = 1;
  layer.headSize = 576;
  layer.kvLoraRank = 512;
  layer.scale = p.scale;
  layer.dtype = DType::BF16;
  CpuExecutor executor;
  auto impl = (*backend)->getImpl(layer, executor);
  ASSERT_TRUE(impl) << impl.message();
  KvCacheSpec spec{16, 1, 576, DType::BF16, "auto"};
  auto builder = (*backend)->getBuilder(spec, {"mla.0"}, BuilderConfig{});
  ASSERT_TRUE(builder) << builder.message();
  auto md = (*builder)->build(0, commonMetadata(p));
  ASSERT_TRUE(md) << md.message();
  DeviceTensor output = dev(executor, Tensor(DType::BF16, {3, 4, 512}));
  Status s = (*impl)->forward(layer, dev(executor, p.query), {}, {},
                              dev(executor, p.kvCache), **md, output);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(*toHost(output), expected->out);
}

TEST(CpuExecutor, MlaForwardWritesTheLatentCacheThenDecodes) {
  ProblemShape shape;
  shape.numHeads = 4;
  shape.kvLoraRank = 512;
  shape.ropeDim = 64;
  shape.dtype = DType::BF16;
  ProblemOptions options;
  options.seed = 23;
  options.numReqs = 3;
  options.maxContextLen = 40;
  Problem p = *generateProblem(shape, options);
  ASSERT_EQ(p.key.shape(), (std::vector<int64_t>{3, 512}));
  ASSERT_EQ(p.value.shape(), (std::vector<int64_t>{3, 64}));

  // The cache before the step: the new tokens' rows hold something else.
  Tensor before = p.kvCache;
  for (int64_t t = 0; t < p.slotMapping.dim(0); ++t)
    for (int64_t i = 0; i < 576; ++i)
      before.setFloat(p.slotMapping.getInt(t) * 576 + i, 3.0);

  // The reference doing the same: write, then decode.
  Tensor refCache = before;
  ASSERT_TRUE(concatAndCacheMla(p.key, p.value, refCache, p.slotMapping));
  ASSERT_NE(refCache, before);
  attn::MlaDecodeParams refParams;
  refParams.scale = p.scale;
  refParams.kvLoraRank = 512;
  refParams.numKvSplits = 4;
  Result<AttentionOutput> expected =
      mlaDecode(p.query, refCache, p.blockTable, p.seqLens, refParams);
  ASSERT_TRUE(expected) << expected.message();

  AttentionLayer layer;
  layer.name = "mla.0";
  layer.numHeads = 4;
  layer.numKvHeads = 1;
  layer.headSize = 576;
  layer.kvLoraRank = 512;
  layer.scale = p.scale;
  layer.dtype = DType::BF16;
  TritonMlaBackend backend;
  CpuExecutor executor;
  auto impl = backend.getImpl(layer, executor);
  ASSERT_TRUE(impl) << impl.message();
  KvCacheSpec spec{16, 1, 576, DType::BF16, "auto"};
  auto builder = backend.getBuilder(spec, {"mla.0"}, BuilderConfig{});
  ASSERT_TRUE(builder) << builder.message();
  auto md = (*builder)->build(0, commonMetadata(p));
  ASSERT_TRUE(md) << md.message();

  DeviceTensor cache = dev(executor, before);
  DeviceTensor output = dev(executor, Tensor(DType::BF16, {3, 4, 512}));
  DeviceTensor query = dev(executor, p.query);
  Status s = (*impl)->forward(layer, query, dev(executor, p.key),
                              dev(executor, p.value), cache, **md, output);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(*toHost(cache), refCache);
  EXPECT_EQ(*toHost(output), expected->out);

  // Without kv_c / k_pe the cache is taken as written already.
  DeviceTensor untouched = dev(executor, before);
  DeviceTensor stale = dev(executor, Tensor(DType::BF16, {3, 4, 512}));
  ASSERT_TRUE(
      (*impl)->forward(layer, query, {}, {}, untouched, **md, stale));
  EXPECT_EQ(*toHost(untouched), before);
  EXPECT_NE(*toHost(stale), expected->out);
}

TEST(CpuExecutor, ConcatAndCacheMlaSkipsPaddingRows) {
  Tensor kvC(DType::F32, {3, 4}), kPe(DType::F32, {3, 2});
  for (int64_t i = 0; i < kvC.numElements(); ++i)
    kvC.setFloat(i, 1 + i);
  for (int64_t i = 0; i < kPe.numElements(); ++i)
    kPe.setFloat(i, -1 - i);
  Tensor slots(DType::I64, {2});
  slots.setInt(0, 5);
  slots.setInt(1, -1);
  Tensor cache(DType::F32, {2, 4, 6});
  CpuExecutor executor;
  ASSERT_TRUE(host::concatAndCacheMla(executor, kvC, kPe, slots, cache));
  Tensor expected(DType::F32, {2, 4, 6});
  for (int64_t i = 0; i < 4; ++i)
    expected.setFloat(5 * 6 + i, 1 + i);
  for (int64_t i = 0; i < 2; ++i)
    expected.setFloat(5 * 6 + 4 + i, -1 - i);
  EXPECT_EQ(cache, expected);

  slots.setInt(1, 8);
  Status s = host::concatAndCacheMla(executor, kvC, kPe, slots, cache);
  ASSERT_FALSE(s);
  EXPECT_EQ(cache, expected);
}

} // namespace
} // namespace attn::runtime
