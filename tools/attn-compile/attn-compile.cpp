//===- attn-compile.cpp - Ahead-of-time compiler for attention variants ---===//
//
// Turns attention variants into code:
//  - `--emit=mlir --variant ...` prints the attn-dialect function of one
//    variant;
//  - otherwise it writes a bundle (runtime/bundle/Bundle.h): every variant given by
//    `--variant`, a `--grid` file or an input .mlir file, compiled for every
//    target of `--targets` (or `--emit`), in parallel, reusing the variants
//    of an existing bundle whose inputs did not change.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/Grid.h"
#include "compiler/ParseFile.h"
#include "compiler/Variant.h"
#include "compiler/targets/Target.h"
#include "core/CpuKernel.h"
#include "core/LaunchFacts.h"
#include "core/TextNesting.h"
#include "core/Version.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/bundle/BundleWriter.h"
#include "runtime/bundle/Compression.h"
#include "tools/DeviceRun/DeviceRun.h"
#include "tools/ToolCommandLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

using namespace mlir;
using namespace mlir::attn;
namespace rt = ::attn::runtime;

namespace {

/// --emit: a bundle, the variant's MLIR, or a bundle of one target, the
/// target table's entry FirstTarget places before it (addTargetEmits).
enum class Emit : unsigned { Bundle, Mlir, FirstTarget };

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
                   "the one --variant as an attn-dialect module")),
    llvm::cl::cat(category));

/// Adds one --emit value per target of the table, before the command line
/// is parsed.
void addTargetEmits() {
  static std::vector<std::string> help;
  ArrayRef<TargetBackend> backends = targetBackends();
  help.reserve(backends.size());
  for (auto [i, b] : llvm::enumerate(backends)) {
    help.push_back(("a bundle with " + b.kernels + " kernels").str());
    emitKind.getParser().addLiteralOption(
        b.name(),
        static_cast<Emit>(static_cast<unsigned>(Emit::FirstTarget) + i),
        help.back());
  }
}

llvm::cl::list<std::string>
    variantSpecs("variant", llvm::cl::desc("A variant to compile (keys below)"),
                 llvm::cl::value_desc("KEY=VALUE,..."),
                 llvm::cl::cat(category));

llvm::cl::opt<std::string>
    gridFile("grid",
             llvm::cl::desc("A JSON object of key -> list of values (or an "
                            "array of such objects): every combination is a "
                            "variant; an invalid one is an error unless "
                            "--skip-invalid"),
             llvm::cl::value_desc("FILE.json"), llvm::cl::cat(category));

llvm::cl::list<std::string>
    targetList("targets", llvm::cl::desc("Targets of the bundle"),
               llvm::cl::value_desc("spirv,ptx,msl,tt,cpu"),
               llvm::cl::CommaSeparated, llvm::cl::cat(category));

llvm::cl::opt<std::string>
    outputPath("o",
               llvm::cl::desc("Output: the bundle directory (NAME.attnb), or "
                              "the .mlir file for --emit=mlir"),
               llvm::cl::value_desc("PATH"), llvm::cl::init("-"),
               llvm::cl::cat(category));

/// Far above any machine's cores; a count of billions made the thread
/// pool wait forever.
constexpr unsigned kMaxJobs = 1024;

llvm::cl::opt<unsigned> jobs("j",
                             llvm::cl::desc("Variants compiled in parallel "
                                            "(0: one per core; at most "
                                            "1024)"),
                             llvm::cl::init(0), llvm::cl::cat(category));

llvm::cl::list<int64_t> subgroupSizes(
    "subgroup-size",
    llvm::cl::desc(
        "Subgroup sizes the GPU kernels are built for: one bundle entry per "
        "size, and the runtime takes the one the device runs (NVIDIA 32, "
        "AMD 64 or 32, Intel 8/16/32, ARM 16, Apple 32, lavapipe 8). "
        "Default: 8,16,32,64 when spirv is a target, else 32; 0 stands for "
        "this machine's first Vulkan device's. ptx and msl kernels are built "
        "at 32 only"),
    llvm::cl::value_desc("N,..."), llvm::cl::CommaSeparated,
    llvm::cl::cat(category));

