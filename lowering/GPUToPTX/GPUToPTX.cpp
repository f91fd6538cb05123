//===- GPUToPTX.cpp - attn's kernels to PTX for CUDA ----------------------===//
//
// Upstream does the conversion and the code generation; this file supplies
// what it leaves to the user: float subgroup reductions (which
// convert-gpu-to-nvvm does not lower) as shuffles, the pipeline that strings
// the upstream passes together, and reading the PTX back from gpu.binary.
//
//===----------------------------------------------------------------------===//

#include "lowering/GPUToPTX/GPUToPTX.h"
#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNLOWERSUBGROUPREDUCE
#define GEN_PASS_DEF_ATTNNVVMREGISTERBUDGET
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Shuffles are 32 bits wide on NVIDIA; wider vectors are split first.
constexpr unsigned kShuffleBitwidth = 32;

struct LowerSubgroupReducePass
    : public attn::impl::AttnLowerSubgroupReduceBase<LowerSubgroupReducePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> lanes = resolveSubgroupSize(
        module, subgroupSize, "attn-lower-subgroup-reduce");
    if (failed(lanes))
      return signalPassFailure();
    if ((*lanes & (*lanes - 1)) != 0) {
      module.emitError() << "attn-lower-subgroup-reduce expects a power of "
                            "two subgroup-size, got "
                         << *lanes;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateGpuBreakDownSubgroupReducePatterns(patterns, kShuffleBitwidth);
    populateGpuLowerSubgroupReduceToShufflePatterns(
        patterns, static_cast<unsigned>(*lanes), kShuffleBitwidth);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // gpu.subgroup_id, which convert-gpu-to-nvvm does not lower either: the
    // linear thread id over the warp size (upstream's rewrite of it leaves a
    // gpu.subgroup_size that NVVM does not lower).
    module.walk([&](gpu::SubgroupIdOp op) {
      ImplicitLocOpBuilder b(op.getLoc(), op);
      auto tid = [&](gpu::Dimension d) {
        return b.create<gpu::ThreadIdOp>(d).getResult();
      };
      auto dim = [&](gpu::Dimension d) {
        return b.create<gpu::BlockDimOp>(d).getResult();
      };
      Value linear = b.create<arith::AddIOp>(
          tid(gpu::Dimension::x),
          b.create<arith::MulIOp>(
              dim(gpu::Dimension::x),
              b.create<arith::AddIOp>(
                  tid(gpu::Dimension::y),
                  b.create<arith::MulIOp>(dim(gpu::Dimension::y),
                                          tid(gpu::Dimension::z)))));
      Value id = b.create<arith::DivUIOp>(
          linear, b.create<arith::ConstantIndexOp>(*lanes));
      op.replaceAllUsesWith(id);
      op.erase();
    });
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      if (failed(applyPatternsGreedily(kernels, frozen)))
        return signalPassFailure();
    WalkResult left = module.walk([](gpu::SubgroupReduceOp op) {
      op.emitError() << "cannot expand this subgroup reduction into shuffles";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

/// A thread's registers on every NVIDIA GPU since sm_30, and the register
/// file of an SM (64 K) over them: the largest workgroup that may use all.
constexpr int64_t kMaxRegisters = 255;
constexpr int64_t kFullBudgetInvocations = 256;

struct NVVMRegisterBudgetPass
    : public attn::impl::AttnNVVMRegisterBudgetBase<NVVMRegisterBudgetPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](gpu::GPUFuncOp fn) {
      std::optional<ArrayRef<int32_t>> size = fn.getKnownBlockSize();
      if (!fn.isKernel() || !size)
        return;
      int64_t invocations = 1;
      for (int32_t d : *size)
        invocations *= d;
      if (invocations <= kFullBudgetInvocations)
        fn->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    b.getI32IntegerAttr(kMaxRegisters));
    });
  }
};

} // namespace

std::string attn::findCUDAToolkit() {
  SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (std::optional<std::string> dir = llvm::sys::Process::GetEnv(var))
      candidates.push_back(*dir);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates) {
    SmallString<256> libdevice(dir);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return dir;
  }
  return "";
}

void attn::buildGPUToPTXPipeline(OpPassManager &pm,
                                 const GPUToPTXPipelineOptions &options) {
  pm.addPass(createAttnLowerSubgroupReduce({kNVIDIAWarpSize}));
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createAttnNVVMFp8Convert());
  pm.addPass(createAttnNVVMRegisterBudget());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  // Upstream's default memref calling convention: the bare-pointer one
  // rejects the kernels' dynamically sized memref<?xT> arguments.
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (!options.emitBinary)
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = findCUDAToolkit();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

std::string attn::ptxFeaturesForChip(StringRef chip) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, sm))
    return "+ptx80";
  // sm_89's fp8 conversions (attn-nvvm-fp8-convert) need PTX ISA 8.1.
  if (sm == 89)
    return "+ptx81";
  if (sm < 100)
    return "+ptx80";
  if (sm <= 101)
    return "+ptx86";
  if (sm == 120)
    return "+ptx87";
  return "+ptx88";
}

void attn::registerGPUToPTXDependencies(DialectRegistry &registry) {
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

FailureOr<SmallVector<PTXKernel>>
attn::translateKernelsToPTX(ModuleOp module, StringRef chip,
                            StringRef features) {
  DialectRegistry registry;
  registerGPUToPTXDependencies(registry);
  module.getContext()->appendDialectRegistry(registry);

  // gpu-module-to-binary replaces each gpu.module by a gpu.binary of the
  // same name; remember which kernel each one held.
  llvm::StringMap<std::string> entryOfModule;
  for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
    SmallVector<gpu::GPUFuncOp> funcs;
    for (auto fn : kernels.getOps<gpu::GPUFuncOp>())
      if (fn.isKernel())
        funcs.push_back(fn);
    if (funcs.size() != 1)
      return kernels.emitError()
             << "expects one kernel per gpu.module, got " << funcs.size();
    entryOfModule[kernels.getName()] = funcs.front().getName().str();
  }

  PassManager pm(module.getContext());
  GPUToPTXPipelineOptions options;
  options.chip = chip.str();
  options.features = features.str();
  buildGPUToPTXPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();

  SmallVector<PTXKernel> kernels;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    auto entry = entryOfModule.find(binary.getName());
    if (entry == entryOfModule.end())
      return binary.emitError() << "matches no kernel module";
    ArrayRef<Attribute> objects = binary.getObjects().getValue();
    if (objects.size() != 1)
      return binary.emitError()
             << "expects one object (one NVVM target), got " << objects.size();
    auto object = cast<gpu::ObjectAttr>(objects.front());
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError() << "expects a PTX (assembly) object";
    StringRef ptx = object.getObject().getValue();
    // convert-gpu-to-nvvm calls libdevice for math (__nv_exp2f, ...), which
    // gpu-module-to-binary links from the CUDA toolkit when it finds one; a
    // call left unresolved would only fail when the driver loads the PTX.
    if (size_t at = ptx.find(".extern .func"); at != StringRef::npos)
      return binary.emitError()
             << "the PTX of kernel " << entry->second
             << " calls an undefined function ("
             << ptx.substr(at, ptx.find('(', at) - at)
             << "): libdevice was not linked; point CUDA_HOME at a CUDA "
                "toolkit (its nvvm/libdevice/libdevice.10.bc)";
    kernels.push_back({entry->second, ptx.str()});
  }
  return kernels;
}
