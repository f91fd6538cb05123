//===- PlanFuzzer.cpp - Fuzz target: crafted plans against bound buffers --===//
//
// Input: a bundle manifest with edits to its plans, and argument bytes —
//
//   <manifest.json>
//   #edits
//   <8 bytes per edit>
//   #inputs
//   <bytes that pick the plan arguments' dynamic sizes and contents>
//
// The manifest is parsed as the runtime parses one (manifestFromJson); a
// "manifest_hash" of "restamp" gets its true hash (Restamp.h), so the
// target stands where an attacker who edits and re-stamps a bundle stands
// (issue 34, item 3). Each edit changes one value
// of a plan: an op's immediate, an operand's slot, a new constant as an
// operand (a stored param, a grid dimension, a view's size), or a launch's
// workgroup size. Every plan then runs (runPlan) on a device that models
// what each kernel may touch: from the params the kernel receives (read
// from device memory, not from the runner) and its grid, the extent of
// every argument its launch bounds relate (core/LaunchBounds.h). The
// property: a plan is refused with a Status, or every relation holds and
// every extent lies inside the bound view; the model aborts otherwise, and
// touches every byte of each extent (ASan: inside the allocation).
//
//===----------------------------------------------------------------------===//

#include "core/LaunchBounds.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/HostMemory.h"
#include "runtime/device/PlanRunner.h"
#include "test/fuzz/FuzzInput.h"
#include "test/fuzz/PlanInputs.h"
#include "test/fuzz/Restamp.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

using namespace attn;
using namespace attn::runtime;
using attn::fuzz::FuzzInput;

namespace {

constexpr uint64_t kMaxDeviceBytes = uint64_t{1} << 26;

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "plan fuzzer: %s\n", what.c_str());
  std::abort();
}

/// Host memory whose kernels are the model: what a kernel with those
/// launch bounds may touch, checked and touched.
class ModelDevice : public HostMemoryDevice {
public:
  std::string_view name() const override { return "model"; }
  Status loadKernelCode(const Bundle &, const BundleKernel &k,
                        std::string_view) override {
    Result<std::optional<LaunchBounds>> b = readLaunchBoundsMember(k.launchJson);
    if (b && *b)
      bounds_[k.symbol] = **b;
    return Status::ok();
  }

protected:
  Result<std::shared_ptr<DeviceBuffer>>
  allocateBuffer(uint64_t bytes) override {
    if (bytes > kMaxDeviceBytes)
      return errorf("out of device memory for ", bytes, " bytes");
    return HostMemoryDevice::allocateBuffer(bytes);
  }
  Status enqueueLaunch(std::string_view kernel,
                       const std::array<uint32_t, 3> &grid,
                       const std::array<int64_t, 3> &,
                       std::span<const BufferView> args) override {
    auto it = bounds_.find(std::string(kernel));
    if (it == bounds_.end())
      fail("launched " + std::string(kernel) + ", which declares no bounds");
    run(it->second, kernel, grid, args);
    return Status::ok();
  }

private:
  /// A param as the kernel reads it: from its params buffer on the device.
  static uint64_t param(const LaunchBounds &b, int64_t k,
                        std::span<const BufferView> args,
                        std::string_view kernel) {
    if (args.empty())
      fail(std::string(kernel) + " reads params but has no arguments");
    const BufferView &params = args.back();
    if (uint64_t(k + 1) * 4 > params.bytes)
      fail(std::string(kernel) + " reads param " + std::to_string(k) +
           " past its params buffer of " + std::to_string(params.bytes) +
           " bytes");
    int32_t v;
    std::memcpy(&v, bytesOf(params) + 4 * k, 4);
    if (v < 0)
      fail(std::string(kernel) + " got the negative param " +
           std::to_string(k) + " = " + std::to_string(v));
    return uint64_t(v);
  }

  static unsigned __int128 value(const LaunchBounds &b, LaunchQuantity q,
                                 const std::array<uint32_t, 3> &grid,
                                 std::span<const BufferView> args,
                                 std::string_view kernel) {
    switch (q.kind) {
    case LaunchQuantity::Kind::Param:
      return param(b, q.index, args, kernel);
    case LaunchQuantity::Kind::Grid:
      return grid[q.index];
    case LaunchQuantity::Kind::Bytes:
      if (size_t(q.index) >= args.size())
        fail(std::string(kernel) + " has no argument " +
             std::to_string(q.index));
      return args[q.index].bytes;
    case LaunchQuantity::Kind::Number:
      break;
    }
    return uint64_t(q.index);
  }

