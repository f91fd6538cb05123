//===- TTProgramTest.cpp - A TT program.json, written and read -----------===//

#include "core/TTProgram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace attn::tt {
namespace {

/// A split-KV decode program on Blackhole: every member set.
TTProgram decodeProgram() {
  TTProgram p;
  p.name = "decode";
  p.op = "paged_attention";
  p.arch = Arch::Blackhole;
  p.params.numHeads = 8;
  p.params.headSize = 64;
  p.params.dtype = "bf16";
  p.params.scale = 0.125;
  p.params.softCap = 0;
  p.params.causal = true;
  p.gridX = 8;
  p.gridY = 2;
  p.circularBuffers = {{0, 2, 2048, DataFormat::Float16_b, "q"},
                       {24, 1, 4096, DataFormat::Float32, "scores"}};
  KernelDescription reader;
  reader.name = "reader";
  reader.processor = "riscv_1";
  reader.source = "reader.cpp";
  reader.compileTimeArgs = {1, 2};
  KernelDescription compute = reader;
  compute.name = "compute";
  compute.kind = KernelKind::Compute;
  compute.processor = "trisc";
  compute.source = "compute.cpp";
  compute.compileTimeArgs = {};
  p.kernels = {reader, compute};
  p.runtimeArgs = {"q_addr", "num_units"};
  p.unitArgs = {"row"};
  p.mergeProgram = "decode_merge";
  return p;
}

/// The layout program.json has always had (llvm::json's pretty form): keys
/// sorted, two-space indents, doubles in %.17g, compute-only kernel keys.
TEST(TTProgram, WritesTheLayoutOfProgramJson) {
  std::string json = writeTTProgram(decodeProgram());
  EXPECT_THAT(json, testing::HasSubstr("{\n  \"arch\": \"blackhole\",\n"
                              "  \"circular_buffers\": [\n    {\n"
                              "      \"data_format\": \"Float16_b\",\n"
                              "      \"id\": 0,\n"));
  EXPECT_THAT(json, testing::HasSubstr("\"compile_time_args\": [],\n"
                              "      \"fp32_dest_acc_en\": true,\n"
                              "      \"kind\": \"compute\",\n"
                              "      \"math_fidelity\": \"HiFi4\","));
  EXPECT_THAT(json, testing::HasSubstr("\"scale\": 0.125,\n"));
  EXPECT_THAT(json, testing::HasSubstr("\"soft_cap\": 0\n"));
  EXPECT_THAT(json, testing::HasSubstr("\"core_grid\": {\n    \"x\": 8,\n"
                              "    \"y\": 2\n  },"));
  EXPECT_EQ(json.find("\"math_fidelity\""),
            json.rfind("\"math_fidelity\""));
  EXPECT_TRUE(json.ends_with("\n  ]\n}\n"));
}

TEST(TTProgram, RoundTrip) {
  TTProgram p = decodeProgram();
  std::string json = writeTTProgram(p);
  Result<TTProgram> read = readTTProgram(json);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->name, "decode");
  EXPECT_EQ(read->op, "paged_attention");
  EXPECT_EQ(read->arch, Arch::Blackhole);
  EXPECT_EQ(read->gridX, 8u);
  EXPECT_EQ(read->gridY, 2u);
  EXPECT_EQ(read->numCores(), 16u);
  ASSERT_EQ(read->circularBuffers.size(), 2u);
  EXPECT_EQ(read->circularBuffers[1].id, 24u);
  EXPECT_EQ(read->circularBuffers[1].pageSize, 4096u);
  EXPECT_EQ(read->circularBuffers[1].format, DataFormat::Float32);
  EXPECT_EQ(read->circularBuffers[1].name, "scores");
  ASSERT_EQ(read->kernels.size(), 2u);
  EXPECT_EQ(read->kernels[0].kind, KernelKind::Reader);
  EXPECT_THAT(read->kernels[0].compileTimeArgs, testing::ElementsAre(1u, 2u));
  EXPECT_EQ(read->kernels[1].kind, KernelKind::Compute);
  EXPECT_EQ(read->kernels[1].processor, "trisc");
  EXPECT_THAT(read->runtimeArgs, testing::ElementsAre("q_addr", "num_units"));
  EXPECT_THAT(read->unitArgs, testing::ElementsAre("row"));
  EXPECT_EQ(read->mergeProgram, "decode_merge");
  EXPECT_EQ(read->params.numHeads, 8);
  EXPECT_EQ(read->params.scale, 0.125);
  EXPECT_EQ(read->params.causal, true);
  EXPECT_FALSE(read->params.numKvHeads.has_value());
  // What was read writes the same bytes.
  EXPECT_EQ(writeTTProgram(*read), json);
}

