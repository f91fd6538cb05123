//===- EndToEndTest.cpp - attn IR to emulated TT kernels vs reference ----===//
//
// Each case writes one attn variant as MLIR, lowers it with
// convert-attn-to-ttkernel and emits it through EmitC
// (translateAttnToTTMetal), compiles the kernels, runs them on the host
// emulator over seeded random problems, and compares with the reference op
// functions within the tolerances of devices/tt/Check.h.
//
//===----------------------------------------------------------------------===//
#include "dialect/AttnDialect.h"
#include "lowering/AttnToTT/TTMetalTarget.h"
#include "devices/tt/Check.h"
#include "devices/tt/EmulatorDevice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <unistd.h>

using namespace attn;

namespace {

struct Variant {
  std::string name;
  std::string op = "paged_attention";
  int64_t heads = 8, kvHeads = 2, headSize = 64, blockSize = 16;
  std::string dtype = "bf16";
  std::string layout = "nhd";
  bool causal = true;
  int64_t windowLeft = -1, windowRight = -1;
  double softCap = 0;
  bool sinks = false;
  bool alibi = false;
  int64_t kvLoraRank = 0; // MLA; with reshape_and_cache the latent form
  int64_t ropeDim = 0;
  int64_t numKvSplits = 1; // MLA
  /// Problems to run: decode-only, prefill-only and mixed steps.
  std::vector<double> decodeFractions = {1.0, 0.0, 0.5};
};

std::string tensorType(std::initializer_list<int64_t> dims,
                       const std::string &elem) {
  std::ostringstream os;
  os << "tensor<";
  for (int64_t d : dims)
    os << (d < 0 ? std::string("?") : std::to_string(d)) << "x";
  os << elem << ">";
  return os.str();
}

std::string variantMlir(const Variant &v) {
  std::ostringstream os;
  std::string e = v.dtype;
  int64_t H = v.heads, G = v.kvHeads, D = v.headSize, B = v.blockSize;
  bool nhd = v.layout == "nhd";
  std::string cache = nhd ? tensorType({-1, 2, B, G, D}, e)
                          : tensorType({-1, 2, G, B, D}, e);
  if (v.op == "reshape_and_cache" && v.kvLoraRank > 0) {
    std::string kc = tensorType({-1, v.kvLoraRank}, e);
    std::string kp = tensorType({-1, v.ropeDim}, e);
    std::string c = tensorType({-1, B, v.kvLoraRank + v.ropeDim}, e);
    os << "func.func @" << v.name << "(%k: " << kc << ", %v: " << kp
       << ", %c: " << c << ", %s: tensor<?xi64>) -> " << c << " {\n"
       << "  %r = attn.reshape_and_cache %k, %v, %s outs(%c) : " << kc << ", "
       << kp << ", tensor<?xi64>, " << c << " -> " << c << "\n  return %r : "
       << c << "\n}\n";
    return os.str();
  }
  if (v.op == "reshape_and_cache") {
    std::string kv = tensorType({-1, G, D}, e);
    os << "func.func @" << v.name << "(%k: " << kv << ", %v: " << kv
       << ", %c: " << cache << ", %s: tensor<?xi64>) -> " << cache << " {\n"
       << "  %r = attn.reshape_and_cache %k, %v, %s outs(%c) layout("
       << v.layout << ") : " << kv << ", " << kv << ", tensor<?xi64>, "
       << cache << " -> " << cache << "\n  return %r : " << cache << "\n}\n";
    return os.str();
  }
  if (v.op == "merge_states") {
    std::string o = tensorType({-1, H, D}, e);
    std::string l = tensorType({-1, H}, "f32");
    os << "func.func @" << v.name << "(%oa: " << o << ", %la: " << l
       << ", %ob: " << o << ", %lb: " << l << ", %o: " << o << ", %l: " << l
       << ") -> (" << o << ", " << l << ") {\n"
       << "  %out, %lse = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l) : "
       << o << ", " << l << ", " << o << ", " << l << ", " << o << ", " << l
       << " -> " << o << ", " << l << "\n  return %out, %lse : " << o << ", "
       << l << "\n}\n";
    return os.str();
  }
  if (v.op == "mla_decode") {
    std::string q = tensorType({-1, H, D}, e);
    std::string c = tensorType({-1, B, D}, e);
    std::string o = tensorType({-1, H, v.kvLoraRank}, e);
    std::string l = tensorType({-1, H}, "f32");
    os << "func.func @" << v.name << "(%q: " << q << ", %c: " << c
       << ", %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: " << o
       << ", %l: " << l << ") -> (" << o << ", " << l << ") {\n"
       << "  %out, %lse = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) "
       << "kv_lora_rank(" << v.kvLoraRank << ") scale(0.125) num_kv_splits("
       << v.numKvSplits << ") : " << q << ", "
       << c << ", tensor<?x?xi32>, tensor<?xi32>, " << o << ", " << l
       << " -> " << o << ", " << l << "\n  return %out, %lse : " << o << ", "
       << l << "\n}\n";
    return os.str();
  }
  std::string q = tensorType({-1, H, D}, e);
  std::string l = tensorType({-1, H}, "f32");
  os << "func.func @" << v.name << "(%q: " << q << ", %c: " << cache
     << ", %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %qsl: tensor<?xi32>, "
     << "%o: " << q << ", %l: " << l << ", %sinks: tensor<" << H
     << "xf32>, %alibi: tensor<" << H << "xf32>) -> (" << q << ", " << l
     << ") {\n"
     << "  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) "
     << "block_table(%bt) {causal = " << (v.causal ? "true" : "false")
     << "} : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>\n"
     << "  %out, %lse = attn.paged_attention %q, %c, %md ";
  if (v.alibi)
    os << "alibi(%alibi : tensor<" << H << "xf32>) ";
  if (v.sinks)
    os << "sinks(%sinks : tensor<" << H << "xf32>) ";
  os << "outs(%o, %l) layout(" << v.layout << ") scale("
     << 1.0 / std::sqrt(double(D)) << ")";
  if (v.windowLeft >= 0)
    os << " window_left(" << v.windowLeft << ")";
  if (v.windowRight >= 0)
    os << " window_right(" << v.windowRight << ")";
  if (v.softCap > 0)
    os << " soft_cap(" << std::showpoint << v.softCap << std::noshowpoint
       << ")";
  os << " : " << q << ", " << cache << ", " << q << ", " << l << " -> " << q
     << ", " << l << "\n  return %out, %lse : " << q << ", " << l << "\n}\n";
  return os.str();
}

class TTEndToEnd : public ::testing::TestWithParam<Variant> {};

TEST_P(TTEndToEnd, MatchesReference) {
  const Variant &v = GetParam();
  mlir::MLIRContext context;
  context.loadDialect<mlir::attn::AttnDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  std::string text = variantMlir(v);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module) << "cannot parse:\n" << text;

