//===- Compile.cpp - attn IR -> plans and device kernels -----------------===//

#include "compiler/Compile.h"
#include "compiler/PlanBuilder.h"
#include "compiler/TTPlanBuilder.h"
#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "lowering/AttnToTT/TTMetalTarget.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/SPIRVToMSL/SPIRVToMSL.h"
#include "lowering/Passes.h"
#include "core/LaunchFacts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <iterator>

using namespace mlir;

void mlir::attn::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registry.insert<AttnDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
}

/// The Tenstorrent target lowers the attn ops itself
/// (convert-attn-to-ttkernel): a program's host side is its program.json.
/// Each program's files become kernels named after the program, program.json
/// first so that looking a program up by symbol finds its description. The
/// plans, built from the functions themselves (TTPlanBuilder.h), launch the
/// programs.
static LogicalResult
compileTTKernels(ModuleOp input,
                 std::vector<mlir::attn::CompiledKernel> &kernels,
                 std::vector<::attn::runtime::Plan> *plans) {
  if (failed(mlir::attn::checkNoFp8Cache(input)))
    return failure();
  if (plans)
    for (auto func : input.getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      FailureOr<::attn::runtime::Plan> plan = mlir::attn::buildTTPlan(func);
      if (failed(plan))
        return failure();
      plans->push_back(std::move(*plan));
    }
  OwningOpRef<ModuleOp> module = input.clone();
  FailureOr<SmallVector<mlir::attn::TTMetalProgram>> programs =
      mlir::attn::emitTTMetalPrograms(*module);
  if (failed(programs))
    return failure();
  for (mlir::attn::TTMetalProgram &program : *programs) {
    std::stable_partition(program.files.begin(), program.files.end(),
                          [](const mlir::attn::TTMetalFile &f) {
                            return f.name == "program.json";
                          });
    for (mlir::attn::TTMetalFile &file : program.files) {
      mlir::attn::CompiledKernel kernel;
      kernel.symbol = program.name;
      kernel.target = "tt";
      kernel.entryPoint = file.name;
      kernel.bytes = std::move(file.text);
      ::attn::LaunchFacts launch;
      launch.program = program.name;
      launch.description = "program.json";
      kernel.launchJson = ::attn::writeLaunchFacts(launch, "tt");
      kernels.push_back(std::move(kernel));
    }
  }
  return success();
}

/// convert-attn-to-gpu's options for `target`: the device family's
/// capabilities, then the compile's own knobs.
static mlir::attn::ConvertAttnToGPUOptions
loweringOptions(StringRef target, const mlir::attn::CompileOptions &options) {
  mlir::attn::ConvertAttnToGPUOptions lowering =
      mlir::attn::getTargetLoweringOptions(target, options.subgroupSize);
  lowering.splitKv = options.splitKv;
  lowering.vectorWidth = options.vectorWidth;
  lowering.attentionSubgroups = options.attentionSubgroups;
  lowering.laneRegisters = options.laneRegisters;
  if (options.vectorLoadBytes >= 0)
    lowering.vectorLoadBytes = options.vectorLoadBytes;
  lowering.tiledPrefill = options.tiledPrefill;
  lowering.decodeThreshold = options.decodeThreshold;
  if (!options.prefillMatrix.empty())
    lowering.prefillMatrix = options.prefillMatrix;
  if (options.maxWorkgroupMemory > 0)
    lowering.maxWorkgroupMemory = options.maxWorkgroupMemory;
  if (target != "ptx")
    lowering.bf16AsI16 = options.bf16AsI16;
  return lowering;
}

/// Bytes per element of each argument of `kernel` (1-D memrefs of whole
/// bytes, lowering/AttnToGPU/KernelABI.h): what its launch facts record.
static FailureOr<std::vector<int64_t>>
argumentElementBytes(gpu::GPUFuncOp kernel) {
  std::vector<int64_t> bytes;
  for (Type type : kernel.getArgumentTypes()) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || memref.getRank() != 1 ||
        memref.getElementTypeBitWidth() % 8 != 0)
      return kernel.emitError()
             << "expects 1-D memrefs of whole bytes as kernel arguments "
                "(lowering/AttnToGPU/KernelABI.h), got "
             << type;
    bytes.push_back(memref.getElementTypeBitWidth() / 8);
  }
  return bytes;
}