/// The least program.json the reader takes: no arch (Wormhole), no params.
TEST(TTProgram, OptionalMembers) {
  Result<TTProgram> read = readTTProgram(
      R"({"name": "p", "op": "paged_attention", "params": {},
          "core_grid": {"x": 1, "y": 1}, "circular_buffers": [],
          "kernels": [], "runtime_args": [], "unit_args": []})");
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->arch, Arch::WormholeB0);
  EXPECT_TRUE(read->mergeProgram.empty());
  EXPECT_FALSE(read->params.dtype.has_value());
}

/// Each malformed program.json is refused with an error naming what is
/// wrong.
TEST(TTProgram, ReaderErrors) {
  std::string good = writeTTProgram(decodeProgram());
  EXPECT_EQ(readTTProgram("{").message(), "json: malformed JSON");
  EXPECT_EQ(readTTProgram("[]").message(),
            "json: expected string member 'name'");
  // Each case edits `good` (replaces its first `from` by `to`).
  struct Case {
    const char *from, *to, *message;
  };
  const Case cases[] = {
      {"\"op\"", "\"ops\"", "json: expected string member 'op'"},
      {"\"params\"", "\"param\"", "json: expected object member 'params'"},
      {"\"kernels\"", "\"kernel\"", "json: expected array member 'kernels'"},
      {"\"unit_args\": [\n    \"row\"", "\"unit_args\": [\n    1",
       "program.json: 'unit_args' must list strings"},
      {"\"blackhole\"", "\"grayskull\"",
       "unknown architecture 'grayskull' (wormhole_b0 or blackhole)"},
      {"\"arch\": \"blackhole\"", "\"arch\": 1",
       "json: expected string member 'arch'"},
      {"\"x\": 8", "\"x\": 0", "core_grid needs positive x and y"},
      {"\"page_size\"", "\"size\"",
       "a circular buffer needs id, num_pages, page_size and data_format"},
      {"\"Float32\"", "\"Bfp8_b\"", "unknown data format 'Bfp8_b'"},
      // Issue 34: a second page off the DRAM alignment (sinks and slopes
      // in pages of 16 bytes) stopped every run on the emulator.
      {"\"page_size\": 2048", "\"page_size\": 16",
       "circular buffer 'q' (id 0): 2 pages of 16 bytes; a buffer of "
       "several pages needs pages a multiple of the blackhole DRAM read "
       "alignment (64 bytes), or a DRAM read into a later page is "
       "misaligned"},
      {"\"source\": \"compute.cpp\"", "\"src\": \"compute.cpp\"",
       "a kernel needs name, kind, source and compile_time_args"},
      {"\"kind\": \"compute\"", "\"kind\": \"mover\"",
       "unknown kernel kind 'mover'"},
      {"\"scale\": 0.125", "\"scale\": \"1/8\"",
       "params: json: expected number member 'scale'"},
      {"\"dtype\": \"bf16\"", "\"dtype\": 16",
       "params: json: expected string member 'dtype'"},
  };
  for (const Case &c : cases) {
    std::string json = good;
    size_t at = json.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    json.replace(at, std::string(c.from).size(), c.to);
    Result<TTProgram> read = readTTProgram(json);
    ASSERT_FALSE(read) << c.from;
    EXPECT_EQ(read.message(), c.message) << c.from;
  }
}

} // namespace
} // namespace attn::tt
