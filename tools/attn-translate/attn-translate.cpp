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
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/SPIRVToMSL/SPIRVToMSL.h"
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

enum class Target { SPIRV, PTX, MSL, TTMetal };

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::init("-"));
cl::opt<std::string>
    outputPath("o",
               cl::desc("Output: a directory gets one <kernel>.spv per "
                        "kernel; a file gets the binary of the only kernel"),
               cl::value_desc("path"), cl::init(""));
cl::opt<Target> target(cl::desc("Translation:"),
                       cl::values(clEnumValN(Target::SPIRV, "attn-to-spirv",
                                             "SPIR-V for Vulkan, one binary "
                                             "per kernel"),
                                  clEnumValN(Target::PTX, "attn-to-ptx",
                                             "PTX for CUDA, one module per "
                                             "kernel (no -o: print all)"),
                                  clEnumValN(Target::MSL, "attn-to-msl",
                                             "Metal source from the SPIR-V "
                                             "through SPIRV-Cross, one per "
                                             "kernel (no -o: print all)"),
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
                                    cl::desc("Workgroup memory in bytes a "
                                             "kernel may use (0: the "
                                             "target's, 16 KiB on Vulkan "
                                             "and Metal, 48 KiB on CUDA)"),
                                    cl::init(0));
cl::opt<std::string> prefillMatrix(
    "prefill-matrix",
    cl::desc("Products of paged_attention's tiled prefill kernel: none, "
             "subgroup-mma or emulate (default: the target's)"),
    cl::init(""));
cl::opt<bool> cooperativeMatrix(
    "cooperative-matrix",
    cl::desc("SPIR-V: a target environment with SPV_KHR_cooperative_matrix "
             "(16x16x16 f16 products with f32 accumulators), for "
             "--prefill-matrix=subgroup-mma"),
    cl::init(false));
cl::opt<int64_t> vectorWidth("vector-width",
                             cl::desc("Contiguous elements per lane, with "
                                      "scalar loads"),
                             cl::init(1));
cl::opt<int64_t> vectorLoadBytes(
    "vector-load-bytes",
    cl::desc("Widest load per lane in bytes (-1: the target's, 16 for "
             "--attn-to-ptx and 0, scalar, otherwise)"),
    cl::init(-1));
cl::opt<int64_t> attentionSubgroups("attention-subgroups",
                                    cl::desc("Subgroups per paged_attention "
                                             "workgroup"),
                                    cl::init(4));
cl::opt<std::string> chip("chip", cl::desc("--attn-to-ptx: the SM (sm_90)"),
                          cl::init("sm_90"));
cl::opt<std::string> ptxFeatures("ptx-features",
                                 cl::desc("--attn-to-ptx: NVPTX features "
                                          "(the PTX ISA version; default: "
                                          "the oldest the chip allows)"),
                                 cl::init(""));
cl::opt<std::string> mslVersion("msl-version",
                                cl::desc("--attn-to-msl: the MSL version, "
                                         "MAJOR.MINOR (default: the lowest "
                                         "each kernel needs)"),
                                cl::init(""));
cl::opt<int64_t> splitKv("split-kv",
                         cl::desc("Split-KV decode (0: choose, N: force N)"),
                         cl::init(0));

const char *kOverview = R"(attn-translate: attn IR to device binaries

--attn-to-spirv: the input (attn ops on tensors or memrefs, in func.func) is
bufferized, lowered by convert-attn-to-gpu (bf16 buffers as i16 words) and
by the attn-gpu-to-spirv pipeline with buffer-addresses (argument i is the
u64 device address at push-constant offset 8 i: the address form of a
bundle's Vulkan kernels). Every kernel is its own SPIR-V module whose entry point is the
kernel's name. Output convention:
  -o DIR        (an existing directory, or a path ending in '/')
                writes DIR/<entry point>.spv for every kernel;
  -o FILE       writes the binary of the only kernel, and fails if the
                module has several;
  no -o         with --list-kernels only, writes nothing.
--list-kernels prints one line per kernel: entry point, workgroup size and
the names of its i32 params, in order.

--attn-to-ptx: the same kernel IR, with bf16 kept as bf16, through the
attn-gpu-to-ptx pipeline (--chip, --ptx-features; subgroup size 32). Every
kernel is its own PTX module whose .entry is the kernel's name; -o DIR
writes DIR/<entry point>.ptx, -o FILE the only kernel, and no -o prints
every module to stdout.

--attn-to-msl: the SPIR-V of --attn-to-spirv (--subgroup-size: 32, Apple's
SIMD width, unless overridden), cross-compiled by SPIRV-Cross to one MSL
kernel per SPIR-V kernel (argument i at [[buffer(i)]]). -o DIR writes
DIR/<entry point>.metal, -o FILE the only kernel, and no -o prints every
kernel to stdout after a line with its launch facts (entry point, MSL
version, threadgroup size, subgroup size, buffer indices).
)";

/// Whether `-o` names a directory (existing, or spelled with a trailing
/// separator).
bool isDirectory(StringRef path) {
  return llvm::sys::fs::is_directory(path) ||
         llvm::sys::path::is_separator(path.back());
}

LogicalResult writeFile(StringRef path, StringRef bytes) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return failure();
  }
  file->os() << bytes;
  file->keep();
  return success();
}