llvm::cl::opt<bool> skipInvalid(
    "skip-invalid",
    llvm::cl::desc("Compile the valid combinations of --grid and list the "
                   "invalid ones instead of failing on them"),
    llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<int64_t> splitKv("split-kv",
                               llvm::cl::desc("Split-KV decode (0: choose, "
                                              "N: force N splits, at most "
                                              "1024)"),
                               llvm::cl::init(0), llvm::cl::cat(category));

llvm::cl::opt<std::string> prefillMatrix(
    "prefill-matrix",
    llvm::cl::desc("Products of paged_attention's tiled prefill kernel: "
                   "none (SIMT lanes), subgroup-mma (matrix units, f16 "
                   "caches; a warning where the variant cannot have them), "
                   "auto (subgroup-mma where the variant allows, silently "
                   "SIMT elsewhere) or emulate; default: the target's "
                   "(auto on ptx, none elsewhere)"),
    llvm::cl::init(""), llvm::cl::cat(category));

llvm::cl::list<std::string>
    chip("chip",
         llvm::cl::desc("Target ptx: the SMs to build PTX for, one kernel "
                        "per chip (sm_80, sm_89, sm_90, sm_100, sm_103, "
                        "sm_120, sm_121; default sm_90); the CUDA device "
                        "loads the newest its GPU runs"),
         llvm::cl::value_desc("SM,..."), llvm::cl::CommaSeparated,
         llvm::cl::cat(category));

llvm::cl::list<std::string> cpuIsa(
    "cpu-isa",
    llvm::cl::desc("Target cpu: the ISA levels of the kernels' machine code, "
                   "one shared object per kernel and level (x86-64-v3: "
                   "AVX2/FMA/F16C; x86-64-v4: AVX-512; x86-64-v4-bf16: "
                   "x86-64-v4 with AVX-512 BF16; aarch64: Armv8-A with "
                   "NEON; host: the widest this machine runs; default: "
                   "all four); the CPU device runs the widest level its "
                   "host has"),
    llvm::cl::value_desc("LEVEL,..."), llvm::cl::CommaSeparated,
    llvm::cl::cat(category));

llvm::cl::opt<std::string> spirvAbi(
    "spirv-abi",
    llvm::cl::desc(
        "Target spirv: how kernels reach their buffers. both (default): each "
        "kernel twice, by descriptor binding and by device address, and the "
        "Vulkan runtime launches the binding form when every buffer of the "
        "launch fits the device's storage-buffer range (faster on lavapipe), "
        "else the address form; addresses: by device address only (no "
        "buffer limit, needs bufferDeviceAddress); bindings: by binding only "
        "(buffers up to the storage-buffer range, 128 MiB on lavapipe)"),
    llvm::cl::value_desc("both|addresses|bindings"), llvm::cl::init("both"),
    llvm::cl::cat(category));

llvm::cl::opt<std::string> compress(
    "compress",
    llvm::cl::desc("How kernel files are stored: none (default), or zstd: "
                   "each SPIR-V, PTX, MSL or shared-object file as a zstd "
                   "frame, <entry>.<hash>.<ext>.zst (SPIR-V about 4x "
                   "smaller); the runtime decompresses a kernel when it "
                   "loads it. TT program folders stay as they are"),
    llvm::cl::value_desc("none|zstd"), llvm::cl::init("none"),
    llvm::cl::cat(category));

/// --compress=zstd, checked in main.
bool compressKernels = false;

llvm::cl::opt<bool> validateSpirv(
    "validate-spirv",
    llvm::cl::desc("Run spirv-val (--target-env vulkan1.1) on every SPIR-V "
                   "kernel; a failure fails the variant"),
    llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<std::string> shard(
    "shard",
    llvm::cl::desc("Compile slice I of N (I from 0) of the variants: every "
                   "N-th, from the I-th, in the order of the inputs, "
                   "--variant and --grid. `attn-bundle merge -o OUT` of "
                   "the N shards is the bundle of the whole compile, byte "
                   "for byte"),
    llvm::cl::value_desc("I/N"), llvm::cl::cat(category));

llvm::cl::opt<std::string> signKey(
    "sign-key",
    llvm::cl::desc("Sign the bundle's manifest with this Ed25519 secret key "
                   "(attn-bundle keygen -o NAME writes NAME.key); engines "
                   "check it against the public keys they trust"),
    llvm::cl::value_desc("NAME.key"), llvm::cl::cat(category));

llvm::cl::opt<bool> quiet("q", llvm::cl::desc("Print only errors"),
                          llvm::cl::init(false), llvm::cl::cat(category));

/// Part of every cache key (see core/CMakeLists.txt on raising the version).
const std::string kCompilerVersion =
    std::string("attn-compile ") + ::attn::version() + " (MLIR 22)";

/// Also part of every cache key: a hash of this executable, which holds the
/// lowering (linked in statically), so that a rebuilt attn-compile of the
/// same version recompiles instead of reusing an older build's kernels.
/// ATTN_COMPILE_BUILD_ID replaces it (tests).
const std::string &compilerBuild() {
  static const std::string id = [] {
    if (const char *forced = std::getenv("ATTN_COMPILE_BUILD_ID"))
      return std::string(forced);
    static int anchor;
    std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        llvm::MemoryBuffer::getFile(self);
    // Unreadable: the version alone, as before.
    if (!bytes)
      return std::string();
    return rt::contentHash((*bytes)->getBuffer());
  }();
  return id;
}

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// What to compile
//===----------------------------------------------------------------------===//

/// One thing to compile: a variant from flags or a grid, or an input file.
struct Job {
  std::string name;
  std::optional<Variant> variant;
  std::string file;
};

/// One compile of every job: a subgroup size and the targets built at it.
struct Build {
  /// 0 for targets whose kernels have no subgroup size (tt).
  int64_t subgroupSize = 0;
  std::vector<::attn::Target> targets;
};

llvm::Error readGrid(llvm::StringRef path, std::vector<std::string> &specs) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path);
  if (!text)
    return llvm::createStringError("cannot read grid " + path + ": " +
                                   text.getError().message());
  return expandGrid((*text)->getBuffer(), path, specs);
}

