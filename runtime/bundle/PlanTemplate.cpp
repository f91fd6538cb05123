//===- PlanTemplate.cpp - Plans as a shared shape and their values --------===//

#include "runtime/bundle/PlanTemplate.h"

#include <string>

namespace attn::runtime {

namespace {

/// Calls `visit` on every value leaf of `plan` in the order PlanTemplate.h
/// gives. Leaves a malformed plan's missing parts alone: the caller's
/// counts and planFromJsonValue's checks refuse it.
template <typename Visit>
void forEachPlanValue(nlohmann::json &plan, Visit &&visit) {
  if (!plan.is_object())
    return;
  for (const char *key : {"arguments", "results"}) {
    auto types = plan.find(key);
    if (types == plan.end() || !types->is_array())
      continue;
    for (nlohmann::json &type : *types) {
      if (!type.is_object())
        continue;
      if (auto dtype = type.find("dtype"); dtype != type.end())
        visit(*dtype);
      if (auto shape = type.find("shape");
          shape != type.end() && shape->is_array())
        for (nlohmann::json &dim : *shape)
          visit(dim);
    }
  }
  auto ops = plan.find("ops");
  if (ops == plan.end() || !ops->is_array())
    return;
  for (nlohmann::json &op : *ops) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string())
      continue;
    std::string kind = op["op"].get<std::string>();
    const char *key = kind == "const"    ? "imm"
                      : kind == "alloc"  ? "dtype"
                      : kind == "launch" ? "block"
                                         : nullptr;
    auto leaf = key ? op.find(key) : op.end();
    if (leaf == op.end())
      continue;
    if (kind == "launch" && leaf->is_array())
      for (nlohmann::json &size : *leaf)
        visit(size);
    else
      visit(*leaf);
  }
}

/// Calls `visit` on every number of `value`, in document order.
template <typename Visit>
void forEachNumber(nlohmann::json &value, Visit &&visit) {
  if (value.is_number() || value.is_null())
    visit(value);
  else if (value.is_structured())
    for (nlohmann::json &member : value)
      forEachNumber(member, visit);
}

/// What a template is of, and what gives its values, for messages.
struct Filled {
  const char *what;
  const char *giver;
};
constexpr Filled kPlan{"plan", "entry"};
constexpr Filled kNumbers{"launch bounds", "record"};

/// `value` with the leaves `forEach` visits taken out, in order, and null.
template <typename ForEach>
SplitJson splitLeaves(nlohmann::json value, ForEach &&forEach) {
  SplitJson split;
  forEach(value, [&](nlohmann::json &leaf) {
    split.values.push_back(std::move(leaf));
    leaf = nullptr;
  });
  split.shape = std::move(value);
  return split;
}

/// `shape`'s leaves that `forEach` visits filled from `values`, in order.
template <typename ForEach>
Result<nlohmann::json> fillLeaves(nlohmann::json shape,
                                  const nlohmann::json &values,
                                  ForEach &&forEach, Filled filled) {
  if (!values.is_array())
    return errorf(filled.what, " values must be an array");
  size_t next = 0;
  bool filledOnly = true;
  forEach(shape, [&](nlohmann::json &leaf) {
    filledOnly &= leaf.is_null();
    if (next < values.size())
      leaf = values[next];
    ++next;
  });
  if (!filledOnly)
    return errorf("a ", filled.what, " template holds a value where each ",
                  filled.giver, " gives its own (it must be null)");
  if (next != values.size())
    return errorf("the ", filled.what, " template takes ", next,
                  " values, the ", filled.giver, " gives ", values.size());
  return shape;
}

} // namespace

SplitJson splitPlanValues(nlohmann::json plan) {
  return splitLeaves(std::move(plan), [](nlohmann::json &value, auto &&visit) {
    forEachPlanValue(value, visit);
  });
}

Result<nlohmann::json> fillPlanValues(nlohmann::json shape,
                                      const nlohmann::json &values) {
  return fillLeaves(
      std::move(shape), values,
      [](nlohmann::json &plan, auto &&visit) { forEachPlanValue(plan, visit); },
      kPlan);
}

SplitJson splitNumbers(nlohmann::json value) {
  return splitLeaves(std::move(value), [](nlohmann::json &json, auto &&visit) {
    forEachNumber(json, visit);
  });
}

Result<nlohmann::json> fillNumbers(nlohmann::json shape,
                                   const nlohmann::json &values) {
  return fillLeaves(
      std::move(shape), values,
      [](nlohmann::json &value, auto &&visit) { forEachNumber(value, visit); },
      kNumbers);
}

} // namespace attn::runtime
