//===- attn-translate.cpp - attn IR to device binaries --------------------===//
//
// Like mlir-translate, but a module becomes several kernels, so the output
// is a set of files. --attn-to-spirv, --attn-to-ptx and --attn-to-msl map
// the flags onto CompileOptions and call the compile driver
// (compiler/Compile.h, the same entry as attn-compile, attn-run and
// attn-diff), then write each kernel it returns; --attn-to-ttmetal writes
// the TT-Metalium programs with their folders.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "compiler/ParseFile.h"
#include "compiler/targets/Target.h"
#include "lowering/AttnToCPU/CPUObject.h"
#include "lowering/AttnToTT/TTMetalTarget.h"
#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/Passes.h"
#include "lowering/SPIRVToMSL/SPIRVToMSL.h"
#include "tools/ToolCommandLine.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
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

using ::attn::Target;

cl::OptionCategory category("attn-translate options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::init("-"), cl::cat(category));
cl::opt<std::string>
    outputPath("o",
               cl::desc("Output: a directory gets one <kernel>.spv per "
                        "kernel; a file gets the binary of the only kernel"),
               cl::value_desc("path"), cl::init(""), cl::cat(category));
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
                                  clEnumValN(Target::TT, "attn-to-ttmetal",
                                             "TT-Metalium kernels and "
                                             "program.json per program "
                                             "(-o DIR; no -o: print all)"),
                                  clEnumValN(Target::CPU, "attn-to-cpu",
                                             "A shared object per kernel "
                                             "for --cpu-isa (no -o: print "
                                             "the optimized LLVM IR of "
                                             "all)")),
                       cl::cat(category));
cl::opt<std::string> cpuIsa("cpu-isa",
                            cl::desc("The ISA level of --attn-to-cpu's "
                                     "machine code: x86-64-v3, x86-64-v4, "
                                     "x86-64-v4-bf16 or aarch64"),
                            cl::init("x86-64-v3"), cl::cat(category));
cl::opt<bool> listKernels("list-kernels",
                          cl::desc("Print each kernel's entry point, "
                                   "workgroup size and params names"),
                          cl::init(false), cl::cat(category));
cl::opt<int64_t> subgroupSize("subgroup-size",
                              cl::desc("Subgroup size of the device"),
                              cl::init(32), cl::cat(category));
cl::opt<int64_t> workgroupSize("workgroup-size",
                               cl::desc("Workgroup size of element-wise "
                                        "kernels (0: the subgroup size)"),
                               cl::init(0), cl::cat(category));
cl::opt<int64_t> maxWorkgroupMemory("max-workgroup-memory",
                                    cl::desc("Workgroup memory in bytes a "
                                             "kernel may use (0: the "
                                             "target's, 16 KiB on Vulkan "
                                             "and Metal, 48 KiB on CUDA)"),
                                    cl::init(0), cl::cat(category));
cl::opt<std::string> prefillMatrix(
    "prefill-matrix",
    cl::desc("Products of paged_attention's tiled prefill kernel: none, "
             "subgroup-mma, auto (subgroup-mma where the variant allows) or "
             "emulate (default: the target's, auto on ptx); on "
             "--attn-to-spirv, subgroup-mma kernels get a SPIR-V 1.6 target "
             "environment with SPV_KHR_cooperative_matrix"),
    cl::init(""), cl::cat(category));
cl::opt<int64_t> vectorWidth("vector-width",
                             cl::desc("Contiguous elements per lane, with "
                                      "scalar loads"),
                             cl::init(1), cl::cat(category));
cl::opt<int64_t> vectorLoadBytes(
    "vector-load-bytes",
    cl::desc("Widest load per lane in bytes (-1: the target's, 32 for "
             "--attn-to-cpu and 16 otherwise; 0: scalar)"),
    cl::init(-1), cl::cat(category));
cl::opt<int64_t> attentionSubgroups("attention-subgroups",
                                    cl::desc("Subgroups per paged_attention "
                                             "workgroup"),
                                    cl::init(4), cl::cat(category));