/// The jobs of the command line: --variant, --grid, then input files.
/// Invalid grid combinations go to `invalid`; anything else wrong is an
/// error. A combination equal to an earlier variant is compiled once.
llvm::Error collectJobs(std::vector<Job> &jobs,
                        std::vector<std::string> &invalid) {
  std::set<std::string> names;
  std::set<std::map<std::string, std::string>> seen;
  auto addVariant = [&](const std::string &spec,
                        bool fromGrid) -> llvm::Error {
    llvm::Expected<Variant> variant = parseVariant(spec);
    if (!variant) {
      std::string why = llvm::toString(variant.takeError());
      if (!fromGrid)
        return llvm::createStringError("--variant " + spec + ": " + why);
      invalid.push_back(spec + ": " + why);
      return llvm::Error::success();
    }
    if (!seen.insert(variantParameters(*variant)).second)
      return llvm::Error::success();
    Job job;
    job.variant = *variant;
    job.name = variantName(*variant);
    for (int n = 2; names.count(job.name); ++n)
      job.name = variantName(*variant) + "." + std::to_string(n);
    names.insert(job.name);
    jobs.push_back(std::move(job));
    return llvm::Error::success();
  };
  for (const std::string &spec : variantSpecs)
    if (llvm::Error err = addVariant(spec, /*fromGrid=*/false))
      return err;
  if (!gridFile.empty()) {
    std::vector<std::string> specs;
    if (llvm::Error err = readGrid(gridFile, specs))
      return err;
    for (const std::string &spec : specs)
      if (llvm::Error err = addVariant(spec, /*fromGrid=*/true))
        return err;
  }
  for (const std::string &file : inputFiles) {
    // Checked here, once, rather than by each build's parse: before the
    // bundle directory exists.
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
        llvm::MemoryBuffer::getFile(file);
    if (!text)
      return llvm::createStringError("cannot read " + file + ": " +
                                     text.getError().message());
    if (::attn::Status s = ::attn::checkNesting((*text)->getBuffer(), file); !s)
      return llvm::createStringError(s.message());
    Job job;
    job.file = file;
    job.name = llvm::sys::path::stem(file).str();
    if (!names.insert(job.name).second)
      return llvm::createStringError("two inputs would both be named " +
                                     job.name);
    jobs.push_back(std::move(job));
  }
  return llvm::Error::success();
}

/// The targets of the command line, checked.
llvm::Expected<std::vector<std::string>> requestedTargets() {
  // A target named twice is built once (and keyed once in the cache).
  std::vector<std::string> targets;
  for (const std::string &t : targetList)
    if (!llvm::is_contained(targets, t))
      targets.push_back(t);
  if (emitKind != Emit::Bundle) {
    if (!targets.empty())
      return llvm::createStringError(
          "give either --emit=<target> or --targets, not both");
    unsigned index = static_cast<unsigned>(emitKind.getValue()) -
                     static_cast<unsigned>(Emit::FirstTarget);
    targets = {targetBackends()[index].name().str()};
  }
  if (targets.empty())
    return llvm::createStringError(
        "no target: give --targets=spirv (or --emit=spirv)");
  std::string available;
  for (const TargetBackend &b : targetBackends())
    available += (available.empty() ? "" : ", ") + b.name().str();
  for (const std::string &t : targets)
    if (!findTargetBackend(t))
      return llvm::createStringError("unknown target '" + t +
                                     "' (available: " + available + ")");
  return targets;
}

/// The builds: one of size 1 for the targets of single-invocation kernels
/// (cpu), one per subgroup size for the GPU targets, one of size 0 for the
/// targets that lower the attn ops themselves (tt). A target with a fixed
/// subgroup size (ptx and msl: 32, an NVIDIA warp, Apple's SIMD width)
/// builds at that size only.
llvm::Expected<std::vector<Build>>
plannedBuilds(const std::vector<std::string> &targets) {
  std::vector<const TargetBackend *> gpu;
  std::vector<::attn::Target> ownLowering, singleInvocation;
  for (const std::string &t : targets) {
    const TargetBackend *b = findTargetBackend(t);
    if (b->lowersItself())
      ownLowering.push_back(b->id);
    else if (b->family->singleInvocation)
      singleInvocation.push_back(b->id);
    else
      gpu.push_back(b);
  }
  std::vector<int64_t> sizes(subgroupSizes.begin(), subgroupSizes.end());
  if (sizes.empty()) {
    for (const TargetBackend *b : gpu)
      if (b->subgroupSize == 0)
        sizes = {8, 16, 32, 64};
    if (sizes.empty())
      sizes = {kNVIDIAWarpSize};
    for (const TargetBackend *b : gpu)
      if (b->subgroupSize != 0 && !llvm::is_contained(sizes, b->subgroupSize))
        sizes.push_back(b->subgroupSize);
  }
  for (int64_t &size : sizes) {
    if (size == 0) {
      llvm::Expected<int64_t> local = localVulkanSubgroupSize();
      if (!local)
        return llvm::createStringError("--subgroup-size=0: " +
                                       llvm::toString(local.takeError()));
      size = *local;
    }
    if (size < 4 || size > 128 || !llvm::isPowerOf2_64(size))
      return llvm::createStringError(
          "--subgroup-size: " + std::to_string(size) +
          " is not a subgroup size (a power of two from 4 to 128)");
  }
  llvm::sort(sizes);
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const TargetBackend *b : gpu)
    if (b->subgroupSize != 0 && !llvm::is_contained(sizes, b->subgroupSize))
      return llvm::createStringError(
          "target " + b->name() + " needs subgroup size " +
          llvm::Twine(b->subgroupSize) + ": add " +
          llvm::Twine(b->subgroupSize) + " to --subgroup-size");

  // The cpu's kernels have no subgroups: one build of size 1, whatever
  // --subgroup-size says of the GPUs'.
  std::vector<Build> builds;
  if (!singleInvocation.empty())
    builds.push_back(Build{1, singleInvocation});
  if (gpu.empty())
    sizes.clear();
  for (int64_t size : sizes) {
    Build build{size, {}};
    for (const TargetBackend *b : gpu)
      if (b->subgroupSize == 0 || b->subgroupSize == size)
        build.targets.push_back(b->id);
    if (!build.targets.empty())
      builds.push_back(std::move(build));
  }
  if (!ownLowering.empty())
    builds.push_back(Build{0, ownLowering});
  return builds;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

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
  llvm::SourceMgr sourceMgr;
  std::string error;
  OwningOpRef<ModuleOp> module =
      parseModuleFile(job.file, context, sourceMgr, error);
  if (!module) {
    if (!error.empty())
      llvm::errs() << error << "\n";
    return failure();
  }
  return module;
}

