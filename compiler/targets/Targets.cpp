//===- Targets.cpp - The registry of device targets -----------------------===//

#include "compiler/targets/Target.h"
#include "lowering/GPUToPTX/GPUToPTX.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

using mlir::attn::CompileOptions;

// Vulkan devices' matrix units (cooperative matrices) are optional, and
// lavapipe has none: SIMT products unless asked for.
const mlir::attn::LoweringFamily mlir::attn::kSPIRVLowering = {
    /*bf16AsI16=*/true,
    /*singleInvocation=*/false,
    CompileOptions::laneRegistersFor(/*cpuDevice=*/false),
    CompileOptions::vectorLoadBytesFor(/*cpuDevice=*/false),
    "none",
    /*matrixWorkgroupMemory=*/0,
    /*fp8Calls=*/false};
// Every chip target ptx builds for (sm_80 on) has tensor cores, and a
// block 48 KiB of static shared memory. The kernels of all chips come from
// one lowering: the fp8 codec stays calls until the PTX pipeline knows the
// chip (attn-nvvm-fp8-convert).
const mlir::attn::LoweringFamily mlir::attn::kPTXLowering = {
    /*bf16AsI16=*/false,
    /*singleInvocation=*/false,
    CompileOptions::laneRegistersFor(/*cpuDevice=*/false),
    CompileOptions::vectorLoadBytesFor(/*cpuDevice=*/false),
    "auto",
    /*matrixWorkgroupMemory=*/48 * 1024,
    /*fp8Calls=*/true};
// The kernels a bundle ships and those attn-diff checks are the same: both
// take these.
const mlir::attn::LoweringFamily mlir::attn::kCPULowering = {
    /*bf16AsI16=*/false,
    /*singleInvocation=*/true,
    CompileOptions::laneRegistersFor(/*cpuDevice=*/true),
    CompileOptions::vectorLoadBytesFor(/*cpuDevice=*/true),
    "none",
    /*matrixWorkgroupMemory=*/0,
    /*fp8Calls=*/false};

namespace {

/// The one list of targets: adding one is a line here and its file.
const mlir::attn::TargetBackend kBackends[] = {
    {::attn::Target::SPIRV, "SPIR-V", "spv", /*programFolders=*/false,
     /*subgroupSize=*/0, &mlir::attn::kSPIRVLowering,
     mlir::attn::compileSPIRVKernels, nullptr},
    {::attn::Target::PTX, "PTX", "ptx", /*programFolders=*/false,
     mlir::attn::kNVIDIAWarpSize, &mlir::attn::kPTXLowering,
     mlir::attn::compilePTXKernels, nullptr},
    {::attn::Target::MSL, "Metal", "metal", /*programFolders=*/false,
     /*subgroupSize=*/32, &mlir::attn::kSPIRVLowering,
     mlir::attn::compileMSLKernels, nullptr},
    {::attn::Target::TT, "TT-Metalium", "cpp", /*programFolders=*/true,
     /*subgroupSize=*/0, nullptr, nullptr, mlir::attn::compileTTKernels},
    {::attn::Target::CPU, "CPU shared objects", "so", /*programFolders=*/false,
     /*subgroupSize=*/1, &mlir::attn::kCPULowering,
     mlir::attn::compileCPUKernels, nullptr},
};

} // namespace

ArrayRef<mlir::attn::TargetBackend> mlir::attn::targetBackends() {
  return kBackends;
}

const mlir::attn::LoweringFamily &
mlir::attn::gpuLoweringFamily(const CompileOptions &options) {
  const LoweringFamily *shared = nullptr;
  for (::attn::Target target : options.targets) {
    const TargetBackend *b = &targetBackend(target);
    if (!b->family)
      continue;
    if (shared && shared != b->family)
      return kSPIRVLowering;
    shared = b->family;
  }
  return shared ? *shared : kSPIRVLowering;
}

const mlir::attn::TargetBackend *mlir::attn::findTargetBackend(StringRef name) {
  std::optional<::attn::Target> target = ::attn::parseTarget(name);
  return target ? &targetBackend(*target) : nullptr;
}

