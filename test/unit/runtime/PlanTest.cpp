//===- PlanTest.cpp - Plan JSON, verification and the runner -------------===//

#include "runtime/bundle/Plan.h"
#include "runtime/device/PlanRunner.h"
#include "test/unit/runtime/HostDevice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace attn;
using namespace attn::runtime;
using namespace attn::runtime::test;
using ::testing::HasSubstr;

namespace {

PlanOp makeOp(PlanOpKind kind, int32_t result, std::vector<int32_t> operands,
              int64_t imm = 0) {
  PlanOp op;
  op.kind = kind;
  op.result = result;
  op.operands = std::move(operands);
  op.imm = imm;
  return op;
}

PlanOp makeAlloc(int32_t result, std::vector<int32_t> shape, DType dtype) {
  PlanOp op = makeOp(PlanOpKind::Alloc, result, std::move(shape));
  op.dtype = dtype;
  return op;
}

/// out[i] = x[i] * 2 for i < params[0]: the shape of every attn host
/// program (sizes from dims, a params buffer, an output alloc, one launch).
Plan doublePlan() {
  Plan p;
  p.function = "double";
  p.arguments = {{DType::F32, {-1, 4}}};
  p.results = {{DType::F32, {-1, 4}}};
  p.numSlots = 9;
  PlanOp launch = makeOp(PlanOpKind::Launch, -1, {3, 5, 5, 8, 4, 6});
  launch.kernel = "k::double";
  p.ops = {
      makeOp(PlanOpKind::Dim, 1, {0}, 0), // rows
      makeOp(PlanOpKind::Const, 2, {}, 4),
      makeOp(PlanOpKind::Mul, 3, {1, 2}), // n = rows * 4
      makeAlloc(4, {1, 2}, DType::F32),
      makeOp(PlanOpKind::Const, 5, {}, 1),
      makeAlloc(6, {5}, DType::I32), // params
      makeOp(PlanOpKind::Const, 7, {}, 0),
      makeOp(PlanOpKind::Store, -1, {6, 7, 3}), // params[0] = n
      makeOp(PlanOpKind::View, 8, {0, 3}),      // x as [n]
      launch,
      makeOp(PlanOpKind::Return, -1, {4}),
  };
  return p;
}

/// The double kernel's relations: it reads x[i] and writes y[i] for i <
/// params[0] (n); its grid is n.
const char *kDoubleFacts =
    R"({"bounds":{"params":["n"],"arguments":["x","y","params"],"checks":[)"
    R"({"of":["p0"],"times":4,"plus":0,"min":0,"max":"bytes0"},)"
    R"({"of":["p0"],"times":4,"plus":0,"min":0,"max":"bytes1"},)"
    R"({"of":["g0"],"times":1,"plus":0,"min":0,"max":"p0"},)"
    R"({"of":[],"times":0,"plus":4,"min":0,"max":"bytes2"}]}})";

void addDoubleKernel(HostDevice &d, std::string facts = kDoubleFacts) {
  Status s = d.addKernel(
      "k::double",
      [](const std::array<uint32_t, 3> &grid,
         std::span<const BufferView> args) {
        int32_t n = hostData<int32_t>(args[2])[0];
        ASSERT_LE(static_cast<int64_t>(grid[0]), n);
        ASSERT_LE(uint64_t(n) * 4, args[0].bytes);
        ASSERT_LE(uint64_t(n) * 4, args[1].bytes);
        for (int32_t i = 0; i < n; ++i)
          hostData<float>(args[1])[i] = hostData<float>(args[0])[i] * 2;
      },
      std::move(facts));
  ASSERT_TRUE(s) << s.message();
}

} // namespace

TEST(Plan, JsonRoundTrip) {
  Plan p = doublePlan();
  ASSERT_TRUE(p.verify()) << p.verify().message();
  Result<Plan> back = planFromJson(planToJson(p));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
}

TEST(Plan, RunsOnADevice) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {3, 4});
  for (int64_t i = 0; i < 12; ++i)
    x.setFloat(i, i - 5.5);
  PlanRunStats stats;
  Result<std::vector<Tensor>> out =
      runPlan(doublePlan(), device, std::span<const Tensor>(&x, 1), &stats);
  ASSERT_TRUE(out) << out.message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{3, 4}));
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ((*out)[0].getFloat(i), 2 * (i - 5.5));
  EXPECT_EQ(stats.launches, 1);
}

// On device tensors, a run moves nothing to the host and only the params
// (here one i32) to the device; the result stays on the device.
TEST(Plan, RunsOnDeviceTensorsMovingOnlyTheParams) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {3, 4});
  for (int64_t i = 0; i < 12; ++i)
    x.setFloat(i, i);
  Result<DeviceTensor> dx = toDevice(device, x);
  ASSERT_TRUE(dx) << dx.message();
  device.resetTransfers();
  Result<std::vector<DeviceTensor>> out = runPlan(
      doublePlan(), device, std::span<const DeviceTensor>(&*dx, 1));
  ASSERT_TRUE(out) << out.message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].device, &device);
  EXPECT_EQ(device.transfers().bytesToHost, 0u);
  EXPECT_EQ(device.transfers().bytesToDevice, 4u);
  Result<Tensor> back = toHost((*out)[0]);
  ASSERT_TRUE(back) << back.message();
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(back->getFloat(i), 2 * i);

  // A tensor of another device is refused.
  HostDevice other;
  Result<DeviceTensor> elsewhere = toDevice(other, x);
  Result<std::vector<DeviceTensor>> refused = runPlan(
      doublePlan(), device, std::span<const DeviceTensor>(&*elsewhere, 1));
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.message(), HasSubstr("on another device"));
}

