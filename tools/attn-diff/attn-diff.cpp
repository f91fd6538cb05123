//===- attn-diff.cpp - A device against the reference --------------------===//
//
// Runs a function of an attn module on the reference interpreter and on a
// device backend (kernels compiled in process, or a bundle's with --bundle;
// or reads results captured elsewhere with --against) over the same
// inputs, and reports per result: max abs and rel error, the worst
// position, how many elements are beyond tolerance, where they are (per
// request and head; --report writes an HTML page of it), and a verdict. It
// also gives DESIGN.md's second verdict, FlashAttention's rule: the
// device's max error against the reference is at most twice that of a
// naive computation in the output's precision (plus half an ulp at 0.5 of
// that dtype; cache writes, which copy, have an exact naive form).
// --verdict picks which verdicts decide the exit status.
// Exit status: 0 all pass, 1 a mismatch, 2 an error.
//
//===----------------------------------------------------------------------===//

#include "core/CpuKernel.h"
#include "reference/interp/Entry.h"
#include "reference/interp/Inputs.h"
#include "reference/interp/Interpreter.h"
#include "reference/interp/Signature.h"
#include "reference/testing/Compare.h"
#include "reference/testing/Npy.h"
#include "tools/DeviceRun/RunFlags.h"
#include "tools/ToolCommandLine.h"
#include "tools/attn-diff/Report.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

#include <cmath>
#include <map>
#include <optional>

using namespace attn;

