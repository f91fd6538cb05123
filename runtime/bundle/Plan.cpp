//===- Plan.cpp - Plan verification and JSON -----------------------------===//

#include "runtime/bundle/Plan.h"
#include "runtime/bundle/PlanJson.h"

#include <optional>

namespace attn::runtime {

namespace {

struct KindName {
  PlanOpKind kind;
  std::string_view name;
};

constexpr KindName kKindNames[] = {
    {PlanOpKind::Dim, "dim"},       {PlanOpKind::Const, "const"},
    {PlanOpKind::Add, "add"},       {PlanOpKind::Sub, "sub"},
    {PlanOpKind::Mul, "mul"},       {PlanOpKind::DivU, "divu"},
    {PlanOpKind::RemU, "remu"},     {PlanOpKind::CeilDivU, "ceildivu"},
    {PlanOpKind::MinU, "minu"},     {PlanOpKind::MaxU, "maxu"},
    {PlanOpKind::Alloc, "alloc"},   {PlanOpKind::View, "view"},
    {PlanOpKind::Store, "store"},   {PlanOpKind::Launch, "launch"},
    {PlanOpKind::Return, "return"},
};

std::optional<PlanOpKind> parseKind(std::string_view name) {
  for (const KindName &k : kKindNames)
    if (k.name == name)
      return k.kind;
  return std::nullopt;
}

bool isBinary(PlanOpKind kind) {
  switch (kind) {
  case PlanOpKind::Add:
  case PlanOpKind::Sub:
  case PlanOpKind::Mul:
  case PlanOpKind::DivU:
  case PlanOpKind::RemU:
  case PlanOpKind::CeilDivU:
  case PlanOpKind::MinU:
  case PlanOpKind::MaxU:
    return true;
  default:
    return false;
  }
}

enum class SlotKind { Unset, Int, Buffer };

nlohmann::json typeToJson(const PlanTensorType &t) {
  return {{"dtype", std::string(toString(t.dtype))}, {"shape", t.shape}};
}

Result<PlanTensorType> typeFromJson(const nlohmann::json &j) {
  if (!j.is_object() || !j.contains("dtype") || !j.contains("shape"))
    return Status::error("a tensor type needs \"dtype\" and \"shape\"");
  std::optional<DType> dtype = parseDType(j["dtype"].get<std::string>());
  if (!dtype)
    return errorf("unknown dtype \"", j["dtype"].get<std::string>(), "\"");
  return PlanTensorType{*dtype, j["shape"].get<std::vector<int64_t>>()};
}

/// A slot number from JSON: an integer in [-1, kMaxPlanSlots), read without
/// truncation (a larger number must not wrap onto a valid slot).
std::optional<int32_t> slotFromJson(const nlohmann::json &v) {
  if (!v.is_number_integer())
    return std::nullopt;
  int64_t n = v.get<int64_t>();
  if (n < -1 || n >= kMaxPlanSlots)
    return std::nullopt;
  return static_cast<int32_t>(n);
}

} // namespace

std::string_view toString(PlanOpKind kind) {
  for (const KindName &k : kKindNames)
    if (k.kind == kind)
      return k.name;
  return "?";
}

namespace {

/// Checks op `n` of a plan against the kinds of the slots written before
/// it: each operand, how many there are, and the slot it writes.
class OpChecker {
public:
  OpChecker(const Plan &plan, size_t n, std::vector<SlotKind> &slots)
      : plan(plan), n(n), op(plan.ops[n]), slots(slots) {}