  void run(const LaunchBounds &b, std::string_view kernel,
           const std::array<uint32_t, 3> &grid,
           std::span<const BufferView> args) {
    for (const LaunchRelation &r : b.checks) {
      // Below 2^128: at most 8 factors of 32 bits would not be, so cap.
      unsigned __int128 product = 1;
      for (const LaunchQuantity &q : r.of) {
        product *= value(b, q, grid, args, kernel);
        if (product > std::numeric_limits<uint64_t>::max())
          fail(std::string(kernel) + ": a relation's product passed 2^64 "
                                     "and the runner let it launch");
      }
      unsigned __int128 extent = product * uint64_t(r.times) + uint64_t(r.plus);
      unsigned __int128 max = value(b, r.max, grid, args, kernel);
      if (extent > max || extent < uint64_t(r.min))
        fail(std::string(kernel) + ": the runner let a launch break " +
             describeQuantity(b, r.max) + " (extent " +
             std::to_string(uint64_t(extent)) + ")");
      if (r.max.kind != LaunchQuantity::Kind::Bytes)
        continue;
      // The kernel may touch every byte of the extent.
      uint8_t *bytes = bytesOf(args[r.max.index]);
      for (uint64_t i = 0; i < uint64_t(extent); ++i)
        bytes[i] = static_cast<uint8_t>(bytes[i] * 31 + 7);
    }
  }

  std::map<std::string, LaunchBounds> bounds_;
};

/// Values an edit picks from: the edges of every size's range.
constexpr int64_t kValues[] = {0,       1,          2,       3,
                               4,       7,          8,       16,
                               255,     1 << 16,    1 << 20, 2147483647,
                               -1,      -2147483648LL, int64_t{1} << 32,
                               std::numeric_limits<int64_t>::max()};

int64_t drawValue(FuzzInput &in) {
  uint8_t pick = in.take<uint8_t>();
  if (pick < std::size(kValues))
    return kValues[pick];
  return in.take<int32_t>();
}

/// Applies one 8-byte edit to `plan`.
void edit(Plan &plan, FuzzInput &in) {
  if (plan.ops.empty())
    return;
  PlanOp &op = plan.ops[in.take<uint16_t>() % plan.ops.size()];
  uint8_t what = in.take<uint8_t>() % 4;
  uint8_t at = in.take<uint8_t>();
  int64_t v = drawValue(in);
  switch (what) {
  case 0:
    op.imm = v;
    return;
  case 1:
    if (!op.operands.empty())
      op.operands[at % op.operands.size()] =
          static_cast<int32_t>(uint64_t(v) % uint64_t(plan.numSlots + 1));
    return;
  case 2: {
    if (op.operands.empty())
      return;
    // A new constant, as an attacker's edit adds one (tamper_plan.py).
    int32_t slot = plan.numSlots++;
    op.operands[at % op.operands.size()] = slot;
    PlanOp c;
    c.kind = PlanOpKind::Const;
    c.result = slot;
    c.imm = v;
    plan.ops.insert(plan.ops.begin(), c);
    return;
  }
  default:
    op.block[at % 3] = v;
  }
}

/// The text between `header` and the next section (or the end).
std::string_view section(std::string_view text, std::string_view header) {
  size_t at = text.find(header);
  if (at == std::string_view::npos)
    return {};
  text.remove_prefix(at + header.size());
  return text.substr(0, text.find("\n#inputs\n"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string_view manifest = text.substr(0, text.find("\n#edits\n"));
  std::string stamped = attn::fuzz::restamp(manifest);
  if (!stamped.empty())
    manifest = stamped;
  Result<Bundle> bundle = manifestFromJson(manifest, "fuzz.attnb");
  static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE");
  if (!bundle) {
    if (verbose)
      std::fprintf(stderr, "plan: not loaded: %s\n", bundle.message().c_str());
    return 0;
  }
  std::string_view editBytes = section(text, "\n#edits\n");
  std::string_view inputBytes = section(text, "\n#inputs\n");
  FuzzInput edits(reinterpret_cast<const uint8_t *>(editBytes.data()),
                  editBytes.size());
  FuzzInput in(reinterpret_cast<const uint8_t *>(inputBytes.data()),
               inputBytes.size());
  for (BundleVariant &v : bundle->variants) {
    if (v.plans.empty())
      continue;
    ModelDevice device;
    Status loaded = Status::ok();
    for (const BundleKernel &k : v.kernels)
      if (k.target != "tt" && loaded)
        loaded = device.loadKernel(*bundle, k, "");
    if (!loaded)
      continue;
    Plan &plan = v.plans.front();
    for (int i = 0; i < 4 && edits.remaining(); ++i)
      edit(plan, edits);
    std::vector<Tensor> inputs =
        attn::fuzz::drawPlanInputs(plan, in, kMaxDeviceBytes);
    if (inputs.size() != plan.arguments.size())
      continue;
    Result<std::vector<Tensor>> results = runPlan(plan, device, inputs);
    if (verbose)
      std::fprintf(stderr, "plan: %s: %s\n", plan.function.c_str(),
                   results ? "ran" : results.message().c_str());
  }
  return 0;
}