cl::opt<std::string> chip("chip", cl::desc("--attn-to-ptx: the SM (sm_90)"),
                          cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> ptxFeatures("ptx-features",
                                 cl::desc("--attn-to-ptx: NVPTX features "
                                          "(the PTX ISA version; default: "
                                          "the oldest the chip allows)"),
                                 cl::init(""), cl::cat(category));
cl::opt<std::string> mslVersion("msl-version",
                                cl::desc("--attn-to-msl: the MSL version, "
                                         "MAJOR.MINOR (default: the lowest "
                                         "each kernel needs)"),
                                cl::init(""), cl::cat(category));
cl::opt<int64_t> splitKv("split-kv",
                         cl::desc("Split-KV decode (0: choose, N: force N, "
                                  "at most 1024)"),
                         cl::init(0), cl::cat(category));

const char *kOverview = R"(attn-translate: attn IR to device binaries

--attn-to-spirv: the input (attn ops on tensors or memrefs, in func.func)
goes through the compile driver attn-compile uses: bufferized, lowered by
convert-attn-to-gpu (bf16 buffers as i16 words) and by the
attn-gpu-to-spirv pipeline with buffer-addresses (argument i is the u64
device address at push-constant offset 8 i: the address form of a
bundle's Vulkan kernels). Every kernel is its own SPIR-V module whose
entry point is the kernel's name. Output convention:
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

--attn-to-msl: the kernels' SPIR-V in the binding form, wide loads read
element by element (--subgroup-size: 32, Apple's SIMD width, unless
overridden), cross-compiled by SPIRV-Cross to one MSL
kernel per SPIR-V kernel (argument i at [[buffer(i)]]). -o DIR writes
DIR/<entry point>.metal, -o FILE the only kernel, and no -o prints every
kernel to stdout after a line with its launch facts (entry point, MSL
version, threadgroup size, subgroup size, buffer indices).

--attn-to-cpu: the kernels built for one invocation per work item
(subgroup size 1, whatever --subgroup-size says), as functions of one work
item with the C entry point of core/CpuKernel.h (attn-cpu-to-llvm), and
machine code for --cpu-isa from LLVM in process. -o DIR writes
DIR/<entry point>.so (linked by ld.lld), -o FILE the only kernel, and no
-o prints every kernel's optimized LLVM IR to stdout after a line naming
it and the ISA level.
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
      llvm::outs() << " workgroup=" << (*block)[0] << "x" << (*block)[1] << "x"
                   << (*block)[2];
    llvm::outs() << " params=[";
    if (auto names = fn->getAttrOfType<ArrayAttr>("attn.params"))
      llvm::interleave(
          names, llvm::outs(),
          [](Attribute a) { llvm::outs() << cast<StringAttr>(a).getValue(); },
          ",");
    llvm::outs() << "]\n";
  });
}

/// The compile driver's options for `target` (spirv, ptx or msl) from the
/// flags. Vulkan kernels come in the address form only, one binary per
/// kernel.
FailureOr<mlir::attn::CompileOptions> compileOptions(Target target) {
  mlir::attn::CompileOptions options;
  options.targets = {target};
  options.subgroupSize = subgroupSize;
  options.workgroupSize = workgroupSize;
  options.maxWorkgroupMemory = maxWorkgroupMemory;
  options.prefillMatrix = prefillMatrix;
  options.vectorWidth = vectorWidth;
  options.vectorLoadBytes = vectorLoadBytes;
  options.attentionSubgroups = attentionSubgroups;
  options.splitKv = splitKv;
  options.spirv.abi = mlir::attn::SPIRVTargetOptions::Abi::Addresses;
  options.cpu.isaLevels = {cpuIsa};
  if (target == Target::CPU)
    options.subgroupSize = 1;
  options.ptx.chips = {chip};
  options.ptx.features = ptxFeatures;
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
    options.msl.version = mlir::attn::makeMSLVersion(major, minor);
  }
  return options;
}

/// --list-kernels: the kernels of convert-attn-to-gpu as the driver lowers
/// `module` for `options` (lowered here in place, after the compile).
LogicalResult listLoweredKernels(ModuleOp module,
                                 const mlir::attn::CompileOptions &options) {
  PassManager pm(module.getContext());
  mlir::attn::buildAttnToGPUPipeline(
      pm, mlir::attn::loweringOptions(mlir::attn::gpuLoweringFamily(options),
                                      options));
  if (failed(pm.run(module)))
    return failure();
  printKernels(module);
  return success();
}

