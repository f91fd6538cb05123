//===- CpuPlanDeviceTest.cpp - cpu kernels on the CPU device --------------===//
//
// Loads the test kernels of Inputs/double_slice.c from their bytes and
// launches them: every element of a 3-D grid's slices written once on 1
// and 4 threads, the refusals of loadKernel and enqueueLaunch, and a CPU
// Session over bundles.
//
//===----------------------------------------------------------------------===//

#include "devices/cpu/CpuPlanDevice.h"

#include "core/CpuKernel.h"
#include "core/LaunchFacts.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/bundle/BundleWriter.h"
#include "runtime/device/RecordedStep.h"
#include "runtime/executor/CpuExecutor.h"
#include "runtime/host/Session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace attn::cpu {
namespace {

using runtime::BufferView;
using runtime::Bundle;
using runtime::BundleKernel;
using runtime::DeviceTensor;
using ::testing::HasSubstr;

constexpr std::array<int64_t, 3> kOneItem = {1, 1, 1};

std::string readFile(const char *path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The first ISA level this host runs, or null.
const CpuIsaLevel *hostLevel() {
  for (const CpuIsaLevel &level : cpuIsaLevels())
    if (hostRunsCpuIsa(level))
      return &level;
  return nullptr;
}

/// A level of another architecture.
const CpuIsaLevel &foreignLevel() {
  for (const CpuIsaLevel &level : cpuIsaLevels())
    if (level.arch != hostCpuArch())
      return level;
  return cpuIsaLevels().front();
}

/// double_slice's manifest entry: four arguments of 4-byte elements.
BundleKernel cpuKernel(const std::string &symbol, std::string_view bytes,
                       std::string_view isa = hostLevel()->name,
                       std::string entryPoint = "double_slice") {
  LaunchFacts facts;
  facts.cpuIsa = std::string(isa);
  facts.argElementBytes = {4, 4, 4, 4};
  return {symbol,
          "cpu",
          "kernels/" + symbol.substr(0, symbol.find(':')) + ".so",
          std::move(entryPoint),
          runtime::contentHash(bytes),
          writeLaunchFacts(facts, Target::CPU)};
}

class CpuPlanDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    kernel = readFile(ATTN_CPU_TEST_KERNEL);
    ASSERT_FALSE(kernel.empty()) << "cannot read " ATTN_CPU_TEST_KERNEL;
    if (!hostLevel())
      GTEST_SKIP() << "this host runs none of the cpu ISA levels ("
                   << cpuIsaLevelNames() << ")";
    Result<std::unique_ptr<CpuPlanDevice>> created =
        CpuPlanDevice::create({.threads = 4});
    ASSERT_TRUE(created) << created.message();
    device = std::move(*created);
  }

  Status load(const BundleKernel &k, std::string_view bytes) {
    return device->loadKernel(bundle, k, bytes);
  }

  /// Launches `symbol` (double_slice) on `grid` with `slice` elements per
  /// work item over `n` elements, then checks that each element was
  /// doubled and written once.
  void launchAndCheck(const std::string &symbol, std::array<uint32_t, 3> grid,
                      int32_t slice, int64_t n) {
    Tensor in(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i)
      in.setFloat(i, 0.25 * double(i) - 3);
    Tensor params(DType::I32, {4});
    for (int i = 0; i < 3; ++i)
      params.setInt(i, grid[i]);
    params.setInt(3, slice);
    Result<DeviceTensor> input = runtime::toDevice(*device, in);
    Result<DeviceTensor> out =
        runtime::allocateTensor(*device, DType::F32, {n});
    Result<DeviceTensor> hits =
        runtime::allocateTensor(*device, DType::I32, {n});
    Result<DeviceTensor> p = runtime::toDevice(*device, params);
    ASSERT_TRUE(input && out && hits && p);
    BufferView args[] = {input->view(), out->view(), hits->view(), p->view()};
    Status launched = device->launch(symbol, grid, kOneItem, args);
    ASSERT_TRUE(launched) << launched.message();
    ASSERT_TRUE(device->synchronize());
    Result<Tensor> gotOut = runtime::toHost(*out);
    Result<Tensor> gotHits = runtime::toHost(*hits);
    ASSERT_TRUE(gotOut && gotHits);
    int64_t items = int64_t(grid[0]) * grid[1] * grid[2];
    for (int64_t i = 0; i < n; ++i) {
      int64_t expected = i < items * slice ? 1 : 0;
      ASSERT_EQ(gotHits->getInt(i), expected) << "element " << i;
      ASSERT_EQ(gotOut->getFloat(i), expected ? 2 * in.getFloat(i) : 0)
          << "element " << i;
    }
  }