  Status check() {
    size_t expectedOperands = 0;
    SlotKind resultKind = SlotKind::Unset;
    ATTN_RETURN_IF_ERROR(checkOperands(expectedOperands, resultKind));
    if (op.operands.size() != expectedOperands)
      return fail("expects ", expectedOperands, " operands, got ",
                  op.operands.size());
    return checkResult(resultKind);
  }

private:
  template <typename... Parts> Status fail(const Parts &...parts) const {
    return errorf("plan '", plan.function, "', op #", n, " (",
                  toString(op.kind), "): ", parts...);
  }
  /// Operand `i` exists and reads a slot of `kind` written earlier.
  Status expect(size_t i, SlotKind kind) const {
    if (i >= op.operands.size())
      return fail("missing operand #", i);
    int32_t s = op.operands[i];
    if (s < 0 || s >= plan.numSlots || slots[s] == SlotKind::Unset)
      return fail("operand #", i, " reads slot ", s, " before it is written");
    if (slots[s] != kind)
      return fail("operand #", i, " (slot ", s, ") is ",
                  kind == SlotKind::Int ? "a buffer, expected an integer"
                                        : "an integer, expected a buffer");
    return Status::ok();
  }
  /// Operands `from` on read slots of `kind`.
  Status expectFrom(size_t from, SlotKind kind) const {
    for (size_t i = from; i < op.operands.size(); ++i)
      ATTN_RETURN_IF_ERROR(expect(i, kind));
    return Status::ok();
  }
  /// The operands of the op's kind, how many it takes, and what it writes.
  Status checkOperands(size_t &expectedOperands, SlotKind &resultKind) const;
  /// The slot an op with a result writes: not an argument, written once.
  Status checkResult(SlotKind resultKind);

