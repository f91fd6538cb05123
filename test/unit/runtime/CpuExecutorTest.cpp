//===- CpuExecutorTest.cpp - The CPU backend, end to end -----------------===//
//
// selectBackend(CPU) + getImpl + a metadata builder + forward on the CPU
// executor give what the reference ops give for the same step.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor/CpuExecutor.h"

#include "reference/ops/Ops.h"
#include "reference/testing/Compare.h"
#include "reference/testing/Random.h"
#include "runtime/executor/HostCalls.h"
#include "runtime/host/Backend.h"
#include "runtime/host/FlashAttention.h"
#include "runtime/host/Metadata.h"
#include "runtime/host/Registry.h"
#include "runtime/host/TritonMla.h"

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

/// A random step for flashLayer: H 8, G 2, D 64, short contexts.
Result<Problem> flashProblem(DType dtype, uint64_t seed) {
  ProblemShape shape;
  shape.numHeads = 8;
  shape.numKvHeads = 2;
  shape.headSize = 64;
  shape.dtype = dtype;
  ProblemOptions options;
  options.seed = seed;
  options.maxContextLen = 40;
  options.maxPrefillQueryLen = 12;
  return generateProblem(shape, options);
}

/// The FLASH_ATTN layer of `p` (H 8, G 2, D 64) in `dtype`, with a cache of
/// vLLM's `kvCacheDtype`.
AttentionLayer flashLayer(const Problem &p, DType dtype,
                          const char *kvCacheDtype = "auto") {
  AttentionLayer layer;
  layer.name = "layers.0";
  layer.numHeads = 8;
  layer.numKvHeads = 2;
  layer.headSize = 64;
  layer.scale = p.scale;
  layer.dtype = dtype;
  layer.kvCacheDtype = kvCacheDtype;
  return layer;
}

/// One step of `p` through selectBackend(CPU), getImpl, the metadata builder
/// and forward on `executor`: writes `cache` and `output`. The impl comes
/// back for more calls.
Result<std::unique_ptr<AttentionImpl>>
forwardOnCpu(const Problem &p, const AttentionLayer &layer,
             CpuExecutor &executor, const DeviceTensor &cache,
             const DeviceTensor &output) {
  SelectionRequest request;
  request.headSize = layer.headSize;
  request.dtype = layer.dtype;
  request.kvCacheDtype = layer.kvCacheDtype;
  Result<std::unique_ptr<AttentionBackend>> backend =
      selectBackend(DeviceType::CPU, request);
  if (!backend)
    return backend.status();
  Result<std::unique_ptr<AttentionImpl>> impl =
      (*backend)->getImpl(layer, executor);
  if (!impl)
    return impl.status();
  KvCacheSpec spec{16, layer.numKvHeads, layer.headSize, layer.dtype,
                   layer.kvCacheDtype};
  Result<std::unique_ptr<AttentionMetadataBuilder>> builder =
      (*backend)->getBuilder(spec, {layer.name}, BuilderConfig{});
  if (!builder)
    return builder.status();
  Result<std::unique_ptr<AttentionMetadata>> md =
      (*builder)->build(0, commonMetadata(p));
  if (!md)
    return md.status();
  ATTN_RETURN_IF_ERROR((*impl)->forward(
      layer, dev(executor, p.query), dev(executor, p.key),
      dev(executor, p.value), cache, **md, output));
  return impl;
}

TEST(CpuExecutor, FlashAttentionForwardIsTheReference) {
  Result<Problem> problem = flashProblem(DType::F16, 7);
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

  CpuExecutor executor;
  DeviceTensor cache = dev(executor, p.kvCache);
  DeviceTensor output = dev(executor, Tensor(DType::F16, p.query.shape()));
  Result<std::unique_ptr<AttentionImpl>> impl = forwardOnCpu(
      p, flashLayer(p, DType::F16), executor, cache, output);
  ASSERT_TRUE(impl) << impl.message();
  EXPECT_EQ(*toHost(cache), expectedCache);
  EXPECT_EQ(*toHost(output), expected->out);
}

// An fp8 cache on the CPU: the layer's k_scale / v_scale reach the cache
// write and the attention, which give what the reference ops give.
class CpuFp8 : public ::testing::TestWithParam<std::pair<const char *, DType>> {
};