  std::string kernel;
  Bundle bundle;
  std::unique_ptr<CpuPlanDevice> device;
};

TEST_F(CpuPlanDeviceTest, LaunchWritesEveryElementOnce) {
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  for (unsigned threads : {1u, 4u}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    ASSERT_TRUE(device->setThreads(threads));
    EXPECT_EQ(device->threads(), threads);
    // 3 x 4 x 5 work items of 7 elements; the last one's slice is cut.
    launchAndCheck("t::k", {3, 4, 5}, 7, 3 * 4 * 5 * 7 - 3);
    launchAndCheck("t::k", {1, 1, 1}, 5, 5);
  }
}

// A step recorded once (a launch into a scratch buffer the step
// allocates, then a copy into the caller's output) replays over new input
// as a fresh run computes it: the scratch buffer is zeroed first, the
// launch and the copy run in order.
TEST_F(CpuPlanDeviceTest, RecordedStepsReplayOverNewInput) {
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  ASSERT_TRUE(device->canRecord());
  constexpr int64_t n = 12;
  Result<DeviceTensor> input =
      runtime::allocateTensor(*device, DType::F32, {n});
  Result<DeviceTensor> out = runtime::allocateTensor(*device, DType::F32, {n});
  ASSERT_TRUE(input && out);
  auto setInput = [&](double base) {
    Tensor in(DType::F32, {n});
    for (int64_t i = 0; i < n; ++i)
      in.setFloat(i, base + i);
    ASSERT_TRUE(runtime::upload(in, *input));
  };
  // double_slice over 3 work items of 4 elements, through scratch.
  auto step = [&]() -> Status {
    Tensor params(DType::I32, {4});
    for (int i = 0; i < 4; ++i)
      params.setInt(i, i == 0 ? 3 : i == 3 ? 4 : 1);
    Result<DeviceTensor> p = runtime::toDevice(*device, params);
    Result<DeviceTensor> scratch =
        runtime::allocateTensor(*device, DType::F32, {n});
    Result<DeviceTensor> hits =
        runtime::allocateTensor(*device, DType::I32, {n});
    if (!p || !scratch || !hits)
      return Status::error("allocation failed");
    BufferView args[] = {input->view(), scratch->view(), hits->view(),
                         p->view()};
    ATTN_RETURN_IF_ERROR(device->launch("t::k", {3, 1, 1}, kOneItem, args));
    return device->copy(scratch->view(), out->view());
  };
  setInput(1);
  Result<std::unique_ptr<runtime::RecordedStep>> recorded =
      runtime::RecordedStep::record(*device, step);
  ASSERT_TRUE(recorded) << recorded.message();
  EXPECT_EQ((*recorded)->workItems(), 2u);
  // Recording runs nothing: the output is still zero.
  EXPECT_EQ(runtime::toHost(*out)->getFloat(5), 0);
  for (double base : {1.0, -7.5, 100.0}) {
    setInput(base);
    Status replayed = (*recorded)->replay(step);
    ASSERT_TRUE(replayed) << replayed.message();
    Result<Tensor> got = runtime::toHost(*out);
    ASSERT_TRUE(got);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got->getFloat(i), 2 * (base + i)) << "element " << i;
  }
  // A replay that launches something else is refused before anything runs.
  Status other = (*recorded)->replay([&]() -> Status {
    BufferView args[] = {input->view(), out->view(), out->view(),
                         out->view()};
    return device->launch("t::k", {1, 1, 1}, kOneItem, args);
  });
  EXPECT_FALSE(other);
}

// The reference ops compute on the host, which a replay would not repeat:
// inside a recorded step they are refused, and a session without bundles
// tells its builders that nothing is recorded.
TEST_F(CpuPlanDeviceTest, ReferenceOpsAreNotRecorded) {
  runtime::CpuExecutor reference(*device);
  Result<DeviceTensor> a = runtime::allocateTensor(*device, DType::F32, {2, 4});
  Result<DeviceTensor> la = runtime::allocateTensor(*device, DType::F32, {2});
  ASSERT_TRUE(a && la);
  Result<std::unique_ptr<runtime::RecordedStep>> recorded =
      runtime::RecordedStep::record(*device, [&] {
        return reference.mergeStates(*a, *la, *a, *la, *a, nullptr);
      });
  ASSERT_FALSE(recorded);
  EXPECT_THAT(recorded.message(),
              HasSubstr("the reference ops run on the host and cannot be "
                        "recorded for replay on cpu"));
}

TEST_F(CpuPlanDeviceTest, ZeroWorkItemsRunNothing) {
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  launchAndCheck("t::k", {0, 3, 2}, 4, 16);
  launchAndCheck("t::k", {2, 3, 0}, 4, 16);
}

