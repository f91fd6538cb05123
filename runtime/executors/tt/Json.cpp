//===- Json.cpp - A small JSON reader for program descriptions -----------===//
#include "runtime/executors/tt/Json.h"

#include <cstdlib>

namespace attn::tt {

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : s_(text) {}

  Result<JsonValue> parseDocument() {
    JsonValue v;
    if (!parseValue(v))
      return Status::error(error_);
    skipSpace();
    if (pos_ != s_.size())
      return errorf("json: trailing characters at offset ", pos_);
    return v;
  }

private:
  bool failAt(const std::string &what) {
    error_ = "json: " + what + " at offset " + std::to_string(pos_);
    return false;
  }
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }
  bool parseString(std::string &out) {
    ++pos_; // opening quote
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size())
          return failAt("unterminated escape");
        char e = s_[pos_++];
        switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          // Program descriptions are ASCII; keep the escape as written.
          out += "\\u";
          break;
        default:
          out += e;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= s_.size())
      return failAt("unterminated string");
    ++pos_;
    return true;
  }
  bool parseValue(JsonValue &v) {
    skipSpace();
    if (pos_ >= s_.size())
      return failAt("unexpected end");
    char c = s_[pos_];
    if (c == '{') {
      v.kind_ = JsonValue::Kind::Object;
      ++pos_;
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      while (true) {
        skipSpace();
        if (pos_ >= s_.size() || s_[pos_] != '"')
          return failAt("expected a member name");
        std::string key;
        if (!parseString(key))
          return false;
        skipSpace();
        if (pos_ >= s_.size() || s_[pos_] != ':')
          return failAt("expected ':'");
        ++pos_;
        if (!parseValue(v.object_[key]))
          return false;
        skipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == '}') {
          ++pos_;
          return true;
        }
        return failAt("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind_ = JsonValue::Kind::Array;
      ++pos_;
      skipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        v.array_.emplace_back();
        if (!parseValue(v.array_.back()))
          return false;
        skipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
          return true;
        }
        return failAt("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind_ = JsonValue::Kind::String;
      return parseString(v.string_);
    }
    if (literal("true")) {
      v.kind_ = JsonValue::Kind::Bool;
      v.bool_ = true;
      return true;
    }
    if (literal("false")) {
      v.kind_ = JsonValue::Kind::Bool;
      return true;
    }
    if (literal("null"))
      return true;
    const char *begin = s_.c_str() + pos_;
    char *end = nullptr;
    double d = std::strtod(begin, &end);
    if (end == begin)
      return failAt("unexpected character");
    v.kind_ = JsonValue::Kind::Number;
    v.number_ = d;
    pos_ += size_t(end - begin);
    return true;
  }

  const std::string &s_;
  size_t pos_ = 0;
  std::string error_;
};

Result<JsonValue> JsonValue::parse(const std::string &text) {
  return JsonParser(text).parseDocument();
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