  const Plan &plan;
  size_t n;
  const PlanOp &op;
  std::vector<SlotKind> &slots;
};

Status OpChecker::checkOperands(size_t &expectedOperands,
                                SlotKind &resultKind) const {
  switch (op.kind) {
  case PlanOpKind::Dim:
    ATTN_RETURN_IF_ERROR(expect(0, SlotKind::Buffer));
    expectedOperands = 1;
    resultKind = SlotKind::Int;
    return Status::ok();
  case PlanOpKind::Const:
    resultKind = SlotKind::Int;
    return Status::ok();
  case PlanOpKind::Alloc:
    ATTN_RETURN_IF_ERROR(expectFrom(0, SlotKind::Int));
    expectedOperands = op.operands.size();
    resultKind = SlotKind::Buffer;
    return Status::ok();
  case PlanOpKind::View:
    ATTN_RETURN_IF_ERROR(expect(0, SlotKind::Buffer));
    ATTN_RETURN_IF_ERROR(expectFrom(1, SlotKind::Int));
    expectedOperands = std::max<size_t>(1, op.operands.size());
    resultKind = SlotKind::Buffer;
    return Status::ok();
  case PlanOpKind::Store:
    ATTN_RETURN_IF_ERROR(expect(0, SlotKind::Buffer));
    ATTN_RETURN_IF_ERROR(expect(1, SlotKind::Int));
    ATTN_RETURN_IF_ERROR(expect(2, SlotKind::Int));
    expectedOperands = 3;
    return Status::ok();
  case PlanOpKind::Launch:
    if (op.kernel.empty())
      return fail("launch without a kernel name");
    for (int64_t b : op.block)
      if (b <= 0)
        return fail("workgroup size must be positive, got ", b);
    for (size_t i = 0; i < 3; ++i)
      ATTN_RETURN_IF_ERROR(expect(i, SlotKind::Int));
    ATTN_RETURN_IF_ERROR(expectFrom(3, SlotKind::Buffer));
    expectedOperands = std::max<size_t>(3, op.operands.size());
    return Status::ok();
  case PlanOpKind::Return:
    if (n + 1 != plan.ops.size())
      return fail("return must be the last op");
    if (op.operands.size() != plan.results.size())
      return fail("returns ", op.operands.size(), " values, the function has ",
                  plan.results.size(), " results");
    ATTN_RETURN_IF_ERROR(expectFrom(0, SlotKind::Buffer));
    expectedOperands = op.operands.size();
    return Status::ok();
  default:
    if (!isBinary(op.kind))
      return fail("unknown op kind");
    ATTN_RETURN_IF_ERROR(expect(0, SlotKind::Int));
    ATTN_RETURN_IF_ERROR(expect(1, SlotKind::Int));
    expectedOperands = 2;
    resultKind = SlotKind::Int;
    return Status::ok();
  }
}

Status OpChecker::checkResult(SlotKind resultKind) {
  const int32_t numArgs = static_cast<int32_t>(plan.arguments.size());
  if (resultKind == SlotKind::Unset) {
    if (op.result != -1)
      return fail("writes slot ", op.result, " but has no result");
    return Status::ok();
  }
  if (op.result < numArgs || op.result >= plan.numSlots)
    return fail("result slot ", op.result, " is outside [", numArgs, ", ",
                plan.numSlots, ")");
  if (slots[op.result] != SlotKind::Unset)
    return fail("slot ", op.result, " is written twice");
  slots[op.result] = resultKind;
  return Status::ok();
}

} // namespace

Status Plan::verify() const {
  if (numSlots < 0 || numSlots > kMaxPlanSlots ||
      ops.size() > static_cast<size_t>(kMaxPlanOps) ||
      arguments.size() > static_cast<size_t>(kMaxPlanSlots))
    return errorf("plan '", function, "': ", numSlots, " slots and ",
                  ops.size(), " ops; a plan has at most ", kMaxPlanSlots,
                  " slots and ", kMaxPlanOps, " ops");
  const int32_t numArgs = static_cast<int32_t>(arguments.size());
  if (numSlots < numArgs)
    return errorf("plan '", function, "': ", numSlots,
                  " slots cannot hold ", numArgs, " arguments");
  std::vector<SlotKind> slots(numSlots, SlotKind::Unset);
  for (int32_t i = 0; i < numArgs; ++i)
    slots[i] = SlotKind::Buffer;
  for (size_t n = 0; n < ops.size(); ++n)
    ATTN_RETURN_IF_ERROR(OpChecker(*this, n, slots).check());
  if (ops.empty() || ops.back().kind != PlanOpKind::Return)
    return errorf("plan '", function, "' does not end with a return");
  return Status::ok();
}

nlohmann::json planToJsonValue(const Plan &plan) {
  nlohmann::json j;
  j["function"] = plan.function;
  j["num_slots"] = plan.numSlots;
  for (const PlanTensorType &t : plan.arguments)
    j["arguments"].push_back(typeToJson(t));
  for (const PlanTensorType &t : plan.results)
    j["results"].push_back(typeToJson(t));
  for (const PlanOp &op : plan.ops) {
    nlohmann::json o;
    o["op"] = std::string(toString(op.kind));
    if (op.result >= 0)
      o["result"] = op.result;
    if (!op.operands.empty())
      o["operands"] = op.operands;
    if (op.kind == PlanOpKind::Const || op.kind == PlanOpKind::Dim)
      o["imm"] = op.imm;
    if (op.kind == PlanOpKind::Alloc)
      o["dtype"] = std::string(toString(op.dtype));
    if (op.kind == PlanOpKind::Launch) {
      o["kernel"] = op.kernel;
      o["block"] = op.block;
    }
    j["ops"].push_back(std::move(o));
  }
  if (!j.contains("arguments"))
    j["arguments"] = nlohmann::json::array();
  if (!j.contains("results"))
    j["results"] = nlohmann::json::array();
  return j;
}

std::string planToJson(const Plan &plan) {
  return planToJsonValue(plan).dump(1);
}

Result<Plan> planFromJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, /*cb=*/nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::error("plan: malformed JSON");
  return planFromJsonValue(j);
}