TEST_F(CpuPlanDeviceTest, LoadsFromTheBytesAlone) {
  // Neither the bundle's folder nor the kernel's file exists: the device
  // loads what it is given, not what a path holds.
  bundle.directory = "/nonexistent/attn-cpu-test.attnb";
  BundleKernel k = cpuKernel("t::k", kernel);
  ASSERT_FALSE(std::filesystem::exists(bundle.directory + "/" + k.file));
  Status s = load(k, kernel);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(device->hasKernel("t::k"));
  launchAndCheck("t::k", {2, 2, 2}, 3, 24);
}

TEST_F(CpuPlanDeviceTest, SeveralObjectsLoadSideBySide) {
  // A failed load closes its object; the next one may get its descriptor
  // number, and must still load its own object.
  std::string abi2 = readFile(ATTN_CPU_TEST_KERNEL_ABI2);
  ASSERT_FALSE(load(cpuKernel("a::k", abi2), abi2));
  ASSERT_TRUE(load(cpuKernel("b::k", kernel), kernel));
  ASSERT_TRUE(load(cpuKernel("c::k", kernel), kernel));
  launchAndCheck("b::k", {4, 1, 1}, 2, 8);
  launchAndCheck("c::k", {1, 4, 1}, 2, 8);
  EXPECT_FALSE(device->hasKernel("a::k"));
}

TEST_F(CpuPlanDeviceTest, SameKernelTwiceIsANoOpAnotherIsAnError) {
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  Status again = load(cpuKernel("t::k", kernel), kernel);
  EXPECT_TRUE(again) << again.message();
  Status other =
      load(cpuKernel("t::k", kernel, hostLevel()->name, "other"), kernel);
  ASSERT_FALSE(other);
  // The symbol as the device keeps it: per ISA level.
  EXPECT_EQ(other.message(),
            "cpu already has a different kernel under the symbol t::k@" +
                std::string(hostLevel()->name) +
                "; a device never replaces a kernel (bundles that share a "
                "device must not reuse symbols for other kernels)");
  launchAndCheck("t::k", {2, 1, 1}, 1, 2);
}

TEST_F(CpuPlanDeviceTest, RefusesAnotherTarget) {
  BundleKernel k = cpuKernel("t::k", kernel);
  k.target = "spirv";
  Status s = load(k, kernel);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel t::k is for target spirv; cpu runs cpu");
}

TEST_F(CpuPlanDeviceTest, RefusesAnotherAbi) {
  std::string abi2 = readFile(ATTN_CPU_TEST_KERNEL_ABI2);
  Status s = load(cpuKernel("t::k", abi2), abi2);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel t::k (kernels/t.so) has attn_cpu_abi = 2; "
                         "this runtime runs kernels of attn_cpu_abi = 1 "
                         "(recompile it with a matching attn-compile)");

  std::string none = readFile(ATTN_CPU_TEST_KERNEL_NO_ABI);
  s = load(cpuKernel("t::k", none), none);
  ASSERT_FALSE(s);
  EXPECT_THAT(
      s.message(),
      HasSubstr("kernel t::k (kernels/t.so) exports no attn_cpu_abi ("));
  EXPECT_THAT(s.message(),
              HasSubstr("); this runtime runs kernels of attn_cpu_abi = 1"));
  EXPECT_FALSE(device->hasKernel("t::k"));
}

TEST_F(CpuPlanDeviceTest, RefusesAMissingEntryPoint) {
  Status s = load(cpuKernel("t::k", kernel, hostLevel()->name, "nope"), kernel);
  ASSERT_FALSE(s);
  EXPECT_THAT(
      s.message(),
      HasSubstr("kernel t::k (kernels/t.so) has no entry point nope ("));
  // The C library's functions are not the kernel's.
  s = load(cpuKernel("t::k", kernel, hostLevel()->name, "memcpy"), kernel);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("has no entry point memcpy ("));
}

TEST_F(CpuPlanDeviceTest, RefusesWhatIsNoSharedObject) {
  Status s = load(cpuKernel("t::k", "not an ELF"), "not an ELF");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("kernel t::k (kernels/t.so): cannot load "
                                     "the kernel object: "));
}

TEST_F(CpuPlanDeviceTest, RefusesALevelTheHostDoesNotRun) {
  const CpuIsaLevel &foreign = foreignLevel();
  Status s = load(cpuKernel("t::k", kernel, foreign.name), kernel);
  ASSERT_FALSE(s);
  std::string arch = hostCpuArch() == CpuArch::X86_64 ? "x86-64" : "aarch64";
  EXPECT_THAT(s.message(),
              HasSubstr("kernel t::k (kernels/t.so) is built for cpu ISA "
                        "level " +
                        std::string(foreign.name) + ", which this " + arch +
                        " host does not run; recompile with attn-compile "
                        "--cpu-isa=" +
                        std::string(hostLevel()->name)));
  EXPECT_FALSE(device->hasKernel("t::k"));
}

