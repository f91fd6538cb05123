//===- DeviceRun.cpp - Compile and run a function on a device ------------===//

#include "tools/DeviceRun/DeviceRun.h"
#include "compiler/Compile.h"
#include "compiler/Variant.h"
#include "core/CpuKernel.h"
#include "core/LaunchFacts.h"
#include "devices/Devices.h"
#include "devices/cpu/CpuPlanDevice.h"
#include "reference/interp/Signature.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/PlanRunner.h"
#include "runtime/executor/BundleExecutor.h"
#include "runtime/host/Session.h"

#ifdef ATTN_HAVE_VULKAN
#include "devices/vulkan/VulkanPlanDevice.h"
#endif
#ifdef ATTN_HAVE_CUDA
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "devices/cuda/CudaPlanDevice.h"
#endif
#ifdef ATTN_HAVE_TT
#include "dialect/AttnOps.h"
#include "devices/tt/Check.h"
#include "devices/tt/EmulatorDevice.h"
#include "devices/tt/TTPlanDevice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace mlir;

std::vector<std::string> mlir::attn::deviceBackends() {
  std::vector<std::string> backends = {"cpu"};
#ifdef ATTN_HAVE_VULKAN
  backends.push_back("vulkan");
#endif
#ifdef ATTN_HAVE_TT
  backends.push_back("tt");
#endif
#ifdef ATTN_HAVE_CUDA
  backends.push_back("cuda");
#endif
  return backends;
}

std::string mlir::attn::describeDeviceBackends(bool withReference) {
  std::string runHere = withReference ? "reference" : "";
  std::string noDevice;
  auto append = [](std::string &list, const std::string &name) {
    list += (list.empty() ? "" : ", ") + name;
  };
  for (const std::string &name : deviceBackends()) {
    // The CPU and the TT host emulator run on any host; a GPU backend needs
    // its driver and a device.
    std::optional<::attn::runtime::DeviceType> gpu;
    if (name == "vulkan")
      gpu = ::attn::runtime::DeviceType::VULKAN;
    else if (name == "cuda")
      gpu = ::attn::runtime::DeviceType::CUDA;
    bool opens = !gpu || ::attn::devices::openDevice(*gpu).isOk();
    append(opens ? runHere : noDevice, name);
  }
  std::string text = "run here: " + runHere;
  if (!noDevice.empty())
    text += "; built in, no device here: " + noDevice;
  return text;
}

