//===- CoreKeysTest.cpp - Variant keys, targets and cudagraph levels ------===//

#include "core/CGSupport.h"
#include "core/Target.h"
#include "core/VariantKeys.h"

#include <gtest/gtest.h>

namespace attn {
namespace {

TEST(VariantKeys, EveryKeyIsFoundByItsName) {
  for (const VariantKey &key : kVariantKeys)
    EXPECT_EQ(findVariantKey(key.name), &key) << key.name;
  EXPECT_EQ(findVariantKey("num_head"), nullptr);
  EXPECT_EQ(variantKeyNames().substr(0, 14), "op, num_heads,");
}

TEST(VariantKeys, OnlyTheCacheKeysServeManifestsWithoutThem) {
  for (const VariantKey &key : kVariantKeys)
    EXPECT_EQ(key.absentValue.empty(), key.name != "kv_cache_dtype" &&
                                           key.name != "kv_scale_strategy")
        << key.name;
  // kv_cache_dtype is recorded at every value; kv_scale_strategy only away
  // from "tensor", so that manifests from before it stay as they were.
  EXPECT_FALSE(findVariantKey("kv_cache_dtype")->omittedAtAbsentValue());
  EXPECT_TRUE(findVariantKey("kv_scale_strategy")->omittedAtAbsentValue());
  EXPECT_EQ(findVariantKey("kv_scale_strategy")->absentValue, "tensor");
}

TEST(VariantKeys, KvScaleStrategies) {
  for (KvScaleStrategy s : {KvScaleStrategy::Tensor, KvScaleStrategy::AttnHead})
    EXPECT_EQ(parseKvScaleStrategy(toString(s)), s);
  EXPECT_EQ(toString(KvScaleStrategy::AttnHead), "attn_head");
  EXPECT_FALSE(parseKvScaleStrategy("channel"));
  const VariantKey *key = findVariantKey("kv_scale_strategy");
  EXPECT_TRUE(key->appliesTo(VariantOp::PagedAttention));
  EXPECT_TRUE(key->appliesTo(VariantOp::ReshapeAndCache));
  EXPECT_FALSE(key->appliesTo(VariantOp::MlaDecode));
}

TEST(VariantKeys, OpsByName) {
  for (VariantOp op : kVariantOps)
    EXPECT_EQ(parseVariantOp(toString(op)), op);
  EXPECT_FALSE(parseVariantOp("attention"));
  EXPECT_TRUE(findVariantKey("num_kv_splits")->appliesTo(VariantOp::MlaDecode));
  EXPECT_FALSE(
      findVariantKey("num_kv_splits")->appliesTo(VariantOp::PagedAttention));
}

TEST(VariantKeys, CacheDTypes) {
  EXPECT_EQ(parseCacheDType("fp8"), CacheDType::F8E4M3);
  for (CacheDType d :
       {CacheDType::Auto, CacheDType::F8E4M3, CacheDType::F8E5M2})
    EXPECT_EQ(parseCacheDType(toString(d)), d);
  EXPECT_FALSE(parseCacheDType("fp8_e4m3fn"));
  EXPECT_EQ(cacheElementType(CacheDType::Auto, DType::BF16), DType::BF16);
  EXPECT_EQ(cacheElementType(CacheDType::F8E5M2, DType::BF16), DType::F8E5M2);
  EXPECT_EQ(cacheDTypeOf(DType::F8E4M3FN), CacheDType::F8E4M3);
  EXPECT_EQ(cacheDTypeOf(DType::F16), CacheDType::Auto);
}

TEST(VariantKeys, ValuesCompareByKind) {
  EXPECT_TRUE(sameVariantValue(VariantKeyKind::Int, "16", "016"));
  EXPECT_FALSE(sameVariantValue(VariantKeyKind::Text, "16", "016"));
  EXPECT_TRUE(sameVariantValue(VariantKeyKind::Bool, "1", "true"));
  EXPECT_TRUE(sameVariantValue(VariantKeyKind::F32, f32Text(0.1), "0.1"));
  EXPECT_FALSE(sameVariantValue(VariantKeyKind::Int, "1.5", "1.5"));
  EXPECT_EQ(f32Text(0.1), "0.100000001");
  EXPECT_EQ(parseIntValue("-1"), -1);
  EXPECT_FALSE(parseIntValue(""));
  EXPECT_FALSE(parseIntValue("99999999999999999999"));
  EXPECT_FALSE(parseFloatValue("1e"));
}

TEST(Targets, ByName) {
  for (const TargetInfo &info : allTargets()) {
    EXPECT_EQ(parseTarget(info.name), info.target);
    EXPECT_EQ(toString(info.target), info.name);
  }
  EXPECT_FALSE(parseTarget("vulkan"));
  EXPECT_TRUE(targetInfo(Target::MSL).indices32);
  EXPECT_FALSE(targetInfo(Target::PTX).indices32);
}

TEST(CGSupport, Names) {
  EXPECT_EQ(toString(AttentionCGSupport::UNIFORM_SINGLE_TOKEN_DECODE),
            "UNIFORM_SINGLE_TOKEN_DECODE");
}

} // namespace
} // namespace attn
