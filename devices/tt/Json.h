//===- Json.h - Program descriptions as a tree of values -----*- C++ -*-===//
//
// The program.json that attn-translate --attn-to-ttmetal writes, parsed by
// nlohmann/json (the one JSON library of the MLIR-free code) into a small
// tree with typed member lookups whose errors name the member. Keeps
// nlohmann out of the TT headers, which the SDK host program includes.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_JSON_H
#define ATTN_RUNTIME_EXECUTORS_TT_JSON_H

#include "core/Status.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attn::tt {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  bool isObject() const { return kind_ == Kind::Object; }
  bool isArray() const { return kind_ == Kind::Array; }
  double number() const { return number_; }
  bool boolean() const { return bool_; }
  const std::string &string() const { return string_; }
  const std::vector<JsonValue> &array() const { return array_; }
  /// Member `key` of an object, or null when absent.
  const JsonValue *get(const std::string &key) const;

  /// Typed member lookups that phrase a missing or mistyped member as an
  /// error naming it.
  Result<double> getNumber(const std::string &key) const;
  Result<std::string> getString(const std::string &key) const;
  Result<const JsonValue *> getArray(const std::string &key) const;
  Result<const JsonValue *> getObject(const std::string &key) const;

  static Result<JsonValue> parse(const std::string &text);

private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_JSON_H