/// The PTX target. NVVM has bf16, so PTX kernels take bf16 buffers as they
/// are, and NVIDIA GPUs load 128 bits per lane; when another target of the
/// same compile was lowered first (bf16 as i16 words, scalar loads), the
/// kernels are lowered again for PTX. The host side does not depend on it,
/// which is checked against the plans already built.
static LogicalResult
compilePTXKernels(ModuleOp input, ModuleOp lowered, bool loweredForPTX,
                  const mlir::attn::CompileOptions &options,
                  const std::vector<::attn::runtime::Plan> &plans,
                  std::vector<mlir::attn::CompiledKernel> &kernels) {
  using namespace mlir::attn;
  if (options.subgroupSize != kNVIDIAWarpSize)
    return input.emitError()
           << "target ptx needs kernels built for subgroup size "
           << kNVIDIAWarpSize << " (an NVIDIA warp), got "
           << options.subgroupSize;
  OwningOpRef<ModuleOp> module = lowered.clone();
  if (!loweredForPTX) {
    module = input.clone();
    PassManager pm(module->getContext());
    ConvertAttnToGPUOptions lowering = loweringOptions("ptx", options);
    buildAttnToGPUPipeline(pm, lowering);
    if (failed(pm.run(*module)))
      return failure();
    size_t index = 0;
    for (auto func : module->getOps<func::FuncOp>()) {
      if (func.isDeclaration())
        continue;
      FailureOr<::attn::runtime::Plan> plan = buildPlan(func);
      if (failed(plan))
        return failure();
      if (index >= plans.size() || !(*plan == plans[index++]))
        return func.emitError() << "the host plan of this function differs "
                                   "between target ptx and the others";
    }
  }

  // Launch facts per kernel: symbol, workgroup size and the element size of
  // each memref argument (the `size` field of its descriptor).
  struct Facts {
    std::string symbol;
    std::array<int64_t, 3> workgroup = {1, 1, 1};
    std::vector<int64_t> elementBytes;
  };
  llvm::StringMap<Facts> factsOfEntry;
  for (auto gpuModule : module->getOps<gpu::GPUModuleOp>())
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      Facts facts;
      facts.symbol = (gpuModule.getName() + "::" + kernel.getName()).str();
      if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize())
        for (int i = 0; i < 3 && i < static_cast<int>(known->size()); ++i)
          facts.workgroup[i] = (*known)[i];
      FailureOr<std::vector<int64_t>> bytes = argumentElementBytes(kernel);
      if (failed(bytes))
        return failure();
      facts.elementBytes = std::move(*bytes);
      factsOfEntry[kernel.getName()] = std::move(facts);
    }

  FailureOr<SmallVector<PTXKernel>> ptx =
      translateKernelsToPTX(*module, options.chip, options.ptxFeatures);
  if (failed(ptx))
    return failure();
  for (PTXKernel &k : *ptx) {
    auto facts = factsOfEntry.find(k.entryPoint);
    if (facts == factsOfEntry.end())
      return input.emitError() << "PTX entry point " << k.entryPoint
                               << " matches no kernel of convert-attn-to-gpu";
    CompiledKernel out;
    out.symbol = facts->second.symbol;
    out.target = "ptx";
    out.entryPoint = k.entryPoint;
    out.bytes = std::move(k.ptx);
    ::attn::LaunchFacts launch;
    launch.workgroup = facts->second.workgroup;
    launch.subgroupSize = kNVIDIAWarpSize;
    launch.chip = options.chip;
    launch.argElementBytes = facts->second.elementBytes;
    out.launchJson = ::attn::writeLaunchFacts(launch, "ptx");
    kernels.push_back(std::move(out));
  }
  return success();
}

