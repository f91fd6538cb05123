//===- attn-compile.cpp - Ahead-of-time compiler for attention variants ---===//
//
// Turns attention variants into code:
//  - `--emit=mlir --variant ...` prints the attn-dialect function of one
//    variant;
//  - otherwise it writes a bundle (runtime/Bundle.h): every variant given by
//    `--variant`, a `--grid` file or an input .mlir file, compiled for every
//    target of `--targets` (or `--emit`), in parallel, reusing the variants
//    of an existing bundle whose inputs did not change.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/DeviceRun.h"
#include "compiler/Variant.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "runtime/Bundle.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <atomic>
#include <chrono>
#include <mutex>

using namespace mlir;
using namespace mlir::attn;
namespace rt = ::attn::runtime;

namespace {

enum class Emit { Bundle, Mlir, Spirv, Ptx, Msl, TT };

llvm::cl::OptionCategory category("attn-compile options");

llvm::cl::list<std::string> inputFiles(llvm::cl::Positional,
                                       llvm::cl::desc("[FILE.mlir ...]"),
                                       llvm::cl::cat(category));

llvm::cl::opt<Emit> emitKind(
    "emit", llvm::cl::desc("What to emit"), llvm::cl::init(Emit::Bundle),
    llvm::cl::values(
        clEnumValN(Emit::Bundle, "bundle",
                   "a bundle for the --targets (default)"),
        clEnumValN(Emit::Mlir, "mlir",
                   "the one --variant as an attn-dialect module"),
        clEnumValN(Emit::Spirv, "spirv", "a bundle with SPIR-V kernels"),
        clEnumValN(Emit::Ptx, "ptx", "a bundle with PTX kernels"),
        clEnumValN(Emit::Msl, "msl", "a bundle with Metal kernels"),
        clEnumValN(Emit::TT, "tt", "a bundle with TT-Metalium kernels")),
    llvm::cl::cat(category));

llvm::cl::list<std::string>
    variantSpecs("variant", llvm::cl::desc("A variant to compile (keys below)"),
                 llvm::cl::value_desc("KEY=VALUE,..."),
                 llvm::cl::cat(category));

llvm::cl::opt<std::string>
    gridFile("grid",
             llvm::cl::desc("A JSON object of key -> list of values (or an "
                            "array of such objects): every combination is a "
                            "variant; invalid ones are skipped with a reason"),
             llvm::cl::value_desc("FILE.json"), llvm::cl::cat(category));

llvm::cl::list<std::string>
    targetList("targets", llvm::cl::desc("Targets of the bundle"),
               llvm::cl::value_desc("spirv,ptx,msl,tt"),
               llvm::cl::CommaSeparated, llvm::cl::cat(category));

llvm::cl::opt<std::string>
    outputPath("o",
               llvm::cl::desc("Output: the bundle directory (NAME.attnb), or "
                              "the .mlir file for --emit=mlir"),
               llvm::cl::value_desc("PATH"), llvm::cl::init("-"),
               llvm::cl::cat(category));

llvm::cl::opt<unsigned> jobs("j",
                             llvm::cl::desc("Variants compiled in parallel "
                                            "(0: one per core)"),
                             llvm::cl::init(0), llvm::cl::cat(category));

llvm::cl::opt<int64_t> subgroupSize(
    "subgroup-size",
    llvm::cl::desc("Subgroup size of the devices the GPU kernels will run on "
                   "(NVIDIA: 32, AMD: 64, lavapipe: 8; 0: that of this "
                   "machine's first Vulkan device)"),
    llvm::cl::init(32), llvm::cl::cat(category));

llvm::cl::opt<int64_t> splitKv("split-kv",
                               llvm::cl::desc("Split-KV decode (0: choose, "
                                              "N: force N splits)"),
                               llvm::cl::init(0), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    chip("chip",
         llvm::cl::desc("Target ptx: the SM the PTX is for (sm_80, sm_90, "
                        "...)"),
         llvm::cl::init("sm_90"), llvm::cl::cat(category));

llvm::cl::opt<bool> validateSpirv(
    "validate-spirv",
    llvm::cl::desc("Run spirv-val (--target-env vulkan1.1) on every SPIR-V "
                   "kernel; a failure fails the variant"),
    llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<bool> quiet("q", llvm::cl::desc("Print only errors"),
                          llvm::cl::init(false), llvm::cl::cat(category));

/// Part of every cache key (see tools/attn-compile/CMakeLists.txt).
const char *kCompilerVersion = "attn-compile " ATTN_VERSION " (MLIR 22)";

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

/// One thing to compile: a variant from flags or a grid, or an input file.
struct Job {
  std::string name;
  std::optional<Variant> variant;
  std::string file;
  std::map<std::string, std::string> parameters;
};

/// Expands one grid object into variant specs: the product of the value
/// lists; keys that do not apply to a combination's op are left out of it.
llvm::Error expandGrid(const llvm::json::Object &grid,
                       std::vector<std::string> &specs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  for (const auto &[key, value] : grid) {
    const llvm::json::Array *values = value.getAsArray();
    if (!values || values->empty())
      return llvm::createStringError(
          "grid key '" + key.str() + "' must map to a non-empty list");
    std::vector<std::string> texts;
    for (const llvm::json::Value &v : *values) {
      if (std::optional<llvm::StringRef> s = v.getAsString())
        texts.push_back(s->str());
      else if (std::optional<bool> b = v.getAsBoolean())
        texts.push_back(*b ? "true" : "false");
      else if (std::optional<int64_t> i = v.getAsInteger())
        texts.push_back(std::to_string(*i));
      else if (std::optional<double> d = v.getAsNumber())
        texts.push_back(llvm::formatv("{0}", *d).str());
      else
        return llvm::createStringError("grid key '" + key.str() +
                                       "' has a value that is not a string, "
                                       "number or boolean");
    }
    axes.emplace_back(key.str(), std::move(texts));
  }
  // Sorted keys make the expansion order (and so variant order) stable.
  llvm::sort(axes, [](auto &a, auto &b) { return a.first < b.first; });
  std::vector<size_t> index(axes.size(), 0);
  while (true) {
    std::string op;
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a].first == "op")
        op = axes[a].second[index[a]];
    std::string spec;
    for (size_t a = 0; a < axes.size(); ++a) {
      const std::string &key = axes[a].first;
      if (!op.empty() && key != "op" && !variantKeyApplies(key, op))
        continue;
      spec += (spec.empty() ? "" : ",") + key + "=" + axes[a].second[index[a]];
    }
    specs.push_back(spec);
    size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++index[a] < axes[a].second.size())
        break;
      index[a] = 0;
    }
    if (a == axes.size())
      return llvm::Error::success();
  }
}