// A bundle holds a kernel once per ISA level under one symbol: the device
// runs the levels its host has, loads each of those, and launches one.
TEST_F(CpuPlanDeviceTest, TakesOneKernelPerLevelUnderASymbol) {
  EXPECT_FALSE(
      device->runsKernel(cpuKernel("t::k", kernel, foreignLevel().name)));
  int loaded = 0;
  for (const CpuIsaLevel &level : cpuIsaLevels()) {
    BundleKernel k = cpuKernel("t::k", kernel, level.name);
    EXPECT_EQ(device->runsKernel(k), hostRunsCpuIsa(level)) << level.name;
    if (!device->runsKernel(k))
      continue;
    Status s = load(k, kernel);
    ASSERT_TRUE(s) << level.name << ": " << s.message();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
  launchAndCheck("t::k", {2, 3, 1}, 5, 40);
  // Each level's kernel again is a no-op.
  for (const CpuIsaLevel &level : cpuIsaLevels()) {
    if (hostRunsCpuIsa(level)) {
      EXPECT_TRUE(load(cpuKernel("t::k", kernel, level.name), kernel));
    }
  }
}

TEST_F(CpuPlanDeviceTest, RefusesBadLaunchFacts) {
  BundleKernel k = cpuKernel("t::k", kernel);
  k.launchJson = R"({"workgroup_size": [1, 1, 1]})";
  Status s = load(k, kernel);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("kernel t::k (kernels/t.so): "));
}

TEST_F(CpuPlanDeviceTest, RefusesBadLaunches) {
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  Result<DeviceTensor> t = runtime::allocateTensor(*device, DType::F32, {4});
  ASSERT_TRUE(t);
  BufferView four[] = {t->view(), t->view(), t->view(), t->view()};

  Status s = device->launch("t::k", {1, 1, 1}, {64, 1, 1}, four);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "cpu: kernel t::k is launched with block [64, 1, "
                         "1]; a cpu kernel runs one work item per call, "
                         "block [1, 1, 1]");

  s = device->launch("t::k", {1, 1, 1}, kOneItem,
                     std::span<const BufferView>(four).first(3));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "cpu: kernel t::k takes 4 arguments (its launch "
                         "facts' arg_element_bytes), the launch passes 3");

  s = device->launch("u::k", {1, 1, 1}, kOneItem, four);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "cpu: no kernel is loaded under the symbol u::k");
}

TEST(CpuPlanDevice, ThreadsComeFromOptionsThenTheEnvironment) {
  ::unsetenv(kCpuThreadsEnv);
  Result<std::unique_ptr<CpuPlanDevice>> d = CpuPlanDevice::create();
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ((*d)->threads(), availableCpus());

  ::setenv(kCpuThreadsEnv, "3", 1);
  d = CpuPlanDevice::create();
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ((*d)->threads(), 3u);
  d = CpuPlanDevice::create({.threads = 2});
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ((*d)->threads(), 2u);

  for (const char *bad : {"0", "-1", "4x", "100000"}) {
    ::setenv(kCpuThreadsEnv, bad, 1);
    d = CpuPlanDevice::create();
    ASSERT_FALSE(d) << bad;
    EXPECT_EQ(d.message(), "ATTN_CPU_THREADS is '" + std::string(bad) +
                               "'; expected a thread count from 1 to 1024");
  }
  ::unsetenv(kCpuThreadsEnv);

  d = CpuPlanDevice::create({.threads = 5000});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "CpuDeviceOptions::threads is 5000; expected a "
                         "thread count from 1 to 1024");
  d = CpuPlanDevice::create();
  ASSERT_TRUE(d);
  Status s = (*d)->setThreads(0);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "the cpu device's thread count is 0; expected a "
                         "thread count from 1 to 1024");
}

/// A bundle folder with one variant of paged_attention whose plan launches
/// m::k, given as `kernel` of `bytes`.
class CpuSessionTest : public CpuPlanDeviceTest {
protected:
  void writeBundle(const BundleKernel &k, std::string_view bytes) {
    writeBundle(std::vector<BundleKernel>{k}, bytes);
  }

  /// The same with several kernels of `bytes` (one file each).
  void writeBundle(const std::vector<BundleKernel> &kernels,
                   std::string_view bytes) {
    runtime::BundleVariant v = variant(kernels.front());
    v.kernels = kernels;
    writeVariants({v}, bytes);
  }

