//===- EmulatorTest.cpp - The TT host emulator on its own ----------------===//
//
// The kernels (TestKernels.h) are host functions written against attn's
// SDK declarations: these tests cover the device model (tiles, circular
// buffers, DRAM, compute semantics, deadlock detection) and each check that
// makes the emulator as strict as the hardware, with a kernel that breaks
// it. EndToEndTest.cpp runs attn's own kernels.
//
//===----------------------------------------------------------------------===//
#include "devices/tt/emulator/Emulator.h"

#include "test/unit/tt/TestKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace attn::tt;
using namespace attn::tt::test;

namespace {

ProgramSpec program(std::vector<CircularBufferSpec> cbs,
                    std::vector<KernelSpec> kernels) {
  ProgramSpec p;
  p.circularBuffers = std::move(cbs);
  p.kernels = std::move(kernels);
  return p;
}

KernelSpec kernel(const char *name, KernelKind kind, KernelEntry entry,
                  bool fp32DestAccEn = true) {
  KernelSpec k;
  k.name = name;
  k.kind = kind;
  k.entry = std::move(entry);
  k.fp32DestAccEn = fp32DestAccEn;
  return k;
}

/// Runs one kernel on one core with `args`; returns the run's error text.
std::string runOne(Device &device, std::vector<CircularBufferSpec> cbs,
                   KernelSpec k, std::vector<uint32_t> args = {}) {
  attn::Status st =
      runProgram(device, program(std::move(cbs), {std::move(k)}), {{args}});
  return st.isOk() ? "" : st.message();
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(TTEmulator, FaceOrder) {
  EXPECT_EQ(faceOffset(0, 0), 0u);
  EXPECT_EQ(faceOffset(0, 15), 15u);
  EXPECT_EQ(faceOffset(0, 16), 256u);
  EXPECT_EQ(faceOffset(1, 0), 16u);
  EXPECT_EQ(faceOffset(16, 0), 512u);
  EXPECT_EQ(faceOffset(31, 31), 1023u);
  // A 16-row half tile is contiguous: rows 0-15 are faces 0 and 1.
  EXPECT_EQ(faceOffset(15, 31), 511u);
}

TEST(TTEmulator, InterleavedPagesRoundTripAtTheArchAlignment) {
  for (Arch arch : {Arch::WormholeB0, Arch::Blackhole}) {
    Device device(arch);
    Buffer b = device.allocate(100, 30);
    EXPECT_EQ(b.alignedPageSize, arch == Arch::Blackhole ? 128u : 128u);
    EXPECT_EQ(b.address % archParams(arch).dramReadAlignment, 0u);
    std::vector<uint8_t> page(100), back(100);
    for (uint32_t p = 0; p < 30; ++p) {
      std::fill(page.begin(), page.end(), uint8_t(p + 1));
      device.writePage(b, p, page.data());
    }
    for (uint32_t p = 0; p < 30; ++p) {
      device.readPage(b, p, back.data());
      EXPECT_EQ(back[0], uint8_t(p + 1));
      EXPECT_EQ(back[99], uint8_t(p + 1));
    }
  }
  EXPECT_EQ(Device(Arch::Blackhole).allocate(40, 1).alignedPageSize, 64u);
  EXPECT_EQ(Device(Arch::WormholeB0).allocate(40, 1).alignedPageSize, 64u);
  EXPECT_EQ(Device(Arch::WormholeB0).allocate(20, 1).alignedPageSize, 32u);
}

/// A reader streams DRAM pages through a 2-page circular buffer to a writer
/// that copies them to another buffer: more pages than the buffer holds, so
/// both sides block and resume.
TEST(TTEmulator, CircularBufferStreamsBetweenThreads) {
  Device device;
  Buffer src = device.allocate(kStreamPageSize, kStreamPages);
  Buffer dst = device.allocate(kStreamPageSize, kStreamPages);
  for (uint32_t p = 0; p < kStreamPages; ++p) {
    std::vector<uint8_t> data(kStreamPageSize, uint8_t(3 * p + 1));
    device.writePage(src, p, data.data());
  }
  ProgramSpec prog =
      program({{0, 2, kStreamPageSize, DataFormat::Float32}},
              {kernel("reader", KernelKind::Reader, streamReader),
               kernel("writer", KernelKind::Writer, streamWriter)});
  std::vector<uint32_t> args = {src.address, dst.address};
  attn::Status st = runProgram(device, prog, {{args, args}});
  ASSERT_TRUE(st.isOk()) << st.message();
  for (uint32_t p = 0; p < kStreamPages; ++p) {
    std::vector<uint8_t> back(kStreamPageSize);
    device.readPage(dst, p, back.data());
    EXPECT_EQ(back[7], uint8_t(3 * p + 1));
  }
}

std::vector<CircularBufferSpec> computeBuffers() {
  return {{0, 2, 4096, DataFormat::Float32},
          {1, 1, 4096, DataFormat::Float32},
          {16, 1, 2048, DataFormat::Float16_b},
          {17, 1, 2048, DataFormat::Float16_b}};
}

/// Runs fillTwoTilesReader, `compute` and writeTwoTilesWriter; returns the
/// error text ("" on success).
std::string runCompute(Device &device, const Buffer &out, KernelEntry compute,
                       bool fp32DestAccEn = true) {
  ProgramSpec prog = program(
      computeBuffers(),
      {kernel("reader", KernelKind::Reader, fillTwoTilesReader),
       kernel("compute", KernelKind::Compute, std::move(compute),
              fp32DestAccEn),
       kernel("writer", KernelKind::Writer, writeTwoTilesWriter)});
  std::vector<uint32_t> args = {out.address};
  attn::Status st = runProgram(device, prog, {{args, args, args}});
  return st.isOk() ? "" : st.message();
}

/// The reader fills two f32 tiles; compute multiplies them (the second
/// transposed), row-max reduces, exponentiates and packs to bf16.
TEST(TTEmulator, ComputeTileOps) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  ASSERT_EQ(runCompute(device, out, computeTileOps), "");
  std::vector<uint16_t> tiles(2048);
  device.readPage(out, 0, tiles.data());
  device.readPage(out, 1, tiles.data() + 1024);
  auto value = [&](int tile, uint32_t r, uint32_t c) {
    uint32_t w = uint32_t(tiles[tile * 1024 + faceOffset(r, c)]) << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  };
  // (2 B^T)[r][c] = 2 B[c][r] = 2 (c + r / 8), exact in bf16 here.
  EXPECT_FLOAT_EQ(value(0, 3, 5), 2 * (5 + 3 / 8.0f));
  EXPECT_FLOAT_EQ(value(0, 31, 0), 2 * (31 / 8.0f));
  // Row max of B is r + 31/8; its exp, rounded to bf16 (8 bits), in column
  // 0; the reduce's packer masks clear the other columns.
  float expected = std::exp(7 + 31 / 8.0f);
  EXPECT_NEAR(value(1, 7, 0), expected, expected / 128);
  EXPECT_EQ(value(1, 7, 1), 0.0f);
}

//===--- Strictness: each check with a kernel that breaks it -------------===//

TEST(TTEmulatorChecks, OpWithoutItsInitFails) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, matmulWithoutInit),
                  "matmul_tiles needs matmul_init since the last other init "
                  "(last init: copy_tile_to_dst_init_short)");
  EXPECT_CONTAINS(runCompute(device, out, expWithoutInit),
                  "exp_tile needs exp_tile_init since the last other SFPU "
                  "init (last: none)");
  EXPECT_CONTAINS(runCompute(device, out, initBeforeStartup),
                  "copy_tile_to_dst_init_short before "
                  "compute_kernel_hw_startup");
}