namespace {

llvm::Error toError(const ::attn::Status &status) {
  return llvm::createStringError(status.message());
}

/// Loads a kernel compiled in process as a bundle's kernel is loaded
/// (PlanDevice::loadKernel), so that the device keeps its launch bounds.
::attn::Status loadCompiled(::attn::runtime::PlanDevice &device,
                            const mlir::attn::CompiledKernel &k) {
  ::attn::runtime::BundleKernel kernel;
  kernel.symbol = k.symbol;
  kernel.target = k.target;
  kernel.entryPoint = k.entryPoint;
  kernel.launchJson = k.launchJson;
  return device.loadKernel(::attn::runtime::Bundle{}, kernel, k.bytes);
}

/// Runs `plan` on `device` and, with `stats`, records the run's kernel time
/// and launches under the device name `deviceName`.
llvm::Expected<std::vector<::attn::Tensor>>
runPlanCounted(const ::attn::runtime::Plan &plan,
               ::attn::runtime::PlanDevice &device,
               llvm::ArrayRef<::attn::Tensor> inputs,
               mlir::attn::DeviceRunStats *stats, std::string deviceName) {
  ::attn::runtime::PlanRunStats runStats;
  ::attn::Result<std::vector<::attn::Tensor>> results =
      ::attn::runtime::runPlan(plan, device, inputs, &runStats);
  if (!results)
    return toError(results.status());
  if (stats) {
    stats->device = std::move(deviceName);
    stats->kernelSeconds = runStats.kernelSeconds;
    stats->launches = runStats.launches;
  }
  return std::move(*results);
}

/// Compiles for one target and runs the plan on `device`; `addKernel` puts a
/// compiled kernel on the device.
template <typename AddKernel>
llvm::Expected<std::vector<::attn::Tensor>> compileAndRun(
    ModuleOp module, StringRef entry, const mlir::attn::CompileOptions &options,
    ::attn::runtime::PlanDevice &device, AddKernel addKernel,
    llvm::ArrayRef<::attn::Tensor> inputs, mlir::attn::DeviceRunStats *stats) {
  // Compiler diagnostics become the error's text.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  auto start = std::chrono::steady_clock::now();
  FailureOr<mlir::attn::CompiledModule> compiled =
      mlir::attn::compileModule(module, options);
  if (failed(compiled))
    return llvm::createStringError("compiling for " +
                                   std::string(device.name()) + " failed:\n" +
                                   diagnostics);
  if (stats)
    stats->compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  const ::attn::runtime::Plan *plan = nullptr;
  for (const ::attn::runtime::Plan &p : compiled->plans)
    if (p.function == entry)
      plan = &p;
  if (!plan)
    return llvm::createStringError("no function @" + entry.str() +
                                   " among the compiled functions");
  for (const mlir::attn::CompiledKernel &k : compiled->kernels) {
    if (::attn::Status s = addKernel(k); !s)
      return toError(s);
    if (stats)
      stats->kernels.emplace_back(
          k.entryPoint,
          ::attn::runtime::contentHash(k.bytes));
  }
  return runPlanCounted(*plan, device, inputs, stats,
                        std::string(device.name()));
}

/// Runs function `entry` of `module` with the kernels of the bundle at
/// `bundleDir` on `device`, which runs `target`'s kernels: the bundle entry
/// whose parameters are the function's variant and whose subgroup size (or
/// ISA level) the device runs, found and loaded by the runtime's
/// BundleExecutor, so a missing entry fails with the runtime's message
/// (what the bundle has, the attn-compile --variant to add).
llvm::Expected<std::vector<::attn::Tensor>>
runFromBundle(ModuleOp module, StringRef entry,
              const mlir::attn::BundleSource &bundleDir,
              std::string_view target, ::attn::runtime::PlanDevice &device,
              llvm::ArrayRef<::attn::Tensor> inputs,
              mlir::attn::DeviceRunStats *stats) {
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn)
    return llvm::createStringError("no function @" + entry.str());
  llvm::Expected<mlir::attn::Variant> variant =
      mlir::attn::variantOfFunction(fn);
  if (!variant)
    return llvm::createStringError(
        "--bundle: @" + entry.str() +
        " is not a variant a bundle holds: " +
        llvm::toString(variant.takeError()));
  ::attn::runtime::VariantQuery query = ::attn::runtime::variantQueryOf(
      mlir::attn::variantParameters(*variant));
  ::attn::Result<::attn::runtime::Bundle> bundle =
      ::attn::runtime::loadManifest(bundleDir.str(), bundleDir.trust);
  if (!bundle)
    return toError(bundle.status());
  ::attn::runtime::BundleExecutor executor(std::move(*bundle),
                                           std::string(target), device);
  if (::attn::Status s = executor.prepare(query); !s)
    return toError(s);
  ::attn::Result<const ::attn::runtime::BundleVariant *> chosen =
      ::attn::runtime::findVariant(*executor.servingBundle(), query, target,
                                   device.subgroupSizes());
  if (!chosen)
    return toError(chosen.status());
  const ::attn::runtime::Plan *plan = (*chosen)->plan();
  if (!plan)
    return llvm::createStringError("bundle " + bundleDir.str() +
                                   ": variant " + (*chosen)->name +
                                   " has no host plan");
  if (stats)
    for (const ::attn::runtime::BundleKernel &k : (*chosen)->kernels)
      if (k.target == target && device.runsKernel(k))
        stats->kernels.emplace_back(k.entryPoint, k.hash);
  return runPlanCounted(*plan, device, inputs, stats,
                        std::string(device.name()) + " (bundle " +
                            bundleDir.str() + ", entry " + (*chosen)->name +
                            " subgroup size " +
                            std::to_string((*chosen)->subgroupSize) + ")");
}

#ifdef ATTN_HAVE_TT
namespace ops = mlir::attn;

