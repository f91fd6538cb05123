//===- RecordedStepTest.cpp - Recording a step and replaying it ----------===//
//
// A step like an executor's: it stages a parameter (a host write into a
// fresh buffer), accumulates into a scratch buffer (which must start at
// zero) and copies the result into the caller's output. Replays must give
// what fresh runs give, and refuse a step that differs from the recording.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/RecordedStep.h"
#include "test/unit/runtime/HostDevice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::runtime {
namespace {

using test::hostData;
using test::HostDevice;
using ::testing::HasSubstr;

constexpr int64_t kN = 8;

class RecordedStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    // acc(in, params, scratch): scratch[i] += in[i] + params[0].
    device.kernels["k::acc"] = [](const std::array<uint32_t, 3> &,
                                  std::span<const BufferView> args) {
      const float *in = hostData<float>(args[0]);
      float add = hostData<float>(args[1])[0];
      float *scratch = hostData<float>(args[2]);
      for (int64_t i = 0; i < kN; ++i)
        scratch[i] += in[i] + add;
    };
    in = *allocateTensor(device, DType::F32, {kN});
    out = *allocateTensor(device, DType::F32, {kN});
  }

  /// The step, with `add` as its metadata; `grid` and `dst` let a test
  /// change what it enqueues.
  Status step(float add, uint32_t grid = 1, const DeviceTensor *dst = nullptr) {
    Tensor param(DType::F32, {1});
    param.setFloat(0, add);
    Result<DeviceTensor> staged = toDevice(device, param);
    if (!staged)
      return staged.status();
    Result<DeviceTensor> scratch = allocateTensor(device, DType::F32, {kN});
    if (!scratch)
      return scratch.status();
    BufferView args[] = {in.view(), staged->view(), scratch->view()};
    ATTN_RETURN_IF_ERROR(device.launch("k::acc", {grid, 1, 1}, {1, 1, 1}, args));
    return device.copy(scratch->view(), (dst ? *dst : out).view());
  }

  void setInput(float base) {
    Tensor t(DType::F32, {kN});
    for (int64_t i = 0; i < kN; ++i)
      t.setFloat(i, base + i);
    ASSERT_TRUE(upload(t, in));
  }

  std::vector<float> output() {
    Tensor t = *toHost(out);
    std::vector<float> v;
    for (int64_t i = 0; i < kN; ++i)
      v.push_back(static_cast<float>(t.getFloat(i)));
    return v;
  }

  HostDevice device;
  DeviceTensor in, out;
};

TEST_F(RecordedStepTest, ReplaysComputeWhatFreshRunsCompute) {
  setInput(1);
  ASSERT_TRUE(step(0.5f));
  std::vector<float> fresh = output();
  EXPECT_EQ(fresh[3], 4.5f);

  ASSERT_TRUE(upload(Tensor(DType::F32, {kN}), out));
  Result<std::unique_ptr<RecordedStep>> recorded =
      RecordedStep::record(device, [&] { return step(0.5f); });
  ASSERT_TRUE(recorded) << recorded.message();
  EXPECT_EQ((*recorded)->workItems(), 2u);
  EXPECT_EQ((*recorded)->allocations(), 2u);
  // Recording ran nothing.
  EXPECT_EQ(output()[3], 0.0f);

  int allocations = device.allocations;
  Status s = (*recorded)->replay([&] { return step(0.5f); });
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(output(), fresh);
  EXPECT_EQ(device.allocations, allocations) << "a replay allocates nothing";

  // New metadata and new input, twice: the scratch is zeroed each replay,
  // as a fresh allocation would be, so the results do not accumulate.
  setInput(10);
  ASSERT_TRUE((*recorded)->replay([&] { return step(2.0f); }));
  std::vector<float> replayed = output();
  ASSERT_TRUE((*recorded)->replay([&] { return step(2.0f); }));
  EXPECT_EQ(output(), replayed);
  ASSERT_TRUE(step(2.0f));
  EXPECT_EQ(output(), replayed) << "replay and fresh run differ";
  EXPECT_EQ(replayed[0], 12.0f);
  EXPECT_EQ(device.replays, 3);
}

TEST_F(RecordedStepTest, RefusesAStepThatDiffersAndRunsNothing) {
  setInput(1);
  auto recorded = RecordedStep::record(device, [&] { return step(1); });
  ASSERT_TRUE(recorded) << recorded.message();

  Status grid = (*recorded)->replay([&] { return step(1, 2); });
  ASSERT_FALSE(grid);
  EXPECT_THAT(grid.message(), HasSubstr("work #0 of the step (launch of "
                                        "k::acc) has another grid"));
  DeviceTensor other = *allocateTensor(device, DType::F32, {kN});
  Status dst = (*recorded)->replay([&] { return step(1, 1, &other); });
  ASSERT_FALSE(dst);
  EXPECT_THAT(dst.message(), HasSubstr("argument #1 of work #1 of the step "
                                       "(copy) is another buffer"));
  Status more = (*recorded)->replay([&]() -> Status {
    ATTN_RETURN_IF_ERROR(step(1));
    return step(1);
  });
  ASSERT_FALSE(more);
  EXPECT_THAT(more.message(), HasSubstr("more buffers than the recorded one"));
  EXPECT_EQ(device.replays, 0);
  EXPECT_EQ(output()[0], 0.0f);

  // A good replay still works afterwards.
  ASSERT_TRUE((*recorded)->replay([&] { return step(1); }));
  EXPECT_EQ(output()[0], 2.0f);
}

TEST_F(RecordedStepTest, RefusesReadsWaitsAndDevicesThatDoNotRecord) {
  Result<std::unique_ptr<RecordedStep>> reads =
      RecordedStep::record(device, [&]() -> Status {
        ATTN_RETURN_IF_ERROR(step(1));
        return toHost(out).status();
      });
  ASSERT_FALSE(reads);
  EXPECT_THAT(reads.message(),
              HasSubstr("a recorded step cannot read device memory"));
  auto waits = RecordedStep::record(device, [&] { return device.synchronize(); });
  ASSERT_FALSE(waits);
  EXPECT_THAT(waits.message(), HasSubstr("cannot wait for the device"));
  // The device is usable again afterwards.
  EXPECT_TRUE(device.synchronize());
  EXPECT_TRUE(toHost(out));

  device.recordable = false;
  auto refused = RecordedStep::record(device, [&] { return step(1); });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.message(), "host does not record steps for replay");
}

} // namespace
} // namespace attn::runtime