/// spirv-val on a kernel's bytes (as compiled, before any compression).
::attn::Status runSpirvVal(llvm::StringRef bytes) {
  llvm::ErrorOr<std::string> tool = llvm::sys::findProgramByName("spirv-val");
  if (!tool)
    return ::attn::Status::error(
        "--validate-spirv: spirv-val not found on PATH (install spirv-tools)");
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("kernel", "spv", fd, path))
    return ::attn::Status::error("--validate-spirv: no temporary file");
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << bytes;
  }
  llvm::FileRemover removeKernel(path);
  std::string message;
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("spirv-val", "log", log);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  int rc = llvm::sys::ExecuteAndWait(
      *tool, {*tool, "--target-env", "vulkan1.1", path.str()}, std::nullopt,
      redirects, 0, 0, &message);
  std::string output;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    output = (*text)->getBuffer().str();
  llvm::sys::fs::remove(log);
  if (rc != 0)
    return ::attn::errorf("spirv-val rejects a kernel: ",
                          output.empty() ? message : output);
  return ::attn::Status::ok();
}

std::string fileExtension(const std::string &target) {
  return findTargetBackend(target)->fileExtension.str();
}

/// Whether `target`'s kernels are program files kept in one folder (tt).
bool inProgramFolders(const std::string &target) {
  return findTargetBackend(target)->programFolders;
}

/// A bundle entry before compiling: its function, name and parameters.
struct PlannedEntry {
  std::string function;
  rt::BundleVariant entry;
};

/// The bundle entries of a job's module: one per function, each with the
/// parameters the runtime matches on.
llvm::Expected<std::vector<PlannedEntry>> plannedEntries(const Job &job,
                                                         ModuleOp module) {
  std::vector<PlannedEntry> planned;
  if (job.variant) {
    PlannedEntry p{job.variant->functionName().str(), {}};
    p.entry.name = job.name;
    p.entry.parameters = variantParameters(*job.variant);
    planned.push_back(std::move(p));
    return planned;
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isDeclaration())
      continue;
    llvm::Expected<Variant> variant = variantOfFunction(fn);
    if (!variant)
      return variant.takeError();
    PlannedEntry p{fn.getSymName().str(), {}};
    p.entry.name = job.name + "." + p.function;
    p.entry.parameters = variantParameters(*variant);
    planned.push_back(std::move(p));
  }
  if (planned.empty())
    return llvm::createStringError("the file has no function to compile");
  return planned;
}

/// Moves what `compiled` holds for the function of `entry` (the function
/// named `function`) into it: its plan, the kernels that plan launches, and
/// the TT program of the function. Launched symbols are made unique to this
/// compile ("<entry>@<cache key>/<module>::<kernel>") so that the kernels of
/// several entries and bundles can share one device.
std::string launchedSymbol(const rt::BundleVariant &entry,
                           llvm::StringRef symbol) {
  return rt::entrySymbolPrefix(entry) + symbol.str();
}

void takeFunction(CompiledModule &compiled, llvm::StringRef function,
                  rt::BundleVariant &entry) {
  std::string prefix = launchedSymbol(entry, "");
  std::set<std::string> launched;
  for (::attn::runtime::Plan &plan : compiled.plans) {
    if (plan.function != function)
      continue;
    for (::attn::runtime::PlanOp &op : plan.ops)
      if (op.kind == ::attn::runtime::PlanOpKind::Launch) {
        launched.insert(op.kernel);
        op.kernel = prefix + op.kernel;
      }
    entry.plans.push_back(plan);
  }
  for (CompiledKernel &k : compiled.kernels) {
    bool isLaunched = launched.count(k.symbol);
    if (!isLaunched && !(inProgramFolders(k.target) && k.symbol == function))
      continue;
    rt::BundleKernel kernel;
    kernel.symbol = isLaunched ? prefix + k.symbol : k.symbol;
    kernel.target = k.target;
    kernel.entryPoint = k.entryPoint;
    kernel.hash = rt::contentHash(k.bytes);
    kernel.launchJson = k.launchJson;
    entry.kernels.push_back(std::move(kernel));
  }
}

/// What happened to one job in one build.
enum class Outcome { Compiled, Reused, Failed };

class BundleCompiler {
public:
  BundleCompiler(std::string directory, CompileOptions options,
                 const rt::Bundle *previous)
      : directory(std::move(directory)), options(std::move(options)),
        previous(previous) {}