/// Writes compiled TT kernel `k` under `dir` as a bundle holds it
/// (<dir>/<program>/<file>); once its program.json is there, adds the
/// program to `device`, which builds its kernels when it first launches.
::attn::Status addTTKernel(StringRef dir, const ops::CompiledKernel &k,
                           ::attn::tt::TTPlanDevice &device) {
  SmallString<128> path(dir);
  llvm::sys::path::append(path, k.symbol, k.entryPoint);
  if (std::error_code ec = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(path)))
    return ::attn::errorf("cannot create the folder of ", path.str().str(),
                          ": ", ec.message());
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return ::attn::errorf("cannot write ", path.str().str(), ": ",
                          ec.message());
  out << k.bytes;
  if (k.entryPoint != "program.json")
    return ::attn::Status::ok();
  return device.addProgram(k.symbol, llvm::sys::path::parent_path(path).str(),
                           /*loadNow=*/false);
}

/// The tt backend's tolerance of each result of a function, and which kinds
/// it holds.
struct TTTolerances {
  std::vector<::attn::Tolerance> perResult;
  /// A reshape_and_cache result: bit-exact.
  bool anyExact = false;
  /// A result of a bf16 program.
  bool anyBf16 = false;
};

/// The dtype the op producing a result computes in: its query's
/// (paged_attention, mla_decode) or its first state's (merge_states); none
/// for any other producer.
std::optional<::attn::DType> computeDType(Operation *op) {
  Value source;
  if (auto p = dyn_cast_or_null<ops::PagedAttentionOp>(op))
    source = p.getQuery();
  else if (auto m = dyn_cast_or_null<ops::MlaDecodeOp>(op))
    source = m.getQ();
  else if (auto m = dyn_cast_or_null<ops::MergeStatesOp>(op))
    source = m.getOutA();
  if (!source)
    return std::nullopt;
  auto type = cast<ShapedType>(source.getType()).getElementType();
  return type.isBF16()  ? ::attn::DType::BF16
         : type.isF16() ? ::attn::DType::F16
                        : ::attn::DType::F32;
}

/// Per result of `fn`, the op that produced it decides its tolerance.
TTTolerances resultTolerances(func::FuncOp fn,
                              llvm::ArrayRef<::attn::Tensor> results) {
  TTTolerances tolerances;
  Operation *terminator = fn.getBody().front().getTerminator();
  for (auto [v, t] : llvm::zip(terminator->getOperands(), results)) {
    Operation *op = v.getDefiningOp();
    if (isa_and_nonnull<ops::ReshapeAndCacheOp>(op)) {
      tolerances.perResult.push_back({0.0, 0.0});
      tolerances.anyExact = true;
      continue;
    }
    std::optional<::attn::DType> dtype = computeDType(op);
    if (!dtype) {
      tolerances.perResult.push_back(::attn::defaultTolerance(t.dtype()));
      continue;
    }
    tolerances.anyBf16 |= *dtype == ::attn::DType::BF16;
    tolerances.perResult.push_back(::attn::tt::toleranceFor(*dtype));
  }
  return tolerances;
}

/// Where the tolerances of `tolerances` are documented, for the report.
std::string toleranceNote(const TTTolerances &tolerances) {
  std::vector<std::string> notes;
  if (tolerances.anyExact)
    notes.push_back("tt: reshape_and_cache must match bit for bit");
  if (tolerances.anyBf16) {
    ::attn::Tolerance tol = ::attn::tt::toleranceFor(::attn::DType::BF16);
    char values[64];
    std::snprintf(values, sizeof values, "atol %g, rtol %g", tol.atol,
                  tol.rtol);
    notes.push_back("tt: a bf16 program's outputs, lse included, within " +
                    std::string(values) +
                    " (P is rounded to bf16 before P.V as on the device; "
                    "devices/tt/README.md)");
  }
  return llvm::join(notes, "; ");
}

/// Adds to `stats` the emulator and the core grid the programs of `device`
/// spread over, and the tolerances of the results.
void recordTTStats(const ::attn::tt::TTPlanDevice &device,
                   const TTTolerances &tolerances,
                   mlir::attn::DeviceRunStats &stats) {
  for (const auto &[symbol, program] : device.programs()) {
    const ::attn::tt::ProgramDescription &d = program.description;
    stats.device = "tt:emulator (" +
                   std::string(::attn::tt::toString(d.arch)) + ", " +
                   std::to_string(d.gridX) + "x" + std::to_string(d.gridY) +
                   " cores)";
  }
  // reshape_and_cache moves bits; the outputs of a bf16 program (lse too)
  // carry the error of its bf16 tiles. f32 and f16 programs meet the
  // defaults.
  if (tolerances.anyExact || tolerances.anyBf16)
    stats.tolerances = tolerances.perResult;
  stats.toleranceNote = toleranceNote(tolerances);
}