namespace {

llvm::cl::OptionCategory category("attn-diff options");

llvm::cl::opt<std::string>
    backend("backend",
            llvm::cl::desc("The device to check against the reference "
                           "(cpu: the cpu target's kernels on this "
                           "machine's CPU; vulkan, cuda, tt: those this "
                           "build has a device for; a name it does not run "
                           "lists those that run here)"),
            llvm::cl::value_desc("NAME"), llvm::cl::cat(category));
llvm::cl::opt<std::string> againstDir(
    "against",
    llvm::cl::desc("Instead of running a device, compare the reference with "
                   "DIR/result0.npy, result1.npy, ... captured elsewhere"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));

llvm::cl::opt<std::string> bundleDir(
    "bundle",
    llvm::cl::desc("With --backend: run the kernels of this compiled bundle "
                   "(attn-compile -o B) for the function's variant instead "
                   "of compiling them here, as a serving session loads "
                   "them: the entry of the device's subgroup size or ISA "
                   "level (backends vulkan, cpu, cuda)"),
    llvm::cl::value_desc("B"), llvm::cl::cat(category));

llvm::cl::list<std::string> trustKeys(
    "trust-key",
    llvm::cl::desc("With --bundle: a public key (NAME.pub of attn-bundle "
                   "keygen) whose signatures are trusted; a bundle signed "
                   "by another key is refused (repeatable)"),
    llvm::cl::value_desc("NAME.pub"), llvm::cl::cat(category));

llvm::cl::opt<bool> requireSignature(
    "require-signature",
    llvm::cl::desc("With --bundle and --trust-key: refuse an unsigned "
                   "bundle"),
    llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<std::string> reportFile(
    "report",
    llvm::cl::desc("Also write FILE.html, a self-contained page (no script, "
                   "nothing fetched) of where the device fails: per result "
                   "the verdict lines, a request x head heat map of the "
                   "worst error relative to the tolerance, and the error "
                   "along each failing request's positions"),
    llvm::cl::value_desc("FILE.html"), llvm::cl::cat(category));

mlir::attn::RunFlags runFlags(category);

llvm::cl::opt<bool> listKernels(
    "list-kernels",
    llvm::cl::desc("Print each kernel compiled for --backend with its "
                   "content hash, the hash a bundle's manifest gives the "
                   "same kernel"),
    llvm::cl::init(false), llvm::cl::cat(category));

enum class VerdictRule { Tolerance, Flash, Either, Both };
llvm::cl::opt<VerdictRule> verdictRule(
    "verdict", llvm::cl::desc("Which verdicts decide pass or fail"),
    llvm::cl::init(VerdictRule::Tolerance),
    llvm::cl::values(
        clEnumValN(VerdictRule::Tolerance, "tolerance",
                   "per-element atol + rtol * |reference| (default)"),
        clEnumValN(VerdictRule::Flash, "flash",
                   "FlashAttention's rule: max error <= 2 x that of a naive "
                   "computation in the device's precision"),
        clEnumValN(VerdictRule::Either, "either", "either verdict passes"),
        clEnumValN(VerdictRule::Both, "both", "both verdicts pass")),
    llvm::cl::cat(category));

llvm::cl::opt<double>
    atolFlag("atol",
             llvm::cl::desc("Absolute tolerance for every result (default: "
                            "per dtype, f32 1e-5, f16 1e-3, bf16 1e-3; the "
                            "tt backend's bf16: 4e-3)"),
             llvm::cl::init(-1.0), llvm::cl::cat(category));
llvm::cl::opt<double>
    rtolFlag("rtol",
             llvm::cl::desc("Relative tolerance for every result (default: "
                            "per dtype, f32 1.3e-6, f16 1e-3, bf16 1.6e-2)"),
             llvm::cl::init(-1.0), llvm::cl::cat(category));

constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-diff") << message << "\n";
  return kExitError;
}
int fail(llvm::Error err) { return fail(llvm::toString(std::move(err))); }

/// A double as printf's %g, for tolerances and values in the report.
std::string g(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

/// Half an ulp at 0.5 in `dtype`: the slack of the second verdict, so that
/// a naive computation that happens to be exact does not demand an exact
/// device.
double halfUlpAtHalf(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 0x1p-12;
  case DType::BF16:
    return 0x1p-9;
  default:
    return 0x1p-25;
  }
}

/// "token 3 (request 1, position 2), head 17, dim 5" for attention
/// outputs, where the axes are known: a token is a row of the batch, and
/// `requestOfRow` (when it has the row) says whose and where in it; empty
/// for other results.
std::string describeIndex(const std::vector<int64_t> &index, bool mla,
                          const std::vector<int64_t> &requestOfRow) {
  static const char *kAxes[] = {"token", "head", "dim"};
  if (index.size() != 2 && index.size() != 3)
    return "";
  std::string s;
  for (size_t i = 0; i < index.size(); ++i)
    s += std::string(i ? ", " : "") + (i == 0 && mla ? "request" : kAxes[i]) +
         " " + std::to_string(index[i]);
  int64_t row = index[0];
  if (mla || row < 0 || row >= static_cast<int64_t>(requestOfRow.size()))
    return s;
  int64_t request = requestOfRow[row];
  std::string place = " (padding row)";
  if (request >= 0) {
    int64_t first = row;
    while (first > 0 && requestOfRow[first - 1] == request)
      --first;
    place = " (request " + std::to_string(request) + ", position " +
            std::to_string(row - first) + ")";
  }
  return s.insert(s.find(','), place);
}

/// For an attention output of `rows` rows, the request each row belongs to:
/// from the query_start_loc input (paged attention, merge_states has none),
/// or the row itself when the function is MLA decode (one query per
/// request). Empty when rows are not tokens of requests (a cache write).
std::vector<int64_t> requestOfRow(const Signature &signature,
                                  const std::vector<Tensor> &inputs,
                                  int64_t rows, bool mla) {
  std::vector<int64_t> request;
  if (mla) {
    for (int64_t r = 0; r < rows; ++r)
      request.push_back(r);
    return request;
  }
  for (size_t a = 0; a < signature.arguments.size(); ++a) {
    if (signature.arguments[a].role != ArgRole::QueryStartLoc)
      continue;
    const Tensor &qsl = inputs[a];
    int64_t numReqs = qsl.numElements() - 1;
    request.assign(rows, -1);
    for (int64_t r = 0; r < numReqs; ++r)
      for (int64_t t = std::max<int64_t>(qsl.getInt(r), 0);
           t < std::min(qsl.getInt(r + 1), rows); ++t)
        request[t] = r;
    return request;
  }
  return request;
}

/// "    failed requests: 3 (tokens 10-14, 12 elements), 7 (...)": which
/// requests hold the elements outside the tolerance, first ten.
std::string failedRequests(const TensorDiff &diff,
                           const std::vector<int64_t> &requestOfRow,
                           bool mla) {
  if (diff.numMismatches == 0 || requestOfRow.size() != diff.rowMismatches.size())
    return "";
  std::map<int64_t, std::pair<int64_t, int64_t>> rowsOf; // request -> rows
  std::map<int64_t, int64_t> count;
  for (size_t row = 0; row < diff.rowMismatches.size(); ++row) {
    if (!diff.rowMismatches[row])
      continue;
    int64_t r = requestOfRow[row];
    auto [it, fresh] = rowsOf.try_emplace(r, row, row);
    it->second.second = static_cast<int64_t>(row);
    count[r] += diff.rowMismatches[row];
  }
  auto elements = [](int64_t n) {
    return std::to_string(n) + (n == 1 ? " element" : " elements");
  };
  std::string text;
  int shown = 0;
  for (const auto &[r, span] : rowsOf) {
    if (shown++ == 10) {
      text += ", and " + std::to_string(rowsOf.size() - 10) + " more";
      break;
    }
    text += shown > 1 ? ", " : "";
    text += r < 0 ? std::string("padding rows") : std::to_string(r);
    if (!mla)
      text += " (tokens " + std::to_string(span.first) +
              (span.second > span.first ? "-" + std::to_string(span.second)
                                        : "") +
              ", " + elements(count[r]) + ")";
    else
      text += " (" + elements(count[r]) + ")";
  }
  return "           failed requests: " + text + "\n";
}

/// "           failed heads: 2 (4480 elements), 3 (4480 elements), ...;
/// every element passes at heads 0, 9": which heads of an output of rank
/// 3 or more fail, and which pass everywhere, which tells a systematic
/// mapping error (a GQA head off) from noise. Empty when all pass.
std::string failedHeads(const TensorDiff &diff, int64_t rank) {
  if (diff.numMismatches == 0 || rank < 3)
    return "";
  std::string failing, passing;
  size_t numFailing = 0, numPassing = 0;
  constexpr size_t kShown = 10;
  for (size_t h = 0; h < diff.headMismatches.size(); ++h) {
    int64_t n = diff.headMismatches[h];
    std::string &list = n ? failing : passing;
    size_t &count = n ? numFailing : numPassing;
    if (count++ < kShown)
      list += (list.empty() ? "" : ", ") + std::to_string(h) +
              (n ? " (" + std::to_string(n) + ")" : "");
  }
  auto more = [&](size_t count) {
    return count > kShown ? ", and " + std::to_string(count - kShown) + " more"
                          : std::string();
  };
  std::string text = "           failed heads (elements): " + failing +
                     more(numFailing);
  if (numPassing)
    text += "; every element passes at heads " + passing + more(numPassing);
  return text + "\n";
}

/// Flags that parse but cannot be used: a tolerance that is not a finite
/// number >= 0, not exactly one of --backend and --against, or a --backend
/// that is the reference or not a device of this build.
llvm::Error checkFlags() {
  for (llvm::cl::opt<double> *flag : {&atolFlag, &rtolFlag})
    if (flag->getNumOccurrences() &&
        !(std::isfinite(flag->getValue()) && flag->getValue() >= 0))
      return llvm::createStringError(
          llvm::formatv("--{0} must be a finite number >= 0, got {1}",
                        flag->ArgStr, g(flag->getValue()))
              .str());
  if (backend.empty() == againstDir.empty())
    return llvm::createStringError(
        "give exactly one of --backend NAME and --against DIR");
  if (backend == "reference")
    return llvm::createStringError(
        "--backend names the device to check against the reference, not the "
        "reference itself (" +
        mlir::attn::describeDeviceBackends(/*withReference=*/false) + ")");
  if (!bundleDir.empty() && backend.empty())
    return llvm::createStringError(
        "--bundle runs a bundle's kernels on --backend NAME");
  if (bundleDir.empty() && (!trustKeys.empty() || requireSignature))
    return llvm::createStringError(
        "--trust-key and --require-signature check the signature of "
        "--bundle B");
  // The knobs shape the kernels attn-diff compiles; a bundle's were shaped
  // when attn-compile built it.
  const mlir::attn::KernelKnobFlags &knobs = runFlags.knobs;
  for (const llvm::cl::Option *knob :
       std::initializer_list<const llvm::cl::Option *>{
           &knobs.splitKv, &knobs.vectorWidth, &knobs.attentionSubgroups,
           &knobs.laneRegisters, &knobs.tiledPrefill, &knobs.decodeThreshold,
           &knobs.prefillMatrix, &knobs.maxWorkgroupMemory, &knobs.spirvAbi,
           &knobs.cpuIsa})
    if (!bundleDir.empty() && knob->getNumOccurrences())
      return llvm::createStringError(
          "--" + knob->ArgStr +
          " shapes the kernels attn-diff compiles; with --bundle the "
          "bundle's kernels run as attn-compile built them");
  if (!backend.empty() &&
      !llvm::is_contained(mlir::attn::deviceBackends(), backend.getValue()))
    return llvm::createStringError(
        "backend '" + backend + "' is not a device of this build (" +
        mlir::attn::describeDeviceBackends(/*withReference=*/false) + ")");
  return llvm::Error::success();
}

/// The device's side of the comparison: its results, the name the report
/// gives it, and what the backend said of its run (tolerances included).
struct DeviceResults {
  std::vector<Tensor> results;
  std::string name;
  mlir::attn::DeviceRunStats stats;
};

/// The results captured in --against DIR, one per reference result in
/// `want`; a missing result after the first is an empty tensor.
llvm::Expected<std::vector<Tensor>>
readCaptured(const std::vector<Tensor> &want) {
  std::vector<Tensor> got;
  for (size_t i = 0; i < want.size(); ++i) {
    std::string path = againstDir + "/result" + std::to_string(i) + ".npy";
    // Results after the first (an attention's lse) may be left out of a
    // capture: vLLM's forward returns only the output.
    if (i > 0 && !llvm::sys::fs::exists(path)) {
      got.emplace_back();
      continue;
    }
    Result<Tensor> t = readNpy(path, want[i].dtype());
    if (!t)
      return llvm::createStringError(t.message());
    got.push_back(std::move(*t));
  }
  return got;
}

/// Runs `fn` on --backend, or reads the results captured in --against, and
/// checks there are as many as the reference's `want`.
llvm::Expected<DeviceResults>
getDeviceResults(mlir::ModuleOp module, mlir::func::FuncOp fn,
                 const std::vector<Tensor> &inputs,
                 const std::vector<Tensor> &want) {
  DeviceResults device;
  if (!backend.empty()) {
    mlir::attn::BundleSource bundle{bundleDir, {}};
    if (!bundleDir.empty()) {
      Result<runtime::BundleTrust> trust =
          runtime::BundleTrust::fromKeyFiles(trustKeys, requireSignature);
      if (!trust)
        return llvm::createStringError(trust.message());
      bundle.trust = std::move(*trust);
    }
    llvm::Expected<std::vector<Tensor>> results = mlir::attn::runOnDevice(
        module, fn.getSymName(), backend, inputs, &device.stats, runFlags.knobs,
        runFlags.cpuEmulator, bundle);
    if (!results)
      return results.takeError();
    device.results = std::move(*results);
    device.name = device.stats.device;
  } else {
    llvm::Expected<std::vector<Tensor>> captured = readCaptured(want);
    if (!captured)
      return captured.takeError();
    device.results = std::move(*captured);
    device.name = againstDir;
  }
  if (device.results.size() != want.size())
    return llvm::createStringError(
        llvm::formatv("{0} returned {1} results, the reference {2}",
                      device.name, device.results.size(), want.size())
            .str());
  return device;
}

/// Whether a result passes under --verdict, given its two verdicts.
bool decides(bool tolerancePassed, bool flashPassed) {
  switch (verdictRule) {
  case VerdictRule::Tolerance:
    return tolerancePassed;
  case VerdictRule::Flash:
    return flashPassed;
  case VerdictRule::Either:
    return tolerancePassed || flashPassed;
  case VerdictRule::Both:
    return tolerancePassed && flashPassed;
  }
  llvm_unreachable("unknown verdict rule");
}

/// What the report of each result needs besides the result itself.
struct ReportContext {
  const Signature &signature;
  const std::vector<Tensor> &inputs;
  const mlir::attn::DeviceRunStats &stats;
  bool mla;
  /// Where --report's page collects the run; null without --report.
  diff::ReportRun *page;
};

/// Prints `text` and, with --report, adds its lines to `lines`.
void emit(const std::string &text, std::vector<std::string> *lines) {
  llvm::outs() << text;
  if (!lines)
    return;
  llvm::SmallVector<llvm::StringRef> split;
  llvm::StringRef(text).split(split, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : split)
    lines->push_back(line.str());
}

/// Result `i`'s tolerance: the backend's where it documents one, else the
/// dtype's default, each part overridden by --atol and --rtol.
Tolerance getTolerance(size_t i, DType dtype,
                       const mlir::attn::DeviceRunStats &stats) {
  Tolerance tol = i < stats.tolerances.size() ? stats.tolerances[i]
                                              : defaultTolerance(dtype);
  if (atolFlag >= 0)
    tol.atol = atolFlag;
  if (rtolFlag >= 0)
    tol.rtol = rtolFlag;
  return tol;
}

/// Prints the report of result `i`, the device's `got` against the
/// reference's `want` (both verdicts and the failed requests), and returns
/// whether it passes under --verdict. A result left out of a capture is
/// reported as such and passes.
llvm::Expected<bool> reportResult(size_t i, const Tensor &got,
                                  const Tensor &want, const Tensor &naive,
                                  const ReportContext &report) {
  diff::ReportResult *page = nullptr;
  if (report.page) {
    report.page->results.emplace_back();
    page = &report.page->results.back();
    page->title = llvm::formatv("result{0} {1}", i, want.describe()).str();
  }
  std::vector<std::string> *lines = page ? &page->lines : nullptr;
  if (got.rank() == 0 && want.rank() != 0) {
    emit(llvm::formatv("  result{0} {1}: not captured ({2}/"
                       "result{0}.npy is missing), not compared\n",
                       i, want.describe(), againstDir),
         lines);
    return true;
  }
  Tolerance tol = getTolerance(i, want.dtype(), report.stats);
  Result<TensorDiff> diff = compareTensors(got, want, tol);
  if (!diff)
    return llvm::createStringError(
        llvm::formatv("result{0}: {1}", i, diff.message()).str());
  std::string nans =
      diff->numNanMismatches
          ? llvm::formatv(" ({0} NaN where the other side is not)",
                          diff->numNanMismatches)
                .str()
          : "";
  std::vector<int64_t> rowRequests =
      want.rank() >= 2 ? requestOfRow(report.signature, report.inputs,
                                      want.dim(0), report.mla)
                       : std::vector<int64_t>();
  // An element as "[i, j, k] (token i (request r, position p), head j, dim
  // k; device x, reference y)".
  auto element = [&](const std::vector<int64_t> &index, double got,
                     double ref) {
    std::string where = describeIndex(index, report.mla, rowRequests);
    return llvm::formatv("{0} ({1}device {2}, reference {3})",
                         formatIndex(index), where.empty() ? "" : where + "; ",
                         g(got), g(ref))
        .str();
  };
  // The largest error, and the element furthest beyond its tolerance (all
  // passing: the nearest to failing), which near-zero references make
  // differ.
  emit(llvm::formatv(
      "  result{0} {1}: max abs {2:e3} at {3}, max rel {4:e3}, worst against "
      "the tolerance at {5}, {6} of {7}{8} beyond atol {9} + rtol {10}: "
      "{11}\n",
      i, want.describe(), diff->maxAbsError,
      element(diff->largestIndex, diff->largestGot, diff->largestWant),
      diff->maxRelError,
      element(diff->worstIndex, diff->worstGot, diff->worstWant),
      diff->numMismatches, diff->numElements, nans, g(tol.atol), g(tol.rtol),
      diff->passed() ? "PASS" : "FAIL"), lines);
  Result<TensorDiff> naiveDiff =
      compareTensors(naive, want, defaultTolerance(want.dtype()));
  if (!naiveDiff)
    return llvm::createStringError(naiveDiff.message());
  double bound = 2 * naiveDiff->maxAbsError + halfUlpAtHalf(want.dtype());
  bool flashPassed = diff->maxAbsError <= bound;
  // The relation printed is the one that holds; a NaN error compares with
  // nothing.
  const char *relation = flashPassed                       ? "<="
                         : std::isnan(diff->maxAbsError) ? "not <="
                                                         : ">";
  emit(llvm::formatv(
      "           second verdict: max abs {0:e3} {1} 2 x naive {2:e3} + "
      "{3}: {4}\n",
      diff->maxAbsError, relation, naiveDiff->maxAbsError,
      g(halfUlpAtHalf(want.dtype())), flashPassed ? "PASS" : "FAIL"),
       lines);
  if (want.rank() >= 2)
    emit(failedRequests(*diff, rowRequests, report.mla) +
             failedHeads(*diff, want.rank()),
         lines);
  bool passed = decides(diff->passed(), flashPassed);
  if (page) {
    page->passed = passed;
    page->hasRequests = !rowRequests.empty();
    if (page->hasRequests)
      page->view = diff::viewByRequest(*diff, rowRequests);
  }
  return passed;
}

/// Whether `fn` is MLA decode, whose output rows are requests, not tokens.
bool isMLADecode(mlir::func::FuncOp fn) {
  bool mla = false;
  fn->walk([&](mlir::Operation *op) {
    mla |= op->getName().getStringRef() == "attn.mla_decode";
  });
  return mla;
}

/// The --cpu-isa levels to diff one after the other: `all` (every level
/// this host runs) or a comma-separated list with --backend cpu, else one
/// run as the flags say (an empty name).
llvm::Expected<std::vector<std::string>> cpuLevelsToDiff() {
  std::string flag = runFlags.knobs.cpuIsa;
  if (backend != "cpu" ||
      (flag != "all" && flag.find(',') == std::string::npos))
    return std::vector<std::string>{""};
  std::vector<std::string> levels;
  if (flag == "all") {
    for (const CpuIsaLevel &level : cpuIsaLevels())
      if (hostRunsCpuIsa(level))
        levels.emplace_back(level.name);
    if (levels.empty())
      return llvm::createStringError("--cpu-isa=all: this host runs none of " +
                                     cpuIsaLevelNames());
    return levels;
  }
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(flag).split(names, ',');
  for (llvm::StringRef name : names) {
    if (!findCpuIsaLevel(std::string_view(name.trim())))
      return llvm::createStringError("--cpu-isa: no level '" + name.trim() +
                                     "' (expected all or a list of " +
                                     cpuIsaLevelNames() + ")");
    levels.push_back(name.trim().str());
  }
  return levels;
}

/// Runs `run` on the device (at --cpu-isa `level`, when not empty) and
/// reports each result against the reference's `want` and the naive
/// `naive`; whether every result passes.
llvm::Expected<bool> diffDevice(mlir::attn::LoadedRun &run,
                                const std::vector<Tensor> &inputs,
                                const std::vector<Tensor> &want,
                                const std::vector<Tensor> &naive,
                                const std::string &level,
                                diff::ReportRun *page) {
  std::vector<std::string> *header = page ? &page->header : nullptr;
  llvm::Expected<DeviceResults> device =
      getDeviceResults(*run.module, run.fn, inputs, want);
  if (!device)
    return device.takeError();

  emit("attn-diff: @" + run.fn.getSymName().str() + " on " + device->name +
           (level.empty() ? "" : " (" + level + ")") +
           " against the reference\n",
       header);
  // A backend may document looser tolerances than the defaults (tt: bf16
  // tiles); the report says so.
  if (!device->stats.toleranceNote.empty() && (atolFlag < 0 || rtolFlag < 0))
    emit("  tolerance: " + device->stats.toleranceNote + "\n", header);
  if (listKernels)
    for (const auto &[entry, hash] : device->stats.kernels)
      emit("  kernel " + entry + " " + hash + "\n", header);
  // Which form of the SPIR-V kernels ran (SPIRVTargetOptions::Abi).
  if (int64_t bound = device->stats.boundLaunches,
      addressed = device->stats.addressedLaunches;
      bound + addressed > 0)
    emit("  spirv launches: " + std::to_string(bound) +
             " by descriptor binding, " + std::to_string(addressed) +
             " by device address\n",
         header);
  ReportContext report{run.signature, inputs, device->stats,
                       isMLADecode(run.fn), page};
  bool allPassed = true;
  for (size_t i = 0; i < want.size(); ++i) {
    llvm::Expected<bool> passed =
        reportResult(i, device->results[i], want[i], naive[i], report);
    if (!passed)
      return passed.takeError();
    allPassed &= *passed;
  }
  return allPassed;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::setToolVersionPrinter("attn-diff");
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "attn-diff: checks a device against the reference\n\n"
      "  attn-diff v.mlir --backend vulkan --random 0\n"
      "  attn-diff v.mlir --backend vulkan --bundle k.attnb --random 0\n"
      "  attn-diff v.mlir --inputs in/ --against captured/ --report r.html\n\n"
      "Runs the reference interpreter and the device (its kernels compiled "
      "here, or\nthose of a bundle with --bundle; or reads the device's "
      "results from --against DIR)\non the same inputs and prints, per "
      "result, the max abs and rel error, the worst\nposition (a token is a "
      "row of the batch: its request and position in it too),\nthe count "
      "beyond tolerance, both verdicts, and where failures are: per request "
      "and\nper head (--report draws it as a page). An element passes when "
      "|device -\nreference| <= atol + rtol * |reference| (inf and NaN must "
      "match exactly).\nExit status: 0 pass, 1 mismatch, 2 error.\n");
  if (llvm::Error err = checkFlags())
    return fail(std::move(err));

