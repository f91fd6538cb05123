//===- LaunchBounds.cpp - What a launch may ask of a kernel ---------------===//

#include "core/LaunchBounds.h"

#include "core/JsonRead.h"

#include <charconv>
#include <limits>

namespace attn {

namespace {

using nlohmann::json;

/// Bounds on what a relation may hold, far above any kernel's (a few
/// factors, a few relations per argument), so a damaged manifest cannot
/// make the check itself large.
constexpr size_t kMaxFactors = 8;
constexpr size_t kMaxChecks = 256;
constexpr size_t kMaxNames = 64;

std::string quantityText(LaunchQuantity q) {
  switch (q.kind) {
  case LaunchQuantity::Kind::Param:
    return "p" + std::to_string(q.index);
  case LaunchQuantity::Kind::Grid:
    return "g" + std::to_string(q.index);
  case LaunchQuantity::Kind::Bytes:
    return "bytes" + std::to_string(q.index);
  case LaunchQuantity::Kind::Number:
    break;
  }
  return std::to_string(q.index);
}

/// "p3", "g0", "bytes2" (checked against the declared names), or a number.
Result<LaunchQuantity> readQuantity(const json &v, const LaunchBounds &b) {
  if (v.is_number_integer() && v.get<int64_t>() >= 0 &&
      !(v.is_number_unsigned() &&
        v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    return LaunchQuantity::number(v.get<int64_t>());
  if (!v.is_string())
    return errorf("bounds: a quantity must be p<k>, g<d>, bytes<j> or a "
                  "non-negative integer, got ", v.dump());
  std::string s = v.get<std::string>();
  auto readIndex = [&](size_t prefix, int64_t limit,
                       LaunchQuantity::Kind kind) -> Result<LaunchQuantity> {
    int64_t index = -1;
    const char *end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data() + prefix, end, index);
    if (ec != std::errc() || ptr != end || prefix == s.size() || index < 0 ||
        index >= limit)
      return errorf("bounds: '", s, "' names no ",
                    kind == LaunchQuantity::Kind::Grid ? "grid dimension"
                    : kind == LaunchQuantity::Kind::Param ? "declared parameter"
                                                          : "declared argument");
    return LaunchQuantity{kind, index};
  };
  if (s.rfind("bytes", 0) == 0)
    return readIndex(5, int64_t(b.arguments.size()),
                     LaunchQuantity::Kind::Bytes);
  if (s.rfind("p", 0) == 0)
    return readIndex(1, int64_t(b.params.size()), LaunchQuantity::Kind::Param);
  if (s.rfind("g", 0) == 0)
    return readIndex(1, 3, LaunchQuantity::Kind::Grid);
  return errorf("bounds: '", s, "' is not p<k>, g<d> or bytes<j>");
}

Result<std::vector<std::string>> readNames(const json &j, const char *key) {
  const json *list = jsonMember(j, key, JsonKind::Array);
  if (!list || list->size() > kMaxNames)
    return errorf("bounds: '", key, "' must be a list of at most ", kMaxNames,
                  " names");
  std::vector<std::string> names;
  for (const json &n : *list) {
    if (!n.is_string())
      return errorf("bounds: '", key, "' must be a list of names");
    names.push_back(n.get<std::string>());
  }
  return names;
}

Result<int64_t> readCount(const json &c, const char *key) {
  const json *v = jsonMember(c, key, JsonKind::Integer);
  if (!v || v->get<int64_t>() < 0 ||
      (v->is_number_unsigned() &&
       v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    return errorf("bounds: a check's '", key,
                  "' must be a non-negative integer");
  return v->get<int64_t>();
}

Result<LaunchRelation> readRelation(const json &c, const LaunchBounds &b) {
  LaunchRelation r;
  const json *of = jsonMember(c, "of", JsonKind::Array);
  if (!of || of->size() > kMaxFactors)
    return errorf("bounds: a check's 'of' must be a list of at most ",
                  kMaxFactors, " parameters and grid dimensions");
  for (const json &f : *of) {
    Result<LaunchQuantity> q = readQuantity(f, b);
    if (!q)
      return q.status();
    if (q->kind != LaunchQuantity::Kind::Param &&
        q->kind != LaunchQuantity::Kind::Grid)
      return errorf("bounds: a check's 'of' holds parameters and grid "
                    "dimensions, got ", f.dump());
    r.of.push_back(*q);
  }
  Result<int64_t> times = readCount(c, "times"), plus = readCount(c, "plus"),
                  min = readCount(c, "min");
  if (!times || !plus || !min)
    return !times ? times.status() : !plus ? plus.status() : min.status();
  r.times = *times;
  r.plus = *plus;
  r.min = *min;
  const json *max = jsonMember(c, "max");
  if (!max)
    return errorf("bounds: a check needs 'max'");
  Result<LaunchQuantity> q = readQuantity(*max, b);
  if (!q)
    return q.status();
  r.max = *q;
  return r;
}

/// The value of `q` at launch; params are checked to be present first.
uint64_t valueOf(LaunchQuantity q, const LaunchValues &v) {
  switch (q.kind) {
  case LaunchQuantity::Kind::Param:
    return uint64_t(v.params[q.index]);
  case LaunchQuantity::Kind::Grid:
    return v.grid[q.index];
  case LaunchQuantity::Kind::Bytes:
    return v.argBytes[q.index];
  case LaunchQuantity::Kind::Number:
    break;
  }
  return uint64_t(q.index);
}

/// Whether the launch has the parameter or argument `q` reads: an error
/// naming it when not, or when a parameter is negative.
Status present(const LaunchBounds &b, std::string_view kernel,
               LaunchQuantity q, const LaunchValues &v) {
  if (q.kind == LaunchQuantity::Kind::Param) {
    if (q.index >= int64_t(v.params.size()))
      return errorf("kernel ", kernel, ": its params buffer (",
                    v.params.size(), " values) lacks ",
                    describeQuantity(b, q));
    if (v.params[q.index] < 0)
      return errorf("kernel ", kernel, ": ", describeQuantity(b, q), " = ",
                    v.params[q.index], " is negative");
  }
  if (q.kind == LaunchQuantity::Kind::Bytes &&
      q.index >= int64_t(v.argBytes.size()))
    return errorf("kernel ", kernel, ": the launch binds ", v.argBytes.size(),
                  " arguments, not ", describeQuantity(b, q));
  return Status::ok();
}

/// "p1 (num_reqs) = 1048576" for each factor.
std::string describeFactors(const LaunchBounds &b, const LaunchRelation &r,
                            const LaunchValues &v) {
  std::string s;
  for (const LaunchQuantity &q : r.of)
    s += (s.empty() ? "" : ", ") + describeQuantity(b, q) + " = " +
         std::to_string(valueOf(q, v));
  return s;
}

std::string formula(const LaunchBounds &b, const LaunchRelation &r) {
  std::string s = std::to_string(r.plus) + " + " + std::to_string(r.times);
  for (const LaunchQuantity &q : r.of)
    s += " * " + quantityText(q);
  return s;
}

} // namespace

std::string describeQuantity(const LaunchBounds &b, LaunchQuantity q) {
  auto named = [](const std::vector<std::string> &names, int64_t i) {
    return i < int64_t(names.size()) ? " (" + names[i] + ")" : std::string();
  };
  switch (q.kind) {
  case LaunchQuantity::Kind::Param:
    return "parameter p" + std::to_string(q.index) + named(b.params, q.index);
  case LaunchQuantity::Kind::Grid:
    return std::string("grid.") + "xyz"[q.index % 3];
  case LaunchQuantity::Kind::Bytes:
    return "the bytes of argument #" + std::to_string(q.index) +
           named(b.arguments, q.index);
  case LaunchQuantity::Kind::Number:
    break;
  }
  return std::to_string(q.index);
}

std::string writeLaunchBounds(const LaunchBounds &bounds) {
  json checks = json::array();
  for (const LaunchRelation &r : bounds.checks) {
    json of = json::array();
    for (const LaunchQuantity &q : r.of)
      of.push_back(quantityText(q));
    json c = {{"of", of},       {"times", r.times}, {"plus", r.plus},
              {"min", r.min}};
    if (r.max.kind == LaunchQuantity::Kind::Number)
      c["max"] = r.max.index;
    else
      c["max"] = quantityText(r.max);
    checks.push_back(std::move(c));
  }
  json j = {{"params", bounds.params},
            {"arguments", bounds.arguments},
            {"checks", checks}};
  return j.dump();
}

namespace {

Result<LaunchBounds> readBounds(const json &j) {
  if (!j.is_object())
    return errorf("bounds: must be a JSON object");
  LaunchBounds b;
  Result<std::vector<std::string>> params = readNames(j, "params");
  if (!params)
    return params.status();
  Result<std::vector<std::string>> arguments = readNames(j, "arguments");
  if (!arguments)
    return arguments.status();
  b.params = std::move(*params);
  b.arguments = std::move(*arguments);
  const json *checks = jsonMember(j, "checks", JsonKind::Array);
  if (!checks || checks->size() > kMaxChecks)
    return errorf("bounds: 'checks' must be a list of at most ", kMaxChecks,
                  " checks");
  for (const json &c : *checks) {
    if (!c.is_object())
      return errorf("bounds: every check must be a JSON object");
    Result<LaunchRelation> r = readRelation(c, b);
    if (!r)
      return r.status();
    b.checks.push_back(std::move(*r));
  }
  return b;
}

} // namespace

Result<LaunchBounds> parseLaunchBounds(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return errorf("bounds: not JSON: ", text);
  return readBounds(j);
}

Result<std::optional<LaunchBounds>>
readLaunchBoundsMember(std::string_view launchJson) {
  json j = json::parse(launchJson, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return errorf("launch facts are not a JSON object: ", launchJson);
  const json *member = jsonMember(j, "bounds");
  if (!member)
    return std::optional<LaunchBounds>();
  Result<LaunchBounds> b = readBounds(*member);
  if (!b)
    return b.status();
  return std::optional<LaunchBounds>(std::move(*b));
}

Status checkLaunchBounds(const LaunchBounds &b, std::string_view kernel,
                         const LaunchValues &v) {
  for (const LaunchRelation &r : b.checks) {
    for (const LaunchQuantity &q : r.of)
      ATTN_RETURN_IF_ERROR(present(b, kernel, q, v));
    ATTN_RETURN_IF_ERROR(present(b, kernel, r.max, v));
    // In 128 bits: the factors are below 2^32 each and few.
    unsigned __int128 value = 1;
    bool huge = false;
    for (const LaunchQuantity &q : r.of) {
      value *= valueOf(q, v);
      huge |= value > std::numeric_limits<uint64_t>::max();
      if (huge)
        value = std::numeric_limits<uint64_t>::max();
    }
    value = value * uint64_t(r.times) + uint64_t(r.plus);
    huge |= value > std::numeric_limits<uint64_t>::max();
    uint64_t max = valueOf(r.max, v);
    if (!huge && value >= uint64_t(r.min) && value <= max)
      continue;
    std::string what = describeFactors(b, r, v);
    std::string lhs = formula(b, r);
    if (!huge && value < uint64_t(r.min))
      return errorf("kernel ", kernel, ": ", what, " is out of range: ", lhs,
                    " = ", uint64_t(value), " must be at least ", r.min);
    return errorf("kernel ", kernel, ": ", what, " reaches past ",
                  describeQuantity(b, r.max), ": ", lhs, " = ",
                  huge ? std::string("more than 2^64")
                       : std::to_string(uint64_t(value)),
                  " exceeds ", max);
  }
  return Status::ok();
}

} // namespace attn