  /// Variant pa_h8 (op paged_attention, 8 heads) whose plan launches `k`.
  static runtime::BundleVariant variant(const BundleKernel &k) {
    runtime::Plan plan;
    plan.function = "paged_attention";
    plan.arguments = {{DType::F32, {-1}}};
    plan.numSlots = 3;
    runtime::PlanOp one;
    one.kind = runtime::PlanOpKind::Const;
    one.result = 1;
    one.imm = 1;
    runtime::PlanOp launch;
    launch.kind = runtime::PlanOpKind::Launch;
    launch.kernel = k.symbol;
    launch.operands = {1, 1, 1, 0};
    runtime::PlanOp ret;
    ret.kind = runtime::PlanOpKind::Return;
    plan.ops = {one, launch, ret};

    runtime::BundleVariant v;
    v.name = "pa_h8";
    v.parameters = {{"op", "paged_attention"}, {"num_heads", "8"}};
    v.plans = {plan};
    v.kernels = {k};
    return v;
  }

  /// A bundle folder of `variants`, each kernel file holding `bytes`.
  void writeVariants(const std::vector<runtime::BundleVariant> &variants,
                     std::string_view bytes) {
    dir =
        (std::filesystem::path(::testing::TempDir()) /
         ("attn-cpu-session-" +
          std::string(
              ::testing::UnitTest::GetInstance()->current_test_info()->name())))
            .string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/kernels");
    for (const runtime::BundleVariant &v : variants)
      for (const BundleKernel &k : v.kernels)
        std::ofstream(dir + "/" + k.file, std::ios::binary) << bytes;
    Bundle written;
    written.compiler = "attn test";
    written.directory = dir;
    written.variants = variants;
    ASSERT_TRUE(runtime::writeManifest(written));
  }

  struct Model {
    std::string name;
    runtime::AttentionLayer layer;
    runtime::KvCacheSpec cache;
  };

  /// A bundle with, for each model, one variant per call its FLASH_ATTN
  /// layer makes (<model><i>, launching <model><i>::k; parameters as the
  /// call asks, taken from a reference session's impl).
  void writeModels(const std::vector<Model> &models) {
    std::vector<runtime::BundleVariant> variants;
    for (const Model &m : models) {
      Result<std::unique_ptr<CpuPlanDevice>> ref = CpuPlanDevice::create({});
      ASSERT_TRUE(ref) << ref.message();
      Result<std::unique_ptr<runtime::Session>> reference =
          runtime::Session::open(runtime::DeviceType::CPU, std::move(*ref));
      ASSERT_TRUE(reference) << reference.message();
      Result<std::unique_ptr<runtime::SessionLayer>> l =
          (*reference)->createLayer(m.layer, m.cache, 1);
      ASSERT_TRUE(l) << l.message();
      std::vector<runtime::VariantQuery> calls =
          (*l)->impl->calls(m.layer, m.cache);
      for (size_t i = 0; i < calls.size(); ++i) {
        std::string symbol = m.name + std::to_string(i) + "::k";
        runtime::BundleVariant v = variant(cpuKernel(symbol, kernel));
        v.name = m.name + std::to_string(i);
        v.parameters.clear();
        for (const runtime::VariantParameter &p : calls[i].parameters)
          v.parameters[p.key] = p.value;
        variants.push_back(std::move(v));
      }
    }
    writeVariants(variants, kernel);
  }

  static runtime::AttentionLayer layer() {
    return {.name = "layers.0",
            .numHeads = 8,
            .headSize = 64,
            .numKvHeads = 2,
            .scale = 0.125,
            .dtype = DType::BF16};
  }

  std::string dir;
};

TEST_F(CpuSessionTest, NamesABundleWithoutCpuKernels) {
  BundleKernel k = cpuKernel("m::k", kernel);
  k.target = "spirv";
  k.file = "kernels/k.spv";
  k.launchJson = "{}";
  writeBundle(k, kernel);
  Result<std::unique_ptr<runtime::Session>> session = runtime::Session::open(
      runtime::DeviceType::CPU, std::move(device), {dir});
  ASSERT_FALSE(session);
  EXPECT_EQ(session.message(), "bundle " + dir +
                                   " has no kernels for target cpu (it has: "
                                   "spirv)");
}

