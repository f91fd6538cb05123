//===- DeviceRun.cpp - Compile and run a function on a device ------------===//

#include "compiler/DeviceRun.h"
#include "compiler/Compile.h"
#include "runtime/PlanRunner.h"

#ifdef ATTN_HAVE_VULKAN
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#endif
#ifdef ATTN_HAVE_CUDA
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "runtime/executors/cuda/CudaPlanDevice.h"
#endif
#ifdef ATTN_HAVE_TT
#include "dialect/AttnOps.h"
#include "runtime/executors/tt/AttentionOps.h"
#include "runtime/executors/tt/Check.h"
#include "runtime/executors/tt/EmulatorDevice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#endif

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace mlir;

std::vector<std::string> mlir::attn::deviceBackends() {
  std::vector<std::string> backends;
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

namespace {

llvm::Error toError(const ::attn::Status &status) {
  return llvm::createStringError(status.message());
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
  for (const mlir::attn::CompiledKernel &k : compiled->kernels)
    if (::attn::Status s = addKernel(k); !s)
      return toError(s);
  ::attn::runtime::PlanRunStats runStats;
  ::attn::Result<std::vector<::attn::Tensor>> results =
      ::attn::runtime::runPlan(*plan, device, inputs, &runStats);
  if (!results)
    return toError(results.status());
  if (stats) {
    stats->device = device.name();
    stats->kernelSeconds = runStats.kernelSeconds;
    stats->launches = runStats.launches;
  }
  return std::move(*results);
}

#ifdef ATTN_HAVE_TT
/// The Tenstorrent backend: each attn op of the function becomes one
/// TT-Metalium program (two for split-KV decode: the partial states and
/// their merge; compileModule, target "tt"), written to a temporary folder
/// as a bundle holds them, built and run on the host emulator in the
/// function's order with the host side of runtime/executors/tt/AttentionOps.h.
/// Values flow between the ops on the host: a cache write's result is the
/// cache the next op reads.
llvm::Expected<std::vector<::attn::Tensor>>
runOnTT(ModuleOp module, StringRef entry, llvm::ArrayRef<::attn::Tensor> inputs,
        mlir::attn::DeviceRunStats *stats) {
  namespace ops = mlir::attn;
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError("backend tt, @" + entry + ": " + message);
  };
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isDeclaration())
    return fail("no such function with a body");
  Block &body = fn.getBody().front();
  if (body.getNumArguments() != inputs.size())
    return fail("takes " + llvm::Twine(body.getNumArguments()) +
                " arguments, got " + llvm::Twine(inputs.size()) + " inputs");
  SmallVector<Operation *> attnOps;
  fn.walk([&](Operation *op) {
    if (isa<ops::PagedAttentionOp, ops::ReshapeAndCacheOp, ops::MlaDecodeOp,
            ops::MergeStatesOp>(op))
      attnOps.push_back(op);
  });
  if (attnOps.empty())
    return fail("holds no attn op");

  // Compile the function alone, so other functions of the module (which the
  // TT lowering may not support) do not matter.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> single = ModuleOp::create(fn.getLoc());
  single->push_back(fn.clone());
  ops::CompileOptions options;
  options.targets = {"tt"};
  FailureOr<ops::CompiledModule> compiled =
      ops::compileModule(*single, options);
  if (failed(compiled))
    return fail("compiling for tt failed:\n" + diagnostics);

  SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-tt-run", dir))
    return fail("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit removeDir([&] { llvm::sys::fs::remove_directories(dir); });
  for (const ops::CompiledKernel &k : compiled->kernels) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, k.symbol);
    if (std::error_code ec = llvm::sys::fs::create_directories(path))
      return fail("cannot create " + llvm::Twine(path) + ": " + ec.message());
    llvm::sys::path::append(path, k.entryPoint);
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return fail("cannot write " + llvm::Twine(path) + ": " + ec.message());
    out << k.bytes;
  }
  std::unique_ptr<::attn::tt::EmulatorDevice> emulator;
  double runSeconds = 0;
  std::string device = "tt:emulator";

  // The function's values on the host; the attn ops read them.
  llvm::DenseMap<Value, ::attn::Tensor> values;
  for (auto [arg, t] : llvm::zip(body.getArguments(), inputs))
    values[arg] = t;
  // Each result's tolerance: bit-exact for cache writes, the program
  // dtype's otherwise.
  llvm::DenseMap<Value, ::attn::Tolerance> tolerance;
  bool anyBf16 = false, anyExact = false;
  auto get = [&](Value v, StringRef what) -> llvm::Expected<::attn::Tensor> {
    auto it = values.find(v);
    if (it == values.end())
      return fail(what + " must be a function argument or an attn op's "
                         "result on the tt backend");
    return it->second;
  };
  auto layoutOf = [](std::optional<ops::KVLayout> l) {
    return l && *l == ops::KVLayout::hnd ? ::attn::KvLayout::HND
                                         : ::attn::KvLayout::NHD;
  };

  for (auto [i, attnOp] : llvm::enumerate(attnOps)) {
    std::string name = entry.str();
    if (attnOps.size() > 1)
      name += "_" + std::to_string(i);
    std::string programDir = (llvm::Twine(dir) + "/" + name).str();
    auto description = ::attn::tt::loadProgramDescription(programDir);
    if (!description)
      return fail(description.message());
    if (!emulator)
      emulator = std::make_unique<::attn::tt::EmulatorDevice>(description->arch);
    ::attn::Result<::attn::tt::Program> program =
        ::attn::tt::loadProgram(programDir, *emulator);
    if (!program)
      return fail(program.message());
    auto loaded = std::chrono::steady_clock::now();
    const ::attn::tt::ProgramDescription &d = program->description;
    device = "tt:emulator (" + std::string(::attn::tt::toString(d.arch)) +
             ", " + std::to_string(d.gridX) + "x" + std::to_string(d.gridY) +
             " cores)";
    auto optional = [&](Value v, StringRef what)
        -> llvm::Expected<std::optional<::attn::Tensor>> {
      if (!v)
        return std::nullopt;
      llvm::Expected<::attn::Tensor> t = get(v, what);
      if (!t)
        return t.takeError();
      return std::optional<::attn::Tensor>(std::move(*t));
    };

    SmallVector<::attn::Tensor> results;
    ::attn::DType computeType = ::attn::DType::F32;
    bool exact = false;
    if (auto op = dyn_cast<ops::ReshapeAndCacheOp>(attnOp)) {
      llvm::Expected<::attn::Tensor> key = get(op.getKey(), "the key");
      if (!key)
        return key.takeError();
      llvm::Expected<::attn::Tensor> value = get(op.getValue(), "the value");
      if (!value)
        return value.takeError();
      llvm::Expected<::attn::Tensor> slots =
          get(op.getSlotMapping(), "the slot mapping");
      if (!slots)
        return slots.takeError();
      llvm::Expected<::attn::Tensor> cache = get(op.getKvCache(), "the cache");
      if (!cache)
        return cache.takeError();
      if (::attn::Status s = ::attn::tt::runReshapeAndCacheProgram(
              *emulator, *program, *key, *value, *cache, *slots,
              layoutOf(op.getLayout()));
          !s)
        return fail(s.message());
      computeType = key->dtype();
      exact = true;
      results.push_back(std::move(*cache));
    } else {
      ::attn::Result<::attn::AttentionOutput> out =
          ::attn::Status::error("unset");
      if (auto op = dyn_cast<ops::PagedAttentionOp>(attnOp)) {
        auto md = op.getMetadata().getDefiningOp<ops::MetadataOp>();
        if (!md)
          return fail("the metadata must come from an attn.metadata op");
        llvm::Expected<::attn::Tensor> query = get(op.getQuery(), "the query");
        if (!query)
          return query.takeError();
        llvm::Expected<::attn::Tensor> cache =
            get(op.getKvCache(), "the kv cache");
        if (!cache)
          return cache.takeError();
        llvm::Expected<::attn::Tensor> table =
            get(md.getBlockTable(), "the block table");
        if (!table)
          return table.takeError();
        llvm::Expected<::attn::Tensor> lens = get(md.getSeqLens(), "seq_lens");
        if (!lens)
          return lens.takeError();
        llvm::Expected<::attn::Tensor> qsl =
            get(md.getQueryStartLoc(), "query_start_loc");
        if (!qsl)
          return qsl.takeError();
        auto sinks = optional(op.getSinks(), "the sinks");
        if (!sinks)
          return sinks.takeError();
        auto slopes = optional(op.getAlibiSlopes(), "the ALiBi slopes");
        if (!slopes)
          return slopes.takeError();
        computeType = query->dtype();
        out = ::attn::tt::runAttentionProgram(
            *emulator, *program, *query, *cache, *table, *lens, &*qsl,
            *sinks ? &**sinks : nullptr, *slopes ? &**slopes : nullptr,
            layoutOf(op.getLayout()));
      } else if (auto mla = dyn_cast<ops::MlaDecodeOp>(attnOp)) {
        llvm::Expected<::attn::Tensor> query = get(mla.getQ(), "the query");
        if (!query)
          return query.takeError();
        llvm::Expected<::attn::Tensor> cache =
            get(mla.getKvCache(), "the latent cache");
        if (!cache)
          return cache.takeError();
        llvm::Expected<::attn::Tensor> table =
            get(mla.getBlockTable(), "the block table");
        if (!table)
          return table.takeError();
        llvm::Expected<::attn::Tensor> lens =
            get(mla.getSeqLens(), "seq_lens");
        if (!lens)
          return lens.takeError();
        computeType = query->dtype();
        out = ::attn::tt::runAttentionProgram(*emulator, *program, *query, *cache, *table,
                                              *lens, nullptr, nullptr, nullptr,
                                              ::attn::KvLayout::NHD);
      } else {
        auto merge = cast<ops::MergeStatesOp>(attnOp);
        llvm::Expected<::attn::Tensor> outA = get(merge.getOutA(), "out_a");
        if (!outA)
          return outA.takeError();
        llvm::Expected<::attn::Tensor> lseA = get(merge.getLseA(), "lse_a");
        if (!lseA)
          return lseA.takeError();
        llvm::Expected<::attn::Tensor> outB = get(merge.getOutB(), "out_b");
        if (!outB)
          return outB.takeError();
        llvm::Expected<::attn::Tensor> lseB = get(merge.getLseB(), "lse_b");
        if (!lseB)
          return lseB.takeError();
        computeType = outA->dtype();
        out = ::attn::tt::runMergeStatesProgram(*emulator, *program, *outA, *lseA, *outB,
                                                *lseB);
      }
      if (!out)
        return fail(out.message());
      results.push_back(std::move(out->out));
      results.push_back(std::move(out->lse));
    }
    runSeconds += std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - loaded)
                      .count();
    if (attnOp->getNumResults() != results.size())
      return fail(attnOp->getName().getStringRef() +
                  " on memrefs is not run on the tt backend");
    ::attn::Tolerance tol = exact ? ::attn::Tolerance{0.0, 0.0}
                                  : ::attn::tt::toleranceFor(computeType);
    anyExact |= exact;
    anyBf16 |= !exact && computeType == ::attn::DType::BF16;
    for (auto [r, t] : llvm::zip(attnOp->getResults(), results)) {
      values[r] = std::move(t);
      tolerance[r] = tol;
    }
  }

  std::vector<::attn::Tensor> results;
  std::vector<::attn::Tolerance> tolerances;
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    auto it = values.find(v);
    if (it == values.end())
      return fail("result " + llvm::Twine(i) +
                  " is not an argument or an attn op's result");
    results.push_back(it->second);
    auto tol = tolerance.find(v);
    tolerances.push_back(tol != tolerance.end()
                             ? tol->second
                             : ::attn::defaultTolerance(it->second.dtype()));
  }
  if (stats) {
    stats->device = device;
    // Lowering, emitting and building the kernels, not running them.
    stats->compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() -
        runSeconds;
    stats->kernelSeconds = runSeconds;
    stats->launches = int64_t(attnOps.size());
    // reshape_and_cache moves bits; the outputs of a bf16 program (lse too)
    // carry the error of its bf16 tiles. f32 and f16 programs meet the
    // defaults.
    if (anyExact || anyBf16)
      stats->tolerances = tolerances;
    std::vector<std::string> notes;
    if (anyExact)
      notes.push_back("tt: reshape_and_cache must match bit for bit");
    if (anyBf16) {
      ::attn::Tolerance tol = ::attn::tt::toleranceFor(::attn::DType::BF16);
      char values[64];
      std::snprintf(values, sizeof values, "atol %g, rtol %g", tol.atol,
                    tol.rtol);
      notes.push_back(
          "tt: a bf16 program's outputs, lse included, within " +
          std::string(values) +
          " (P is rounded to bf16 before P.V as on the device; "
          "runtime/executors/tt/README.md)");
    }
    stats->toleranceNote = llvm::join(notes, "; ");
  }
  return results;
}
#endif

} // namespace