  std::string dir = (std::filesystem::temp_directory_path() /
                     ("attn-tt-e2e-" + std::to_string(getpid())))
                        .string();
  ASSERT_TRUE(mlir::succeeded(mlir::attn::translateAttnToTTMetal(*module, dir)))
      << text;

  auto description = tt::loadProgramDescription(dir + "/" + v.name);
  ASSERT_TRUE(description.isOk()) << description.message();
  tt::EmulatorDevice device(description->arch);
  auto program = tt::loadProgram(dir + "/" + v.name, device);
  ASSERT_TRUE(program.isOk()) << program.message();

  uint64_t seed = 1;
  for (double fraction : v.decodeFractions) {
    tt::CheckOptions options;
    options.layout = *parseKvLayout(v.layout);
    options.problem.seed = seed++;
    options.problem.numReqs = 3;
    options.problem.decodeFraction = fraction;
    options.problem.minContextLen = 1;
    // Context and query lengths that are rarely multiples of 32, and
    // prefills longer than one 32-row tile.
    options.problem.maxContextLen = 90;
    options.problem.maxPrefillQueryLen = 45;
    std::string report;
    bool passed = false;
    Status st = tt::checkProgram(device, *program, options, report, passed);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::printf("%s, decode fraction %.1f:\n%s", v.name.c_str(), fraction,
                report.c_str());
    EXPECT_TRUE(passed) << v.name << " decode fraction " << fraction << "\n"
                        << report;
  }
  std::filesystem::remove_all(dir);
}