TEST_F(CpuSessionTest, OpensWithoutLoadingKernels) {
  writeBundle(cpuKernel("m::k", kernel), kernel);
  CpuPlanDevice &cpu = *device;
  Result<std::unique_ptr<runtime::Session>> session = runtime::Session::open(
      runtime::DeviceType::CPU, std::move(device), {dir});
  ASSERT_TRUE(session) << session.message();
  EXPECT_FALSE(cpu.hasKernel("m::k"));

  // A layer the bundle has no variant for is named as on any device.
  Result<std::unique_ptr<runtime::SessionLayer>> l = (*session)->createLayer(
      layer(), runtime::KvCacheSpec{16, 2, 64, DType::BF16, "auto"}, 4);
  ASSERT_FALSE(l);
  EXPECT_THAT(l.message(),
              HasSubstr("FLASH_ATTN: layer 'layers.0': cpu (cpu "
                        "bundle): bundle " +
                        dir + " has no reshape_and_cache variant"));
  EXPECT_THAT(l.message(), HasSubstr("; compile one with: attn-compile "
                                     "--variant op=reshape_and_cache,"));
}

// A variant with a kernel for a level the host lacks beside one it runs
// opens; with the foreign level alone, the device says why not.
TEST_F(CpuSessionTest, OpensWithTheLevelsTheHostRuns) {
  BundleKernel foreign = cpuKernel("m::k", kernel, foreignLevel().name);
  foreign.file = "kernels/m_foreign.so";
  writeBundle({foreign, cpuKernel("m::k", kernel)}, kernel);
  Result<std::unique_ptr<runtime::Session>> session = runtime::Session::open(
      runtime::DeviceType::CPU, std::move(device), {dir});
  ASSERT_TRUE(session) << session.message();
}

// Opening reads the manifest only; creating a layer puts the kernels of the
// variants its calls use on the device, once, and no others: a session that
// serves one model of a bundle of two creates that model's kernels.
TEST_F(CpuSessionTest, CreatesTheKernelsOfItsLayersOnly) {
  runtime::AttentionLayer small = layer(), large = layer();
  large.name = "large.0";
  large.headSize = 128;
  runtime::KvCacheSpec smallCache{16, 2, 64, DType::BF16, "auto"};
  runtime::KvCacheSpec largeCache{16, 2, 128, DType::BF16, "auto"};
  writeModels({{"small", small, smallCache}, {"large", large, largeCache}});
  CpuPlanDevice &cpu = *device;
  Result<std::unique_ptr<runtime::Session>> session = runtime::Session::open(
      runtime::DeviceType::CPU, std::move(device), {dir});
  ASSERT_TRUE(session) << session.message();
  auto loaded = [&] {
    std::vector<std::string> symbols;
    for (const std::string &s : {"small0::k", "small1::k", "large0::k",
                                 "large1::k"})
      if (cpu.hasKernel(s))
        symbols.push_back(s);
    return symbols;
  };
  EXPECT_TRUE(loaded().empty());
  for (const char *name : {"layers.0", "layers.1"}) {
    small.name = name;
    Result<std::unique_ptr<runtime::SessionLayer>> l =
        (*session)->createLayer(small, smallCache, 4);
    ASSERT_TRUE(l) << l.message();
    EXPECT_EQ(loaded(), (std::vector<std::string>{"small0::k", "small1::k"}));
    auto *executor =
        dynamic_cast<runtime::BundleExecutor *>((*l)->executor);
    ASSERT_NE(executor, nullptr);
    EXPECT_EQ(executor->loadedKernels(), 2u);
  }
  ASSERT_TRUE((*session)->createLayer(large, largeCache, 4));
  EXPECT_EQ(loaded().size(), 4u);
}

TEST_F(CpuSessionTest, NamesALevelTheHostDoesNotRun) {
  BundleKernel foreign = cpuKernel("m::k", kernel, foreignLevel().name);
  writeBundle(foreign, kernel);
  Result<std::unique_ptr<runtime::Session>> session = runtime::Session::open(
      runtime::DeviceType::CPU, std::move(device), {dir});
  ASSERT_FALSE(session);
  EXPECT_THAT(session.message(), HasSubstr("is built for cpu ISA level " +
                                           std::string(foreignLevel().name)));
}

TEST_F(CpuSessionTest, WithoutBundlesRunsTheReference) {
  Result<std::unique_ptr<runtime::Session>> session =
      runtime::Session::open(runtime::DeviceType::CPU, std::move(device));
  ASSERT_TRUE(session) << session.message();
  Result<std::unique_ptr<runtime::SessionLayer>> l = (*session)->createLayer(
      layer(), runtime::KvCacheSpec{16, 2, 64, DType::BF16, "auto"}, 4);
  ASSERT_TRUE(l) << l.message();
  EXPECT_EQ((*l)->bundle, nullptr);
  EXPECT_EQ((*l)->executor->name(), "cpu");
  // The reference ops are not recorded (ReferenceOpsAreNotRecorded).
  EXPECT_EQ((*l)->builder->getCudagraphSupport(), AttentionCGSupport::NEVER);
}

