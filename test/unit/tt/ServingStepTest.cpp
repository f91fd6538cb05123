//===- ServingStepTest.cpp - What a TT serving step moves ----------------===//
//
// A serving loop's steps (reshape_and_cache, then paged_attention over the
// updated cache) launched on a TTPlanDevice over the emulator, counting what
// crosses between the host and the emulator's DRAM: the cache is tilized
// once and stays in DRAM; a step moves the new tokens and the metadata in
// and nothing out, its outputs staying in DRAM until the host reads them
// (once, the bits the host-side program run gives); one launch's output
// feeds the next launch without crossing; a host read of the cache
// untilizes it once, bit for bit the reference's cache, and a host write
// makes the next launch tilize it again.
//
//===----------------------------------------------------------------------===//
#include "devices/tt/AttentionOps.h"
#include "devices/tt/EmulatorDevice.h"
#include "devices/tt/TTPlanDevice.h"
#include "dialect/AttnDialect.h"
#include "lowering/AttnToTT/TTMetalTarget.h"
#include "reference/ops/Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace attn;
using namespace attn::runtime;

namespace {

constexpr int64_t kHeads = 8, kKvHeads = 2, kHeadSize = 64, kBlock = 16,
                  kBlocks = 16, kEsz = 2;

/// Llama-like bf16: the cache write and the attention of one layer.
constexpr const char *kLayer = R"(
func.func @write(%k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                 %c: tensor<?x2x16x2x64xbf16>, %s: tensor<?xi64>)
    -> tensor<?x2x16x2x64xbf16> {
  %r = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>,
        tensor<?x2x16x2x64xbf16> -> tensor<?x2x16x2x64xbf16>
  return %r : tensor<?x2x16x2x64xbf16>
}
func.func @attend(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xbf16>,
                  %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                  %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                  %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xbf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xbf16>, tensor<?x8xf32>
}
)";

Tensor filled(DType dtype, std::vector<int64_t> shape, double phase) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFloat(i, std::sin(phase + 0.37 * double(i)));
  return t;
}