/// The Tenstorrent backend, on the Plan path as a bundle runs: the function
/// compiled for tt (its TT programs and its plan, compiler/TTPlanBuilder.h),
/// each program's files written to a temporary folder as a bundle holds
/// them, and the plan run by runPlan on a TTPlanDevice over the host
/// emulator, which builds a program's kernels when it first launches.
/// Tolerances per result: bit-exact for a cache write's, the dtype the
/// producing op computes in otherwise.
llvm::Expected<std::vector<::attn::Tensor>>
runOnTT(ModuleOp module, StringRef entry, llvm::ArrayRef<::attn::Tensor> inputs,
        mlir::attn::DeviceRunStats *stats) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError("backend tt, @" + entry + ": " + message);
  };
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isDeclaration())
    return fail("no such function with a body");

  SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-tt-run", dir))
    return fail("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit removeDir([&] { llvm::sys::fs::remove_directories(dir); });
  ::attn::tt::EmulatorDevice emulator(::attn::tt::Arch::WormholeB0);
  ::attn::tt::TTPlanDevice device(emulator);
  auto addKernel = [&](const ops::CompiledKernel &k) {
    return addTTKernel(dir, k, device);
  };

  // Compile the function alone, so other functions of the module (which the
  // TT lowering may not support) do not matter.
  OwningOpRef<ModuleOp> single = ModuleOp::create(fn.getLoc());
  single->push_back(fn.clone());
  ops::CompileOptions options;
  options.targets = {::attn::Target::TT};
  llvm::Expected<std::vector<::attn::Tensor>> results = compileAndRun(
      *single, entry, options, device, addKernel, inputs, stats);
  if (!results)
    return fail(llvm::toString(results.takeError()));
  if (stats)
    recordTTStats(device, resultTolerances(fn, *results), *stats);
  return results;
}
#endif

} // namespace

llvm::Expected<int64_t> mlir::attn::localVulkanSubgroupSize() {
#ifdef ATTN_HAVE_VULKAN
  ::attn::vulkan::VulkanOptions options;
  options.validation = ::attn::vulkan::ValidationMode::Off;
  ::attn::Result<std::vector<::attn::vulkan::VulkanDeviceInfo>> devices =
      ::attn::vulkan::VulkanDevice::listPhysicalDevices(options);
  if (!devices)
    return llvm::createStringError(devices.message());
  for (const ::attn::vulkan::VulkanDeviceInfo &info : *devices)
    if (info.hasComputeQueue)
      return static_cast<int64_t>(info.subgroupSize);
  return llvm::createStringError("no Vulkan device with a compute queue");
#else
  return llvm::createStringError("this build has no Vulkan executor");
#endif
}