/// tt-metal's matmul.h: matmul_init relies on a start-up in matmul's source
/// order; computeTileOps starts that way and passes.
TEST(TTEmulatorChecks, MatmulInitNeedsTheReverseStartup) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, matmulAfterRegularStartup),
                  "matmul_init(0, 1) in a kernel started with "
                  "compute_kernel_hw_startup in the regular source order; "
                  "matmul unpacks in0 to source B and in1 to source A, so the "
                  "kernel must start with "
                  "compute_kernel_hw_startup<SrcOrder::Reverse>(in0, in1, "
                  "out)");
}

TEST(TTEmulatorChecks, UnpackerFormatMustMatchTheSourceBuffer) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  std::string err = runCompute(device, out, copyWrongSrcFormat);
  EXPECT_CONTAINS(err, "copy_tile unpacks cb 16 (Float16_b) to source A, "
                       "which is configured for Float32 (from cb 0); "
                       "reconfigure it first (reconfig_data_format_srca)");
}

TEST(TTEmulatorChecks, PackerFormatMustMatchTheTargetBuffer) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, packWrongFormat),
                  "pack_tile into cb 16 (Float16_b) with the packer "
                  "configured for Float32 (from cb 0); call "
                  "pack_reconfig_data_format first");
}

TEST(TTEmulatorChecks, RowReductionNeedsTheFaceTransposedLayout) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, reduceIntoRowLayout),
                  "reduce_tile<REDUCE_ROW> accumulates into destination tile "
                  "0, which holds a tile in row layout");
}