  /// Compiles (or reuses) one job for one build into `entries`; errors go
  /// to stderr.
  Outcome run(const Job &job, const Build &build,
              std::vector<rt::BundleVariant> &entries) {
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
    llvm::Expected<std::vector<PlannedEntry>> planned =
        plannedEntries(job, **module);
    if (!planned)
      return failWith(llvm::toString(planned.takeError()));
    std::string text;
    llvm::raw_string_ostream textStream(text);
    (*module)->print(textStream);
    // 16 hex digits: the key names a compile within a bundle (reuse,
    // symbols), so it need not resist forgery; kernel files and the
    // manifest carry the whole hash. It is in every symbol and entry.
    std::string key =
        rt::contentHash(text + "|" + optionsKey(build) + "|" +
                        kCompilerVersion + "|" + compilerBuild())
            .substr(0, 16);
    for (PlannedEntry &p : *planned) {
      p.entry.subgroupSize = build.subgroupSize;
      p.entry.cacheKey = key;
    }
    if (std::optional<std::vector<rt::BundleVariant>> reused =
            reusable(*planned)) {
      entries = std::move(*reused);
      return Outcome::Reused;
    }

    CompileOptions buildOptions = options;
    buildOptions.targets = build.targets;
    buildOptions.subgroupSize =
        build.subgroupSize ? build.subgroupSize : kNVIDIAWarpSize;
    FailureOr<CompiledModule> compiled = compileModule(**module, buildOptions);
    if (failed(compiled))
      return failWith("compilation failed");
    std::vector<rt::BundleVariant> done;
    for (PlannedEntry &p : *planned) {
      takeFunction(*compiled, p.function, p.entry);
      if (::attn::Status s = writeKernels(*compiled, p.entry); !s)
        return failWith(s.message());
      done.push_back(std::move(p.entry));
    }
    entries = std::move(done);
    return Outcome::Compiled;
  }

private:
  /// Writes the files of `entry`'s kernels, found in `compiled` by entry
  /// point and target, under content-addressed names
  /// (runtime/bundle/BundleWriter.h), and names them in the entry. TT programs keep
  /// their files together in one folder, as program.json names them, so the
  /// folder runs on the emulator as it is; the folder's name carries the hash
  /// of all of them.
  ::attn::Status writeKernels(const CompiledModule &compiled,
                              rt::BundleVariant &entry) {
    for (rt::BundleKernel &kernel : entry.kernels) {
      const CompiledKernel *source = nullptr;
      std::string program; // every file of a TT program, for its folder name
      for (const CompiledKernel &k : compiled.kernels) {
        // A TT program the plan launches has its symbol made unique.
        bool sameProgram =
            inProgramFolders(k.target) &&
            (k.symbol == kernel.symbol ||
             launchedSymbol(entry, k.symbol) == kernel.symbol);
        // A SPIR-V kernel's two ABI forms share its entry point.
        if (k.target == kernel.target && k.entryPoint == kernel.entryPoint &&
            rt::contentHash(k.bytes) == kernel.hash &&
            (!inProgramFolders(k.target) || sameProgram))
          source = &k;
        if (inProgramFolders(kernel.target) && sameProgram)
          program += k.entryPoint + '\0' + k.bytes + '\0';
      }
      if (!source)
        return ::attn::errorf("no compiled ", kernel.target,
                              " kernel has entry point ", kernel.entryPoint);
      if (validateSpirv &&
          ::attn::parseTarget(kernel.target) == ::attn::Target::SPIRV)
        ATTN_RETURN_IF_ERROR(runSpirvVal(source->bytes));
      if (inProgramFolders(kernel.target)) {
        kernel.file = "kernels/" + kernel.symbol + "." +
                      rt::contentHash(program) + "/" +
                      kernel.entryPoint;
        ATTN_RETURN_IF_ERROR(
            rt::writeFileAtomically(directory, kernel.file, source->bytes));
        continue;
      }
      std::string stored = source->bytes;
      std::string extension = fileExtension(kernel.target);
      if (compressKernels) {
        ::attn::Result<std::string> frame = rt::zstdCompress(stored);
        if (!frame)
          return frame.status();
        stored = std::move(*frame);
        extension += rt::kCompressedSuffix;
        kernel.hash = rt::contentHash(stored);
      }
      kernel.file = "kernels/" + rt::contentAddressedName(kernel.entryPoint,
                                                          stored, extension);
      ATTN_RETURN_IF_ERROR(
          rt::writeFileAtomically(directory, kernel.file, stored));
    }
    return ::attn::Status::ok();
  }

  std::string optionsKey(const Build &build) const {
    std::string key;
    for (::attn::Target t : build.targets)
      key += std::string(::attn::toString(t)) + ",";
    return key + "sg" + std::to_string(build.subgroupSize) + ",split" +
           std::to_string(options.splitKv) + ",matrix" + options.prefillMatrix +
           ",abi" + std::to_string(static_cast<int>(options.spirv.abi)) +
           (validateSpirv ? ",validated" : "") +
           (compressKernels ? ",zstd" : "") +
           (llvm::is_contained(build.targets, ::attn::Target::PTX)
                ? ",chip" + llvm::join(options.ptx.chips, "+")
                : "") +
           (llvm::is_contained(build.targets, ::attn::Target::CPU)
                ? ",isa" + llvm::join(options.cpu.isaLevels, "+")
                : "");
  }