llvm::Error readGrid(llvm::StringRef path, std::vector<std::string> &specs) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path);
  if (!text)
    return llvm::createStringError("cannot read grid " + path + ": " +
                                   text.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*text)->getBuffer());
  if (!json)
    return llvm::createStringError(
        "grid " + path + " is not valid JSON: " +
        llvm::toString(json.takeError()));
  std::vector<const llvm::json::Object *> grids;
  if (const llvm::json::Object *object = json->getAsObject())
    grids.push_back(object);
  else if (const llvm::json::Array *array = json->getAsArray())
    for (const llvm::json::Value &v : *array)
      grids.push_back(v.getAsObject());
  if (grids.empty() || llvm::is_contained(grids, nullptr))
    return llvm::createStringError(
        "grid " + path +
        " must be an object of key -> list of values, or an array of them");
  for (const llvm::json::Object *grid : grids)
    if (llvm::Error err = expandGrid(*grid, specs))
      return llvm::createStringError("grid " + path + ": " +
                                     llvm::toString(std::move(err)));
  return llvm::Error::success();
}

/// The module a job compiles, in `context`.
FailureOr<OwningOpRef<ModuleOp>> buildJobModule(const Job &job,
                                                MLIRContext &context) {
  if (job.variant) {
    OpBuilder builder(&context);
    OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
    if (llvm::Error err = buildVariant(*job.variant, *module)) {
      llvm::errs() << llvm::toString(std::move(err)) << "\n";
      return failure();
    }
    return module;
  }
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(job.file, &context);
  if (!module)
    return failure();
  return module;
}

::attn::Status writeKernelFile(const std::string &path, const std::string &bytes) {
  if (std::error_code ec = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(path)))
    return ::attn::errorf("cannot create the folder of ", path, ": ",
                          ec.message());
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
  if (!out)
    return ::attn::errorf("cannot write ", path, ": ", error);
  out->os() << bytes;
  out->keep();
  return ::attn::Status::ok();
}