  mlir::FailureOr<mlir::attn::LoadedRun> run =
      mlir::attn::loadRun(runFlags, "attn-diff");
  if (failed(run))
    return kExitError;
  const std::vector<Tensor> &inputs = run->inputs;

  // The reference first: it validates the metadata, so a device never runs
  // on inputs the reference rejects.
  llvm::Expected<std::vector<Tensor>> want = interpret(run->fn, inputs);
  if (!want)
    return fail(want.takeError());
  llvm::Expected<std::vector<Tensor>> naive =
      interpret(run->fn, inputs, /*naiveDevicePrecision=*/true);
  if (!naive)
    return fail(naive.takeError());
  llvm::Expected<std::vector<std::string>> levels = cpuLevelsToDiff();
  if (!levels)
    return fail(levels.takeError());
  diff::Report page;
  page.subject = "@" + run->fn.getSymName().str() + " of " +
                 runFlags.inputFile.getValue();
  bool allPassed = true;
  for (const std::string &level : *levels) {
    if (!level.empty())
      runFlags.knobs.cpuIsa = level;
    diff::ReportRun *pageRun = nullptr;
    if (!reportFile.empty())
      pageRun = &page.runs.emplace_back();
    llvm::Expected<bool> passed =
        diffDevice(*run, inputs, *want, *naive, level, pageRun);
    if (!passed)
      return fail(passed.takeError());
    allPassed &= *passed;
  }
  page.verdict = allPassed ? "PASS" : "FAIL";
  llvm::outs() << page.verdict << "\n";
  if (!reportFile.empty())
    if (llvm::Error err = diff::writeReport(reportFile, page))
      return fail(std::move(err));
  return allPassed ? 0 : kExitMismatch;
}