/// The kernels of `target` (spirv, ptx or msl) through the compile driver,
/// written by the output convention with the target's file extension; text
/// kernels printed to stdout after a banner line.
LogicalResult translate(ModuleOp module, Target target) {
  FailureOr<mlir::attn::CompileOptions> options = compileOptions(target);
  if (failed(options))
    return failure();
  FailureOr<mlir::attn::CompiledModule> compiled =
      mlir::attn::compileModule(module, *options);
  if (failed(compiled))
    return failure();
  if (listKernels && failed(listLoweredKernels(module, *options)))
    return failure();
  SmallVector<OutputKernel> out;
  for (const mlir::attn::CompiledKernel &k : compiled->kernels) {
    std::string banner;
    if (target == Target::PTX)
      banner = "// kernel " + k.entryPoint;
    if (target == Target::MSL)
      banner = "// kernel " + k.entryPoint + " launch " + k.launchJson;
    out.push_back({k.entryPoint, k.bytes, banner});
  }
  return writeKernels(
      out,
      (llvm::Twine(".") + mlir::attn::targetBackend(target).fileExtension)
          .str());
}

/// --attn-to-cpu: with -o, the kernels' shared objects through the compile
/// driver; without, their optimized LLVM IR.
LogicalResult translateCPU(ModuleOp module) {
  if (!outputPath.empty() || listKernels)
    return translate(module, Target::CPU);
  FailureOr<mlir::attn::CompileOptions> options = compileOptions(Target::CPU);
  if (failed(options))
    return failure();
  PassManager pm(module.getContext());
  mlir::attn::buildAttnToGPUPipeline(
      pm, mlir::attn::loweringOptions(mlir::attn::kCPULowering, *options));
  if (failed(pm.run(module)))
    return failure();
  FailureOr<SmallVector<mlir::attn::CPUKernel>> kernels =
      mlir::attn::translateKernelsToCPU(module, cpuIsa,
                                        mlir::attn::CPUOutput::LLVMIR);
  if (failed(kernels))
    return failure();
  for (const mlir::attn::CPUKernel &k : *kernels)
    llvm::outs() << "; kernel " << k.entryPoint << " isa " << cpuIsa << "\n"
                 << k.sharedObject << "\n";
  return success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::attn::setToolVersionPrinter("attn-translate");
  // The LLVM backends linked in register hundreds of flags; --help-hidden
  // still lists them.
  mlir::attn::hideOtherOptions(&category);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (target.getNumOccurrences() == 0) {
    llvm::errs() << "attn-translate: error: no translation: give one of "
                    "--attn-to-spirv, --attn-to-ptx, --attn-to-msl, "
                    "--attn-to-ttmetal, --attn-to-cpu (see --help)\n";
    return 1;
  }

  DialectRegistry registry;
  mlir::attn::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      mlir::attn::parseModuleFile(inputFile, context, sourceMgr, error);
  if (!module) {
    if (!error.empty())
      llvm::errs() << error << "\n";
    return 1;
  }

  switch (target) {
  case Target::SPIRV:
    return failed(translate(*module, Target::SPIRV)) ? 1 : 0;
  case Target::PTX:
    if (subgroupSize != mlir::attn::kNVIDIAWarpSize) {
      llvm::errs() << "error: --attn-to-ptx needs --subgroup-size="
                   << mlir::attn::kNVIDIAWarpSize << " (an NVIDIA warp), got "
                   << subgroupSize << "\n";
      return 1;
    }
    return failed(translate(*module, Target::PTX)) ? 1 : 0;
  case Target::MSL:
    return failed(translate(*module, Target::MSL)) ? 1 : 0;
  case Target::CPU:
    return failed(translateCPU(*module)) ? 1 : 0;
  case Target::TT:
    return failed(
               outputPath.empty()
                   ? mlir::attn::translateAttnToTTMetal(*module, llvm::outs())
                   : mlir::attn::translateAttnToTTMetal(*module, outputPath))
               ? 1
               : 0;
  }
  return 1;
}
