//===- TTApiTest.cpp - attn's TT call table against the SDK declarations --===//
//
// Every function of lowering/AttnToTT/TTApi.h, called with the table's
// operand and template-argument counts, must compile against attn's
// declarations of the pinned TT-Metalium (devices/tt/sdk/include) with the SDK's
// JIT warning flags and deprecated calls as errors, and without the
// declarations the pinned SDK deprecates (the current SDK has removed them).
//
//===----------------------------------------------------------------------===//
#include "lowering/AttnToTT/TTApi.h"
#include "devices/tt/emulator/KernelCompiler.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace mlir::attn::tt;

namespace {

/// A test input, not a kernel (kernels come from convert-attn-to-ttkernel
/// through EmitC): a source that calls every function of the table for
/// `thread` with its operand and template-argument counts, to compile
/// against the SDK declarations.
std::string ttApiProbeSource(TTThread thread) {
  bool compute = thread == TTThread::Compute;
  llvm::SetVector<llvm::StringRef> headers;
  for (const TTFnInfo &fn : kTTFnInfos) {
    llvm::StringRef h = compute ? fn.computeHeader : fn.dataflowHeader;
    if (!h.empty())
      headers.insert(h);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Calls every TT-Metalium function of lowering/AttnToTT/TTApi.h "
        "that a "
     << (compute ? "compute" : "data movement")
     << " kernel may call, with the table's operand and template-argument "
        "counts.\n#include <cstdint>\n";
  if (compute)
    os << "#define REDUCE_OP PoolType::SUM\n"
          "#define REDUCE_DIM ReduceDim::REDUCE_ROW\n";
  for (llvm::StringRef h : headers)
    os << "#include \"" << h << "\"\n";
  os << "void kernel_main() {\n  uint32_t a = get_arg_val<uint32_t>(0);\n";
  for (const TTFnInfo &fn : kTTFnInfos) {
    llvm::StringRef h = compute ? fn.computeHeader : fn.dataflowHeader;
    if (h.empty())
      continue;
    os << "  ";
    if (fn.result == TTResult::U32)
      os << "a += uint32_t(";
    else if (fn.result == TTResult::U64)
      os << "a += uint32_t(";
    os << fn.name;
    if (!fn.probeTemplateArgs.empty())
      os << "<" << fn.probeTemplateArgs << ">";
    os << "(";
    // get_compile_time_arg_val takes its index as a literal.
    if (fn.name == "get_compile_time_arg_val")
      os << "0";
    for (unsigned i = 0; i < fn.numOperands; ++i)
      os << (i ? ", " : "") << "a";
    os << ")";
    if (fn.result != TTResult::None)
      os << ")";
    os << ";\n";
  }
  os << "}\n";
  return text;
}

/// Compiles `source` with the JIT flags, deprecated calls as errors and
/// `extra`; returns the compiler's output, "" on success.
std::string compile(const std::string &source, const char *riscDefine,
                    const char *extra = "") {
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("attn-tt-api-" + std::to_string(getpid())))
                        .string();
  std::filesystem::create_directories(dir);
  std::string file = dir + "/probe.cpp", log = dir + "/log";
  std::ofstream(file) << source;
  std::string cmd = std::string(ATTN_TT_TEST_CXX) +
                    " -fsyntax-only -DKERNEL_BUILD -DKERNEL_COMPILE_TIME_ARGS=1 " +
                    riscDefine;
  for (const std::string &f : attn::tt::jitKernelFlags())
    cmd += " " + f;
  for (const std::string &f : attn::tt::deprecationFlags())
    cmd += " " + f;
  cmd += std::string(" ") + extra + " -I" + ATTN_TT_SDK_INCLUDE_DIR + " " + file + " > " +
         log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  return rc == 0 ? "" : cmd + "\n" + text;
}

TEST(TTApi, DataflowCallsCompileAgainstTheDeclarations) {
  EXPECT_EQ(compile(ttApiProbeSource(TTThread::Dataflow),
                    "-DCOMPILE_FOR_NCRISC -DNOC_INDEX=1"),
            "");
}

TEST(TTApi, ComputeCallsCompileAgainstTheDeclarations) {
  for (const char *trisc : {"-DTRISC_UNPACK", "-DTRISC_MATH", "-DTRISC_PACK"})
    EXPECT_EQ(compile(ttApiProbeSource(TTThread::Compute), trisc), "")
        << trisc;
}

constexpr const char *kWithoutDeprecated = "-DATTN_TT_SDK_WITHOUT_DEPRECATED";

TEST(TTApi, CallsCompileWithoutTheDeprecatedDeclarations) {
  EXPECT_EQ(compile(ttApiProbeSource(TTThread::Dataflow),
                    "-DCOMPILE_FOR_NCRISC -DNOC_INDEX=1", kWithoutDeprecated),
            "");
  EXPECT_EQ(compile(ttApiProbeSource(TTThread::Compute), "-DTRISC_MATH",
                    kWithoutDeprecated),
            "");
}

/// A call the pinned SDK deprecates is an error, and the current SDK has no
/// such function: checked with the name PR #50745 replaced.
TEST(TTApi, ADeprecatedCallFailsTheProbe) {
  std::string probe = ttApiProbeSource(TTThread::Compute);
  std::string call = "  add_init(a, a);\n";
  size_t at = probe.find(call);
  ASSERT_NE(at, std::string::npos) << probe;
  probe.replace(at, call.size(), "  add_tiles_init(a, a);\n");
  std::string log = compile(probe, "-DTRISC_MATH");
  EXPECT_NE(log.find("is deprecated"), std::string::npos) << log;
  log = compile(probe, "-DTRISC_MATH", kWithoutDeprecated);
  EXPECT_NE(log.find("not declared"), std::string::npos) << log;
}

/// What the SDK rejects, attn's declarations reject: an unscoped LLK
/// enumerator, the old <to_from_int8> reconfig form, reduce_tile without
/// its pool type and dimension; and what the SDK makes a constant is one (a
/// data movement kernel's NOC).
TEST(TTApi, TheDeclarationsRejectWhatTheSdkRejects) {
  std::string compute = "#include \"api/compute/eltwise_binary.h\"\n"
                        "void kernel_main() {\n";
  std::string log = compile(
      compute + "  binary_tiles_init<true, ELWADD>(0, 1);\n}\n", "-DTRISC_MATH");
  EXPECT_NE(log.find("ELWADD"), std::string::npos) << log;
  EXPECT_NE(log.find("was not declared"), std::string::npos) << log;
  log = compile(compute + "  reconfig_data_format<true>(0, 1);\n}\n",
                "-DTRISC_UNPACK");
  EXPECT_NE(log.find("no matching function"), std::string::npos) << log;
  log = compile("#define REDUCE_OP PoolType::SUM\n"
                "#define REDUCE_DIM ReduceDim::REDUCE_ROW\n"
                "#include \"api/compute/reduce.h\"\n"
                "void kernel_main() {\n  reduce_tile(0, 1, 0, 0, 0);\n}\n",
                "-DTRISC_MATH");
  EXPECT_NE(log.find("no matching function"), std::string::npos) << log;
  EXPECT_EQ(compile("#include \"api/dataflow/dataflow_api.h\"\n"
                    "static_assert(noc_index == 1);\n"
                    "static_assert(InterleavedAddrGen<true>::is_dram);\n"
                    "void kernel_main() {}\n",
                    "-DCOMPILE_FOR_NCRISC -DNOC_INDEX=1"),
            "");
}

TEST(TTApi, ProbeTemplateArgumentsMatchTheTable) {
  for (const TTFnInfo &fn : kTTFnInfos) {
    unsigned count = fn.probeTemplateArgs.empty()
                         ? 0
                         : 1 + fn.probeTemplateArgs.count(',');
    EXPECT_EQ(count, fn.numTemplateArgs) << fn.name.str();
    EXPECT_EQ(lookupTTFn(fn.name).has_value(), true) << fn.name.str();
  }
  EXPECT_FALSE(lookupTTFn("mm_init_short").has_value());
}

/// A wrong name or arity in the table fails the probe: checked with a
/// mutated probe of a real entry.
TEST(TTApi, AWrongArityFailsTheProbe) {
  std::string probe = ttApiProbeSource(TTThread::Compute);
  std::string call = "  matmul_tiles(a, a, a, a, a);\n";
  size_t at = probe.find(call);
  ASSERT_NE(at, std::string::npos) << probe;
  probe.replace(at, call.size(), "  matmul_tiles(a, a, a, a, a, a);\n");
  std::string log = compile(probe, "-DTRISC_MATH");
  EXPECT_NE(log.find("too many arguments to function"), std::string::npos)
      << log;
}

} // namespace
