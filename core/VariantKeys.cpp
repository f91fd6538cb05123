//===- VariantKeys.cpp - The keys that describe a compiled variant --------===//

#include "core/VariantKeys.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace attn {

std::string_view toString(VariantOp op) {
  switch (op) {
  case VariantOp::PagedAttention:
    return "paged_attention";
  case VariantOp::ReshapeAndCache:
    return "reshape_and_cache";
  case VariantOp::MlaDecode:
    return "mla_decode";
  case VariantOp::MergeStates:
    return "merge_states";
  }
  return "";
}

std::optional<VariantOp> parseVariantOp(std::string_view name) {
  for (VariantOp op : kVariantOps)
    if (toString(op) == name)
      return op;
  return std::nullopt;
}

std::string_view toString(CacheDType dtype) {
  switch (dtype) {
  case CacheDType::Auto:
    return "auto";
  case CacheDType::F8E4M3:
    return "fp8_e4m3";
  case CacheDType::F8E5M2:
    return "fp8_e5m2";
  }
  return "";
}

std::optional<CacheDType> parseCacheDType(std::string_view name) {
  if (name == "fp8")
    return CacheDType::F8E4M3;
  for (CacheDType dtype :
       {CacheDType::Auto, CacheDType::F8E4M3, CacheDType::F8E5M2})
    if (toString(dtype) == name)
      return dtype;
  return std::nullopt;
}

DType cacheElementType(CacheDType dtype, DType model) {
  switch (dtype) {
  case CacheDType::Auto:
    return model;
  case CacheDType::F8E4M3:
    return DType::F8E4M3FN;
  case CacheDType::F8E5M2:
    return DType::F8E5M2;
  }
  return model;
}

CacheDType cacheDTypeOf(DType element) {
  if (element == DType::F8E4M3FN)
    return CacheDType::F8E4M3;
  if (element == DType::F8E5M2)
    return CacheDType::F8E5M2;
  return CacheDType::Auto;
}

std::string_view toString(KvScaleStrategy strategy) {
  return strategy == KvScaleStrategy::AttnHead ? "attn_head" : "tensor";
}

std::optional<KvScaleStrategy> parseKvScaleStrategy(std::string_view name) {
  for (KvScaleStrategy s : {KvScaleStrategy::Tensor, KvScaleStrategy::AttnHead})
    if (toString(s) == name)
      return s;
  return std::nullopt;
}

const VariantKey *findVariantKey(std::string_view name) {
  for (const VariantKey &key : kVariantKeys)
    if (key.name == name)
      return &key;
  return nullptr;
}

std::string variantKeyNames() {
  std::string names;
  for (const VariantKey &key : kVariantKeys)
    names += (names.empty() ? "" : ", ") + std::string(key.name);
  return names;
}

std::string intText(int64_t value) { return std::to_string(value); }

std::string boolText(bool value) { return value ? "true" : "false"; }

std::string f32Text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g",
                static_cast<double>(static_cast<float>(value)));
  return text;
}

std::optional<int64_t> parseIntValue(std::string_view text) {
  int64_t value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end)
    return std::nullopt;
  return value;
}

std::optional<bool> parseBoolValue(std::string_view text) {
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}

std::optional<double> parseFloatValue(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::string whole(text);
  char *end = nullptr;
  double value = std::strtod(whole.c_str(), &end);
  if (*end != '\0')
    return std::nullopt;
  return value;
}

bool sameVariantValue(VariantKeyKind kind, std::string_view a,
                      std::string_view b) {
  switch (kind) {
  case VariantKeyKind::Text:
    return a == b;
  case VariantKeyKind::Int: {
    std::optional<int64_t> x = parseIntValue(a), y = parseIntValue(b);
    return x && y && *x == *y;
  }
  case VariantKeyKind::Bool: {
    std::optional<bool> x = parseBoolValue(a), y = parseBoolValue(b);
    return x && y && *x == *y;
  }
  case VariantKeyKind::F32: {
    std::optional<double> x = parseFloatValue(a), y = parseFloatValue(b);
    return x && y && static_cast<float>(*x) == static_cast<float>(*y);
  }
  }
  return false;
}

} // namespace attn
