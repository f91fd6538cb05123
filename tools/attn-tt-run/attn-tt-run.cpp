//===- attn-tt-run.cpp - Runs an emitted TT program against the reference -===//
//
//   attn-tt-run PROGRAM_DIR [--seed N] [--reqs N] [--decode-fraction F]
//               [--min-context N] [--max-context N] [--max-prefill N]
//               [--layout nhd|hnd] [--cores N]
//   attn-tt-run --compile-only [--without-deprecated] PROGRAM_DIR...
//
// PROGRAM_DIR is one program folder written by attn-translate
// --attn-to-ttmetal. Draws a seeded problem of the program's shape, runs the
// reference and the program on the host emulator, prints the errors and
// PASS or FAIL; exits 0 only on PASS.
//
// --compile-only builds every kernel of every PROGRAM_DIR (and of its merge
// program) as TT-Metalium's
// JIT build would for the device (checkDeviceBuild in
// devices/tt/emulator/KernelCompiler.h: the SDK's warning flags, -Werror, per RISC),
// against attn's declarations of the pinned SDK with its deprecated calls as
// errors (--without-deprecated: without those declarations, as in the
// current SDK, which has removed them), and prints one line per kernel;
// exits 1 at the first kernel that does not compile.
//
//===----------------------------------------------------------------------===//
#include "core/Version.h"
#include "devices/tt/Check.h"
#include "devices/tt/EmulatorDevice.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace attn;
using namespace attn::tt;

static const char *kUsage =
    "usage: attn-tt-run PROGRAM_DIR [--seed N] [--reqs N] "
    "[--decode-fraction F] [--min-context N] [--max-context N] "
    "[--max-prefill N] [--layout nhd|hnd] [--cores N]\n"
    "       attn-tt-run --compile-only [--without-deprecated] "
    "PROGRAM_DIR...\n"
    "       attn-tt-run --version\n";

static int usage() {
  std::fprintf(stderr, "%s", kUsage);
  return 2;
}

/// Builds the kernels of the program in `dir` and of its merge program;
/// false at the first that does not build.
static bool compileProgram(const std::string &dir, SdkDeclarations decls,
                           int &kernels) {
  auto desc = loadProgramDescription(dir);
  if (!desc) {
    std::fprintf(stderr, "error: %s\n", desc.message().c_str());
    return false;
  }
  for (const KernelDescription &k : desc->kernels) {
    Status st = checkDeviceBuild(desc->dir + "/" + k.source, k.kind,
                                 desc->arch, k.compileTimeArgs, decls);
    if (!st.isOk()) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return false;
    }
    std::printf("%s/%s: compiles for %s\n", dir.c_str(), k.source.c_str(),
                toString(desc->arch));
    ++kernels;
  }
  return desc->mergeProgram.empty() ||
         compileProgram(mergeProgramDir(dir, *desc), decls, kernels);
}

static int compileOnly(int argc, char **argv) {
  int kernels = 0;
  int first = 2;
  SdkDeclarations decls = SdkDeclarations::Pinned;
  if (first < argc && std::strcmp(argv[first], "--without-deprecated") == 0) {
    decls = SdkDeclarations::WithoutDeprecated;
    ++first;
  }
  for (int i = first; i < argc; ++i)
    if (!compileProgram(argv[i], decls, kernels))
      return 1;
  std::printf("attn-tt-run: %d kernel(s) compile with the SDK's JIT flags\n",
              kernels);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  if (std::strcmp(argv[1], "--compile-only") == 0)
    return compileOnly(argc, argv);
  std::string dir = argv[1];
  if (dir == "--version") {
    std::printf("attn-tt-run %s\n", version());
    return 0;
  }
  if (dir == "--help" || dir == "-h") {
    std::printf("%sRuns one program folder of attn-translate --attn-to-ttmetal "
                "(or of a bundle's\nkernels/) on the host emulator against "
                "the reference, on a seeded problem\nof the program's shape; "
                "prints the errors and PASS or FAIL, exits 0 on PASS.\n",
                kUsage);
    return 0;
  }
  if (dir.starts_with("-")) {
    std::fprintf(stderr, "error: the first argument must be PROGRAM_DIR, got "
                         "'%s'\n",
                 dir.c_str());
    return usage();
  }
  CheckOptions options;
  unsigned parallelCores = 0;
  options.problem.numReqs = 3;
  options.problem.maxContextLen = 100;
  options.problem.maxPrefillQueryLen = 40;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      return usage();
    const char *value = argv[++i];
    if (flag == "--seed")
      options.problem.seed = std::strtoull(value, nullptr, 10);
    else if (flag == "--reqs")
      options.problem.numReqs = std::atoll(value);
    else if (flag == "--decode-fraction")
      options.problem.decodeFraction = std::atof(value);
    else if (flag == "--min-context")
      options.problem.minContextLen = std::atoll(value);
    else if (flag == "--max-context")
      options.problem.maxContextLen = std::atoll(value);
    else if (flag == "--max-prefill")
      options.problem.maxPrefillQueryLen = std::atoll(value);
    else if (flag == "--cores")
      parallelCores = unsigned(std::atoi(value));
    else if (flag == "--layout") {
      auto layout = parseKvLayout(value);
      if (!layout) {
        std::fprintf(stderr, "error: unknown layout '%s'\n", value);
        return 2;
      }
      options.layout = *layout;
    } else {
      return usage();
    }
  }

  auto description = loadProgramDescription(dir);
  if (!description) {
    std::fprintf(stderr, "error: %s\n", description.message().c_str());
    return 1;
  }
  EmulatorDevice device(description->arch, parallelCores);
  auto program = loadProgram(dir, device);
  if (!program) {
    std::fprintf(stderr, "error: %s\n", program.message().c_str());
    return 1;
  }
  std::string report;
  bool passed = false;
  Status st = checkProgram(device, *program, options, report, passed);
  if (!st.isOk()) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("%s: %s%s\n", program->description.name.c_str(), report.c_str(),
              passed ? "PASS" : "FAIL");
  return passed ? 0 : 1;
}