  /// The previous bundle's entries for `planned`, when every one is there
  /// with the same cache key and intact files.
  std::optional<std::vector<rt::BundleVariant>>
  reusable(const std::vector<PlannedEntry> &planned) const {
    if (!previous)
      return std::nullopt;
    std::vector<rt::BundleVariant> old;
    for (const PlannedEntry &p : planned) {
      const rt::BundleVariant &entry = p.entry;
      const rt::BundleVariant *found =
          previous->findEntry(entry.name, entry.subgroupSize);
      if (!found || found->cacheKey != entry.cacheKey ||
          found->parameters != entry.parameters)
        return std::nullopt;
      for (const rt::BundleKernel &k : found->kernels)
        if (!previous->readKernel(k))
          return std::nullopt;
      old.push_back(*found);
    }
    return old;
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

/// The bundle in the output directory, if there is a readable one; one
/// that is there but unreadable (another format, damaged) is said, and
/// every variant compiles anew.
/// The bundle at the output path, whose entries a build may reuse. A build
/// that signs reuses only what its own key signed: anyone who can write the
/// directory could have edited an entry (and re-stamped the manifest hash),
/// and signing it would vouch for the edit.
std::optional<rt::Bundle> previousBundle(const rt::BundleTrust &trust) {
  std::error_code ec;
  if (!std::filesystem::exists(outputPath + "/manifest.json", ec))
    return std::nullopt;
  ::attn::Result<rt::Bundle> old = rt::loadManifest(outputPath, trust);
  if (!old) {
    if (!quiet)
      llvm::errs() << "attn-compile: note: reusing nothing of the bundle "
                      "there: "
                   << old.message() << "\n";
    return std::nullopt;
  }
  return std::move(*old);
}

std::string overview() {
  return "attn-compile: ahead-of-time compiler for attention variants\n\n"
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
         "      Each variant gets one entry per subgroup size "
         "(--subgroup-size); the\n"
         "      runtime takes the entry its device runs. A FILE.mlir gives "
         "one variant\n"
         "      per function, named FILE.FUNCTION, each function in the form "
         "--emit=mlir\n"
         "      prints (one attn op, its arguments in that order). Variants "
         "whose input\n"
         "      and options did not change since the last run, compiled by "
         "this same\n      attn-compile executable, are reused (with "
         "--sign-key, only from a\n      bundle that key signed).\n"
         "      --emit=spirv|ptx|msl|tt is --targets with one target.\n\n"
         "Targets built in this version: spirv, tt, ptx, msl, cpu.\n"
         "ptx kernels are PTX text for each --chip (default sm_90), one "
         ".ptx per kernel and\nchip, built for subgroup size 32; their "
         "launch facts give the chip, the\nworkgroup size and the "
         "element size of each argument (five "
         ".param values per buffer: upstream's\nmemref descriptor).\n"
         "msl kernels are Metal source (.metal) cross-compiled from the "
         "SPIR-V kernels by\nSPIRV-Cross, for macOS, each at the lowest MSL "
         "version it needs, built for\nsubgroup size 32 (Apple's SIMD "
         "width). Their launch facts give the entry\npoint, MSL version, "
         "threadgroup size and the [[buffer(n)]] index of each\nargument.\n"
         "tt kernels are TT-Metalium C++ for the pinned SDK "
         "(devices/tt/sdk/README.md): "
         "each program\n(one per attn op) is a folder "
         "NAME.attnb/kernels/<variant>@<cache key>/<program>.<hash>/ "
         "with\nprogram.json and the "
         "reader, compute and writer kernels, as attn-translate\n"
         "--attn-to-ttmetal writes it; the entry's plan launches the program "
         "with the\nop's sizes, and the runtime runs it on a TT device (the "
         "emulator here).\n"
         "cpu kernels are ELF shared objects (.so), one per kernel, machine "
         "code for\n--cpu-isa from LLVM in process, linked by ld.lld; the "
         "same kernels as the GPU\ntargets' built for one invocation per "
         "work item (an entry of subgroup size 1).\nTheir launch facts give "
         "the ISA level and the element size of each argument;\nthe CPU "
         "device calls the entry point of core/CpuKernel.h once per work "
         "item.\n\n"
         "Exit status: 0 when everything compiled, 1 otherwise (an invalid "
         "grid\ncombination counts, unless --skip-invalid). A run that fails "
         "keeps the bundle\nthat was there, and removes a bundle directory "
         "it created.\n\n"
         "Sizes are bounded (dialect/Limits.h): heads, head size, latent "
         "row and block\nsize at most 4096, num_kv_splits at most 1024.\n\n"
         "Variant keys (default) and the ops they apply to:\n" +
         variantKeysHelp();
}

/// The jobs to compile (collectJobs), with the invalid grid combinations
/// listed on stderr; `invalid` gets them.
llvm::Error checkedJobs(std::vector<Job> &jobList,
                        std::vector<std::string> &invalid) {
  if (llvm::Error err = collectJobs(jobList, invalid))
    return err;
  for (const std::string &why : invalid)
    llvm::errs() << "attn-compile: " << (skipInvalid ? "skipped " : "invalid ")
                 << why << "\n";
  if (!invalid.empty() && !skipInvalid)
    return llvm::createStringError(
        llvm::Twine(invalid.size()) +
        " grid combination(s) are invalid (listed above); fix the "
        "grid or pass --skip-invalid to compile the others");
  if (jobList.empty())
    return llvm::createStringError(
        invalid.empty()
            ? "nothing to compile: give FILE.mlir, --variant or --grid"
            : "every combination of the grid is invalid");
  return llvm::Error::success();
}

/// The most shards a compile is cut into.
constexpr int64_t kMaxShards = 4096;

/// Keeps the jobs of --shard=I/N (all without it): job j when j % N == I.
llvm::Error selectShard(std::vector<Job> &jobList) {
  if (shard.getNumOccurrences() == 0)
    return llvm::Error::success();
  llvm::StringRef text = shard, first, second;
  std::tie(first, second) = text.split('/');
  int64_t index = -1, count = 0;
  if (first.getAsInteger(10, index) || second.getAsInteger(10, count) ||
      count < 1 || count > kMaxShards || index < 0 || index >= count)
    return llvm::createStringError(
        "--shard=" + shard + ": expected I/N with 0 <= I < N <= " +
        llvm::Twine(kMaxShards));
  std::vector<Job> kept;
  for (size_t j = 0; j < jobList.size(); ++j)
    if (static_cast<int64_t>(j % count) == index)
      kept.push_back(std::move(jobList[j]));
  jobList = std::move(kept);
  return llvm::Error::success();
}

/// What the tasks of a run left: task i compiles job i / #builds for build
/// i % #builds.
struct TaskResults {
  std::vector<std::vector<rt::BundleVariant>> entries;
  std::vector<Outcome> outcomes;
  double seconds = 0.0;
};

/// Runs one task per job and build on a thread pool of -j threads, showing
/// progress on a terminal.
TaskResults runTasks(BundleCompiler &compiler, const std::vector<Job> &jobList,
                     const std::vector<Build> &builds) {
  size_t numTasks = jobList.size() * builds.size();
  auto start = std::chrono::steady_clock::now();
  TaskResults results;
  results.entries.resize(numTasks);
  results.outcomes.assign(numTasks, Outcome::Failed);
  std::atomic<size_t> done = 0;
  bool showProgress = !quiet && llvm::sys::Process::StandardErrIsDisplayed();
  std::mutex progressMutex;
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
    for (size_t i = 0; i < numTasks; ++i)
      pool.async([&, i] {
        const Job &job = jobList[i / builds.size()];
        results.outcomes[i] =
            compiler.run(job, builds[i % builds.size()], results.entries[i]);
        size_t n = ++done;
        if (showProgress) {
          // Tasks done of all, their rate so far and the time it gives
          // for the rest, and the last one done.
          double elapsed = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
          double rate = n / std::max(elapsed, 1e-3);
          std::lock_guard<std::mutex> lock(progressMutex);
          llvm::errs() << llvm::formatv(
              "\r[{0}/{1}] {2:f1}/s, about {3:f0} s left: {4}\x1b[K", n,
              numTasks, rate, (numTasks - n) / rate, job.name);
        }
      });
    pool.wait();
  }
  if (showProgress)
    llvm::errs() << "\r\x1b[K";
  results.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return results;
}

/// How many jobs compiled, were reused whole, or failed in some build.
struct Tally {
  size_t compiled = 0, reused = 0, failed = 0;
};

/// Moves the entries of every job that no build failed into `bundle`, in
/// job and build order.
Tally collectEntries(size_t numJobs, size_t numBuilds, TaskResults &results,
                     rt::Bundle &bundle) {
  Tally tally;
  for (size_t j = 0; j < numJobs; ++j) {
    bool anyFailed = false, allReused = true;
    for (size_t b = 0; b < numBuilds; ++b) {
      size_t i = j * numBuilds + b;
      anyFailed |= results.outcomes[i] == Outcome::Failed;
      allReused &= results.outcomes[i] == Outcome::Reused;
    }
    if (anyFailed) {
      ++tally.failed;
      continue;
    }
    ++(allReused ? tally.reused : tally.compiled);
    for (size_t b = 0; b < numBuilds; ++b)
      for (rt::BundleVariant &entry : results.entries[j * numBuilds + b])
        bundle.variants.push_back(std::move(entry));
  }
  return tally;
}

/// What `bundle` holds, in attn-bundle-check's words: "8 variants (32
/// entries), 40 kernel files, 5.1 MiB".
std::string describeBundle(const rt::Bundle &bundle) {
  std::set<std::string> variants, files;
  for (const rt::BundleVariant &v : bundle.variants) {
    variants.insert(v.name);
    for (const rt::BundleKernel &k : v.kernels)
      files.insert(k.file);
  }
  uint64_t bytes = 0;
  for (const std::string &file : files) {
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(
        std::filesystem::path(bundle.directory) / file, ec);
    bytes += ec ? 0 : size;
  }
  return llvm::formatv("{0} variants ({1} entries), {2} kernel files, "
                       "{3:f1} MiB",
                       variants.size(), bundle.variants.size(), files.size(),
                       bytes / 1048576.0)
      .str();
}

/// The closing line of a run: its inputs (a --variant, a grid point or a
/// .mlir file each) by outcome, and the bundle written.
void printSummary(const Tally &tally, size_t skipped, double seconds,
                  const std::vector<Build> &builds, const rt::Bundle &bundle) {
  std::string sizes;
  for (const Build &build : builds)
    if (build.subgroupSize)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(build.subgroupSize);
  llvm::outs() << "attn-compile: " << tally.compiled << " compiled, "
               << tally.reused << " reused, " << skipped << " skipped, "
               << tally.failed << " failed in "
               << llvm::formatv("{0:f1}", seconds) << " s -> " << outputPath
               << (tally.failed ? "" : ": " + describeBundle(bundle))
               << (sizes.empty() ? "" : " (subgroup sizes " + sizes + ")")
               << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::setToolVersionPrinter("attn-compile");
  llvm::cl::HideUnrelatedOptions(category);
  addTargetEmits();
  llvm::cl::ParseCommandLineOptions(argc, argv, overview());

  if (emitKind == Emit::Mlir)
    return emitMlir();

  if (jobs > kMaxJobs)
    return fail("-j " + llvm::Twine(jobs.getValue()) +
                " is more than the limit of " + llvm::Twine(kMaxJobs) +
                " variants compiled in parallel");
  llvm::Expected<std::vector<std::string>> targets = requestedTargets();
  if (!targets)
    return fail(llvm::toString(targets.takeError()));
  std::optional<SPIRVTargetOptions::Abi> abi = parseSpirvAbi(spirvAbi);
  if (!abi)
    return fail("--spirv-abi=" + spirvAbi +
                ": expected both, addresses or bindings");
  if (compress != "none" && compress != "zstd")
    return fail("--compress=" + compress + ": expected none or zstd");
  compressKernels = compress == "zstd";
  if (compressKernels && !rt::haveZstd())
    return fail("--compress=zstd: this attn-compile was built without zstd "
                "(install libzstd-dev and build again)");
  if (outputPath == "-")
    return fail("a bundle needs an output directory: -o NAME.attnb");
  llvm::Expected<std::vector<Build>> builds = plannedBuilds(*targets);
  if (!builds)
    return fail(llvm::toString(builds.takeError()));
  std::vector<Job> jobList;
  std::vector<std::string> invalid;
  if (llvm::Error err = checkedJobs(jobList, invalid))
    return fail(llvm::toString(std::move(err)));
  if (llvm::Error err = selectShard(jobList))
    return fail(llvm::toString(std::move(err)));

  CompileOptions options;
  options.splitKv = splitKv;
  options.prefillMatrix = prefillMatrix;
  if (std::string why = checkCompileOptions(options); !why.empty())
    return fail(why);
  options.spirv.abi = *abi;
  if (!chip.empty())
    options.ptx.chips.assign(chip.begin(), chip.end());
  for (const std::string &sm : options.ptx.chips)
    if (!llvm::is_contained(::attn::ptxChips(), sm))
      return fail("--chip: no PTX chip '" + sm + "' (expected " +
                  ::attn::ptxChipNames() + ")");
  if (!cpuIsa.empty())
    options.cpu.isaLevels.assign(cpuIsa.begin(), cpuIsa.end());
  for (std::string &level : options.cpu.isaLevels) {
    // A bundle for the machine that builds it, as --subgroup-size=0 is
    // for its Vulkan device.
    if (level == "host") {
      const ::attn::CpuIsaLevel *best = ::attn::bestHostCpuIsa();
      if (!best)
        return fail("--cpu-isa=host: this machine runs none of the levels " +
                    ::attn::cpuIsaLevelNames());
      level = best->name;
    }
    if (!::attn::findCpuIsaLevel(level))
      return fail("--cpu-isa: no ISA level '" + level + "' (expected " +
                  ::attn::cpuIsaLevelNames() + " or host)");
  }
  std::optional<rt::SecretKey> secretKey;
  if (!signKey.empty()) {
    ::attn::Result<rt::SecretKey> key = rt::readSecretKey(signKey);
    if (!key)
      return fail("--sign-key: " + key.message());
    secretKey = *key;
  }
  // Every flag checked: only now the bundle directory. One writer at a
  // time; what the last one left is the bundle to build on.
  ::attn::Result<rt::BundleLock> lock =
      rt::BundleLock::acquire(outputPath, [](const std::string &dir) {
        llvm::errs() << "attn-compile: waiting for another attn-compile "
                        "writing "
                     << dir << "\n";
      });
  if (!lock)
    return fail(lock.message());
  rt::BundleTrust reuseTrust;
  if (secretKey)
    reuseTrust = {{secretKey->publicKey()}, /*requireSignature=*/true};
  std::optional<rt::Bundle> previous = previousBundle(reuseTrust);

  BundleCompiler compiler(outputPath, options,
                          previous ? &*previous : nullptr);
  TaskResults results = runTasks(compiler, jobList, *builds);

  rt::Bundle bundle;
  bundle.compiler = kCompilerVersion;
  bundle.directory = outputPath;
  Tally tally = collectEntries(jobList.size(), builds->size(), results, bundle);
  if (secretKey)
    rt::signBundle(bundle, *secretKey);
  // A run that failed keeps the bundle that was there: its kernel files are
  // content-addressed, so the new ones written so far harm nothing. A
  // directory this run created goes again: without a manifest nothing in it
  // is of use.
  if (tally.failed) {
    llvm::errs() << "attn-compile: " << tally.failed << " variant(s) failed; "
                 << outputPath;
    if (previous)
      llvm::errs() << " keeps its previous manifest\n";
    else if (!lock->createdDirectory())
      llvm::errs() << " has no manifest\n";
    else if (::attn::Status s = lock->removeCreatedDirectory(); !s)
      llvm::errs() << " has no manifest (" << s.message() << ")\n";
    else
      llvm::errs() << " is removed (this run created it)\n";
  } else if (::attn::Status s = rt::writeManifest(bundle); !s)
    return fail(s.message());
  else if (::attn::Status s = rt::removeUnnamedKernelFiles(bundle); !s)
    return fail(s.message());

  if (!quiet)
    printSummary(tally, invalid.size(), results.seconds, *builds, bundle);
  return tally.failed == 0 ? 0 : 1;
}