// The emulated path (CpuEmulator.h): AArch64 kernels under qemu-aarch64,
// through attn-cpu-launch, on an x86-64 host. Skipped where the build has
// no AArch64 emulation (cmake/AttnAArch64.cmake says why).
#ifdef ATTN_CPU_TEST_QEMU
class CpuEmulatorTest : public CpuPlanDeviceTest {
protected:
  void SetUp() override {
    if (hostCpuArch() != CpuArch::X86_64)
      GTEST_SKIP() << "this host runs AArch64 kernels natively";
    CpuPlanDeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    armKernel = readFile(ATTN_CPU_TEST_AARCH64_KERNEL);
    ASSERT_FALSE(armKernel.empty())
        << "cannot read " ATTN_CPU_TEST_AARCH64_KERNEL;
    Result<std::unique_ptr<CpuPlanDevice>> created =
        CpuPlanDevice::create({.threads = 2, .emulator = emulatorOptions()});
    ASSERT_TRUE(created) << created.message();
    device = std::move(*created);
  }

  static CpuEmulatorOptions emulatorOptions() {
    return {ATTN_CPU_TEST_QEMU, ATTN_CPU_TEST_LAUNCHER, ATTN_CPU_TEST_SYSROOT};
  }

  /// double_slice for AArch64 under `symbol`.
  Status loadArm(const std::string &symbol, std::string_view bytes,
                 std::string entryPoint = "double_slice") {
    return load(cpuKernel(symbol, bytes, "aarch64", std::move(entryPoint)),
                bytes);
  }

  std::string armKernel;
};

TEST_F(CpuEmulatorTest, LaunchWritesEveryElementOnce) {
  BundleKernel k = cpuKernel("t::k", armKernel, "aarch64");
  EXPECT_TRUE(device->runsKernel(k));
  Status s = load(k, armKernel);
  ASSERT_TRUE(s) << s.message();
  launchAndCheck("t::k", {3, 4, 5}, 7, 3 * 4 * 5 * 7 - 3);
  launchAndCheck("t::k", {1, 1, 1}, 5, 5);
  launchAndCheck("t::k", {0, 3, 2}, 4, 16);
  // Zero work items start no process.
  EXPECT_EQ(device->emulatedLaunches(), 2);
}

TEST_F(CpuEmulatorTest, OverlappingArgumentsShareTheirBytes) {
  ASSERT_TRUE(loadArm("t::k", armKernel));
  // One buffer holds params (4 x i32), then f[0..11] (f32); `in` is f[0..7]
  // and `out` f[4..11], so one work item of 8 elements reads at in[i + 4]
  // what it wrote at out[i] before, as it would in process.
  constexpr int64_t n = 8;
  Result<DeviceTensor> shared =
      runtime::allocateTensor(*device, DType::F32, {4 + n + 4});
  Result<DeviceTensor> hits = runtime::allocateTensor(*device, DType::I32, {n});
  ASSERT_TRUE(shared && hits);
  const int32_t params[4] = {1, 1, 1, int32_t(n)};
  float f[n + 4];
  for (int64_t i = 0; i < n + 4; ++i)
    f[i] = float(i + 1);
  ASSERT_TRUE(device->write(*shared->buffer, 0, params, sizeof params));
  ASSERT_TRUE(device->write(*shared->buffer, sizeof params, f, sizeof f));
  BufferView whole = shared->view();
  BufferView args[] = {{whole.buffer, 16, n * 4},
                       {whole.buffer, 32, n * 4},
                       hits->view(),
                       {whole.buffer, 0, 16}};
  Status s = device->launch("t::k", {1, 1, 1}, kOneItem, args);
  ASSERT_TRUE(s) << s.message();
  Result<Tensor> got = runtime::toHost(*shared);
  ASSERT_TRUE(got);
  for (int64_t i = 0; i < n; ++i) {
    f[i + 4] = 2 * f[i];
    EXPECT_EQ(got->getFloat(8 + i), f[i + 4]) << "out[" << i << "]";
  }
  EXPECT_EQ(got->getFloat(4), 1.0) << "in[0]";
  EXPECT_EQ(device->emulatedLaunches(), 1);
}

TEST_F(CpuEmulatorTest, NativeKernelsRankAboveEmulatedOnes) {
  ASSERT_TRUE(loadArm("t::k", armKernel));
  ASSERT_TRUE(load(cpuKernel("t::k", kernel), kernel));
  launchAndCheck("t::k", {2, 1, 1}, 3, 6);
  EXPECT_EQ(device->emulatedLaunches(), 0);
}