mlir::attn::KernelKnobFlags::KernelKnobFlags(llvm::cl::OptionCategory &category)
    : splitKv("split-kv",
              llvm::cl::desc("GPU backends: split-KV decode, 0 lets the "
                             "compiler choose, N (at most 1024) forces N "
                             "splits and a reduce kernel"),
              llvm::cl::init(0), llvm::cl::cat(category)),
      vectorWidth("vector-width",
                  llvm::cl::desc("GPU backends with scalar loads (vulkan): "
                                 "contiguous head-dimension elements one lane "
                                 "owns (default 1)"),
                  llvm::cl::init(1), llvm::cl::cat(category)),
      attentionSubgroups("attention-subgroups",
                         llvm::cl::desc("GPU backends: subgroups per "
                                        "paged_attention workgroup (default "
                                        "4, fewer when workgroup memory is "
                                        "short)"),
                         llvm::cl::init(4), llvm::cl::cat(category)),
      laneRegisters("lane-registers",
                    llvm::cl::desc("GPU and cpu backends: values one lane "
                                   "may keep live, which sizes the "
                                   "attention tiles (default 0: the "
                                   "device's suggestion, 512 on a CPU, "
                                   "else 128)"),
                    llvm::cl::init(0), llvm::cl::cat(category)),
      tiledPrefill("tiled-prefill",
                   llvm::cl::desc("GPU backends: paged_attention's tiled "
                                  "prefill kernel takes the requests longer "
                                  "than the decode threshold (default true; "
                                  "false: the per-token kernel takes all)"),
                   llvm::cl::init(true), llvm::cl::cat(category)),
      decodeThreshold("decode-threshold",
                      llvm::cl::desc("GPU backends with --tiled-prefill: "
                                     "requests with at most this many query "
                                     "tokens go to the per-token kernel "
                                     "(default -1: the backend's "
                                     "reorder_batch_threshold, or 1)"),
                      llvm::cl::init(-1), llvm::cl::cat(category)),
      prefillMatrix("prefill-matrix",
                    llvm::cl::desc("GPU backends: products of the tiled "
                                   "prefill kernel, none, subgroup-mma, "
                                   "auto (subgroup-mma where the variant "
                                   "allows) or emulate (the matrix kernel "
                                   "with SIMT products; default: the "
                                   "target's, auto on CUDA, none "
                                   "elsewhere)"),
                    llvm::cl::init(""), llvm::cl::cat(category)),
      maxWorkgroupMemory("max-workgroup-memory",
                         llvm::cl::desc("GPU backends: workgroup memory in "
                                        "bytes a kernel may use (default "
                                        "0: 16 KiB)"),
                         llvm::cl::init(0), llvm::cl::cat(category)),
      spirvAbi("spirv-abi",
               llvm::cl::desc("Backend vulkan: the kernels' buffer ABI, "
                              "both (default: by binding when every buffer "
                              "of a launch fits the device's storage-buffer "
                              "range, else by device address), addresses "
                              "or bindings"),
               llvm::cl::value_desc("both|addresses|bindings"),
               llvm::cl::init("both"), llvm::cl::cat(category)),
      cpuIsa("cpu-isa",
             llvm::cl::desc("Backend cpu: the ISA level of the kernels' "
                            "machine code, x86-64-v3, x86-64-v4, "
                            "x86-64-v4-bf16 or aarch64 "
                            "(default: the widest this host runs); attn-diff "
                            "also takes a comma-separated list or all (every "
                            "level this host runs) and diffs each in turn"),
             llvm::cl::init(""), llvm::cl::cat(category)) {}

llvm::Error
mlir::attn::KernelKnobFlags::apply(CompileOptions &options) const {
  std::optional<SPIRVTargetOptions::Abi> abi = parseSpirvAbi(spirvAbi);
  if (!abi)
    return llvm::createStringError("--spirv-abi=" + spirvAbi +
                                   ": expected both, addresses or bindings");
  options.spirv.abi = *abi;
  options.splitKv = splitKv;
  options.vectorWidth = vectorWidth;
  options.attentionSubgroups = attentionSubgroups;
  if (laneRegisters > 0)
    options.laneRegisters = laneRegisters;
  options.tiledPrefill = tiledPrefill;
  options.decodeThreshold = decodeThreshold;
  options.prefillMatrix = prefillMatrix;
  options.maxWorkgroupMemory = maxWorkgroupMemory;
  if (std::string why = checkCompileOptions(options); !why.empty())
    return llvm::createStringError(why);
  if (!cpuIsa.empty()) {
    options.cpu.isaLevels = {cpuIsa};
  } else if (const ::attn::CpuIsaLevel *best = ::attn::bestHostCpuIsa()) {
    options.cpu.isaLevels = {std::string(best->name)};
  }
  return llvm::Error::success();
}

mlir::attn::CpuEmulatorFlags::CpuEmulatorFlags(
    llvm::cl::OptionCategory &category)
    : emulator("cpu-emulator",
               llvm::cl::desc("Backend cpu, test tooling: run the kernels of "
                              "a level this host cannot (aarch64 on x86-64) "
                              "under this qemu-user program, one process per "
                              "launch through attn-cpu-launch; slow, one "
                              "thread (default: none, such kernels are "
                              "refused)"),
               llvm::cl::value_desc("qemu-aarch64"), llvm::cl::init(""),
               llvm::cl::cat(category)),
      launcher("cpu-launcher",
               llvm::cl::desc("Backend cpu with --cpu-emulator: "
                              "attn-cpu-launch built for AArch64 (default: "
                              "the one beside this tool)"),
               llvm::cl::value_desc("PATH"), llvm::cl::init(""),
               llvm::cl::cat(category)) {}