Tensor ints(DType dtype, std::vector<int64_t> values) {
  Tensor t(dtype, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t.setInt(int64_t(i), values[i]);
  return t;
}

class TTServingStep : public ::testing::Test {
protected:
  void SetUp() override {
    context
        .loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect,
                     mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kLayer, &context);
    ASSERT_TRUE(module);
    dir = (std::filesystem::temp_directory_path() /
           ("attn-tt-step-" + std::to_string(getpid())))
              .string();
    ASSERT_TRUE(
        mlir::succeeded(mlir::attn::translateAttnToTTMetal(*module, dir)));
    ASSERT_TRUE(device.addProgram("write", dir + "/write").isOk());
    ASSERT_TRUE(device.addProgram("attend", dir + "/attend").isOk());
    Result<DeviceTensor> c = allocateTensor(
        device, DType::BF16, {kBlocks, 2, kBlock, kKvHeads, kHeadSize});
    ASSERT_TRUE(c.isOk()) << c.message();
    cache = *c;
    hostCache = Tensor(DType::BF16, cache.shape);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  /// One step: `lens` [R] sequence lengths after the step, `queryLens` [R]
  /// its new tokens; request r owns blocks 4r .. 4r + 3. Also applies the
  /// cache write to hostCache with the reference op.
  void step(const std::vector<int64_t> &lens,
            const std::vector<int64_t> &queryLens, double phase) {
    int64_t R = int64_t(lens.size()), T = 0;
    std::vector<int64_t> qsl = {0}, slots, table;
    for (int64_t r = 0; r < R; ++r) {
      T += queryLens[r];
      qsl.push_back(T);
      for (int64_t p = lens[r] - queryLens[r]; p < lens[r]; ++p)
        slots.push_back((4 * r + p / kBlock) * kBlock + p % kBlock);
      for (int64_t b = 0; b < 4; ++b)
        table.push_back(4 * r + b);
    }
    Tensor k = filled(DType::BF16, {T, kKvHeads, kHeadSize}, phase);
    Tensor v = filled(DType::BF16, {T, kKvHeads, kHeadSize}, phase + 1);
    Tensor q = filled(DType::BF16, {T, kHeads, kHeadSize}, phase + 2);
    Tensor slotT = ints(DType::I64, slots);
    Tensor bt(DType::I32, {R, 4});
    for (int64_t i = 0; i < R * 4; ++i)
      bt.setInt(i, table[i]);
    ASSERT_TRUE(reshapeAndCache(k, v, hostCache, slotT, KvLayout::NHD).isOk());

    auto dev = [&](const Tensor &t) { return toDevice(device, t).value(); };
    DeviceTensor dk = dev(k), dv = dev(v), ds = dev(slotT);
    query = q;
    blockTable = bt;
    seqLens = ints(DType::I32, lens);
    starts = ints(DType::I32, qsl);
    dq = dev(q);
    dbt = dev(bt);
    dlens = dev(seqLens);
    dqsl = dev(starts);
    out = allocateTensor(device, DType::BF16, {T, kHeads, kHeadSize}).value();
    lse = allocateTensor(device, DType::F32, {T, kHeads}).value();
    BufferView write[] = {dk.view(), dv.view(), ds.view(), cache.view()};
    ASSERT_TRUE(
        device.launch("write", {uint32_t(T), 1, 1}, {1, 1, 1}, write).isOk());
    attend(dq, out, lse);
    // What this step's launches upload besides the cache: the new keys and
    // values and their slots, the queries and the block table (a 256-byte
    // page per request); seq_lens and query_start_loc stay on the host,
    // which lays out the work from them. out and lse stay in DRAM.
    newTokenBytes = uint64_t(2 * T * kKvHeads * kHeadSize * kEsz + 8 * T +
                             T * kHeads * kHeadSize * kEsz + 256 * R);
    outputBytes = uint64_t(T * kHeads * kHeadSize * kEsz + T * kHeads * 4);
  }

  /// Launches the attention of the last step's metadata on `q`.
  void attend(const DeviceTensor &q, const DeviceTensor &o,
              const DeviceTensor &l) {
    uint32_t T = uint32_t(q.shape[0]), R = uint32_t(blockTable.dim(0));
    BufferView args[] = {q.view(),    cache.view(), dbt.view(), dlens.view(),
                         dqsl.view(), o.view(),     l.view()};
    Status s = device.launch("attend", {T, R, 4}, {1, 1, 1}, args);
    ASSERT_TRUE(s.isOk()) << s.message();
  }

  /// The host-side run of the attention program on `q` over hostCache: out
  /// and lse as a launch that reads its operands from and its results back
  /// to the host gives them.
  AttentionOutput hostAttend(const Tensor &q) {
    Result<AttentionOutput> r = tt::runAttentionProgram(
        emulator, device.programs().at("attend"), q, hostCache, blockTable,
        seqLens, &starts, nullptr, nullptr, KvLayout::NHD);
    EXPECT_TRUE(r.isOk()) << r.message();
    return std::move(*r);
  }

  static bool sameBits(const Tensor &a, const Tensor &b) {
    return a.numBytes() == b.numBytes() &&
           std::memcmp(a.data(), b.data(), a.numBytes()) == 0;
  }

  const uint64_t tileBytes =
      uint64_t(kBlocks / 2 * 2 * kKvHeads * 2) * 1024 * kEsz;
  mlir::MLIRContext context;
  std::string dir;
  tt::EmulatorDevice emulator;
  tt::TTPlanDevice device{emulator};
  DeviceTensor cache;
  Tensor hostCache;
  /// The last step's queries and metadata, on the host and the device, and
  /// its outputs.
  Tensor query, blockTable, seqLens, starts;
  DeviceTensor dq, dbt, dlens, dqsl, out, lse;
  uint64_t newTokenBytes = 0, outputBytes = 0;
};

TEST_F(TTServingStep, TheCacheStaysTiledInDram) {
  // The prefill tilizes the (zero) cache once.
  step({20, 7}, {20, 7}, 0.1);
  EXPECT_EQ(emulator.transfers().bytesToDevice, tileBytes + newTokenBytes);
  EXPECT_EQ(emulator.transfers().bytesToHost, 0u);

  // Decodes move the new tokens and metadata in, nothing out.
  for (int i = 0; i < 3; ++i) {
    emulator.resetTransfers();
    step({21 + i, 8 + i}, {1, 1}, 0.2 + i);
    EXPECT_EQ(emulator.transfers().bytesToDevice, newTokenBytes) << i;
    EXPECT_EQ(emulator.transfers().bytesToHost, 0u) << i;
  }

  // The host reads the cache: untilized once, the reference's bits.
  emulator.resetTransfers();
  Result<Tensor> back = toHost(cache);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(std::memcmp(back->data(), hostCache.data(), hostCache.numBytes()),
            0);
  EXPECT_EQ(emulator.transfers().bytesToHost, tileBytes);
  ASSERT_TRUE(toHost(cache).isOk());
  EXPECT_EQ(emulator.transfers().bytesToHost, tileBytes);

  // A host write to the cache: the next launch tilizes it again, and the
  // tiles see the write.
  ASSERT_TRUE(upload(hostCache, cache).isOk());
  emulator.resetTransfers();
  step({24, 11}, {1, 1}, 0.9);
  EXPECT_EQ(emulator.transfers().bytesToDevice, tileBytes + newTokenBytes);
  EXPECT_EQ(emulator.transfers().bytesToHost, 0u);
  back = toHost(cache);
  ASSERT_TRUE(back.isOk()) << back.message();
  EXPECT_EQ(std::memcmp(back->data(), hostCache.data(), hostCache.numBytes()),
            0);
}

TEST_F(TTServingStep, OutputsComeBackWhenTheHostReadsThem) {
  step({20, 7}, {20, 7}, 0.1);
  step({21, 8}, {1, 1}, 0.2);
  emulator.resetTransfers();
  Result<Tensor> o = toHost(out);
  ASSERT_TRUE(o.isOk()) << o.message();
  Result<Tensor> l = toHost(lse);
  ASSERT_TRUE(l.isOk()) << l.message();
  EXPECT_EQ(emulator.transfers().bytesToHost, outputBytes);
  EXPECT_EQ(emulator.transfers().bytesToDevice, 0u);
  // Once: the host copy is current now.
  ASSERT_TRUE(toHost(out).isOk());
  ASSERT_TRUE(toHost(lse).isOk());
  EXPECT_EQ(emulator.transfers().bytesToHost, outputBytes);

  AttentionOutput expected = hostAttend(query);
  EXPECT_TRUE(sameBits(*o, expected.out));
  EXPECT_TRUE(sameBits(*l, expected.lse));
}

TEST_F(TTServingStep, OneLaunchFeedsTheNextInDram) {
  step({20, 7}, {20, 7}, 0.1);
  step({21, 8}, {1, 1}, 0.2);
  // The step's output (head size = value size) is the next launch's query;
  // the block table it reads is the one already in DRAM.
  DeviceTensor out2 = allocateTensor(device, DType::BF16, out.shape).value();
  DeviceTensor lse2 = allocateTensor(device, DType::F32, lse.shape).value();
  emulator.resetTransfers();
  attend(out, out2, lse2);
  EXPECT_EQ(emulator.transfers().bytesToDevice, 0u);
  EXPECT_EQ(emulator.transfers().bytesToHost, 0u);

  Result<Tensor> o2 = toHost(out2);
  ASSERT_TRUE(o2.isOk()) << o2.message();
  Result<Tensor> l2 = toHost(lse2);
  ASSERT_TRUE(l2.isOk()) << l2.message();
  EXPECT_EQ(emulator.transfers().bytesToHost, outputBytes);
  EXPECT_EQ(emulator.transfers().bytesToDevice, 0u);

  // The same chain through the host gives the same bits.
  AttentionOutput first = hostAttend(query);
  AttentionOutput second = hostAttend(first.out);
  EXPECT_TRUE(sameBits(*o2, second.out));
  EXPECT_TRUE(sameBits(*l2, second.lse));
  // And the first output, read after it fed the second launch, is intact.
  Result<Tensor> o = toHost(out);
  ASSERT_TRUE(o.isOk()) << o.message();
  EXPECT_TRUE(sameBits(*o, first.out));
}

} // namespace