TEST(TTEmulatorChecks, ReduceMasksNeedReduceUninit) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, packWithReduceMasks),
                  "pack_tile with the packer edge masks of reduce_init still "
                  "set (last init: copy_tile_to_dst_init_short); call "
                  "reduce_uninit after the reduction");
}

TEST(TTEmulatorChecks, DestinationCapacityDependsOnAccumulation) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, dstIndexPastCapacity),
                  "copy_tile: destination tile 4 is out of range: 4 tiles "
                  "with fp32 accumulation (half-sync)");
  // Tile 7 fits the 8 tiles of a 16-bit destination; the run then blocks
  // (nothing is packed), which is the deadlock the report names.
  std::string err =
      runCompute(device, out, dstIndex4Bit16, /*fp32DestAccEn=*/false);
  EXPECT_EQ(err.find("out of range"), std::string::npos) << err;
}

TEST(TTEmulatorChecks, RegisterHandshakeOrder) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  EXPECT_CONTAINS(runCompute(device, out, mathAfterCommit),
                  "copy_tile writes destination registers outside "
                  "tile_regs_acquire .. tile_regs_commit");
}

TEST(TTEmulatorChecks, NocAlignmentAsTheWatcherChecksIt) {
  auto read = [](Arch arch, uint32_t offset, uint32_t size) {
    Device device(arch);
    Buffer b = device.allocate(4096, 1);
    return runOne(device, {{0, 1, 4096, DataFormat::Float32}},
                  kernel("reader", KernelKind::Reader, readAtOffsetReader),
                  {b.address, offset, size});
  };
  // A 4-byte block-table entry at byte 4 of a page into aligned L1.
  EXPECT_CONTAINS(read(Arch::WormholeB0, 4, 4),
                  "noc_async_read: DRAM address 0x24 and L1 address");
  EXPECT_CONTAINS(read(Arch::WormholeB0, 4, 4),
                  "differ modulo 32 (the wormhole_b0 NOC DRAM read "
                  "alignment); the debug watcher stops the device on this "
                  "(DebugSanitizeNocAlignment)");
  // 32 bytes in: fine on Wormhole, not on Blackhole's 64-byte alignment.
  EXPECT_EQ(read(Arch::WormholeB0, 32, 32), "");
  EXPECT_CONTAINS(read(Arch::Blackhole, 32, 32),
                  "differ modulo 64 (the blackhole NOC DRAM read alignment)");
  EXPECT_CONTAINS(read(Arch::WormholeB0, 0, 0), "a zero-length transfer");

  // Writes: DRAM write alignment is 16 on both.
  auto write = [](uint32_t l1Offset, uint32_t dramOffset) {
    Device device;
    Buffer b = device.allocate(4096, 1);
    return runOne(device, {{0, 1, 4096, DataFormat::Float32}},
                  kernel("writer", KernelKind::Writer, writeAtOffsetWriter),
                  {b.address, l1Offset, dramOffset});
  };
  EXPECT_CONTAINS(write(0, 4), "differ modulo 16 (the wormhole_b0 NOC DRAM "
                               "write alignment)");
  EXPECT_EQ(write(4, 20), "");
}