/// The Metal target: the SPIR-V of each kernel of `module` (which holds the
/// kernels of convert-attn-to-gpu), cross-compiled to MSL by SPIRV-Cross.
static LogicalResult compileMSLKernels(
    ModuleOp module, const mlir::attn::CompileOptions &options,
    const llvm::StringMap<std::string> &symbolOfEntry,
    const llvm::StringMap<std::array<int64_t, 3>> &workgroupOfEntry,
    std::vector<mlir::attn::CompiledKernel> &kernels) {
  OwningOpRef<ModuleOp> copy = module.clone();
  // SPIRVToMSL maps each binding to one Metal buffer: the MSL kernels read
  // wide loads element by element instead of through aliased bindings.
  FailureOr<SmallVector<mlir::attn::SPIRVKernel>> spirv =
      mlir::attn::translateKernelsToSPIRV(*copy, options.subgroupSize,
                                          /*aliasWideLoads=*/false,
                                          /*cooperativeMatrix=*/false,
                                          /*bufferAddresses=*/false);
  if (failed(spirv))
    return failure();
  for (const mlir::attn::SPIRVKernel &k : *spirv) {
    auto symbol = symbolOfEntry.find(k.entryPoint);
    if (symbol == symbolOfEntry.end())
      return module.emitError() << "SPIR-V entry point " << k.entryPoint
                                << " matches no kernel of convert-attn-to-gpu";
    mlir::attn::MSLOptions mslOptions;
    mslOptions.subgroupSize = options.subgroupSize;
    llvm::Expected<mlir::attn::MSLKernel> msl =
        mlir::attn::translateSPIRVToMSL(k.words, k.entryPoint, mslOptions);
    if (!msl)
      return module.emitError() << llvm::toString(msl.takeError());
    // Plans launch known_block_size threads, which the LocalSize must match.
    std::array<int64_t, 3> block = workgroupOfEntry.lookup(k.entryPoint);
    for (int i = 0; i < 3; ++i)
      if (block[i] != static_cast<int64_t>(msl->threadgroupSize[i]))
        return module.emitError()
               << "kernel " << k.entryPoint << " has threadgroup size "
               << msl->threadgroupSize[0] << "x" << msl->threadgroupSize[1]
               << "x" << msl->threadgroupSize[2] << " but its plan launches "
               << block[0] << "x" << block[1] << "x" << block[2];
    mlir::attn::CompiledKernel out;
    out.symbol = symbol->second;
    out.target = "msl";
    out.entryPoint = msl->entryPoint;
    out.bytes = std::move(msl->source);
    out.launchJson = mlir::attn::mslLaunchFacts(*msl, options.subgroupSize);
    kernels.push_back(std::move(out));
  }
  return success();
}

namespace {

/// What the bundle records of each kernel of convert-attn-to-gpu, by entry
/// point: its symbol (module::func, what plans name), workgroup size and
/// argument element sizes.
struct KernelEntries {
  llvm::StringMap<std::string> symbol;
  llvm::StringMap<std::array<int64_t, 3>> workgroup;
  llvm::StringMap<std::vector<int64_t>> elementBytes;
};

} // namespace

static FailureOr<KernelEntries> collectEntries(ModuleOp module) {
  // Each kernel sits alone in its gpu.module; plans name it module::func.
  KernelEntries entries;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      std::string symbol =
          (gpuModule.getName() + "::" + kernel.getName()).str();
      if (!entries.symbol.try_emplace(kernel.getName(), symbol).second)
        return kernel.emitError()
               << "two kernels share the entry point name " << kernel.getName();
      std::array<int64_t, 3> wg = {1, 1, 1};
      if (std::optional<ArrayRef<int32_t>> known = kernel.getKnownBlockSize())
        for (int i = 0; i < 3 && i < static_cast<int>(known->size()); ++i)
          wg[i] = (*known)[i];
      entries.workgroup[kernel.getName()] = wg;
      FailureOr<std::vector<int64_t>> bytes = argumentElementBytes(kernel);
      if (failed(bytes))
        return failure();
      entries.elementBytes[kernel.getName()] = std::move(*bytes);
    }
  return entries;
}

/// Appends SPIR-V kernels `kernels` of one ABI form, by device address or
/// by binding, to `out` with their launch facts.
static LogicalResult
appendSPIRVForm(ModuleOp input, SmallVector<mlir::attn::SPIRVKernel> &kernels,
                int64_t subgroupSize, bool bufferAddresses,
                const KernelEntries &entries,
                std::vector<mlir::attn::CompiledKernel> &out) {
  using namespace mlir::attn;
  for (SPIRVKernel &k : kernels) {
    auto symbol = entries.symbol.find(k.entryPoint);
    if (symbol == entries.symbol.end())
      return input.emitError()
             << "SPIR-V entry point " << k.entryPoint
             << " matches no kernel of convert-attn-to-gpu";
    CompiledKernel kernel;
    kernel.symbol = symbol->second;
    kernel.target = "spirv";
    kernel.entryPoint = k.entryPoint;
    kernel.bytes.assign(reinterpret_cast<const char *>(k.words.data()),
                        k.words.size() * sizeof(uint32_t));
    ::attn::LaunchFacts launch;
    launch.subgroupSize = subgroupSize;
    launch.workgroup = entries.workgroup.lookup(k.entryPoint);
    // attn-spirv-buffer-addresses: argument i is a u64 device address at
    // push-constant offset 8 i; without it, binding i.
    launch.argElementBytes = entries.elementBytes.lookup(k.entryPoint);
    if (bufferAddresses)
      launch.addressedBuffers = launch.argElementBytes.size();
    kernel.launchJson = ::attn::writeLaunchFacts(launch, "spirv");
    out.push_back(std::move(kernel));
  }
  return success();
}