::attn::Status runSpirvVal(const std::string &path) {
  llvm::ErrorOr<std::string> tool = llvm::sys::findProgramByName("spirv-val");
  if (!tool)
    return ::attn::Status::error(
        "--validate-spirv: spirv-val not found on PATH (install spirv-tools)");
  std::string message;
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("spirv-val", "log", log);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  int rc = llvm::sys::ExecuteAndWait(
      *tool, {*tool, "--target-env", "vulkan1.1", path}, std::nullopt,
      redirects, 0, 0, &message);
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = (*text)->getBuffer().str();
  llvm::sys::fs::remove(log);
  if (rc != 0)
    return ::attn::errorf("spirv-val rejects ", path, ": ",
                          output.empty() ? message : output);
  return ::attn::Status::ok();
}

std::string fileExtension(const std::string &target) {
  if (target == "spirv")
    return "spv";
  if (target == "ptx")
    return "ptx";
  if (target == "msl")
    return "metal";
  return "cpp";
}

/// What happened to one job.
enum class Outcome { Compiled, Reused, Failed };

class BundleCompiler {
public:
  BundleCompiler(std::string directory, CompileOptions options,
                 const rt::Bundle *previous)
      : directory(std::move(directory)), options(std::move(options)),
        previous(previous) {}

  /// Compiles (or reuses) one job into `variant`; errors go to stderr.
  Outcome run(const Job &job, rt::BundleVariant &variant) {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    std::string diagnostics;
    llvm::raw_string_ostream diagStream(diagnostics);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);

    auto failWith = [&](llvm::StringRef message) {
      std::lock_guard<std::mutex> lock(printMutex);
      llvm::WithColor::error(llvm::errs(), "attn-compile")
          << job.name << ": " << message << "\n"
          << diagnostics;
      return Outcome::Failed;
    };

    FailureOr<OwningOpRef<ModuleOp>> module = buildJobModule(job, context);
    if (failed(module))
      return failWith("cannot build the module");
    std::string text;
    llvm::raw_string_ostream textStream(text);
    (*module)->print(textStream);
    std::string key = rt::hashToHex(rt::contentHash(
        text + "|" + optionsKey() + "|" + kCompilerVersion));

    variant.name = job.name;
    variant.cacheKey = key;
    variant.parameters = job.parameters;
    if (previous)
      if (const rt::BundleVariant *old = previous->findByName(job.name);
          old && old->cacheKey == key && allFilesIntact(*old)) {
        variant = *old;
        return Outcome::Reused;
      }

    FailureOr<CompiledModule> compiled = compileModule(**module, options);
    if (failed(compiled))
      return failWith("compilation failed");
    variant.plans = compiled->plans;
    for (const CompiledKernel &k : compiled->kernels) {
      rt::BundleKernel kernel;
      kernel.symbol = k.symbol;
      kernel.target = k.target;
      kernel.entryPoint = k.entryPoint;
      // A TT program's files stay together, named as program.json names
      // them, so the folder is a program the emulator runs as is.
      kernel.file = k.target == "tt"
                        ? "kernels/" + job.name + "/" + k.symbol + "/" +
                              k.entryPoint
                        : "kernels/" + job.name + "." + k.entryPoint + "." +
                              fileExtension(k.target);
      kernel.hash = rt::contentHash(k.bytes);
      kernel.launchJson = k.launchJson;
      std::string path = directory + "/" + kernel.file;
      if (::attn::Status s = writeKernelFile(path, k.bytes); !s)
        return failWith(s.message());
      if (validateSpirv && k.target == "spirv")
        if (::attn::Status s = runSpirvVal(path); !s)
          return failWith(s.message());
      variant.kernels.push_back(std::move(kernel));
    }
    return Outcome::Compiled;
  }

private:
  std::string optionsKey() const {
    std::string key;
    for (const std::string &t : options.targets)
      key += t + ",";
    return key + "sg" + std::to_string(options.subgroupSize) + ",split" +
           std::to_string(options.splitKv) +
           (validateSpirv ? ",validated" : "") +
           (llvm::is_contained(options.targets, "ptx") ? ",chip" + options.chip
                                                       : "");
  }

  bool allFilesIntact(const rt::BundleVariant &v) const {
    for (const rt::BundleKernel &k : v.kernels)
      if (!previous->readKernel(k))
        return false;
    return true;
  }

  std::string directory;
  CompileOptions options;
  const rt::Bundle *previous;
  std::mutex printMutex;
};