TEST_F(CpuEmulatorTest, RefusesAnotherAbi) {
  std::string abi2 = readFile(ATTN_CPU_TEST_AARCH64_KERNEL_ABI2);
  Status s = loadArm("t::k", abi2);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "kernel t::k (kernels/t.so) under " + emulatorOptions().emulator +
                ": attn-cpu-launch: the kernel has attn_cpu_abi = 2; this "
                "runtime runs kernels of attn_cpu_abi = 1 (recompile it "
                "with a matching attn-compile)");
  EXPECT_FALSE(device->hasKernel("t::k"));
}

TEST_F(CpuEmulatorTest, RefusesAMissingEntryPoint) {
  Status s = loadArm("t::k", armKernel, "nope");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr(": attn-cpu-launch: the kernel has no "
                                     "entry point nope ("));
  // The C library's functions are not the kernel's.
  s = loadArm("t::k", armKernel, "memcpy");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("has no entry point memcpy ("));
  s = loadArm("t::k", "not an ELF");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr(": attn-cpu-launch: cannot load the "
                                     "kernel object: "));
}

TEST_F(CpuEmulatorTest, RefusesAProgramThatIsNotTheLauncher) {
  CpuEmulatorOptions options = emulatorOptions();
  options.launcher = ATTN_CPU_TEST_NOT_A_LAUNCHER;
  Result<std::unique_ptr<CpuPlanDevice>> other =
      CpuPlanDevice::create({.emulator = options});
  ASSERT_TRUE(other) << other.message();
  Status s = (*other)->loadKernel(
      bundle, cpuKernel("t::k", armKernel, "aarch64"), armKernel);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel t::k (kernels/t.so) under " +
                             options.emulator + ": " + options.launcher +
                             " exited without saying 'attn-cpu-launch: "
                             "done'; is it attn-cpu-launch? It printed: "
                             "hello");
}
#else
TEST(CpuEmulatorTest, RunsAArch64Kernels) {
  GTEST_SKIP() << "this build has no AArch64 emulation (qemu-aarch64, "
                  "clang-22 and libc6-dev-arm64-cross: scripts/setup)";
}
#endif

// Missing programs are named when the device is made, on any build.
TEST(CpuEmulator, NamesWhatIsMissing) {
  Result<std::unique_ptr<CpuPlanDevice>> d = CpuPlanDevice::create(
      {.emulator = {"/nonexistent/qemu-aarch64", "/bin/true"}});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "the cpu emulator /nonexistent/qemu-aarch64: No "
                         "such file or directory (Debian package qemu-user)");

  d = CpuPlanDevice::create(
      {.emulator = {"attn-no-such-qemu-aarch64", "/bin/true"}});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "the cpu emulator attn-no-such-qemu-aarch64 is not "
                         "in PATH (Debian package qemu-user)");

  // /bin/true stands in for qemu from here on: create runs nothing.
  d = CpuPlanDevice::create({.emulator = {"/bin/true", ""}});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "the cpu emulator /bin/true needs attn-cpu-launch "
                         "built for AArch64, and none was named");

  d = CpuPlanDevice::create(
      {.emulator = {"/bin/true", "/nonexistent/attn-cpu-launch"}});
  ASSERT_FALSE(d);
  EXPECT_THAT(d.message(),
              HasSubstr("the cpu emulator's launcher "
                        "/nonexistent/attn-cpu-launch: No such file or "
                        "directory (attn-cpu-launch, built for AArch64"));

  d = CpuPlanDevice::create(
      {.emulator = {"/bin/true", "/bin/true", "/nonexistent/sysroot"}});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "the cpu emulator's AArch64 libraries "
                         "/nonexistent/sysroot are not a folder (Debian "
                         "package libc6-arm64-cross)");

  // Without an emulator, an AArch64 kernel is refused as before.
  d = CpuPlanDevice::create();
  ASSERT_TRUE(d);
  if (hostCpuArch() == CpuArch::X86_64) {
    EXPECT_FALSE((*d)->runsKernel(cpuKernel("t::k", "bytes", "aarch64")));
  }
}

// An emulator that fails (here /bin/false in qemu's place) is an error
// naming how it ended, not a crash.
TEST(CpuEmulator, ReportsAFailingEmulator) {
  if (hostCpuArch() != CpuArch::X86_64)
    GTEST_SKIP() << "this host runs AArch64 kernels natively";
  Result<std::unique_ptr<CpuPlanDevice>> d =
      CpuPlanDevice::create({.emulator = {"/bin/false", "/bin/true", ""}});
  ASSERT_TRUE(d) << d.message();
  Bundle none;
  Status s =
      (*d)->loadKernel(none, cpuKernel("t::k", "bytes", "aarch64"), "bytes");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "kernel t::k (kernels/t.so) under /bin/false: exited with 1");
}

} // namespace
} // namespace attn::cpu