TEST_P(CpuFp8, FlashAttentionForwardIsTheReference) {
  const auto [kvCacheDtype, cacheDtype] = GetParam();
  Result<Problem> problem = flashProblem(DType::BF16, 11);
  ASSERT_TRUE(problem) << problem.message();
  Problem &p = *problem;
  const float kScale = 0.0173f, vScale = 0.0291f;
  Tensor ks(DType::F32, {1}), vs(DType::F32, {1});
  ks.setFloat(0, kScale);
  vs.setFloat(0, vScale);
  // The problem's cache quantized: keys (axis 1 = 0) by k_scale, values by
  // v_scale.
  Tensor fp8Cache(cacheDtype, p.kvCache.shape());
  const int64_t half = p.kvCache.numElements() / (p.kvCache.dim(0) * 2);
  for (int64_t i = 0; i < fp8Cache.numElements(); ++i)
    fp8Cache.setFloat(i, p.kvCache.getFloat(i) /
                             ((i / half) % 2 ? vScale : kScale));

  Tensor expectedCache = fp8Cache;
  ASSERT_TRUE(reshapeAndCache(p.key, p.value, expectedCache, p.slotMapping,
                              KvLayout::NHD, {&ks, &vs}));
  attn::PagedAttentionParams refParams;
  refParams.scale = p.scale;
  Result<AttentionOutput> expected = pagedAttention(
      p.query, expectedCache, p.blockTable, p.seqLens, p.queryStartLoc,
      nullptr, nullptr, refParams, {&ks, &vs});
  ASSERT_TRUE(expected) << expected.message();

  AttentionLayer layer = flashLayer(p, DType::BF16, kvCacheDtype);
  layer.kScale = kScale;
  layer.vScale = vScale;
  CpuExecutor executor;
  DeviceTensor cache = dev(executor, fp8Cache);
  DeviceTensor output = dev(executor, Tensor(DType::BF16, p.query.shape()));
  Result<std::unique_ptr<AttentionImpl>> impl =
      forwardOnCpu(p, layer, executor, cache, output);
  ASSERT_TRUE(impl) << impl.message();
  EXPECT_EQ(*toHost(cache), expectedCache);
  EXPECT_EQ(*toHost(output), expected->out);

  // A cache in the model dtype is not the layer's cache.
  Result<std::unique_ptr<AttentionImpl>> wrong = forwardOnCpu(
      p, layer, executor, dev(executor, p.kvCache), output);
  ASSERT_FALSE(wrong);
  EXPECT_THAT(wrong.message(), HasSubstr("kv cache"));

  // A scale that is not positive is refused when the impl is made.
  layer.vScale = 0.0f;
  Result<std::unique_ptr<AttentionImpl>> bad =
      forwardOnCpu(p, layer, executor, cache, output);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.message(),
              HasSubstr("v_scale must be finite and > 0 with kv cache dtype"));
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, CpuFp8,
    ::testing::Values(std::pair{"fp8", DType::F8E4M3FN},
                      std::pair{"fp8_e5m2", DType::F8E5M2}));

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

// The latent cache in the model dtype and in both fp8 types: the layer's
// k_scale reaches the latent write and the decode.
class CpuMlaCaches
    : public ::testing::TestWithParam<std::pair<const char *, DType>> {};

TEST_P(CpuMlaCaches, ForwardWritesTheLatentCacheThenDecodes) {
  const auto [kvCacheDtype, cacheDtype] = GetParam();
  const bool fp8 = isFp8(cacheDtype);
  const float kScale = fp8 ? 0.0231f : 1.0f;
  Tensor ks(DType::F32, {1});
  ks.setFloat(0, kScale);
  const Tensor *scale = fp8 ? &ks : nullptr;
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

  // The cache before the step (quantized when fp8): the new tokens' rows
  // hold something else.
  Tensor before(cacheDtype, p.kvCache.shape());
  for (int64_t i = 0; i < before.numElements(); ++i)
    before.setFloat(i, p.kvCache.getFloat(i) / kScale);
  for (int64_t t = 0; t < p.slotMapping.dim(0); ++t)
    for (int64_t i = 0; i < 576; ++i)
      before.setFloat(p.slotMapping.getInt(t) * 576 + i, 3.0);

  // The reference doing the same: write, then decode.
  Tensor refCache = before;
  ASSERT_TRUE(
      concatAndCacheMla(p.key, p.value, refCache, p.slotMapping, scale));
  ASSERT_NE(refCache, before);
  attn::MlaDecodeParams refParams;
  refParams.scale = p.scale;
  refParams.kvLoraRank = 512;
  refParams.numKvSplits = 4;
  Result<AttentionOutput> expected =
      mlaDecode(p.query, refCache, p.blockTable, p.seqLens, refParams, scale);
  ASSERT_TRUE(expected) << expected.message();

  AttentionLayer layer;
  layer.kvCacheDtype = kvCacheDtype;
  layer.kScale = kScale;
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
  KvCacheSpec spec{16, 1, 576, DType::BF16, kvCacheDtype};
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

INSTANTIATE_TEST_SUITE_P(
    Dtypes, CpuMlaCaches,
    ::testing::Values(std::pair{"auto", DType::BF16},
                      std::pair{"fp8", DType::F8E4M3FN},
                      std::pair{"fp8_e5m2", DType::F8E5M2}));

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
