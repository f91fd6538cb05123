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

} // namespace

SplitPlan splitPlanValues(nlohmann::json plan) {
  SplitPlan split;
  forEachPlanValue(plan, [&](nlohmann::json &leaf) {
    split.values.push_back(std::move(leaf));
    leaf = nullptr;
  });
  split.shape = std::move(plan);
  return split;
}

Result<nlohmann::json> fillPlanValues(nlohmann::json shape,
                                      const nlohmann::json &values) {
  if (!values.is_array())
    return Status::error("plan values must be an array");
  size_t next = 0;
  bool filledOnly = true;
  forEachPlanValue(shape, [&](nlohmann::json &leaf) {
    filledOnly &= leaf.is_null();
    if (next < values.size())
      leaf = values[next];
    ++next;
  });
  if (!filledOnly)
    return Status::error("a plan template holds a value where entries give "
                         "theirs (it must be null)");
  if (next != values.size())
    return errorf("the plan takes ", next, " values, the entry gives ",
                  values.size());
  return shape;
}

} // namespace attn::runtime