/// The CPU device's options for `flags`: the emulator, with the launcher
/// beside this tool unless --cpu-launcher names one.
static ::attn::cpu::CpuDeviceOptions
cpuDeviceOptions(const mlir::attn::CpuEmulatorFlags &flags) {
  ::attn::cpu::CpuDeviceOptions options;
  options.emulator.emulator = flags.emulator;
  options.emulator.launcher = flags.launcher;
  if (!flags.emulator.empty() && flags.launcher.empty()) {
    SmallString<256> launcher(llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(nullptr, nullptr)));
    llvm::sys::path::append(launcher, "attn-cpu-launch");
    options.emulator.launcher = launcher.str().str();
  }
  return options;
}

/// `options` (a device's suggestions) with the flags `knobs` applied.
static llvm::Expected<mlir::attn::CompileOptions>
knobOptions(const mlir::attn::KernelKnobFlags &knobs,
            mlir::attn::CompileOptions options) {
  if (llvm::Error err = knobs.apply(options))
    return std::move(err);
  return options;
}

/// The cpu backend: shared objects for the ISA level of `knobs` on the CPU
/// device, loaded as a bundle's kernels are. The lane budget and widest
/// load are the cpu target's own, as attn-compile's (kCPULowering), so
/// these are the kernels a bundle of this level ships.
/// With `bundleDir`, the bundle's cpu kernels instead, the widest level the
/// device runs.
static llvm::Expected<std::vector<::attn::Tensor>> runOnCpu(
    ModuleOp module, StringRef entry, llvm::ArrayRef<::attn::Tensor> inputs,
    mlir::attn::DeviceRunStats *stats, const mlir::attn::KernelKnobFlags &knobs,
    const mlir::attn::CpuEmulatorFlags &cpuEmulator,
    const mlir::attn::BundleSource &bundleDir) {
  ::attn::Result<std::unique_ptr<::attn::cpu::CpuPlanDevice>> device =
      ::attn::cpu::CpuPlanDevice::create(cpuDeviceOptions(cpuEmulator));
  if (!device)
    return llvm::createStringError("backend cpu: " + device.message());
  if (!bundleDir.empty())
    return runFromBundle(module, entry, bundleDir,
                         ::attn::runtime::bundleTarget(
                             ::attn::runtime::DeviceType::CPU),
                         **device, inputs, stats);
  mlir::attn::CompileOptions target;
  target.subgroupSize = 1;
  llvm::Expected<mlir::attn::CompileOptions> options =
      knobOptions(knobs, target);
  if (!options)
    return options.takeError();
  options->targets = {::attn::Target::CPU};
  auto addKernel = [&](const mlir::attn::CompiledKernel &k) {
    return loadCompiled(**device, k);
  };
  llvm::Expected<std::vector<::attn::Tensor>> results = compileAndRun(
      module, entry, *options, **device, addKernel, inputs, stats);
  if (results && stats && (*device)->emulatedLaunches())
    stats->device += " (" + std::to_string((*device)->emulatedLaunches()) +
                     " launches under " + cpuEmulator.emulator + ")";
  return results;
}

namespace mlir::attn {
/// runOnDevice on the inputs as given.
static llvm::Expected<std::vector<::attn::Tensor>>
runOnBackend(ModuleOp module, StringRef entry, StringRef backend,
             llvm::ArrayRef<::attn::Tensor> inputs, DeviceRunStats *stats,
             const KernelKnobFlags &knobs, const CpuEmulatorFlags &cpuEmulator,
             const BundleSource &bundleDir);
} // namespace mlir::attn