TEST(TTEmulatorChecks, CircularBuffersMustFitL1) {
  Device device;
  // 48 pages of 32 KiB = 1.5 MiB, more than a Wormhole core's L1.
  std::string err = runOne(device, {{0, 48, 32768, DataFormat::Float32}},
                           kernel("reader", KernelKind::Reader, [] {}));
  EXPECT_CONTAINS(err, "the program's circular buffers need 1572864 bytes of "
                       "L1 per core");
  EXPECT_CONTAINS(err, "a wormhole_b0 core has for them");
  EXPECT_CONTAINS(runOne(device, {{0, 1, 20, DataFormat::Float32}},
                         kernel("reader", KernelKind::Reader, [] {})),
                  "circular buffer 0 has pages of 20 bytes, not a multiple "
                  "of the 16-byte L1 alignment");
}

TEST(TTEmulatorChecks, RuntimeArgumentLimit) {
  Device device;
  std::vector<uint32_t> args(kMaxRuntimeArgs + 1, 0);
  EXPECT_CONTAINS(runOne(device, {},
                         kernel("reader", KernelKind::Reader, [] {}), args),
                  "kernel 'reader' gets 342 runtime arguments on core 0; "
                  "TT-Metalium allows 341 per kernel and core");
  args.pop_back();
  EXPECT_EQ(runOne(device, {}, kernel("reader", KernelKind::Reader, [] {}),
                   args),
            "");
}

//===--- Blocking, deadlocks, bad accesses ----------------------------------===//

TEST(TTEmulator, DeadlockIsReportedNotWaitedOut) {
  Device device;
  // Compute waits for a tile nobody pushes; the writer waits for compute's
  // output; the reader finishes at once.
  ProgramSpec prog =
      program({{24, 1, 4096, DataFormat::Float32},
               {16, 1, 4096, DataFormat::Float32}},
              {kernel("reader", KernelKind::Reader, [] {}),
               kernel("compute", KernelKind::Compute, computeWaitsForever),
               kernel("writer", KernelKind::Writer, writerWaitsForCompute)});
  attn::Status st = runProgram(device, prog, {{{}, {}, {}}});
  ASSERT_FALSE(st.isOk());
  EXPECT_CONTAINS(st.message(), "deadlock on core 0");
  EXPECT_CONTAINS(st.message(), "kernel 'compute' (compute) blocked in "
                                "cb_wait_front(cb 24, 1 tile(s))");
  EXPECT_CONTAINS(st.message(), "kernel 'writer' (writer) blocked in "
                                "cb_wait_front(cb 16, 1 tile(s))");
  EXPECT_CONTAINS(st.message(), "kernel 'reader' (reader) finished");
}

TEST(TTEmulator, ProducerBlockedOnFullBufferDeadlocks) {
  Device device;
  EXPECT_CONTAINS(runOne(device, {{0, 2, 32, DataFormat::Float32}},
                         kernel("reader", KernelKind::Reader,
                                pushThreeIntoTwo)),
                  "cb_reserve_back(cb 0, 1 tile(s)): 0 of 2 pages free");
}

TEST(TTEmulator, BadAccessesFailWithMessages) {
  Device device;
  Buffer b = device.allocate(64, 1);
  EXPECT_CONTAINS(runOne(device, {{0, 1, 64, DataFormat::Float32}},
                         kernel("reader", KernelKind::Reader,
                                readPastBankReader),
                         {b.address}),
                  "outside the bank");
  EXPECT_CONTAINS(runOne(device, {},
                         kernel("compute", KernelKind::Compute,
                                waitOnUnconfigured)),
                  "circular buffer 9 is not configured");
}

} // namespace