TEST(Plan, EmptyGridSkipsTheLaunch) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {0, 4});
  Result<std::vector<Tensor>> out =
      runPlan(doublePlan(), device, std::span<const Tensor>(&x, 1));
  ASSERT_TRUE(out) << out.message();
  EXPECT_TRUE(device.launched.empty());
  EXPECT_EQ((*out)[0].numElements(), 0);
}

TEST(Plan, RejectsWrongInputs) {
  HostDevice device;
  Tensor wrongDtype(DType::F16, {3, 4});
  Result<std::vector<Tensor>> r =
      runPlan(doublePlan(), device, std::span<const Tensor>(&wrongDtype, 1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "argument #0 of @double: expected f32, got f16");

  Tensor wrongShape(DType::F32, {3, 5});
  r = runPlan(doublePlan(), device, std::span<const Tensor>(&wrongShape, 1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(),
            "argument #0 of @double: expected shape [?, 4], got [3, 5]");

  r = runPlan(doublePlan(), device, std::span<const Tensor>());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "@double takes 1 arguments, got 0");
  EXPECT_EQ(device.allocations, 0) << "nothing is allocated for bad inputs";
}

TEST(Plan, ReportsAMissingKernel) {
  HostDevice device;
  Tensor x(DType::F32, {2, 4});
  Result<std::vector<Tensor>> r =
      runPlan(doublePlan(), device, std::span<const Tensor>(&x, 1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "@double op #9 (launch): no kernel is loaded under "
                         "the symbol k::double on host");
}

/// doublePlan with `n` stored as params[0] instead of rows * 4.
Plan storingParam(int64_t n) {
  Plan p = doublePlan();
  p.numSlots = 10;
  p.ops.insert(p.ops.begin() + 7, makeOp(PlanOpKind::Const, 9, {}, n));
  p.ops[8].operands = {6, 7, 9};
  return p;
}

// A crafted plan that passes the kernel a count past its buffers is
// refused before the device sees the launch, naming the kernel, the
// parameter and the argument (issue 34, item 3).
TEST(Plan, RefusesParamsPastTheBoundBuffers) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {2, 4});
  Result<std::vector<Tensor>> r =
      runPlan(storingParam(1 << 20), device, {&x, 1});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(),
            "@double op #10 (launch): kernel k::double: parameter p0 (n) = "
            "1048576 reaches past the bytes of argument #0 (x): 0 + 4 * p0 = "
            "4194304 exceeds 32");
  EXPECT_TRUE(device.launched.empty());
}

TEST(Plan, RefusesAGridPastItsParams) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {2, 4});
  Plan p = doublePlan();
  // grid.x = rows * 4 + 1 from a new slot.
  p.numSlots = 11;
  p.ops.insert(p.ops.begin() + 3, makeOp(PlanOpKind::Const, 9, {}, 1));
  p.ops.insert(p.ops.begin() + 4, makeOp(PlanOpKind::Add, 10, {3, 9}));
  p.ops[11].operands[0] = 10;
  ASSERT_EQ(p.ops[11].kind, PlanOpKind::Launch);
  Result<std::vector<Tensor>> r = runPlan(p, device, {&x, 1});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.message(),
              HasSubstr("kernel k::double: grid.x = 9 reaches past parameter "
                        "p0 (n): 0 + 1 * g0 = 9 exceeds 8"));
  EXPECT_TRUE(device.launched.empty());
}

TEST(Plan, RefusesParamsItCannotRead) {
  Tensor x(DType::F32, {2, 4});
  {
    // The params buffer is the caller's argument: its values are unknown.
    HostDevice device;
    addDoubleKernel(device);
    Plan p = doublePlan();
    p.ops[9].operands.back() = 0;
    Result<std::vector<Tensor>> r = runPlan(p, device, {&x, 1});
    ASSERT_FALSE(r);
    EXPECT_THAT(r.message(), HasSubstr("must be an i32 params buffer that the "
                                       "plan allocates and stores into, not "
                                       "argument #0"));
  }
  {
    // A negative count is refused, not read as a huge unsigned one.
    HostDevice device;
    addDoubleKernel(device);
    Result<std::vector<Tensor>> r = runPlan(storingParam(-5), device, {&x, 1});
    ASSERT_FALSE(r);
    EXPECT_THAT(r.message(),
                HasSubstr("kernel k::double: parameter p0 (n) = -5 is "
                          "negative"));
  }
  {
    // Facts without bounds: no launch of the kernel can be checked.
    HostDevice device;
    addDoubleKernel(device, "{}");
    Result<std::vector<Tensor>> r = runPlan(doublePlan(), device, {&x, 1});
    ASSERT_FALSE(r);
    EXPECT_THAT(r.message(), HasSubstr("declare no bounds"));
  }
}

