//===- attn-translate.cpp - attn IR to device binaries --------------------===//
//
// Like mlir-translate, but a module becomes several kernels, so the output
// is a set of files. `--attn-to-spirv` bufferizes attn IR (on tensors or
// memrefs), runs convert-attn-to-gpu and the attn-gpu-to-spirv pipeline, and
// writes one SPIR-V binary per kernel.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/BufferizableOpInterfaceImpl.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/Passes.h"
#include "lowering/AttnToTT/TTMetalTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Target { SPIRV, TTMetal };

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::init("-"));
cl::opt<std::string>
    outputPath("o",
               cl::desc("Output: a directory gets one <kernel>.spv per "
                        "kernel; a file gets the binary of the only kernel"),
               cl::value_desc("path"), cl::init(""));
cl::opt<Target> target(cl::desc("Translation:"), cl::Required,
                       cl::values(clEnumValN(Target::SPIRV, "attn-to-spirv",
                                             "SPIR-V for Vulkan, one binary "
                                             "per kernel"),
                                  clEnumValN(Target::TTMetal, "attn-to-ttmetal",
                                             "TT-Metalium kernels and "
                                             "program.json per program "
                                             "(-o DIR; no -o: print all)")));
cl::opt<bool> listKernels("list-kernels",
                          cl::desc("Print each kernel's entry point, "
                                   "workgroup size and params names"),
                          cl::init(false));
cl::opt<int64_t> subgroupSize("subgroup-size",
                              cl::desc("Subgroup size of the device"),
                              cl::init(32));
cl::opt<int64_t> workgroupSize("workgroup-size",
                               cl::desc("Workgroup size of element-wise "
                                        "kernels (0: the subgroup size)"),
                               cl::init(0));
cl::opt<int64_t> maxWorkgroupMemory("max-workgroup-memory",
                                    cl::desc("Workgroup memory in bytes"),
                                    cl::init(32768));
cl::opt<int64_t> vectorWidth("vector-width",
                             cl::desc("Contiguous elements per lane"),
                             cl::init(1));
cl::opt<int64_t> splitKv("split-kv",
                         cl::desc("Split-KV decode (0: choose, N: force N)"),
                         cl::init(0));

const char *kOverview = R"(attn-translate: attn IR to device binaries

--attn-to-spirv: the input (attn ops on tensors or memrefs, in func.func) is
bufferized, lowered by convert-attn-to-gpu (bf16 buffers as i16 words) and
by the attn-gpu-to-spirv pipeline. Every kernel is its own SPIR-V module
whose entry point is the kernel's name. Output convention:
  -o DIR        (an existing directory, or a path ending in '/')
                writes DIR/<entry point>.spv for every kernel;
  -o FILE       writes the binary of the only kernel, and fails if the
                module has several;
  no -o         with --list-kernels only, writes nothing.
--list-kernels prints one line per kernel: entry point, workgroup size and
the names of its i32 params, in order.
)";

/// Whether `-o` names a directory (existing, or spelled with a trailing
/// separator).
bool isDirectory(StringRef path) {
  return llvm::sys::fs::is_directory(path) ||
         llvm::sys::path::is_separator(path.back());
}

LogicalResult writeBinary(StringRef path, ArrayRef<uint32_t> words) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return failure();
  }
  file->os().write(reinterpret_cast<const char *>(words.data()),
                   words.size() * sizeof(uint32_t));
  file->keep();
  return success();
}

/// Prints the launch facts of each kernel, from the gpu.func ops that the
/// SPIR-V conversion leaves in place.
void printKernels(ModuleOp module) {
  module.walk([](gpu::GPUFuncOp fn) {
    if (!fn.isKernel())
      return;
    llvm::outs() << fn.getName();
    if (std::optional<ArrayRef<int32_t>> block = fn.getKnownBlockSize())
      llvm::outs() << " workgroup=" << (*block)[0] << "x" << (*block)[1]
                   << "x" << (*block)[2];
    llvm::outs() << " params=[";
    if (auto names = fn->getAttrOfType<ArrayAttr>("attn.params"))
      llvm::interleave(
          names, llvm::outs(),
          [](Attribute a) { llvm::outs() << cast<StringAttr>(a).getValue(); },
          ",");
    llvm::outs() << "]\n";
  });
}

LogicalResult translateToSPIRV(ModuleOp module) {
  attn::ConvertAttnToGPUOptions options;
  options.subgroupSize = subgroupSize;
  options.workgroupSize = workgroupSize;
  options.maxWorkgroupMemory = maxWorkgroupMemory;
  options.vectorWidth = vectorWidth;
  options.splitKv = splitKv;
  // Upstream's SPIR-V conversion has no bf16 buffers.
  options.bf16AsI16 = true;
  PassManager pm(module.getContext());
  attn::buildAttnToGPUPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  FailureOr<SmallVector<attn::SPIRVKernel>> kernels =
      attn::translateKernelsToSPIRV(module, subgroupSize);
  if (failed(kernels))
    return failure();
  if (listKernels)
    printKernels(module);
  if (outputPath.empty()) {
    if (listKernels)
      return success();
    llvm::errs() << "error: no output path; pass -o DIR or -o FILE\n";
    return failure();
  }
  if (isDirectory(outputPath)) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputPath)) {
      llvm::errs() << "error: cannot create " << outputPath << ": "
                   << ec.message() << "\n";
      return failure();
    }
    for (const attn::SPIRVKernel &k : *kernels) {
      SmallString<256> path(outputPath);
      llvm::sys::path::append(path, k.entryPoint + ".spv");
      if (failed(writeBinary(path, k.words)))
        return failure();
    }
    return success();
  }
  if (kernels->size() != 1) {
    llvm::errs() << "error: the module has " << kernels->size()
                 << " kernels; pass a directory to -o\n";
    return failure();
  }
  return writeBinary(outputPath, kernels->front().words);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, kOverview);

  DialectRegistry registry;
  registerAllDialects(registry);
  registry.insert<attn::AttnDialect>();
  attn::registerBufferizableOpInterfaceExternalModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  switch (target) {
  case Target::SPIRV:
    return failed(translateToSPIRV(*module)) ? 1 : 0;
  case Target::TTMetal:
    return failed(outputPath.empty()
                      ? attn::translateAttnToTTMetal(*module, llvm::outs())
                      : attn::translateAttnToTTMetal(*module, outputPath))
               ? 1
               : 0;
  }
  return 1;
}