namespace {

/// The query argument of a paged_attention function whose batch leaves
/// rows of it as padding, and the batch's rows (query_start_loc[R]).
struct PaddedQuery {
  size_t argument = 0;
  int64_t rows = 0;
};

/// Where `inputs` pad the query of function `entry` past
/// query_start_loc[R]; none when they do not (or are invalid: the run
/// reports that).
std::optional<PaddedQuery> paddedQuery(const ::attn::Signature &signature,
                                       llvm::ArrayRef<::attn::Tensor> inputs) {
  std::optional<size_t> query, qsl;
  for (auto [i, arg] : llvm::enumerate(signature.arguments)) {
    if (arg.role == ::attn::ArgRole::Query)
      query = i;
    if (arg.role == ::attn::ArgRole::QueryStartLoc)
      qsl = i;
  }
  if (!query || !qsl || inputs.size() != signature.arguments.size())
    return std::nullopt;
  const ::attn::Tensor &q = inputs[*query], &loc = inputs[*qsl];
  if (q.rank() < 1 || loc.rank() != 1 || loc.numElements() < 1)
    return std::nullopt;
  const int64_t rows = loc.getInt(loc.numElements() - 1);
  if (rows < 0 || rows >= q.dim(0))
    return std::nullopt;
  return PaddedQuery{*query, rows};
}

/// `t`'s rows resized to `rows` along dim 0: cut, or extended by zeros.
::attn::Tensor withRows(const ::attn::Tensor &t, int64_t rows) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = rows;
  ::attn::Tensor out(t.dtype(), shape);
  const size_t rowBytes = t.dim(0) ? t.numBytes() / t.dim(0) : 0;
  const size_t bytes = rowBytes * std::min(rows, t.dim(0));
  if (bytes)
    std::memcpy(out.data(), t.data(), bytes);
  return out;
}

} // namespace

llvm::Expected<std::vector<::attn::Tensor>>
mlir::attn::runOnDevice(ModuleOp module, StringRef entry, StringRef backend,
                        llvm::ArrayRef<::attn::Tensor> inputs,
                        DeviceRunStats *stats, const KernelKnobFlags &knobs,
                        const CpuEmulatorFlags &cpuEmulator,
                        const BundleSource &bundleDir) {
  // The function's argument roles; a function the reference cannot
  // describe runs as given (the run reports what is wrong with it).
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  llvm::Expected<::attn::Signature> signature =
      fn ? ::attn::describeSignature(fn)
         : llvm::Expected<::attn::Signature>(
               llvm::createStringError("no function"));
  if (!signature) {
    llvm::consumeError(signature.takeError());
    return runOnBackend(module, entry, backend, inputs, stats, knobs,
                        cpuEmulator, bundleDir);
  }
  // The host checks a plan leaves to its caller, as the runtime's executor
  // makes them: a kernel takes the metadata as given, so a negative
  // seq_len, say, would be its loop bound.
  if (llvm::Error err = ::attn::checkBatches(*signature, inputs))
    return std::move(err);
  // Rows past query_start_loc[R] are padding, neither read nor written: as
  // the runtime's BundleExecutor does, the device gets the batch's rows, and
  // the results' padding rows stay zero, as the reference leaves them.
  std::optional<PaddedQuery> padded = paddedQuery(*signature, inputs);
  if (!padded)
    return runOnBackend(module, entry, backend, inputs, stats, knobs,
                        cpuEmulator, bundleDir);
  std::vector<::attn::Tensor> batch(inputs.begin(), inputs.end());
  const int64_t queryRows = inputs[padded->argument].dim(0);
  batch[padded->argument] = withRows(batch[padded->argument], padded->rows);
  llvm::Expected<std::vector<::attn::Tensor>> results =
      runOnBackend(module, entry, backend, batch, stats, knobs, cpuEmulator,
                   bundleDir);
  if (!results)
    return results;
  for (::attn::Tensor &result : *results)
    if (result.rank() >= 1 && result.dim(0) == padded->rows)
      result = withRows(result, queryRows);
  return results;
}

