//===- JsonRead.h - Typed member lookups in nlohmann JSON ------*- C++ -*-===//
//
// The one "member of this type, or nothing" lookup of the MLIR-free readers
// (launch facts, the bundle manifest, a TT program.json). Each reader phrases
// its own error around it, so its messages name its file and its schema.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_JSONREAD_H
#define ATTN_CORE_JSONREAD_H

#include <nlohmann/json.hpp>

#include <string_view>

namespace attn {

/// The JSON types a member may be asked for.
enum class JsonKind { Any, Bool, Integer, Number, String, Array, Object };

/// Whether `value` is of `kind` (an integer is also a Number).
inline bool isJsonKind(const nlohmann::json &value, JsonKind kind) {
  switch (kind) {
  case JsonKind::Any:
    return true;
  case JsonKind::Bool:
    return value.is_boolean();
  case JsonKind::Integer:
    return value.is_number_integer();
  case JsonKind::Number:
    return value.is_number();
  case JsonKind::String:
    return value.is_string();
  case JsonKind::Array:
    return value.is_array();
  case JsonKind::Object:
    return value.is_object();
  }
  return false;
}

/// Member `key` of `object` when `object` is an object holding it with a
/// value of `kind`; null otherwise (absent, mistyped, or not an object).
inline const nlohmann::json *jsonMember(const nlohmann::json &object,
                                        std::string_view key,
                                        JsonKind kind = JsonKind::Any) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !isJsonKind(*it, kind))
    return nullptr;
  return &*it;
}

} // namespace attn

#endif // ATTN_CORE_JSONREAD_H