TEST(Plan, VerifyRejectsMalformedPlans) {
  Plan p = doublePlan();
  p.ops[2].operands = {1, 0}; // an integer op reading a buffer
  EXPECT_EQ(p.verify().message(),
            "plan 'double', op #2 (mul): operand #1 (slot 0) is a buffer, "
            "expected an integer");

  p = doublePlan();
  p.ops[1].result = 1; // written twice
  EXPECT_EQ(p.verify().message(),
            "plan 'double', op #1 (const): slot 1 is written twice");

  p = doublePlan();
  std::swap(p.ops[0], p.ops[1]);
  p.ops[0].operands = {1, 1};
  p.ops[0].kind = PlanOpKind::Add;
  EXPECT_EQ(p.verify().message(),
            "plan 'double', op #0 (add): operand #0 reads slot 1 before it "
            "is written");

  p = doublePlan();
  p.ops.pop_back();
  EXPECT_EQ(p.verify().message(), "plan 'double' does not end with a return");

  p = doublePlan();
  p.ops[9].block = {0, 1, 1};
  EXPECT_EQ(p.verify().message(), "plan 'double', op #9 (launch): workgroup "
                                  "size must be positive, got 0");
}

TEST(Plan, JsonErrorsAreValues) {
  EXPECT_EQ(planFromJson("{").message(), "plan: malformed JSON");
  EXPECT_EQ(planFromJson("[]").message(),
            "plan: expected an object with \"function\", \"num_slots\", "
            "\"ops\"");
  EXPECT_EQ(planFromJson(R"({"function": 3, "num_slots": 1, "ops": []})")
                .message(),
            "plan: \"function\" must be a string, \"num_slots\" an integer "
            "and \"ops\" an array");
  EXPECT_EQ(planFromJson(R"({"function": "f", "num_slots": 1, "ops": [],
                              "arguments": [], "results": []})")
                .message(),
            "plan 'f' does not end with a return");
  EXPECT_EQ(planFromJson(R"({"function": "f", "num_slots": 1,
                              "ops": [{"op": "jump"}],
                              "arguments": [], "results": []})")
                .message(),
            "plan 'f': unknown op \"jump\"");
  EXPECT_EQ(planFromJson(R"({"function": "f", "num_slots": 1, "ops": [],
              "arguments": [{"dtype": "f8", "shape": [1]}], "results": []})")
                .message(),
            "plan 'f': unknown dtype \"f8\"");
}

// A damaged plan is refused before anything is allocated for it: a slot
// count of 2^31 - 1 once threw std::bad_alloc out of loadBundle, and slot
// numbers past 32 bits wrapped onto valid slots.
TEST(Plan, SizesAndSlotsAreBounded) {
  EXPECT_EQ(planFromJson(R"({"function": "f", "num_slots": 2147483647,
                              "ops": [], "arguments": [], "results": []})")
                .message(),
            "plan 'f': \"num_slots\" must be in [0, 65536), got 2147483647");
  EXPECT_EQ(planFromJson(R"({"function": "f", "num_slots": 2,
                              "ops": [{"op": "return",
                                       "operands": [4294967296]}],
                              "arguments": [], "results": []})")
                .message(),
            "plan 'f': bad operand 4294967296");
  Plan p = doublePlan();
  p.numSlots = kMaxPlanSlots + 1;
  EXPECT_EQ(p.verify().message(),
            "plan 'double': 65537 slots and 11 ops; a plan has at most 65536 "
            "slots and 65536 ops");
}

// Size arithmetic is checked: an element count that wraps (a view of
// [2^62 + 1] f32 once passed the size check and wrote past its buffer) or an
// integer op that overflows is an error, and nothing is launched.
TEST(Plan, SizeArithmeticIsChecked) {
  HostDevice device;
  addDoubleKernel(device);
  Tensor x(DType::F32, {2, 4});

  Plan p = doublePlan();
  p.ops[1].imm = (int64_t{1} << 62) + 1; // n = rows * (2^62 + 1)
  Result<std::vector<Tensor>> r = runPlan(p, device, {&x, 1});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "@double op #2 (mul): mul of 2 and 4611686018427387905 "
                         "overflows");

  Plan view;
  view.function = "view";
  view.arguments = {{DType::F32, {-1, 4}}};
  view.results = {{DType::F32, {-1}}};
  view.numSlots = 3;
  view.ops = {makeOp(PlanOpKind::Const, 1, {}, (int64_t{1} << 62) + 1),
              makeOp(PlanOpKind::View, 2, {0, 1}),
              makeOp(PlanOpKind::Return, -1, {2})};
  r = runPlan(view, device, {&x, 1});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "@view op #1 (view): a tensor of shape "
                         "[4611686018427387905] and 4-byte elements would "
                         "exceed the limit of 1099511627776 bytes");
  EXPECT_TRUE(device.launched.empty());
}