llvm::Expected<std::vector<::attn::Tensor>> mlir::attn::runOnBackend(
    ModuleOp module, StringRef entry, StringRef backend,
    llvm::ArrayRef<::attn::Tensor> inputs, DeviceRunStats *stats,
    const KernelKnobFlags &knobs, const CpuEmulatorFlags &cpuEmulator,
    const BundleSource &bundleDir) {
  // A bundle's kernels run where a session would run them: the devices
  // below that load bundle kernels (the tt backend compiles its programs
  // into a folder of its own).
  if (!bundleDir.empty() && backend != "vulkan" && backend != "cpu" &&
      backend != "cuda")
    return llvm::createStringError("--bundle runs on backend vulkan, cpu or "
                                   "cuda, not " +
                                   backend.str());
#ifdef ATTN_HAVE_VULKAN
  if (backend == "vulkan") {
    ::attn::vulkan::VulkanOptions vkOptions;
    // Validation layers slow lavapipe down a lot; tests turn them on.
    if (const char *v = std::getenv("ATTN_VULKAN_VALIDATION"); v && *v == '1')
      vkOptions.validation = ::attn::vulkan::ValidationMode::IfAvailable;
    else
      vkOptions.validation = ::attn::vulkan::ValidationMode::Off;
    ::attn::Result<std::unique_ptr<::attn::vulkan::VulkanPlanDevice>> device =
        ::attn::vulkan::VulkanPlanDevice::create(vkOptions);
    if (!device)
      return llvm::createStringError("backend vulkan: " + device.message());
    const ::attn::vulkan::VulkanDeviceInfo &info = (*device)->device().info();
    llvm::Expected<CompileOptions> options =
        knobOptions(knobs, CompileOptions::forDevice(info.subgroupSize,
                                                     info.type == "cpu"));
    if (!options)
      return options.takeError();
    options->targets = {::attn::Target::SPIRV};
    auto addKernel = [&](const CompiledKernel &k) {
      return loadCompiled(**device, k);
    };
    llvm::Expected<std::vector<::attn::Tensor>> results =
        bundleDir.empty()
            ? compileAndRun(module, entry, *options, **device, addKernel,
                            inputs, stats)
            : runFromBundle(module, entry, bundleDir,
                            ::attn::runtime::bundleTarget(
                                ::attn::runtime::DeviceType::VULKAN),
                            **device, inputs, stats);
    if (results && stats) {
      stats->boundLaunches = (*device)->boundLaunches();
      stats->addressedLaunches = (*device)->addressedLaunches();
    }
    if (results &&
        vkOptions.validation != ::attn::vulkan::ValidationMode::Off) {
      std::vector<std::string> messages =
          (*device)->device().takeValidationMessages();
      if (!messages.empty())
        return llvm::createStringError("Vulkan validation: " +
                                       messages.front());
    }
    return results;
  }
#endif
#ifdef ATTN_HAVE_TT
  if (backend == "tt")
    return runOnTT(module, entry, inputs, stats);
#endif
  if (backend == "cpu")
    return runOnCpu(module, entry, inputs, stats, knobs, cpuEmulator,
                    bundleDir);
#ifdef ATTN_HAVE_CUDA
  if (backend == "cuda") {
    ::attn::Result<std::unique_ptr<::attn::cuda::CudaPlanDevice>> device =
        ::attn::cuda::CudaPlanDevice::create();
    if (!device)
      return llvm::createStringError("backend cuda: " + device.message());
    if (!bundleDir.empty())
      return runFromBundle(module, entry, bundleDir,
                           ::attn::runtime::bundleTarget(
                               ::attn::runtime::DeviceType::CUDA),
                           **device, inputs, stats);
    llvm::Expected<CompileOptions> options =
        knobOptions(knobs, CompileOptions::forDevice(kNVIDIAWarpSize,
                                                     /*cpuDevice=*/false));
    if (!options)
      return options.takeError();
    options->targets = {::attn::Target::PTX};
    // The newest chip attn builds that the GPU runs, as the device picks
    // from a bundle.
    const ::attn::cuda::CudaDeviceInfo &info = (*device)->info();
    std::vector<std::string> chips(::attn::ptxChips().begin(),
                                   ::attn::ptxChips().end());
    std::optional<size_t> best =
        ::attn::bestPtxChip(chips, info.computeMajor * 10 + info.computeMinor);
    if (!best)
      return llvm::createStringError("backend cuda: " + info.chip() +
                                     " is older than every chip attn builds "
                                     "PTX for (" +
                                     ::attn::ptxChipNames() + ")");
    options->ptx.chips = {chips[*best]};
    auto addKernel = [&](const CompiledKernel &k) {
      return loadCompiled(**device, k);
    };
    return compileAndRun(module, entry, *options, **device, addKernel,
                         inputs, stats);
  }
#endif
  return llvm::createStringError("backend '" + backend.str() +
                                 "' is not a device of this build (" +
                                 describeDeviceBackends(
                                     /*withReference=*/false) +
                                 ")");
}
