//===- PlanRunner.cpp - Runs a plan on a device --------------------------===//

#include "runtime/PlanRunner.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

namespace attn::runtime {

std::string SubgroupSizes::describe() const {
  if (native == 0)
    return "any";
  std::string text = std::to_string(native);
  if (min != native || max != native)
    text += " (can pin " + std::to_string(min) + " to " + std::to_string(max) +
            ")";
  return text;
}


namespace {

/// A buffer slot: a device allocation seen with an element type and shape.
/// Views share the allocation.
struct BufferValue {
  std::shared_ptr<DeviceBuffer> buffer;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  /// The bytes of the shape, checked: a plan computes shapes from its
  /// inputs, and a damaged one must not wrap around.
  Result<uint64_t> numBytes() const { return tensorBytes(dtype, shape); }
  /// Only for shapes numBytes() accepted.
  int64_t numElements() const {
    return static_cast<int64_t>(*numBytes() / byteWidth(dtype));
  }
};

struct Slot {
  std::optional<int64_t> integer;
  std::optional<BufferValue> buffer;
};

/// Host-side contents of buffers the plan stores into (params buffers),
/// written to the device before the next launch that reads them.
struct PendingWrites {
  std::map<DeviceBuffer *, std::vector<uint8_t>> contents;
  std::map<DeviceBuffer *, bool> dirty;

