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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
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
/// The Tenstorrent backend: the function's one attn op becomes one
/// TT-Metalium program (compileModule, target "tt"), written to a temporary
/// folder as a bundle would hold it, built and run on the host emulator with
/// the host side of runtime/executors/tt/AttentionOps.h.
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
  SmallVector<Operation *> attnOps;
  fn.walk([&](Operation *op) {
    if (isa<ops::PagedAttentionOp, ops::ReshapeAndCacheOp, ops::MlaDecodeOp,
            ops::MergeStatesOp>(op))
      attnOps.push_back(op);
  });
  if (attnOps.size() != 1)
    return fail("holds " + llvm::Twine(attnOps.size()) +
                " attn ops; the tt backend runs functions of exactly one "
                "(one TT program)");
  Operation *attnOp = attnOps.front();
  if (isa<ops::MergeStatesOp>(attnOp))
    return fail("attn.merge_states is not lowered to TT-Metalium");

  // The program reads the function's arguments directly.
  auto input = [&](Value v, StringRef what) -> llvm::Expected<::attn::Tensor> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return fail(what + " of " + attnOp->getName().getStringRef() +
                  " must be an argument of the function");
    if (arg.getArgNumber() >= inputs.size())
      return fail("needs argument " + llvm::Twine(arg.getArgNumber()) +
                  ", got " + llvm::Twine(inputs.size()) + " inputs");
    return inputs[arg.getArgNumber()];
  };
  // Several operands at once, in order; the first that is not an argument
  // is the error.
  auto operands = [&](std::initializer_list<std::pair<Value, StringRef>> list)
      -> llvm::Expected<std::vector<::attn::Tensor>> {
    std::vector<::attn::Tensor> tensors;
    for (auto [value, what] : list) {
      llvm::Expected<::attn::Tensor> t = input(value, what);
      if (!t)
        return t.takeError();
      tensors.push_back(std::move(*t));
    }
    return tensors;
  };
  // Each function result must be one of the op's results.
  SmallVector<unsigned> resultOf;
  for (auto [i, v] :
       llvm::enumerate(fn.getBody().front().getTerminator()->getOperands())) {
    auto r = dyn_cast<OpResult>(v);
    if (!r || r.getOwner() != attnOp)
      return fail("result " + llvm::Twine(i) + " is not a result of " +
                  attnOp->getName().getStringRef());
    resultOf.push_back(r.getResultNumber());
  }

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
  if (compiled->kernels.empty())
    return fail("the TT lowering made no program");

  SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-tt-run", dir))
    return fail("cannot create a temporary folder: " + ec.message());
  llvm::scope_exit removeDir([&] { llvm::sys::fs::remove_directories(dir); });
  std::string programName = compiled->kernels.front().symbol;
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
  ::attn::tt::KernelCompiler kernelCompiler;
  ::attn::Result<::attn::tt::Program> program = ::attn::tt::loadProgram(
      (llvm::Twine(dir) + "/" + programName).str(), kernelCompiler);
  if (!program)
    return fail(program.message());
  auto compiledAt = std::chrono::steady_clock::now();

  // Run, and put the op's results in the function's result order.
  std::vector<::attn::Tensor> opResults;
  ::attn::DType computeType = ::attn::DType::F32;
  bool exact = false;
  if (auto op = dyn_cast<ops::ReshapeAndCacheOp>(attnOp)) {
    llvm::Expected<std::vector<::attn::Tensor>> in =
        operands({{op.getKey(), "the key"},
                  {op.getValue(), "the value"},
                  {op.getSlotMapping(), "the slot mapping"},
                  {op.getKvCache(), "the cache"}});
    if (!in)
      return in.takeError();
    ::attn::Tensor &key = (*in)[0], &value = (*in)[1], &slots = (*in)[2],
                   &cache = (*in)[3];
    ::attn::KvLayout layout = op.getLayout() && *op.getLayout() == ops::KVLayout::hnd
                                  ? ::attn::KvLayout::HND
                                  : ::attn::KvLayout::NHD;
    if (::attn::Status s = ::attn::tt::runReshapeAndCacheProgram(
            *program, key, value, cache, slots, layout);
        !s)
      return fail(s.message());
    computeType = key.dtype();
    exact = true;
    opResults.push_back(std::move(cache));
  } else {
    ::attn::Result<::attn::AttentionOutput> out =
        ::attn::Status::error("unset");
    if (auto op = dyn_cast<ops::PagedAttentionOp>(attnOp)) {
      auto md = op.getMetadata().getDefiningOp<ops::MetadataOp>();
      if (!md)
        return fail("the metadata must come from an attn.metadata op");
      llvm::Expected<std::vector<::attn::Tensor>> in =
          operands({{op.getQuery(), "the query"},
                    {op.getKvCache(), "the kv cache"},
                    {md.getBlockTable(), "the block table"},
                    {md.getSeqLens(), "seq_lens"},
                    {md.getQueryStartLoc(), "query_start_loc"}});
      if (!in)
        return in.takeError();
      const ::attn::Tensor &query = (*in)[0], &cache = (*in)[1],
                           &table = (*in)[2], &lens = (*in)[3], &qsl = (*in)[4];
      std::optional<::attn::Tensor> sinks, slopes;
      if (op.getSinks()) {
        llvm::Expected<::attn::Tensor> s = input(op.getSinks(), "the sinks");
        if (!s)
          return s.takeError();
        sinks = std::move(*s);
      }
      if (op.getAlibiSlopes()) {
        llvm::Expected<::attn::Tensor> s =
            input(op.getAlibiSlopes(), "the ALiBi slopes");
        if (!s)
          return s.takeError();
        slopes = std::move(*s);
      }
      ::attn::KvLayout layout = op.getLayout() == ops::KVLayout::nhd
                                    ? ::attn::KvLayout::NHD
                                    : ::attn::KvLayout::HND;
      computeType = query.dtype();
      out = ::attn::tt::runAttentionProgram(
          *program, query, cache, table, lens, &qsl,
          sinks ? &*sinks : nullptr, slopes ? &*slopes : nullptr, layout);
    } else {
      auto mla = cast<ops::MlaDecodeOp>(attnOp);
      llvm::Expected<std::vector<::attn::Tensor>> in =
          operands({{mla.getQ(), "the query"},
                    {mla.getKvCache(), "the latent cache"},
                    {mla.getBlockTable(), "the block table"},
                    {mla.getSeqLens(), "seq_lens"}});
      if (!in)
        return in.takeError();
      const ::attn::Tensor &query = (*in)[0], &cache = (*in)[1],
                           &table = (*in)[2], &lens = (*in)[3];
      computeType = query.dtype();
      out = ::attn::tt::runAttentionProgram(*program, query, cache, table, lens,
                                            nullptr, nullptr, nullptr,
                                            ::attn::KvLayout::NHD);
    }
    if (!out)
      return fail(out.message());
    opResults.push_back(std::move(out->out));
    opResults.push_back(std::move(out->lse));
  }
  auto ranAt = std::chrono::steady_clock::now();

  std::vector<::attn::Tensor> results;
  for (unsigned r : resultOf)
    results.push_back(opResults[r]);
  if (stats) {
    const ::attn::tt::ProgramDescription &d = program->description;
    stats->device = "tt:emulator (" + std::to_string(d.gridX) + "x" +
                    std::to_string(d.gridY) + " cores, program " + d.name + ")";
    stats->compileSeconds =
        std::chrono::duration<double>(compiledAt - start).count();
    stats->kernelSeconds =
        std::chrono::duration<double>(ranAt - compiledAt).count();
    stats->launches = 1;
    // reshape_and_cache moves bits; the outputs of a bf16 program (lse too)
    // carry the error of its bf16 tiles. f32 programs meet the defaults.
    if (exact) {
      stats->tolerances.assign(results.size(), ::attn::Tolerance{0.0, 0.0});
      stats->toleranceNote = "tt: reshape_and_cache must match bit for bit";
    } else if (computeType == ::attn::DType::BF16) {
      ::attn::Tolerance tol = ::attn::tt::toleranceFor(computeType);
      stats->tolerances.assign(results.size(), tol);
      char values[64];
      std::snprintf(values, sizeof values, "atol %g, rtol %g", tol.atol,
                    tol.rtol);
      stats->toleranceNote =
          "tt: a bf16 program's outputs, lse included, within " +
          std::string(values) +
          " (P is rounded to bf16 before P.V as on the device; "
          "runtime/executors/tt/README.md)";
    }
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