const mlir::attn::TargetBackend &
mlir::attn::targetBackend(::attn::Target target) {
  for (const TargetBackend &b : kBackends)
    if (b.id == target)
      return b;
  llvm_unreachable("a target without a backend");
}

mlir::attn::ConvertAttnToGPUOptions
mlir::attn::loweringOptions(const LoweringFamily &family,
                            const CompileOptions &options) {
  ConvertAttnToGPUOptions lowering;
  lowering.bf16AsI16 = family.bf16AsI16;
  // On SPIR-V the 16-byte loads are vec4 loads of 32-bit words
  // (attn-spirv-vector-loads), which Vulkan devices serve in one access
  // (lavapipe: one per lane instead of one per element).
  lowering.vectorLoadBytes = options.vectorLoadBytes >= 0
                                 ? options.vectorLoadBytes
                                 : family.vectorLoadBytes;
  lowering.laneRegisters =
      options.laneRegisters > 0 ? options.laneRegisters : family.laneRegisters;
  lowering.subgroupSize = options.subgroupSize;
  lowering.splitKv = options.splitKv;
  lowering.vectorWidth = options.vectorWidth;
  lowering.attentionSubgroups = options.attentionSubgroups;
  lowering.tiledPrefill = options.tiledPrefill;
  lowering.decodeThreshold = options.decodeThreshold;
  lowering.prefillMatrix = options.prefillMatrix.empty()
                               ? family.prefillMatrix.str()
                               : options.prefillMatrix;
  if (options.maxWorkgroupMemory > 0)
    lowering.maxWorkgroupMemory = options.maxWorkgroupMemory;
  lowering.matrixWorkgroupMemory = family.matrixWorkgroupMemory;
  lowering.fp8Calls = family.fp8Calls;
  lowering.workgroupSize = options.workgroupSize;
  if (family.singleInvocation) {
    // A work item is one invocation: no subgroups of lanes to spread a
    // head row or a tile over, and no matrix units; the decode kernel holds
    // whole head rows as vectors (SIMD registers) instead.
    lowering.subgroupSize = 1;
    lowering.attentionSubgroups = 1;
    lowering.workgroupSize = 1;
    lowering.prefillMatrix = "none";
    lowering.rowVectors = true;
    // Prefill tokens take the same per-token kernel: its work item already
    // tiles the queries of a kv head (a token's query heads against each
    // key row, scored a cache block at a time), and on a core it ran
    // 15-22x faster than the tiled kernel, whose tile staging, lane loops
    // and barriers are a GPU's shape (bench/README.md).
    lowering.tiledPrefill = false;
    // x86-64-v3 and up (F16C) and AArch64 widen f16 in one instruction,
    // subnormals kept.
    lowering.fp8ViaF16 = true;
  }
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

FailureOr<mlir::attn::KernelEntries>
mlir::attn::collectEntries(ModuleOp module) {
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
      // Every kernel of convert-attn-to-gpu declares its launch bounds.
      auto text = kernel->getAttrOfType<StringAttr>("attn.bounds");
      if (!text)
        return kernel.emitError() << "has no attn.bounds (the launch bounds "
                                     "convert-attn-to-gpu declares)";
      ::attn::Result<::attn::LaunchBounds> bounds =
          ::attn::parseLaunchBounds(text.getValue().str());
      if (!bounds)
        return kernel.emitError() << "attn.bounds: " << bounds.message();
      entries.bounds[kernel.getName()] = std::move(*bounds);
    }
  return entries;
}

FailureOr<mlir::attn::CompiledKernel>
mlir::attn::KernelEntries::compiled(ModuleOp module, ::attn::Target target,
                                    StringRef entryPoint) const {
  auto it = symbol.find(entryPoint);
  if (it == symbol.end())
    return mlir::emitError(module.getLoc())
           << ::attn::toString(target) << " entry point " << entryPoint
           << " matches no kernel of convert-attn-to-gpu";
  CompiledKernel kernel;
  kernel.symbol = it->second;
  kernel.target = ::attn::toString(target);
  kernel.entryPoint = entryPoint.str();
  return kernel;
}