/// One emitted kernel as the tool writes it: file contents, and for text
/// targets the line that introduces it when printed to stdout.
struct OutputKernel {
  std::string entryPoint;
  StringRef bytes;
  /// Empty for binaries, which are never printed.
  std::string banner;
};

/// The output convention of every target: -o DIR writes
/// DIR/<entry point><extension> per kernel, -o FILE the only kernel; no -o
/// prints text kernels (binaries need -o unless --list-kernels).
LogicalResult writeKernels(ArrayRef<OutputKernel> kernels,
                           StringRef extension) {
  if (outputPath.empty()) {
    if (listKernels)
      return success();
    if (!kernels.empty() && kernels.front().banner.empty()) {
      llvm::errs() << "error: no output path; pass -o DIR or -o FILE\n";
      return failure();
    }
    for (const OutputKernel &k : kernels)
      llvm::outs() << k.banner << "\n" << k.bytes << "\n";
    return success();
  }
  if (isDirectory(outputPath)) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputPath)) {
      llvm::errs() << "error: cannot create " << outputPath << ": "
                   << ec.message() << "\n";
      return failure();
    }
    for (const OutputKernel &k : kernels) {
      SmallString<256> path(outputPath);
      llvm::sys::path::append(path, k.entryPoint + extension.str());
      if (failed(writeFile(path, k.bytes)))
        return failure();
    }
    return success();
  }
  if (kernels.size() != 1) {
    llvm::errs() << "error: the module has " << kernels.size()
                 << " kernels; pass a directory to -o\n";
    return failure();
  }
  return writeFile(outputPath, kernels.front().bytes);
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

/// convert-attn-to-gpu's options: the target's capabilities, then the
/// flags.
attn::ConvertAttnToGPUOptions loweringOptions(StringRef target) {
  attn::ConvertAttnToGPUOptions options =
      attn::getTargetLoweringOptions(target, subgroupSize);
  options.workgroupSize = workgroupSize;
  if (maxWorkgroupMemory > 0)
    options.maxWorkgroupMemory = maxWorkgroupMemory;
  if (!prefillMatrix.empty())
    options.prefillMatrix = prefillMatrix;
  options.vectorWidth = vectorWidth;
  if (vectorLoadBytes >= 0)
    options.vectorLoadBytes = vectorLoadBytes;
  options.attentionSubgroups = attentionSubgroups;
  options.splitKv = splitKv;
  return options;
}

/// The SPIR-V kernels of attn IR: bufferization, convert-attn-to-gpu and the
/// attn-gpu-to-spirv pipeline. The gpu.func ops stay in `module`. Vulkan
/// kernels take their buffers by device address and read wide loads through
/// aliased words; SPIR-V for SPIRV-Cross (MSL) keeps bindings (its Metal
/// buffer indices) and reads wide loads element by element.
FailureOr<SmallVector<attn::SPIRVKernel>>
lowerToSPIRV(ModuleOp module, bool forVulkan = true) {
  attn::ConvertAttnToGPUOptions options = loweringOptions("spirv");
  PassManager pm(module.getContext());
  attn::buildAttnToGPUPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  return attn::translateKernelsToSPIRV(module, subgroupSize,
                                       /*aliasWideLoads=*/forVulkan,
                                       cooperativeMatrix,
                                       /*bufferAddresses=*/forVulkan);
}