int emitMlir() {
  if (variantSpecs.size() != 1 || !inputFiles.empty() || !gridFile.empty())
    return fail("--emit=mlir takes exactly one --variant");
  llvm::Expected<Variant> variant = parseVariant(variantSpecs[0]);
  if (!variant)
    return fail(llvm::toString(variant.takeError()));
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  if (llvm::Error err = buildVariant(*variant, *module))
    return fail(llvm::toString(std::move(err)));
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  std::string overview =
      "attn-compile: ahead-of-time compiler for attention variants\n\n"
      "  attn-compile --emit=mlir --variant op=paged_attention,num_heads=32,"
      "num_kv_heads=8,head_size=128,block_size=16,dtype=bf16 -o v.mlir\n"
      "      prints the variant as a module with one function named after "
      "its op;\n"
      "      batch sizes (tokens, requests, cache blocks) are dynamic.\n"
      "  attn-compile [FILE.mlir ...] [--variant ...]... [--grid FILE.json] "
      "--targets=spirv -o NAME.attnb [-j N]\n"
      "      writes a bundle: NAME.attnb/manifest.json (variants, their "
      "parameters,\n"
      "      host plans and kernels with content hashes) and "
      "NAME.attnb/kernels/*.\n"
      "      Variants whose input and options did not change since the last "
      "run are\n"
      "      reused. --emit=spirv|ptx|msl|tt is --targets with one target.\n\n"
      "Targets built in this version: spirv, tt, ptx, msl.\n"
      "ptx kernels are PTX text for --chip (default sm_90), one .ptx per "
      "kernel, built\nfor subgroup size 32; their launch facts give the "
      "workgroup size and the\nelement size of each argument (five "
      ".param values per buffer: upstream's\nmemref descriptor).\n"
      "msl kernels are Metal source (.metal) cross-compiled from the SPIR-V "
      "kernels by\nSPIRV-Cross, for macOS, each at the lowest MSL version it "
      "needs; keep the\ndefault --subgroup-size=32 (Apple's SIMD width). "
      "Their launch facts give the\nentry point, MSL version, threadgroup "
      "size and the [[buffer(n)]] index of\neach argument.\n"
      "tt has no host plans: each program (one per attn op, named after its "
      "function)\nis a folder NAME.attnb/kernels/<variant>/<program>/ with "
      "program.json and the\nreader, compute and writer kernels (.cpp), as "
      "attn-translate --attn-to-ttmetal\nwrites it.\n\n"
      "Variant keys (default) and the ops they apply to:\n" +
      variantKeysHelp();
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);

  if (emitKind == Emit::Mlir)
    return emitMlir();

  std::vector<std::string> targets(targetList.begin(), targetList.end());
  if (emitKind != Emit::Bundle) {
    if (!targets.empty())
      return fail("give either --emit=<target> or --targets, not both");
    static const char *kEmitTarget[] = {"", "", "spirv", "ptx", "msl", "tt"};
    targets = {kEmitTarget[static_cast<int>(emitKind.getValue())]};
  }
  if (targets.empty())
    return fail("no target: give --targets=spirv (or --emit=spirv)");
  std::string available =
      llvm::join(std::begin(kTargetNames), std::end(kTargetNames), ", ");
  for (const std::string &t : targets) {
    if (llvm::is_contained(kTargetNames, t))
      continue;
    return fail("unknown target '" + t + "' (available: " + available + ")");
  }
  if (outputPath == "-")
    return fail("a bundle needs an output directory: -o NAME.attnb");

  // Collect the jobs.
  std::vector<Job> jobs_;
  std::vector<std::string> skipped;
  std::set<std::string> names;
  auto addVariant = [&](const std::string &spec, bool fromGrid) -> bool {
    llvm::Expected<Variant> variant = parseVariant(spec);
    if (!variant) {
      std::string why = llvm::toString(variant.takeError());
      if (!fromGrid) {
        fail("--variant " + spec + ": " + why);
        return false;
      }
      skipped.push_back(spec + ": " + why);
      return true;
    }
    Job job;
    job.variant = *variant;
    job.parameters = variantParameters(*variant);
    job.name = variantName(*variant);
    for (int n = 2; names.count(job.name); ++n)
      job.name = variantName(*variant) + "." + std::to_string(n);
    names.insert(job.name);
    jobs_.push_back(std::move(job));
    return true;
  };
  for (const std::string &spec : variantSpecs)
    if (!addVariant(spec, /*fromGrid=*/false))
      return 1;
  if (!gridFile.empty()) {
    std::vector<std::string> specs;
    if (llvm::Error err = readGrid(gridFile, specs))
      return fail(llvm::toString(std::move(err)));
    for (const std::string &spec : specs)
      addVariant(spec, /*fromGrid=*/true);
  }
  for (const std::string &file : inputFiles) {
    Job job;
    job.file = file;
    job.name = llvm::sys::path::stem(file).str();
    if (names.count(job.name))
      return fail("two inputs would both be named " + job.name);
    names.insert(job.name);
    job.parameters = {{"file", llvm::sys::path::filename(file).str()}};
    jobs_.push_back(std::move(job));
  }
  if (jobs_.empty() && skipped.empty())
    return fail("nothing to compile: give FILE.mlir, --variant or --grid");

  if (std::error_code ec =
          llvm::sys::fs::create_directories(outputPath + "/kernels"))
    return fail("cannot create " + outputPath + ": " + ec.message());
  std::optional<rt::Bundle> previous;
  if (llvm::sys::fs::exists(outputPath + "/manifest.json")) {
    auto text = llvm::MemoryBuffer::getFile(outputPath + "/manifest.json");
    if (text) {
      ::attn::Result<rt::Bundle> old =
          rt::manifestFromJson((*text)->getBuffer(), outputPath);
      if (old)
        previous = std::move(*old);
    }
  }

  CompileOptions options;
  options.targets = targets;
  options.subgroupSize = subgroupSize;
  if (subgroupSize == 0) {
    llvm::Expected<int64_t> local = localVulkanSubgroupSize();
    if (!local)
      return fail("--subgroup-size=0: " + llvm::toString(local.takeError()));
    options.subgroupSize = *local;
  }
  options.splitKv = splitKv;
  options.chip = chip;
  options.ptxFeatures = ptxFeaturesForChip(chip);
  BundleCompiler compiler(outputPath, options,
                          previous ? &*previous : nullptr);

  auto start = std::chrono::steady_clock::now();
  std::vector<rt::BundleVariant> variants(jobs_.size());
  std::vector<Outcome> outcomes(jobs_.size(), Outcome::Failed);
  std::atomic<size_t> done = 0;
  bool showProgress = !quiet && llvm::sys::Process::StandardErrIsDisplayed();
  std::mutex progressMutex;
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
    for (size_t i = 0; i < jobs_.size(); ++i)
      pool.async([&, i] {
        outcomes[i] = compiler.run(jobs_[i], variants[i]);
        size_t n = ++done;
        if (showProgress) {
          std::lock_guard<std::mutex> lock(progressMutex);
          llvm::errs() << "\r[" << n << "/" << jobs_.size() << "] "
                       << jobs_[i].name << "\x1b[K";
        }
      });
    pool.wait();
  }
  if (showProgress)
    llvm::errs() << "\r\x1b[K";
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();

  rt::Bundle bundle;
  bundle.compiler = kCompilerVersion;
  bundle.directory = outputPath;
  size_t compiled = 0, reused = 0, failedCount = 0;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    switch (outcomes[i]) {
    case Outcome::Compiled:
      ++compiled;
      break;
    case Outcome::Reused:
      ++reused;
      break;
    case Outcome::Failed:
      ++failedCount;
      continue;
    }
    bundle.variants.push_back(std::move(variants[i]));
  }
  if (::attn::Status s = rt::writeManifest(bundle); !s)
    return fail(s.message());

  if (!quiet) {
    for (const std::string &why : skipped)
      llvm::errs() << "attn-compile: skipped " << why << "\n";
    llvm::outs() << "attn-compile: " << compiled << " compiled, " << reused
                 << " reused, " << skipped.size() << " skipped, "
                 << failedCount << " failed in "
                 << llvm::formatv("{0:f1}", seconds) << " s -> " << outputPath
                 << "\n";
  }
  return failedCount == 0 ? 0 : 1;
}
