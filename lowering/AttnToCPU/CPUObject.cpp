//===- CPUObject.cpp - attn's kernels as CPU shared objects ---------------===//

#include "lowering/AttnToCPU/CPUObject.h"
#include "core/CpuKernel.h"
#include "lowering/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ModuleToObject.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace mlir;
using mlir::attn::CPUKernel;
using mlir::attn::CPUOutput;

void mlir::attn::buildCPUToLLVMPipeline(OpPassManager &pm, bool bf16Dot) {
  pm.addPass(createConvertGPUKernelsToCPU());
  pm.addPass(createAttnCPUPolynomialExp2());
  if (bf16Dot)
    pm.addPass(createAttnCPUBf16Dot());
  // bf16 conversions as integer code (round to nearest even): x86-64-v3
  // has no bf16 instructions, and LLVM would call compiler-rt for them.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The kernels' vector reductions are sums of dot products and of
  // softmax weights: a tree is as exact as the chain, and far faster.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  vectorToLLVM.x86Vector = bf16Dot;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for becomes a C library call, which the
  // loader resolves from the process (core/CpuKernel.h).
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAttnCPUEntryPoints());
}

namespace {

/// LLVM's x86 and AArch64 back ends, registered once per process.
void initializeCPUTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });
}

/// Upstream's LLVM IR translation and O3 pipeline, then code generation
/// with position-independent code (the object becomes a shared object).
class CPUObjectEmitter : public LLVM::ModuleToObject {
public:
  CPUObjectEmitter(Operation &module, const ::attn::CpuIsaLevel &level,
                   CPUOutput output, std::string &text)
      : ModuleToObject(module, level.triple, level.cpu, level.features,
                       /*optLevel=*/3),
        output_(output), text_(text) {}

protected:
  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &llvmModule) override {
    // Called with the module after upstream's O3 pipeline.
    if (output_ == CPUOutput::LLVMIR) {
      llvm::raw_string_ostream os(text_);
      llvmModule.print(os, nullptr);
      return SmallVector<char, 0>();
    }
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(llvmModule.getTargetTriple(), error);
    if (!target)
      return getOperation().emitError()
             << "no LLVM target for " << triple << ": " << error;
    llvm::TargetOptions options;
    std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
        llvmModule.getTargetTriple(), chip, features, options,
        llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    if (!machine)
      return getOperation().emitError() << "LLVM cannot generate code for "
                                        << triple << " (" << chip << ")";
    llvmModule.setDataLayout(machine->createDataLayout());
    SmallVector<char, 0> bytes;
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return getOperation().emitError()
             << "LLVM cannot emit code for " << triple;
    codegen.run(llvmModule);
    return bytes;
  }

private:
  CPUOutput output_;
  std::string &text_;
};

/// A temporary file that is removed when this goes.
struct TempFile {
  SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

/// Links `object` into a shared object with ld.lld (LLVM's linker, found
/// beside the LLVM this build uses, then on PATH).
FailureOr<std::string> linkSharedObject(ModuleOp module, StringRef object) {
  auto fail = [&](const Twine &what) {
    return mlir::emitError(module.getLoc())
           << "cannot link a cpu kernel: " << what;
  };
  llvm::ErrorOr<std::string> lld =
      llvm::sys::findProgramByName("ld.lld", {ATTN_LLVM_TOOLS_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return fail("no ld.lld (Debian package lld-22)");
  TempFile in, out;
  if (llvm::sys::fs::createTemporaryFile("attn-cpu", "o", in.path) ||
      llvm::sys::fs::createTemporaryFile("attn-cpu", "so", out.path))
    return fail("cannot create temporary files");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in.path, ec);
    if (ec)
      return fail("cannot write " + in.path + ": " + ec.message());
    os << object;
  }
  // Reproducible bytes (no build id); every symbol bound at load.
  SmallVector<StringRef> args = {*lld,     "-shared", "--build-id=none", "-z",
                                 "now",    "-z",      "noexecstack",     "-o",
                                 out.path, in.path};
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return fail("ld.lld exited with " + Twine(rc) +
                (message.empty() ? "" : ": " + message));
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> linked =
      llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false);
  if (!linked)
    return fail("cannot read " + out.path);
  return (*linked)->getBuffer().str();
}

/// The kernel of `kernels` (one gpu.module) compiled for `level`.
FailureOr<CPUKernel> compileKernel(gpu::GPUModuleOp kernels,
                                   const ::attn::CpuIsaLevel &level,
                                   CPUOutput output) {
  MLIRContext *context = kernels.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(kernels.getLoc());
  module->getBody()->push_back(kernels.clone());
  PassManager pm(context);
  mlir::attn::buildCPUToLLVMPipeline(pm, level.bf16Dot);
  if (failed(pm.run(*module)))
    return failure();
  std::string text;
  CPUObjectEmitter emitter(*module->getOperation(), level, output, text);
  std::optional<SmallVector<char, 0>> bytes = emitter.run();
  if (!bytes)
    return failure();
  CPUKernel kernel;
  for (auto func : kernels.getOps<gpu::GPUFuncOp>())
    kernel.entryPoint = func.getName().str();
  if (output == CPUOutput::LLVMIR) {
    kernel.sharedObject = std::move(text);
    return kernel;
  }
  StringRef object(bytes->data(), bytes->size());
  FailureOr<std::string> linked = linkSharedObject(*module, object);
  if (failed(linked))
    return failure();
  kernel.sharedObject = std::move(*linked);
  return kernel;
}

} // namespace

FailureOr<SmallVector<mlir::attn::CPUKernel>>
mlir::attn::translateKernelsToCPU(ModuleOp module, StringRef isaLevel,
                                  CPUOutput output) {
  const ::attn::CpuIsaLevel *level = ::attn::findCpuIsaLevel(isaLevel);
  if (!level)
    return mlir::emitError(module.getLoc())
           << "no cpu ISA level '" << isaLevel << "' (expected one of "
           << ::attn::cpuIsaLevelNames() << ")";
  initializeCPUTargets();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  SmallVector<CPUKernel> kernels;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    if (!gpuModule->hasAttr("attn.kernels"))
      continue;
    FailureOr<CPUKernel> kernel = compileKernel(gpuModule, *level, output);
    if (failed(kernel))
      return failure();
    kernels.push_back(std::move(*kernel));
  }
  return kernels;
}