Result<Plan> planFromJsonValue(const nlohmann::json &j) {
  if (!j.is_object() || !j.contains("function") || !j.contains("ops") ||
      !j.contains("num_slots"))
    return Status::error(
        "plan: expected an object with \"function\", \"num_slots\", \"ops\"");
  // nlohmann's typed getters throw on type mismatch; check types first so a
  // corrupt manifest is an error value, not an abort (exceptions are off).
  Plan plan;
  if (!j["function"].is_string() || !j["num_slots"].is_number_integer() ||
      !j["ops"].is_array())
    return Status::error("plan: \"function\" must be a string, \"num_slots\" "
                         "an integer and \"ops\" an array");
  plan.function = j["function"].get<std::string>();
  std::optional<int32_t> numSlots = slotFromJson(j["num_slots"]);
  if (!numSlots || *numSlots < 0)
    return errorf("plan '", plan.function, "': \"num_slots\" must be in [0, ",
                  kMaxPlanSlots, "), got ", j["num_slots"].dump());
  plan.numSlots = *numSlots;
  for (const char *key : {"arguments", "results"}) {
    if (!j.contains(key) || !j[key].is_array())
      return errorf("plan '", plan.function, "': \"", key,
                    "\" must be an array");
    for (const nlohmann::json &t : j[key]) {
      if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() ||
          !t.contains("shape") || !t["shape"].is_array())
        return errorf("plan '", plan.function, "': bad tensor type in \"",
                      key, "\"");
      for (const nlohmann::json &d : t["shape"])
        if (!d.is_number_integer())
          return errorf("plan '", plan.function, "': bad shape in \"", key,
                        "\"");
      Result<PlanTensorType> type = typeFromJson(t);
      if (!type)
        return errorf("plan '", plan.function, "': ", type.message());
      (std::string(key) == "arguments" ? plan.arguments : plan.results)
          .push_back(*type);
    }
  }
  for (const nlohmann::json &o : j["ops"]) {
    if (!o.is_object() || !o.contains("op") || !o["op"].is_string())
      return errorf("plan '", plan.function, "': every op needs an \"op\"");
    std::optional<PlanOpKind> kind = parseKind(o["op"].get<std::string>());
    if (!kind)
      return errorf("plan '", plan.function, "': unknown op \"",
                    o["op"].get<std::string>(), "\"");
    PlanOp op;
    op.kind = *kind;
    if (o.contains("result")) {
      std::optional<int32_t> result = slotFromJson(o["result"]);
      if (!result)
        return errorf("plan '", plan.function, "': bad \"result\"");
      op.result = *result;
    }
    if (o.contains("operands")) {
      if (!o["operands"].is_array())
        return errorf("plan '", plan.function, "': bad \"operands\"");
      for (const nlohmann::json &v : o["operands"]) {
        std::optional<int32_t> operand = slotFromJson(v);
        if (!operand)
          return errorf("plan '", plan.function, "': bad operand ", v.dump());
        op.operands.push_back(*operand);
      }
    }
    if (o.contains("imm")) {
      if (!o["imm"].is_number_integer())
        return errorf("plan '", plan.function, "': bad \"imm\"");
      op.imm = o["imm"].get<int64_t>();
    }
    if (o.contains("dtype")) {
      std::optional<DType> dtype =
          o["dtype"].is_string() ? parseDType(o["dtype"].get<std::string>())
                                 : std::nullopt;
      if (!dtype)
        return errorf("plan '", plan.function, "': bad \"dtype\"");
      op.dtype = *dtype;
    }
    if (o.contains("kernel")) {
      if (!o["kernel"].is_string())
        return errorf("plan '", plan.function, "': bad \"kernel\"");
      op.kernel = o["kernel"].get<std::string>();
    }
    if (o.contains("block")) {
      const nlohmann::json &b = o["block"];
      if (!b.is_array() || b.size() != 3 || !b[0].is_number_integer() ||
          !b[1].is_number_integer() || !b[2].is_number_integer())
        return errorf("plan '", plan.function,
                      "': \"block\" must be three integers");
      op.block = {b[0].get<int64_t>(), b[1].get<int64_t>(),
                  b[2].get<int64_t>()};
    }
    plan.ops.push_back(std::move(op));
  }
  ATTN_RETURN_IF_ERROR(plan.verify());
  return plan;
}

} // namespace attn::runtime
