//===- TTDeviceTest.cpp - The TT device interface and its plan device ----===//
//
// EmulatorDevice as a TTDevice (buffers, release, programs it did not load)
// and TTPlanDevice's errors: what a plan launches must be loaded, with the
// buffers its op takes, and a symbol names one program for the device's life.
//
//===----------------------------------------------------------------------===//
#include "devices/tt/EmulatorDevice.h"
#include "devices/tt/TTPlanDevice.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace attn;
using namespace attn::tt;

namespace {

TEST(TTDevice, BuffersRoundTripAndAreReleased) {
  EmulatorDevice device(Arch::Blackhole);
  EXPECT_EQ(device.numDramBanks(), 7u);
  {
    ScopedBuffers buffers(device);
    std::vector<uint8_t> bytes(3 * 96);
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(i * 7);
    Result<Buffer> b = buffers.upload(bytes.data(), 96, 3);
    ASSERT_TRUE(b.isOk()) << b.message();
    // Pages sit at Blackhole's 64-byte DRAM alignment.
    EXPECT_EQ(b->alignedPageSize, 128u);
    std::vector<uint8_t> back(bytes.size());
    ASSERT_TRUE(device.read(*b, back.data()).isOk());
    EXPECT_EQ(back, bytes);
    Result<Buffer> empty = buffers.create(64, 0);
    ASSERT_TRUE(empty.isOk());
    EXPECT_NE(empty->address, b->address);
    EXPECT_EQ(device.liveBuffers(), 2u);
  }
  EXPECT_EQ(device.liveBuffers(), 0u);
  EXPECT_FALSE(device.createBuffer(0, 1).isOk());
}

TEST(TTDevice, RunsOnlyProgramsItLoaded) {
  EmulatorDevice a, b;
  Program program;
  program.description.name = "p";
  Status none = a.run(program, {});
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.message().find("was not loaded on tt:emulator"),
            std::string::npos);
  auto kernels = b.loadKernels(program.description);
  ASSERT_TRUE(kernels.isOk()) << kernels.message();
  program.kernels = *kernels;
  EXPECT_FALSE(a.run(program, {}).isOk());
  EXPECT_TRUE(b.run(program, {}).isOk());
}

TEST(TTDevice, LoadProgramChecksTheArchitecture) {
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("attn-tt-arch-" + std::to_string(getpid())))
                        .string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/program.json")
      << R"({"name": "p", "op": "merge_states", "arch": "blackhole",
             "params": {}, "core_grid": {"x": 1, "y": 1},
             "circular_buffers": [], "kernels": [], "runtime_args": [],
             "unit_args": []})";
  EmulatorDevice wormhole(Arch::WormholeB0);
  Result<Program> p = loadProgram(dir, wormhole);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.message().find("the program was built for blackhole, the "
                             "device is tt:emulator (wormhole_b0)"),
            std::string::npos)
      << p.message();
}

TEST(TTPlanDevice, LaunchesOnlyLoadedPrograms) {
  EmulatorDevice emulator;
  TTPlanDevice device(emulator);
  auto buffer = device.allocate(16);
  ASSERT_TRUE(buffer.isOk());
  runtime::BufferView args[] = {{buffer->get(), 0, 16}};
  Status s = device.launch("missing", {1, 1, 1}, {1, 1, 1}, args);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("no TT program is loaded under the symbol "
                             "missing"),
            std::string::npos);
  // Buffers hold what was written; reads and writes stay inside them.
  uint8_t bytes[16] = {1, 2, 3};
  EXPECT_TRUE(device.write(**buffer, 0, bytes, 16).isOk());
  EXPECT_FALSE(device.write(**buffer, 0, bytes, 17).isOk());
  uint8_t back[16] = {};
  EXPECT_TRUE(device.read(**buffer, 0, back, 16).isOk());
  EXPECT_EQ(std::memcmp(bytes, back, 16), 0);
  // A pending program under a symbol takes it.
  EXPECT_TRUE(device.addProgram("p", "/nonexistent", /*loadNow=*/false).isOk());
  EXPECT_FALSE(device.addProgram("p", "/elsewhere", /*loadNow=*/false).isOk());
  // It loads at its first launch, and fails there.
  Status late = device.launch("p", {1, 1, 1}, {1, 1, 1}, args);
  ASSERT_FALSE(late.isOk());
  EXPECT_NE(late.message().find("/nonexistent"), std::string::npos);
}

} // namespace
