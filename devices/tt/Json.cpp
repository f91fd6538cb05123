//===- Json.cpp - Program descriptions as JsonValue trees -----------------===//
#include "devices/tt/Json.h"

#include <nlohmann/json.hpp>

namespace attn::tt {

/// Builds a JsonValue tree from nlohmann's (the runtime's one JSON parser).
class JsonParser {
public:
  static JsonValue convert(const nlohmann::json &j) {
    JsonValue v;
    switch (j.type()) {
    case nlohmann::json::value_t::object:
      v.kind_ = JsonValue::Kind::Object;
      for (const auto &[key, member] : j.items())
        v.object_.emplace(key, convert(member));
      break;
    case nlohmann::json::value_t::array:
      v.kind_ = JsonValue::Kind::Array;
      for (const nlohmann::json &element : j)
        v.array_.push_back(convert(element));
      break;
    case nlohmann::json::value_t::string:
      v.kind_ = JsonValue::Kind::String;
      v.string_ = j.get<std::string>();
      break;
    case nlohmann::json::value_t::boolean:
      v.kind_ = JsonValue::Kind::Bool;
      v.bool_ = j.get<bool>();
      break;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      v.kind_ = JsonValue::Kind::Number;
      v.number_ = j.get<double>();
      break;
    default:
      break;
    }
    return v;
  }
};

Result<JsonValue> JsonValue::parse(const std::string &text) {
  nlohmann::json j = nlohmann::json::parse(text, /*cb=*/nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::error("json: malformed JSON");
  return JsonParser::convert(j);
}

const JsonValue *JsonValue::get(const std::string &key) const {
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

Result<double> JsonValue::getNumber(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind_ != Kind::Number)
    return errorf("json: expected number member '", key, "'");
  return v->number_;
}

Result<std::string> JsonValue::getString(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind_ != Kind::String)
    return errorf("json: expected string member '", key, "'");
  return v->string_;
}

Result<const JsonValue *> JsonValue::getArray(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind_ != Kind::Array)
    return errorf("json: expected array member '", key, "'");
  return v;
}

Result<const JsonValue *> JsonValue::getObject(const std::string &key) const {
  const JsonValue *v = get(key);
  if (!v || v->kind_ != Kind::Object)
    return errorf("json: expected object member '", key, "'");
  return v;
}

} // namespace attn::tt