Variant paged(std::string name, int64_t D, int64_t B, std::string dtype) {
  Variant v;
  v.name = std::move(name);
  v.headSize = D;
  v.blockSize = B;
  v.dtype = std::move(dtype);
  return v;
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  // Head sizes 64 / 128, block sizes 16 / 32 / 64, bf16 and f32, GQA 4:1.
  out.push_back(paged("d128_b16_bf16", 128, 16, "bf16"));
  out.push_back(paged("d64_b32_bf16", 64, 32, "bf16"));
  out.push_back(paged("d64_b16_f32", 64, 16, "f32"));
  out.push_back(paged("d128_b32_f32", 128, 32, "f32"));
  out.push_back(paged("d64_b64_bf16", 64, 64, "bf16"));
  Variant hnd = paged("d64_b16_bf16_hnd", 64, 16, "bf16");
  hnd.layout = "hnd";
  out.push_back(hnd);
  Variant mha = paged("mha_d64_b16_bf16", 64, 16, "bf16");
  mha.heads = mha.kvHeads = 4;
  out.push_back(mha);
  Variant window = paged("window_cap_sinks", 64, 16, "bf16");
  window.windowLeft = 20;
  window.softCap = 30.0;
  window.sinks = true;
  out.push_back(window);
  Variant bidir = paged("noncausal_window", 64, 32, "f32");
  bidir.causal = false;
  bidir.windowLeft = 25;
  bidir.windowRight = 7;
  out.push_back(bidir);
  Variant cache = paged("cache_b16_bf16", 64, 16, "bf16");
  cache.op = "reshape_and_cache";
  out.push_back(cache);
  Variant cacheHnd = paged("cache_b32_f32_hnd", 128, 32, "f32");
  cacheHnd.op = "reshape_and_cache";
  cacheHnd.layout = "hnd";
  out.push_back(cacheHnd);
  Variant mla = paged("mla_b16_bf16", 96, 16, "bf16");
  mla.op = "mla_decode";
  mla.heads = 16;
  mla.kvHeads = 1;
  mla.kvLoraRank = 64;
  mla.decodeFractions = {1.0};
  out.push_back(mla);
  Variant mlaSplit = mla;
  mlaSplit.name = "mla_split4_bf16";
  mlaSplit.numKvSplits = 4;
  out.push_back(mlaSplit);
  Variant mlaF16 = mla;
  mlaF16.name = "mla_b64_f16";
  mlaF16.dtype = "f16";
  mlaF16.blockSize = 64;
  out.push_back(mlaF16);

  // f16 (TT-Metalium's Float16), blocks below a face, ALiBi.
  out.push_back(paged("d64_b16_f16", 64, 16, "f16"));
  Variant f16Hnd = paged("d128_b32_f16_hnd", 128, 32, "f16");
  f16Hnd.layout = "hnd";
  out.push_back(f16Hnd);
  out.push_back(paged("d64_b8_bf16", 64, 8, "bf16"));
  out.push_back(paged("d64_b4_f32", 64, 4, "f32"));
  out.push_back(paged("d64_b2_f16", 64, 2, "f16"));
  Variant alibi = paged("alibi_bf16", 64, 16, "bf16");
  alibi.alibi = true;
  out.push_back(alibi);
  Variant alibiAll = paged("alibi_cap_window_sinks_f16", 64, 32, "f16");
  alibiAll.alibi = true;
  alibiAll.softCap = 20.0;
  alibiAll.windowLeft = 33;
  alibiAll.sinks = true;
  out.push_back(alibiAll);
  Variant alibiF32 = paged("alibi_noncausal_f32", 64, 16, "f32");
  alibiF32.alibi = true;
  alibiF32.causal = false;
  out.push_back(alibiF32);
  Variant cacheF16 = paged("cache_b8_f16", 64, 8, "f16");
  cacheF16.op = "reshape_and_cache";
  out.push_back(cacheF16);
  Variant latent = paged("latent_cache_b16_bf16", 0, 16, "bf16");
  latent.op = "reshape_and_cache";
  latent.kvLoraRank = 512;
  latent.ropeDim = 64;
  out.push_back(latent);
  for (const char *dtype : {"bf16", "f16", "f32"}) {
    Variant merge = paged(std::string("merge_states_") + dtype, 64, 16, dtype);
    merge.op = "merge_states";
    merge.decodeFractions = {1.0};
    out.push_back(merge);
  }
  Variant merge128 = paged("merge_states_h40_d128_bf16", 128, 16, "bf16");
  merge128.op = "merge_states";
  merge128.heads = 40;
  merge128.decodeFractions = {1.0};
  out.push_back(merge128);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Grid, TTEndToEnd, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant> &info) {
                           return info.param.name;
                         });

} // namespace