LogicalResult translateToSPIRV(ModuleOp module) {
  FailureOr<SmallVector<attn::SPIRVKernel>> kernels =
      lowerToSPIRV(module, /*bufferAddresses=*/true);
  if (failed(kernels))
    return failure();
  if (listKernels)
    printKernels(module);
  SmallVector<OutputKernel> out;
  for (const attn::SPIRVKernel &k : *kernels)
    out.push_back({k.entryPoint,
                   StringRef(reinterpret_cast<const char *>(k.words.data()),
                             k.words.size() * sizeof(uint32_t)),
                   ""});
  return writeKernels(out, ".spv");
}

LogicalResult translateToPTX(ModuleOp module) {
  if (subgroupSize != attn::kNVIDIAWarpSize) {
    llvm::errs() << "error: --attn-to-ptx needs --subgroup-size="
                 << attn::kNVIDIAWarpSize << " (an NVIDIA warp), got "
                 << subgroupSize << "\n";
    return failure();
  }
  attn::ConvertAttnToGPUOptions options = loweringOptions("ptx");
  PassManager pm(module.getContext());
  attn::buildAttnToGPUPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  if (listKernels)
    printKernels(module);
  FailureOr<SmallVector<attn::PTXKernel>> kernels =
      attn::translateKernelsToPTX(module, chip,
                                  ptxFeatures.empty()
                                      ? attn::ptxFeaturesForChip(chip)
                                      : std::string(ptxFeatures));
  if (failed(kernels))
    return failure();
  SmallVector<OutputKernel> out;
  for (const attn::PTXKernel &k : *kernels)
    out.push_back({k.entryPoint, k.ptx, "// kernel " + k.entryPoint});
  return writeKernels(out, ".ptx");
}

LogicalResult translateToMSL(ModuleOp module) {
  attn::MSLOptions options;
  options.subgroupSize = subgroupSize;
  if (!mslVersion.empty()) {
    unsigned major = 0, minor = 0;
    StringRef text = mslVersion;
    auto [majorText, minorText] = text.split('.');
    if (majorText.getAsInteger(10, major) ||
        minorText.getAsInteger(10, minor) || minor > 99) {
      llvm::errs() << "error: --msl-version expects MAJOR.MINOR, got '"
                   << mslVersion << "'\n";
      return failure();
    }
    options.version = attn::makeMSLVersion(major, minor);
  }
  FailureOr<SmallVector<attn::SPIRVKernel>> spirv =
      lowerToSPIRV(module, /*forVulkan=*/false);
  if (failed(spirv))
    return failure();
  if (listKernels)
    printKernels(module);
  SmallVector<attn::MSLKernel> kernels;
  for (const attn::SPIRVKernel &k : *spirv) {
    llvm::Expected<attn::MSLKernel> msl =
        attn::translateSPIRVToMSL(k.words, k.entryPoint, options);
    if (!msl) {
      llvm::errs() << "error: " << llvm::toString(msl.takeError()) << "\n";
      return failure();
    }
    kernels.push_back(std::move(*msl));
  }
  SmallVector<OutputKernel> out;
  for (const attn::MSLKernel &k : kernels)
    out.push_back({k.entryPoint, k.source,
                   "// kernel " + k.entryPoint + " launch " +
                       attn::mslLaunchFacts(k, options.subgroupSize)});
  return writeKernels(out, ".metal");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (target.getNumOccurrences() == 0) {
    llvm::errs() << "attn-translate: error: no translation: give one of "
                    "--attn-to-spirv, --attn-to-ptx, --attn-to-msl, "
                    "--attn-to-ttmetal (see --help)\n";
    return 1;
  }

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
  case Target::PTX:
    return failed(translateToPTX(*module)) ? 1 : 0;
  case Target::MSL:
    return failed(translateToMSL(*module)) ? 1 : 0;
  case Target::TTMetal:
    return failed(outputPath.empty()
                      ? attn::translateAttnToTTMetal(*module, llvm::outs())
                      : attn::translateAttnToTTMetal(*module, outputPath))
               ? 1
               : 0;
  }
  return 1;
}
