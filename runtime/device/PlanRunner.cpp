//===- PlanRunner.cpp - Runs a plan on a device --------------------------===//

#include "runtime/device/PlanRunner.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace attn::runtime {

namespace {

/// A buffer slot: a device allocation seen from `offset` with an element
/// type and shape. Views share the allocation and the offset.
struct BufferValue {
  std::shared_ptr<DeviceBuffer> buffer;
  uint64_t offset = 0;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// The argument it came from, or -1 for a buffer the run allocated.
  int32_t argument = -1;

  /// The bytes of the shape, checked: a plan computes shapes from its
  /// inputs, and a damaged one must not wrap around.
  Result<uint64_t> numBytes() const { return tensorBytes(dtype, shape); }
  /// Only for shapes numBytes() accepted.
  int64_t numElements() const {
    return static_cast<int64_t>(*numBytes() / byteWidth(dtype));
  }
  BufferView view() const { return {buffer.get(), offset, *numBytes()}; }
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
    return device.write(*b, 0, bytes.data(), bytes.size());
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
    return static_cast<int64_t>(ua / ub + (ua % ub != 0));
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

/// The type check of one argument, whatever side of the bus it is on.
Status checkArgument(const Plan &plan, size_t i, DType dtype,
                     const std::vector<int64_t> &shape) {
  const PlanTensorType &want = plan.arguments[i];
  if (dtype != want.dtype)
    return errorf("argument #", i, " of @", plan.function, ": expected ",
                  toString(want.dtype), ", got ", toString(dtype));
  bool shapeOk = shape.size() == want.shape.size();
  for (size_t d = 0; shapeOk && d < want.shape.size(); ++d)
    shapeOk = want.shape[d] < 0 || want.shape[d] == shape[d];
  if (!shapeOk)
    return errorf("argument #", i, " of @", plan.function, ": expected shape ",
                  shapeString(want.shape), ", got ", shapeString(shape));
  return Status::ok();
}

Status checkCount(const Plan &plan, size_t count) {
  if (count != plan.arguments.size())
    return errorf("@", plan.function, " takes ", plan.arguments.size(),
                  " arguments, got ", count);
  return Status::ok();
}

} // namespace

Status checkPlanInputs(const Plan &plan, std::span<const Tensor> inputs) {
  ATTN_RETURN_IF_ERROR(checkCount(plan, inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    ATTN_RETURN_IF_ERROR(
        checkArgument(plan, i, inputs[i].dtype(), inputs[i].shape()));
  return Status::ok();
}

Status checkPlanInputs(const Plan &plan, std::span<const DeviceTensor> args) {
  ATTN_RETURN_IF_ERROR(checkCount(plan, args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    ATTN_RETURN_IF_ERROR(
        checkArgument(plan, i, args[i].dtype, args[i].shape));
    if (!args[i].defined() || !args[i].isContiguous())
      return errorf("argument #", i, " of @", plan.function, " (",
                    args[i].describe(), ") must be a contiguous device tensor");
    Result<uint64_t> bytes = tensorBytes(args[i].dtype, args[i].shape);
    if (!bytes)
      return errorf("argument #", i, " of @", plan.function, ": ",
                    bytes.message());
    if (args[i].offset > args[i].buffer->size() ||
        *bytes > args[i].buffer->size() - args[i].offset)
      return errorf("argument #", i, " of @", plan.function, " (",
                    args[i].describe(), ") reaches past its buffer of ",
                    args[i].buffer->size(), " bytes");
  }
  return Status::ok();
}

namespace {

/// One run of a plan: its slots, the params it has stored but not yet
/// written to the device, and its statistics. step() interprets one op.
class PlanRun {
public:
  PlanRun(const Plan &plan, PlanDevice &device,
          std::span<const DeviceTensor> args)
      : plan(plan), device(device), slots(plan.numSlots) {
    for (size_t i = 0; i < args.size(); ++i)
      slots[i].buffer = BufferValue{args[i].buffer, args[i].offset,
                                    args[i].dtype, args[i].shape,
                                    static_cast<int32_t>(i)};
  }

  /// Op `n`, any but a Return: its result in its slot, or the error naming
  /// it.
  Status step(size_t n);
  /// The results of op `n`, a Return, with the run's statistics in `stats`
  /// when given.
  Result<std::vector<DeviceTensor>> finish(size_t n, PlanRunStats *stats);

private:
  /// An error of the current op, prefixed with the function and the op.
  template <typename... Parts> Status fail(const Parts &...parts) const {
    const PlanOp &op = plan.ops[current];
    return errorf("@", plan.function, " op #", current, " (",
                  toString(op.kind), "): ", parts...);
  }
  int64_t integer(int32_t s) const { return *slots[s].integer; }
  /// The shape the integer operands from `first` on give.
  std::vector<int64_t> shapeFrom(const PlanOp &op, size_t first) const {
    std::vector<int64_t> shape;
    for (size_t i = first; i < op.operands.size(); ++i)
      shape.push_back(integer(op.operands[i]));
    return shape;
  }

  Status dim(const PlanOp &op);
  Status alloc(const PlanOp &op);
  Status view(const PlanOp &op);
  Status store(const PlanOp &op);
  Status launch(const PlanOp &op);
  /// The params a launch passes: its last argument as the run stored it.
  Result<std::vector<int32_t>> paramsOf(const PlanOp &op) const;
  /// The launch against the bounds its kernel's launch facts declare.
  Status checkBounds(const PlanOp &op, const std::array<uint32_t, 3> &grid,
                     std::span<const BufferView> args) const;

  const Plan &plan;
  PlanDevice &device;
  std::vector<Slot> slots;
  PendingWrites pending;
  /// Buffers bound to a launch other than as its params.
  std::set<const DeviceBuffer *> written;
  PlanRunStats local;
  std::optional<std::chrono::steady_clock::time_point> firstLaunch;
  size_t current = 0;
};

Status PlanRun::dim(const PlanOp &op) {
  const BufferValue &b = *slots[op.operands[0]].buffer;
  if (op.imm < 0 || op.imm >= static_cast<int64_t>(b.shape.size()))
    return fail("dimension ", op.imm, " of a rank-", b.shape.size(),
                " buffer");
  slots[op.result].integer = b.shape[op.imm];
  return Status::ok();
}

Status PlanRun::alloc(const PlanOp &op) {
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
  return Status::ok();
}

Status PlanRun::view(const PlanOp &op) {
  BufferValue b = *slots[op.operands[0]].buffer;
  uint64_t before = *b.numBytes();
  b.shape = shapeFrom(op, 1);
  Result<uint64_t> after = b.numBytes();
  if (!after)
    return fail(after.message());
  if (*after > before)
    return fail("a view of ", before, " bytes cannot show ", *after);
  slots[op.result].buffer = std::move(b);
  return Status::ok();
}

Status PlanRun::store(const PlanOp &op) {
  const BufferValue &b = *slots[op.operands[0]].buffer;
  int64_t index = integer(op.operands[1]), value = integer(op.operands[2]);
  // Stores fill the run's own params buffers, never the caller's.
  if (b.argument >= 0 || b.offset != 0)
    return fail("stores go to buffers the plan allocates, not to "
                "argument #",
                b.argument);
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
    return fail("stores go to i32 or i64 buffers, got ", toString(b.dtype));
  }
  pending.dirty[b.buffer.get()] = true;
  return Status::ok();
}

Status PlanRun::launch(const PlanOp &op) {
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
    return Status::ok();
  std::vector<BufferView> launchArgs;
  for (size_t i = 3; i < op.operands.size(); ++i) {
    const BufferValue &b = *slots[op.operands[i]].buffer;
    ATTN_RETURN_IF_ERROR(pending.flush(device, b.buffer.get()));
    launchArgs.push_back(b.view());
  }
  ATTN_RETURN_IF_ERROR(checkBounds(op, grid, launchArgs));
  // Kernels may write any argument but their params: such a buffer no
  // longer holds what the run knows of it.
  for (size_t i = 3; i + 1 < op.operands.size(); ++i)
    written.insert(slots[op.operands[i]].buffer->buffer.get());
  if (!firstLaunch)
    firstLaunch = std::chrono::steady_clock::now();
  Status launched = device.launch(op.kernel, grid, op.block, launchArgs);
  if (!launched)
    return fail(launched.message());
  ++local.launches;
  return Status::ok();
}

Result<std::vector<int32_t>> PlanRun::paramsOf(const PlanOp &op) const {
  const BufferValue &b = *slots[op.operands.back()].buffer;
  // The runner knows the contents of the buffers it allocated and stored
  // into, and only while no kernel may have written them.
  if (b.argument >= 0 || b.offset != 0 || b.dtype != DType::I32 ||
      written.count(b.buffer.get()))
    return fail("the last argument of ", op.kernel,
                " must be an i32 params buffer that the plan allocates and "
                "stores into, not ",
                b.argument >= 0 ? "argument #" + std::to_string(b.argument)
                : b.dtype != DType::I32
                    ? "a buffer of " + std::string(toString(b.dtype))
                    : "a buffer a kernel writes");
  std::vector<int32_t> params(*b.numBytes() / sizeof(int32_t), 0);
  auto it = pending.contents.find(b.buffer.get());
  if (it != pending.contents.end())
    std::memcpy(params.data(), it->second.data(),
                params.size() * sizeof(int32_t));
  return params;
}

Status PlanRun::checkBounds(const PlanOp &op,
                            const std::array<uint32_t, 3> &grid,
                            std::span<const BufferView> args) const {
  const KernelContract *contract = device.kernelContract(op.kernel);
  if (!contract)
    return fail("no kernel is loaded under the symbol ", op.kernel, " on ",
                device.name());
  if (!contract->bounds) {
    // A TT program takes no params; its device checks every buffer
    // against the grid's sizes.
    if (contract->target == "tt")
      return Status::ok();
    return fail("the launch facts of ", op.kernel,
                " declare no bounds, so no launch of it can be checked; "
                "recompile the bundle");
  }
  std::vector<int32_t> params;
  if (!contract->bounds->params.empty()) {
    if (args.empty())
      return fail(op.kernel, " is launched without its params buffer");
    Result<std::vector<int32_t>> stored = paramsOf(op);
    if (!stored)
      return stored.status();
    params = std::move(*stored);
  }
  std::vector<uint64_t> bytes;
  for (const BufferView &a : args)
    bytes.push_back(a.bytes);
  Status s = checkLaunchBounds(*contract->bounds, op.kernel,
                               {grid, bytes, params});
  return s ? s : fail(s.message());
}

Status PlanRun::step(size_t n) {
  current = n;
  const PlanOp &op = plan.ops[n];
  assert(op.kind != PlanOpKind::Return && "finish() runs the Return op");
  switch (op.kind) {
  case PlanOpKind::Dim:
    return dim(op);
  case PlanOpKind::Const:
    slots[op.result].integer = op.imm;
    return Status::ok();
  case PlanOpKind::Alloc:
    return alloc(op);
  case PlanOpKind::View:
    return view(op);
  case PlanOpKind::Store:
    return store(op);
  case PlanOpKind::Launch:
    return launch(op);
  default: {
    Result<int64_t> v =
        evalBinary(op.kind, integer(op.operands[0]), integer(op.operands[1]));
    if (!v)
      return fail(v.message());
    slots[op.result].integer = *v;
    return Status::ok();
  }
  }
}

Result<std::vector<DeviceTensor>> PlanRun::finish(size_t n,
                                                  PlanRunStats *stats) {
  current = n;
  const PlanOp &op = plan.ops[n];
  std::vector<DeviceTensor> results;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const BufferValue &b = *slots[op.operands[i]].buffer;
    const PlanTensorType &want = plan.results[i];
    if (b.dtype != want.dtype)
      return fail("result #", i, " is ", toString(b.dtype),
                  ", the function returns ", toString(want.dtype));
    DeviceTensor t;
    t.device = &device;
    t.buffer = b.buffer;
    t.offset = b.offset;
    t.dtype = b.dtype;
    t.shape = b.shape;
    results.push_back(std::move(t));
  }
  if (firstLaunch)
    local.kernelSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      *firstLaunch)
            .count();
  if (stats)
    *stats = local;
  return results;
}

} // namespace

Result<std::vector<DeviceTensor>> runPlan(const Plan &plan, PlanDevice &device,
                                          std::span<const DeviceTensor> args,
                                          PlanRunStats *stats) {
  ATTN_RETURN_IF_ERROR(plan.verify());
  ATTN_RETURN_IF_ERROR(checkPlanInputs(plan, args));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].device != &device)
      return args[i].device
                 ? errorf("argument #", i, " of @", plan.function,
                          " is on another device (", args[i].device->name(),
                          ") than the plan runs on (", device.name(), ")")
                 : errorf("argument #", i, " of @", plan.function,
                          " is on no device");
  PlanRun run(plan, device, args);
  for (size_t n = 0; n < plan.ops.size(); ++n) {
    if (plan.ops[n].kind == PlanOpKind::Return)
      return run.finish(n, stats);
    ATTN_RETURN_IF_ERROR(run.step(n));
  }
  return errorf("@", plan.function, ": plan ended without a return");
}

Result<std::vector<Tensor>> runPlan(const Plan &plan, PlanDevice &device,
                                    std::span<const Tensor> inputs,
                                    PlanRunStats *stats) {
  ATTN_RETURN_IF_ERROR(checkPlanInputs(plan, inputs));
  std::vector<DeviceTensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Result<DeviceTensor> t = toDevice(device, inputs[i]);
    if (!t)
      return errorf("argument #", i, " of @", plan.function, ": ",
                    t.message());
    args.push_back(std::move(*t));
  }
  Result<std::vector<DeviceTensor>> results =
      runPlan(plan, device, args, stats);
  if (!results)
    return results.status();
  auto start = std::chrono::steady_clock::now();
  ATTN_RETURN_IF_ERROR(device.synchronize());
  if (stats && stats->launches)
    stats->kernelSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  std::vector<Tensor> host;
  for (size_t i = 0; i < results->size(); ++i) {
    Result<Tensor> t = toHost((*results)[i]);
    if (!t)
      return errorf("result #", i, " of @", plan.function, ": ", t.message());
    host.push_back(std::move(*t));
  }
  return host;
}

} // namespace attn::runtime
