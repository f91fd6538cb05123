//===- DeviceRun.cpp - Compile and run a function on a device ------------===//

#include "compiler/DeviceRun.h"
#include "compiler/Compile.h"
#include "runtime/PlanRunner.h"

#ifdef ATTN_HAVE_VULKAN
#include "runtime/executors/vulkan/VulkanPlanDevice.h"
#endif

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace mlir;

std::vector<std::string> mlir::attn::deviceBackends() {
#ifdef ATTN_HAVE_VULKAN
  return {"vulkan"};
#else
  return {};
#endif
}

namespace {

llvm::Error toError(const ::attn::Status &status) {
  return llvm::createStringError(status.message());
}

/// Compiles for one target and runs the plan on `device`; `addKernel` puts a
/// compiled kernel on the device.
template <typename AddKernel>
llvm::Expected<std::vector<::attn::Tensor>>
compileAndRun(ModuleOp module, StringRef entry,
              const mlir::attn::CompileOptions &options,
              ::attn::runtime::PlanDevice &device, AddKernel addKernel,
              llvm::ArrayRef<::attn::Tensor> inputs,
              mlir::attn::DeviceRunStats *stats) {
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
    return llvm::createStringError("compiling for " + std::string(device.name()) +
                                   " failed:\n" + diagnostics);
  if (stats)
    stats->compileSeconds = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
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

} // namespace

llvm::Expected<std::vector<::attn::Tensor>>
mlir::attn::runOnDevice(ModuleOp module, StringRef entry, StringRef backend,
                        llvm::ArrayRef<::attn::Tensor> inputs,
                        DeviceRunStats *stats) {
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
  std::string available = "reference";
  for (const std::string &b : deviceBackends())
    available += ", " + b;
  return llvm::createStringError("backend '" + backend.str() +
                                 "' is not available in this build "
                                 "(available: " +
                                 available + ")");
}