  std::vector<uint8_t> &hostCopy(DeviceBuffer *b) {
    auto [it, inserted] = contents.try_emplace(b);
    if (inserted)
      it->second.assign(b->size(), 0);
    return it->second;
  }
  Status flush(PlanDevice &device, DeviceBuffer *b) {
    auto it = dirty.find(b);
    if (it == dirty.end() || !it->second)
      return Status::ok();
    it->second = false;
    std::vector<uint8_t> &bytes = contents[b];
    return device.write(*b, bytes.data(), bytes.size());
  }
};

Result<int64_t> evalBinary(PlanOpKind kind, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int64_t r = 0;
  bool overflow = false;
  switch (kind) {
  case PlanOpKind::Add:
    overflow = __builtin_add_overflow(a, b, &r);
    break;
  case PlanOpKind::Sub:
    overflow = __builtin_sub_overflow(a, b, &r);
    break;
  case PlanOpKind::Mul:
    overflow = __builtin_mul_overflow(a, b, &r);
    break;
  case PlanOpKind::MinU:
    return static_cast<int64_t>(std::min(ua, ub));
  case PlanOpKind::MaxU:
    return static_cast<int64_t>(std::max(ua, ub));
  default:
    break;
  }
  if (kind == PlanOpKind::Add || kind == PlanOpKind::Sub ||
      kind == PlanOpKind::Mul) {
    if (overflow)
      return errorf(toString(kind), " of ", a, " and ", b, " overflows");
    return r;
  }
  if (ub == 0)
    return errorf(toString(kind), " by zero");
  switch (kind) {
  case PlanOpKind::DivU:
    return static_cast<int64_t>(ua / ub);
  case PlanOpKind::RemU:
    return static_cast<int64_t>(ua % ub);
  case PlanOpKind::CeilDivU:
    return static_cast<int64_t>((ua + ub - 1) / ub);
  default:
    return errorf("not a binary op: ", toString(kind));
  }
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") +
         (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

} // namespace

Status checkPlanInputs(const Plan &plan, std::span<const Tensor> inputs) {
  if (inputs.size() != plan.arguments.size())
    return errorf("@", plan.function, " takes ", plan.arguments.size(),
                  " arguments, got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PlanTensorType &want = plan.arguments[i];
    const Tensor &got = inputs[i];
    if (got.dtype() != want.dtype)
      return errorf("argument #", i, " of @", plan.function, ": expected ",
                    toString(want.dtype), ", got ", toString(got.dtype()));
    bool shapeOk = got.rank() == static_cast<int64_t>(want.shape.size());
    for (size_t d = 0; shapeOk && d < want.shape.size(); ++d)
      shapeOk = want.shape[d] < 0 || want.shape[d] == got.dim(d);
    if (!shapeOk)
      return errorf("argument #", i, " of @", plan.function,
                    ": expected shape ", shapeString(want.shape), ", got ",
                    shapeString(got.shape()));
  }
  return Status::ok();
}

Result<std::vector<Tensor>> runPlan(const Plan &plan, PlanDevice &device,
                                    std::span<const Tensor> inputs,
                                    PlanRunStats *stats) {
  ATTN_RETURN_IF_ERROR(plan.verify());
  ATTN_RETURN_IF_ERROR(checkPlanInputs(plan, inputs));

  std::vector<Slot> slots(plan.numSlots);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Result<std::shared_ptr<DeviceBuffer>> buffer =
        device.allocate(std::max<uint64_t>(inputs[i].numBytes(), 4));
    if (!buffer)
      return errorf("allocating argument #", i, ": ", buffer.message());
    ATTN_RETURN_IF_ERROR(
        device.write(**buffer, inputs[i].data(), inputs[i].numBytes()));
    slots[i].buffer = BufferValue{*buffer, inputs[i].dtype(),
                                  inputs[i].shape()};
  }

  PendingWrites pending;
  PlanRunStats local;
  std::optional<std::chrono::steady_clock::time_point> firstLaunch;
  auto integer = [&](int32_t s) { return *slots[s].integer; };
  auto shapeFrom = [&](const PlanOp &op, size_t first) {
    std::vector<int64_t> shape;
    for (size_t i = first; i < op.operands.size(); ++i)
      shape.push_back(integer(op.operands[i]));
    return shape;
  };

  for (size_t n = 0; n < plan.ops.size(); ++n) {
    const PlanOp &op = plan.ops[n];
    auto fail = [&](const auto &...parts) {
      return errorf("@", plan.function, " op #", n, " (", toString(op.kind),
                    "): ", parts...);
    };
    switch (op.kind) {
    case PlanOpKind::Dim: {
      const BufferValue &b = *slots[op.operands[0]].buffer;
      if (op.imm < 0 || op.imm >= static_cast<int64_t>(b.shape.size()))
        return fail("dimension ", op.imm, " of a rank-", b.shape.size(),
                    " buffer");
      slots[op.result].integer = b.shape[op.imm];
      break;
    }
    case PlanOpKind::Const:
      slots[op.result].integer = op.imm;
      break;
    case PlanOpKind::Alloc: {
      BufferValue b;
      b.dtype = op.dtype;
      b.shape = shapeFrom(op, 0);
      Result<uint64_t> bytes = b.numBytes();
      if (!bytes)
        return fail(bytes.message());
      Result<std::shared_ptr<DeviceBuffer>> buffer =
          device.allocate(std::max<uint64_t>(*bytes, 4));
      if (!buffer)
        return fail(buffer.message());
      b.buffer = *buffer;
      slots[op.result].buffer = std::move(b);
      break;
    }
    case PlanOpKind::View: {
      BufferValue b = *slots[op.operands[0]].buffer;
      uint64_t before = *b.numBytes();
      b.shape = shapeFrom(op, 1);
      Result<uint64_t> after = b.numBytes();
      if (!after)
        return fail(after.message());
      if (*after > before)
        return fail("a view of ", before, " bytes cannot show ", *after);
      slots[op.result].buffer = std::move(b);
      break;
    }
    case PlanOpKind::Store: {
      const BufferValue &b = *slots[op.operands[0]].buffer;
      int64_t index = integer(op.operands[1]), value = integer(op.operands[2]);
      if (index < 0 || index >= b.numElements())
        return fail("element ", index, " of a buffer of ", b.numElements());
      std::vector<uint8_t> &host = pending.hostCopy(b.buffer.get());
      uint8_t *at = host.data() + index * byteWidth(b.dtype);
      if (b.dtype == DType::I32) {
        if (value < std::numeric_limits<int32_t>::min() ||
            value > std::numeric_limits<int32_t>::max())
          return fail("value ", value, " does not fit an i32 parameter");
        auto v = static_cast<int32_t>(value);
        std::memcpy(at, &v, sizeof v);
      } else if (b.dtype == DType::I64) {
        std::memcpy(at, &value, sizeof value);
      } else {
        return fail("stores go to i32 or i64 buffers, got ",
                    toString(b.dtype));
      }
      pending.dirty[b.buffer.get()] = true;
      break;
    }
    case PlanOpKind::Launch: {
      std::array<uint32_t, 3> grid;
      bool empty = false;
      for (int i = 0; i < 3; ++i) {
        int64_t g = integer(op.operands[i]);
        if (g < 0 || g > std::numeric_limits<uint32_t>::max())
          return fail("grid dimension ", g, " out of range for ", op.kernel);
        grid[i] = static_cast<uint32_t>(g);
        empty |= g == 0;
      }
      // A batch without tokens (or heads) has nothing to compute.
      if (empty)
        break;
      std::vector<DeviceBuffer *> args;
      for (size_t i = 3; i < op.operands.size(); ++i) {
        DeviceBuffer *b = slots[op.operands[i]].buffer->buffer.get();
        ATTN_RETURN_IF_ERROR(pending.flush(device, b));
        args.push_back(b);
      }
      if (!firstLaunch)
        firstLaunch = std::chrono::steady_clock::now();
      Status launched = device.launch(op.kernel, grid, op.block, args);
      if (!launched)
        return fail(launched.message());
      ++local.launches;
      break;
    }
    case PlanOpKind::Return: {
      ATTN_RETURN_IF_ERROR(device.finish());
      if (firstLaunch)
        local.kernelSeconds = std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() -
                                  *firstLaunch)
                                  .count();
      std::vector<Tensor> results;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const BufferValue &b = *slots[op.operands[i]].buffer;
        const PlanTensorType &want = plan.results[i];
        if (b.dtype != want.dtype)
          return fail("result #", i, " is ", toString(b.dtype),
                      ", the function returns ", toString(want.dtype));
        Result<Tensor> t = Tensor::create(b.dtype, b.shape);
        if (!t)
          return fail("result #", i, ": ", t.message());
        ATTN_RETURN_IF_ERROR(
            device.read(*b.buffer, t->data(), t->numBytes()));
        results.push_back(std::move(*t));
      }
      if (stats)
        *stats = local;
      return results;
    }
    default: {
      Result<int64_t> v =
          evalBinary(op.kind, integer(op.operands[0]), integer(op.operands[1]));
      if (!v)
        return fail(v.message());
      slots[op.result].integer = *v;
      break;
    }
    }
  }
  return errorf("@", plan.function, ": plan ended without a return");
}

} // namespace attn::runtime