/// The SPIR-V kernels of `module` (lowered by convert-attn-to-gpu) in the
/// ABI forms `options` asks for, under the same symbols: the address form
/// first, then the binding form.
static LogicalResult
compileSPIRVKernels(ModuleOp input, ModuleOp module,
                    const mlir::attn::CompileOptions &options,
                    const KernelEntries &entries,
                    std::vector<mlir::attn::CompiledKernel> &out) {
  using namespace mlir::attn;
  using SpirvAbi = CompileOptions::SpirvAbi;
  OwningOpRef<ModuleOp> copy = module.clone();
  int64_t sg = options.subgroupSize;
  if (options.spirvAbi == SpirvAbi::Both) {
    FailureOr<SPIRVForms> forms =
        translateKernelsToSPIRVForms(*copy, sg, /*aliasWideLoads=*/true);
    if (failed(forms) ||
        failed(appendSPIRVForm(input, forms->addressed, sg, true, entries,
                               out)) ||
        failed(appendSPIRVForm(input, forms->bound, sg, false, entries, out)))
      return failure();
    return success();
  }
  bool byAddress = options.spirvAbi == SpirvAbi::Addresses;
  FailureOr<SmallVector<SPIRVKernel>> kernels = translateKernelsToSPIRV(
      *copy, sg, /*aliasWideLoads=*/true, /*cooperativeMatrix=*/false,
      byAddress);
  if (failed(kernels))
    return failure();
  return appendSPIRVForm(input, *kernels, sg, byAddress, entries, out);
}

std::optional<mlir::attn::CompileOptions::SpirvAbi>
mlir::attn::parseSpirvAbi(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CompileOptions::SpirvAbi>>(name)
      .Case("addresses", CompileOptions::SpirvAbi::Addresses)
      .Case("bindings", CompileOptions::SpirvAbi::Bindings)
      .Case("both", CompileOptions::SpirvAbi::Both)
      .Default(std::nullopt);
}

FailureOr<mlir::attn::CompiledModule>
mlir::attn::compileModule(ModuleOp input, const CompileOptions &options) {
  for (const std::string &target : options.targets)
    if (!llvm::is_contained(kTargetNames, target))
      return input.emitError() << "unknown target '" << target << "'";

  // A bundle holds one plan per function: with other targets beside tt, the
  // plans are theirs (GPU launches) and the TT programs sit next to them.
  bool ttOnly = !options.targets.empty() &&
                llvm::all_of(options.targets,
                             [](const std::string &t) { return t == "tt"; });
  std::vector<CompiledKernel> ttKernels;
  std::vector<::attn::runtime::Plan> ttPlans;
  if (llvm::is_contained(options.targets, "tt") &&
      failed(compileTTKernels(input, ttKernels, ttOnly ? &ttPlans : nullptr)))
    return failure();
  if (ttOnly)
    return CompiledModule{std::move(ttPlans), std::move(ttKernels)};

  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm(module->getContext());
  // One lowering serves every target but ptx, which needs its own (native
  // bf16, vector loads) unless it is the only one.
  bool forPTX = llvm::all_of(options.targets, [](const std::string &t) {
    return t == "ptx" || t == "tt";
  });
  ConvertAttnToGPUOptions lowering =
      loweringOptions(forPTX ? "ptx" : "spirv", options);
  buildAttnToGPUPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return failure();

  CompiledModule compiled;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    FailureOr<::attn::runtime::Plan> plan = buildPlan(func);
    if (failed(plan))
      return failure();
    compiled.plans.push_back(std::move(*plan));
  }

  FailureOr<KernelEntries> entries = collectEntries(*module);
  if (failed(entries))
    return failure();

  for (const std::string &target : options.targets) {
    if (target == "ptx" &&
        failed(compilePTXKernels(input, *module, forPTX, options,
                                 compiled.plans, compiled.kernels)))
      return failure();
    if (target == "msl" &&
        failed(compileMSLKernels(*module, options, entries->symbol,
                                 entries->workgroup, compiled.kernels)))
      return failure();
    if (target == "spirv" &&
        failed(compileSPIRVKernels(input, *module, options, *entries,
                                   compiled.kernels)))
      return failure();
  }
  std::move(ttKernels.begin(), ttKernels.end(),
            std::back_inserter(compiled.kernels));
  return compiled;
}
