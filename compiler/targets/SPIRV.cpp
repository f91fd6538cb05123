//===- SPIRV.cpp - The spirv target: SPIR-V for Vulkan --------------------===//
//
// Each kernel in the ABI forms SPIRVTargetOptions::abi asks for: by device
// address (attn-spirv-buffer-addresses), by descriptor binding, or both
// from one conversion (translateKernelsToSPIRVForms), which a Vulkan device
// chooses between per launch.
//
//===----------------------------------------------------------------------===//

#include "compiler/targets/Target.h"
#include "core/LaunchFacts.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<mlir::attn::SPIRVTargetOptions::Abi>
mlir::attn::parseSpirvAbi(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<SPIRVTargetOptions::Abi>>(name)
      .Case("addresses", SPIRVTargetOptions::Abi::Addresses)
      .Case("bindings", SPIRVTargetOptions::Abi::Bindings)
      .Case("both", SPIRVTargetOptions::Abi::Both)
      .Default(std::nullopt);
}

/// Appends SPIR-V kernels `kernels` of one ABI form, by device address or
/// by binding, to `out` with their launch facts.
static LogicalResult
appendSPIRVForm(ModuleOp input, SmallVector<mlir::attn::SPIRVKernel> &kernels,
                int64_t subgroupSize, bool bufferAddresses,
                const mlir::attn::KernelEntries &entries,
                std::vector<mlir::attn::CompiledKernel> &out) {
  using namespace mlir::attn;
  for (SPIRVKernel &k : kernels) {
    FailureOr<CompiledKernel> kernel =
        entries.compiled(input, ::attn::Target::SPIRV, k.entryPoint);
    if (failed(kernel))
      return failure();
    kernel->bytes.assign(reinterpret_cast<const char *>(k.words.data()),
                        k.words.size() * sizeof(uint32_t));
    ::attn::LaunchFacts launch;
    launch.subgroupSize = subgroupSize;
    launch.workgroup = entries.workgroup.lookup(k.entryPoint);
    // attn-spirv-buffer-addresses: argument i is a u64 device address at
    // push-constant offset 8 i; without it, binding i.
    launch.argElementBytes = entries.elementBytes.lookup(k.entryPoint);
    launch.bounds = entries.bounds.lookup(k.entryPoint);
    if (bufferAddresses)
      launch.addressedBuffers = launch.argElementBytes.size();
    kernel->launchJson = ::attn::writeLaunchFacts(launch, ::attn::Target::SPIRV);
    out.push_back(std::move(*kernel));
  }
  return success();
}

LogicalResult
mlir::attn::compileSPIRVKernels(const LoweredModule &lowered,
                                const CompileOptions &options,
                                std::vector<CompiledKernel> &out) {
  using SpirvAbi = SPIRVTargetOptions::Abi;
  // The address form first, then the binding form, under the same symbols.
  ModuleOp input = lowered.input, loweredModule = lowered.lowered;
  const KernelEntries &entries = lowered.entries;
  int64_t sg = options.subgroupSize;
  if (options.spirv.abi == SpirvAbi::Both) {
    OwningOpRef<ModuleOp> copy = loweredModule.clone();
    FailureOr<SPIRVForms> forms =
        translateKernelsToSPIRVForms(*copy, /*aliasWideLoads=*/true);
    if (failed(forms) ||
        failed(
            appendSPIRVForm(input, forms->addressed, sg, true, entries, out)) ||
        failed(appendSPIRVForm(input, forms->bound, sg, false, entries, out)))
      return failure();
    return success();
  }
  bool byAddress = options.spirv.abi == SpirvAbi::Addresses;
  OwningOpRef<ModuleOp> copy = loweredModule.clone();
  FailureOr<SmallVector<SPIRVKernel>> kernels =
      translateKernelsToSPIRV(*copy, /*aliasWideLoads=*/true, byAddress);
  if (failed(kernels) ||
      failed(appendSPIRVForm(input, *kernels, sg, byAddress, entries, out)))
    return failure();
  return success();
}
