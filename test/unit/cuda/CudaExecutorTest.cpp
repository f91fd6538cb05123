//===- CudaExecutorTest.cpp - The CUDA executor without (and with) a GPU --===//

#include "devices/cuda/CudaKernelABI.h"
#include "devices/cuda/CudaPlanDevice.h"
#include "runtime/device/RecordedStep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <dlfcn.h>
#include <vector>

using namespace attn;
using namespace attn::cuda;

namespace {

bool hasSubstring(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(CudaPlanDevice, MissingDriverIsAnError) {
  CudaOptions options;
  options.driverLibrary = "libattn-no-such-driver.so.1";
  Result<std::unique_ptr<CudaPlanDevice>> device =
      CudaPlanDevice::create(options);
  ASSERT_FALSE(device);
  EXPECT_TRUE(hasSubstring(
      device.message(), "no CUDA driver (libattn-no-such-driver.so.1) found"))
      << device.message();
}

TEST(CudaPlanDevice, DefaultDriverOrClearError) {
  Result<std::unique_ptr<CudaPlanDevice>> device = CudaPlanDevice::create();
  if (!device) {
    // This machine has no driver or no GPU: the message says which.
    EXPECT_TRUE(
        hasSubstring(device.message(), "no CUDA driver (libcuda.so.1)") ||
        hasSubstring(device.message(), "CUDA"))
        << device.message();
    GTEST_SKIP() << "no CUDA device here: " << device.message();
  }
  EXPECT_GE((*device)->info().computeMajor, 5);
  EXPECT_EQ((*device)->info().chip().rfind("sm_", 0), 0u);
  // Buffers round-trip and start zeroed, without any kernel.
  Result<std::shared_ptr<runtime::DeviceBuffer>> buffer =
      (*device)->allocate(64);
  ASSERT_TRUE(buffer) << buffer.message();
  std::vector<uint8_t> zeros(64, 1), data(64), back(64);
  ASSERT_TRUE((*device)->read(**buffer, 0, zeros.data(), 64));
  EXPECT_EQ(zeros, std::vector<uint8_t>(64, 0));
  for (int i = 0; i < 64; ++i)
    data[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE((*device)->write(**buffer, 0, data.data(), 64));
  ASSERT_TRUE((*device)->read(**buffer, 0, back.data(), 64));
  EXPECT_EQ(data, back);
  EXPECT_FALSE((*device)->write(**buffer, 0, data.data(), 65));
  EXPECT_TRUE((*device)->synchronize());
  // A launch of a kernel that was never loaded is an error, not a crash.
  Status launched =
      (*device)->launch("nothing::here", {1, 1, 1}, {32, 1, 1}, {});
  ASSERT_FALSE(launched);
  EXPECT_TRUE(hasSubstring(launched.message(), "no kernel 'nothing::here'"));
  // PTX the JIT rejects comes back with its log.
  Status bad = (*device)->addKernel(
      "m::k", "this is not PTX", "k",
      R"({"workgroup_size": [32, 1, 1], "abi": "memref_descriptor",
          "arg_element_bytes": []})");
  EXPECT_FALSE(bad);
}

TEST(CudaPlanDevice, RecordedStepReplaysAsAGraph) {
  Result<std::unique_ptr<CudaPlanDevice>> device = CudaPlanDevice::create();
  if (!device)
    GTEST_SKIP() << "no CUDA device here, so the CUDA graph path "
                    "(endRecording, replayRecording) is compiled, not run: "
                 << device.message();
  CudaPlanDevice &cuda = **device;
  ASSERT_TRUE(cuda.canRecord());
  Result<std::shared_ptr<runtime::DeviceBuffer>> dst = cuda.allocate(64);
  ASSERT_TRUE(dst) << dst.message();
  // A step as a forward call makes one: staging written by the host, a
  // scratch buffer the graph zeroes first, device copies from both.
  uint8_t round = 1;
  auto step = [&]() -> Status {
    Result<std::shared_ptr<runtime::DeviceBuffer>> staging = cuda.allocate(32);
    Result<std::shared_ptr<runtime::DeviceBuffer>> scratch = cuda.allocate(32);
    if (!staging || !scratch)
      return errorf("allocation failed");
    std::vector<uint8_t> bytes(32, round);
    ATTN_RETURN_IF_ERROR(cuda.write(**staging, 0, bytes.data(), 32));
    ATTN_RETURN_IF_ERROR(
        cuda.copy({staging->get(), 0, 32}, {dst->get(), 0, 32}));
    return cuda.copy({scratch->get(), 0, 32}, {dst->get(), 32, 32});
  };
  Result<std::unique_ptr<runtime::RecordedStep>> recorded =
      runtime::RecordedStep::record(cuda, step);
  ASSERT_TRUE(recorded) << recorded.message();
  EXPECT_EQ((*recorded)->workItems(), 2u);
  for (uint8_t r : {7, 9}) {
    round = r;
    ASSERT_TRUE((*recorded)->replay(step));
    std::vector<uint8_t> back(64);
    ASSERT_TRUE(cuda.read(**dst, 0, back.data(), 64));
    std::vector<uint8_t> want(64, 0);
    std::fill(want.begin(), want.begin() + 32, r);
    EXPECT_EQ(back, want);
  }
}

TEST(CudaPlanDevice, LibraryThatIsNotADriver) {
  // libm is on every glibc system and has no CUDA entry points.
  CudaOptions options;
  options.driverLibrary = "libm.so.6";
  Result<std::unique_ptr<CudaPlanDevice>> device =
      CudaPlanDevice::create(options);
  ASSERT_FALSE(device);
  EXPECT_TRUE(hasSubstring(device.message(),
                           "libm.so.6 is not a usable CUDA driver: it has no "
                           "cuInit"))
      << device.message();
}

TEST(CudaPlanDevice, ToolkitStubDriver) {
  std::string stub = ATTN_CUDA_STUB_DRIVER;
  if (stub.empty())
    GTEST_SKIP() << "no CUDA toolkit stub libcuda.so here";
  CudaOptions options;
  options.driverLibrary = stub;
  Result<std::unique_ptr<CudaPlanDevice>> device =
      CudaPlanDevice::create(options);
  // The stub resolves every symbol but cannot initialize.
  ASSERT_FALSE(device);
  EXPECT_TRUE(hasSubstring(device.message(), "found but unusable: cuInit"))
      << device.message();
}

TEST(CudaKernelABI, PacksOneDescriptorPerBuffer) {
  LaunchFacts facts;
  facts.argElementBytes = {2, 4};
  uint64_t addresses[] = {0x1000, 0x2000};
  uint64_t bytes[] = {256, 12};
  Result<std::vector<uint64_t>> words =
      packKernelParams(facts, addresses, bytes);
  ASSERT_TRUE(words) << words.message();
  EXPECT_EQ(*words, (std::vector<uint64_t>{0x1000, 0x1000, 0, 128, 1, //
                                           0x2000, 0x2000, 0, 3, 1}));
  uint64_t one[] = {0x1000};
  Result<std::vector<uint64_t>> wrong =
      packKernelParams(facts, one, {bytes, 1});
  ASSERT_FALSE(wrong);
  EXPECT_TRUE(hasSubstring(wrong.message(),
                           "the launch passes 1 buffers, the kernel takes 2"));
}

} // namespace
