//===- EmulatorTest.cpp - The TT host emulator on its own ----------------===//
//
// Kernels here are host lambdas calling the emulated API directly: they test
// the device model (tiles, circular buffers, DRAM, compute semantics,
// deadlock detection), not attn's kernels, which EndToEndTest.cpp runs.
//
//===----------------------------------------------------------------------===//
#include "runtime/executors/tt/Emulator.h"

#include "attn_tt_api.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace attn::tt;

namespace {

ProgramSpec program(std::vector<CircularBufferSpec> cbs,
                    std::vector<KernelSpec> kernels) {
  ProgramSpec p;
  p.circularBuffers = std::move(cbs);
  p.kernels = std::move(kernels);
  return p;
}

KernelSpec kernel(const char *name, KernelKind kind, KernelEntry entry) {
  KernelSpec k;
  k.name = name;
  k.kind = kind;
  k.entry = std::move(entry);
  return k;
}

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

TEST(TTEmulator, InterleavedPagesRoundTrip) {
  Device device;
  Buffer b = device.allocate(100, 30);
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

/// A reader streams DRAM pages through a 2-page circular buffer to a writer
/// that copies them to another buffer: more pages than the buffer holds, so
/// both sides block and resume.
TEST(TTEmulator, CircularBufferStreamsBetweenThreads) {
  Device device;
  constexpr uint32_t kPages = 17, kSize = 64;
  Buffer src = device.allocate(kSize, kPages);
  Buffer dst = device.allocate(kSize, kPages);
  for (uint32_t p = 0; p < kPages; ++p) {
    std::vector<uint8_t> data(kSize, uint8_t(3 * p + 1));
    device.writePage(src, p, data.data());
  }
  auto reader = [] {
    InterleavedAddrGen<true> s{get_arg_val<uint32_t>(0), kSize};
    for (uint32_t p = 0; p < kPages; ++p) {
      cb_reserve_back(0, 1);
      noc_async_read(get_noc_addr(p, s), get_write_ptr(0), kSize);
      noc_async_read_barrier();
      cb_push_back(0, 1);
    }
  };
  auto writer = [] {
    InterleavedAddrGen<true> d{get_arg_val<uint32_t>(1), kSize};
    for (uint32_t p = 0; p < kPages; ++p) {
      cb_wait_front(0, 1);
      noc_async_write(get_read_ptr(0), get_noc_addr(p, d), kSize);
      noc_async_write_barrier();
      cb_pop_front(0, 1);
    }
  };
  ProgramSpec prog = program({{0, 2, kSize, DataFormat::Float32}},
                             {kernel("reader", KernelKind::Reader, reader),
                              kernel("writer", KernelKind::Writer, writer)});
  std::vector<uint32_t> args = {src.address, dst.address};
  attn::Status st = runProgram(device, prog, {{args, args}});
  ASSERT_TRUE(st.isOk()) << st.message();
  for (uint32_t p = 0; p < kPages; ++p) {
    std::vector<uint8_t> back(kSize);
    device.readPage(dst, p, back.data());
    EXPECT_EQ(back[7], uint8_t(3 * p + 1));
  }
}

/// The reader fills two f32 tiles; compute multiplies them (the second
/// transposed), row-max reduces, exponentiates and packs to bf16.
TEST(TTEmulator, ComputeTileOps) {
  Device device;
  Buffer out = device.allocate(2048, 2);
  auto reader = [] {
    cb_reserve_back(0, 2);
    auto *a = reinterpret_cast<float *>(uintptr_t(get_write_ptr(0)));
    for (uint32_t r = 0; r < 32; ++r)
      for (uint32_t c = 0; c < 32; ++c) {
        a[faceOffset(r, c)] = r == c ? 2.0f : 0.0f;       // 2 I
        a[1024 + faceOffset(r, c)] = float(r) + c / 8.0f; // B
      }
    cb_push_back(0, 2);
    cb_reserve_back(1, 1);
    auto *s = reinterpret_cast<float *>(uintptr_t(get_write_ptr(1)));
    for (uint32_t i = 0; i < 1024; ++i)
      s[i] = 1.0f;
    cb_push_back(1, 1);
  };
  auto compute = [] {
    cb_wait_front(0, 2);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    matmul_tiles(0, 0, 0, 1, 0, /*transpose=*/1); // 2 I x B^T = 2 B^T
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_wait_front(16, 1);
    tile_regs_acquire();
    copy_tile(0, 1, 1); // B
    reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 1, 0, 1);
    exp_tile(1);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(17, 1);
    pack_tile(1, 17);
    cb_push_back(17, 1);
    tile_regs_release();
  };
  auto writer = [] {
    InterleavedAddrGen<true> d{get_arg_val<uint32_t>(0), 2048};
    cb_wait_front(16, 1);
    noc_async_write(get_read_ptr(16), get_noc_addr(0, d), 2048);
    cb_wait_front(17, 1);
    noc_async_write(get_read_ptr(17), get_noc_addr(1, d), 2048);
    noc_async_write_barrier();
  };
  ProgramSpec prog = program(
      {{0, 2, 4096, DataFormat::Float32},
       {1, 1, 4096, DataFormat::Float32},
       {16, 1, 2048, DataFormat::Float16_b},
       {17, 1, 2048, DataFormat::Float16_b}},
      {kernel("reader", KernelKind::Reader, reader),
       kernel("compute", KernelKind::Compute, compute),
       kernel("writer", KernelKind::Writer, writer)});
  std::vector<uint32_t> args = {out.address};
  attn::Status st = runProgram(device, prog, {{args, args, args}});
  ASSERT_TRUE(st.isOk()) << st.message();
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
  // Row max of B is r + 31/8; its exp, rounded to bf16 (8 bits).
  float expected = std::exp(7 + 31 / 8.0f);
  EXPECT_NEAR(value(1, 7, 0), expected, expected / 128);
}

TEST(TTEmulator, DeadlockIsReportedNotWaitedOut) {
  Device device;
  // Compute waits for a tile nobody pushes; the writer waits for compute's
  // output; the reader finishes at once.
  auto reader = [] {};
  auto compute = [] {
    cb_wait_front(24, 1);
    cb_reserve_back(16, 1);
    cb_push_back(16, 1);
  };
  auto writer = [] { cb_wait_front(16, 1); };
  ProgramSpec prog = program({{24, 1, 4096, DataFormat::Float32},
                              {16, 1, 4096, DataFormat::Float32}},
                             {kernel("reader", KernelKind::Reader, reader),
                              kernel("compute", KernelKind::Compute, compute),
                              kernel("writer", KernelKind::Writer, writer)});
  attn::Status st = runProgram(device, prog, {{{}, {}, {}}});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("deadlock on core 0"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel 'compute' (compute) blocked in "
                              "cb_wait_front(cb 24, 1 tile(s))"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel 'writer' (writer) blocked in "
                              "cb_wait_front(cb 16, 1 tile(s))"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel 'reader' (reader) finished"),
            std::string::npos)
      << st.message();
}

TEST(TTEmulator, ProducerBlockedOnFullBufferDeadlocks) {
  Device device;
  auto reader = [] {
    for (int i = 0; i < 3; ++i) {
      cb_reserve_back(0, 1);
      cb_push_back(0, 1);
    }
  };
  ProgramSpec prog = program({{0, 2, 32, DataFormat::Float32}},
                             {kernel("reader", KernelKind::Reader, reader)});
  attn::Status st = runProgram(device, prog, {{{}}});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("cb_reserve_back(cb 0, 1 tile(s)): 0 of 2 "
                              "pages free"),
            std::string::npos)
      << st.message();
}

TEST(TTEmulator, BadAccessesFailWithMessages) {
  Device device;
  Buffer b = device.allocate(64, 1);
  auto reader = [] {
    InterleavedAddrGen<true> s{get_arg_val<uint32_t>(0), 64};
    cb_reserve_back(0, 1);
    // Page 5 of a 1-page buffer lies past the bank's end.
    noc_async_read(get_noc_addr(5000, s), get_write_ptr(0), 64);
  };
  ProgramSpec prog = program({{0, 1, 64, DataFormat::Float32}},
                             {kernel("reader", KernelKind::Reader, reader)});
  attn::Status st = runProgram(device, prog, {{{b.address}}});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("outside the bank"), std::string::npos)
      << st.message();

  auto unconfigured = [] { cb_wait_front(9, 1); };
  ProgramSpec prog2 =
      program({}, {kernel("compute", KernelKind::Compute, unconfigured)});
  st = runProgram(device, prog2, {{{}}});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("circular buffer 9 is not configured"),
            std::string::npos)
      << st.message();
}

} // namespace