llvm::Expected<int64_t> mlir::attn::localVulkanSubgroupSize() {
#ifdef ATTN_HAVE_VULKAN
  ::attn::VulkanOptions options;
  options.validation = ::attn::ValidationMode::Off;
  ::attn::Result<std::vector<::attn::VulkanDeviceInfo>> devices =
      ::attn::VulkanDevice::listPhysicalDevices(options);
  if (!devices)
    return llvm::createStringError(devices.message());
  for (const ::attn::VulkanDeviceInfo &info : *devices)
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
                             "compiler choose, N forces N splits and a "
                             "reduce kernel"),
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
                         llvm::cl::init(4), llvm::cl::cat(category)) {}

mlir::attn::KernelKnobs mlir::attn::KernelKnobFlags::knobs() const {
  return {splitKv, vectorWidth, attentionSubgroups};
}

llvm::Expected<std::vector<::attn::Tensor>>
mlir::attn::runOnDevice(ModuleOp module, StringRef entry, StringRef backend,
                        llvm::ArrayRef<::attn::Tensor> inputs,
                        DeviceRunStats *stats, const KernelKnobs &knobs) {
#ifdef ATTN_HAVE_VULKAN
  if (backend == "vulkan") {
    ::attn::VulkanOptions vkOptions;
    // Validation layers slow lavapipe down a lot; tests turn them on.
    if (const char *v = std::getenv("ATTN_VULKAN_VALIDATION"); v && *v == '1')
      vkOptions.validation = ::attn::ValidationMode::IfAvailable;
    else
      vkOptions.validation = ::attn::ValidationMode::Off;
    ::attn::Result<std::unique_ptr<::attn::VulkanPlanDevice>> device =
        ::attn::VulkanPlanDevice::create(vkOptions);
    if (!device)
      return llvm::createStringError("backend vulkan: " + device.message());
    CompileOptions options;
    options.targets = {"spirv"};
    options.subgroupSize = (*device)->device().info().subgroupSize;
    options.splitKv = knobs.splitKv;
    options.vectorWidth = knobs.vectorWidth;
    options.attentionSubgroups = knobs.attentionSubgroups;
    auto addKernel = [&](const CompiledKernel &k) {
      std::vector<uint32_t> words(k.bytes.size() / sizeof(uint32_t));
      std::memcpy(words.data(), k.bytes.data(), words.size() * 4);
      return (*device)->addKernel(k.symbol, std::move(words), k.entryPoint);
    };
    llvm::Expected<std::vector<::attn::Tensor>> results = compileAndRun(
        module, entry, options, **device, addKernel, inputs, stats);
    if (results && vkOptions.validation != ::attn::ValidationMode::Off) {
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
#ifdef ATTN_HAVE_CUDA
  if (backend == "cuda") {
    ::attn::Result<std::unique_ptr<::attn::CudaPlanDevice>> device =
        ::attn::CudaPlanDevice::create();
    if (!device)
      return llvm::createStringError("backend cuda: " + device.message());
    CompileOptions options;
    options.targets = {"ptx"};
    options.subgroupSize = kNVIDIAWarpSize;
    options.splitKv = knobs.splitKv;
    options.vectorWidth = knobs.vectorWidth;
    options.attentionSubgroups = knobs.attentionSubgroups;
    options.chip = (*device)->info().chip();
    options.ptxFeatures = ptxFeaturesForChip(options.chip);
    auto addKernel = [&](const CompiledKernel &k) {
      return (*device)->addKernel(k.symbol, k.bytes, k.entryPoint,
                                  k.launchJson);
    };
    return compileAndRun(module, entry, options, **device, addKernel, inputs,
                         stats);
  }
#endif
  std::string available = "reference";
  for (const std::string &b : deviceBackends())
    available += ", " + b;
  return llvm::createStringError("backend '" + backend.str() +
                                 "' is not available in this build "
                                 "(available: " +
                                 available + ")");
}
