//===- GPUToSPIRV.cpp - attn's kernels to SPIR-V for Vulkan ---------------===//
//
// Upstream does the conversion; this file supplies what it leaves to the
// user: a Vulkan target environment, the entry-point ABI of each kernel
// (from its known_block_size), math.exp2 (which upstream's math patterns
// skip), the pipeline that strings them together, and serialization.
//
//===----------------------------------------------------------------------===//

#include "lowering/GPUToSPIRV/GPUToSPIRV.h"
#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSPIRVATTACHTARGET
#define GEN_PASS_DEF_CONVERTATTNMATHTOSPIRV
#define GEN_PASS_DEF_ATTNSPIRVWORKGROUPMEMORY
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Vulkan 1.1 (SPIR-V 1.3) with what the kernels use: f16, i16 and i8
/// values, 16-bit storage (f16 / bf16-as-i16 buffers) and 8-bit storage
/// (fp8 caches as bytes), i64 (slot_mapping),
/// subgroup arithmetic (dot products), shuffle and ballot; with
/// `cooperativeMatrix`, SPIR-V 1.6 with SPV_KHR_cooperative_matrix; with
/// `bufferAddresses`, buffers by device address (which makes upstream's
/// conversion choose the PhysicalStorageBuffer64 addressing model).
std::string getTargetEnvText(int64_t subgroupSize, bool cooperativeMatrix,
                             bool bufferAddresses) {
  std::string capabilities =
      "Shader, Float16, Int16, Int8, Int64, StorageBuffer16BitAccess, "
      "StorageBuffer8BitAccess, "
      "GroupNonUniform, GroupNonUniformArithmetic, GroupNonUniformShuffle, "
      "GroupNonUniformBallot";
  std::string extensions =
      "SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, "
      "SPV_KHR_8bit_storage";
  if (bufferAddresses) {
    capabilities += ", PhysicalStorageBufferAddresses";
    extensions += ", SPV_KHR_physical_storage_buffer";
  }
  std::string version = "v1.3", limits;
  // Cooperative matrices (SPV_KHR_cooperative_matrix) need SPIR-V 1.6's
  // Vulkan memory model; the products the kernels use are 16x16x16 of f16
  // into f32, which every device with the extension offers.
  if (cooperativeMatrix) {
    version = "v1.6";
    capabilities += ", CooperativeMatrixKHR, VulkanMemoryModel";
    extensions += ", SPV_KHR_cooperative_matrix, SPV_KHR_vulkan_memory_model";
    limits = ", cooperative_matrix_properties_khr = "
             "[#spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, "
             "k_size = 16, a_type = f16, b_type = f16, c_type = f32, "
             "result_type = f32, acc_sat = false, scope = <Subgroup>>]";
  }
  return "#spirv.target_env<#spirv.vce<" + version + ", [" + capabilities +
         "], [" + extensions +
         "]>, api=Vulkan, #spirv.resource_limits<subgroup_size = " +
         std::to_string(subgroupSize) + limits + ">>";
}

struct AttachTargetPass
    : public attn::impl::AttnSPIRVAttachTargetBase<AttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    FailureOr<int64_t> size =
        resolveSubgroupSize(module, subgroupSize, "attn-spirv-attach-target");
    if (failed(size))
      return signalPassFailure();
    Attribute env = parseAttribute(
        getTargetEnvText(*size, /*cooperativeMatrix=*/false, bufferAddresses),
        ctx);
    if (!env)
      return signalPassFailure();
    module->setAttr(spirv::getTargetEnvAttrName(), env);
    // Kernels on cooperative matrices get the SPIR-V 1.6 environment with
    // the extension; the others stay at 1.3, whose entry points list their
    // Input and Output variables only.
    Attribute coop;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
      if (!usesMatrixProducts(kernels))
        continue;
      if (!coop)
        coop = parseAttribute(getTargetEnvText(*size, true, bufferAddresses),
                              ctx);
      if (!coop)
        return signalPassFailure();
      kernels->setAttr(spirv::getTargetEnvAttrName(), coop);
    }
    WalkResult result = module.walk([&](gpu::GPUFuncOp fn) {
      if (!fn.isKernel() || fn->hasAttr(spirv::getEntryPointABIAttrName()))
        return WalkResult::advance();
      // SPIR-V has no bf16: convert-attn-to-gpu must have passed bf16
      // buffers as 16-bit words, else an upstream conversion fails far
      // from the cause.
      for (Type type : fn.getArgumentTypes())
        if (auto memref = dyn_cast<MemRefType>(type);
            memref && memref.getElementType().isBF16()) {
          fn.emitError() << "has a bf16 buffer argument (" << type
                         << "), which SPIR-V cannot hold: build the kernels "
                            "with convert-attn-to-gpu{bf16-as-i16=true}, as "
                            "the attn-to-spirv pipeline does";
          return WalkResult::interrupt();
        }
      std::optional<ArrayRef<int32_t>> block = fn.getKnownBlockSize();
      if (!block) {
        fn.emitError() << "expects known_block_size on a kernel to give it "
                          "a SPIR-V workgroup size";
        return WalkResult::interrupt();
      }
      fn->setAttr(spirv::getEntryPointABIAttrName(),
                  spirv::getEntryPointABIAttr(ctx, *block));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct WorkgroupMemoryPass
    : public attn::impl::AttnSPIRVWorkgroupMemoryBase<WorkgroupMemoryPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto workgroup =
        spirv::StorageClassAttr::get(ctx, spirv::StorageClass::Workgroup);
    getOperation().walk([&](gpu::GPUFuncOp fn) {
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      if (fn.getNumWorkgroupAttributions() == 0)
        return;
      for (BlockArgument arg : fn.getWorkgroupAttributions()) {
        auto type = cast<MemRefType>(arg.getType());
        auto spirvType = MemRefType::get(type.getShape(),
                                         type.getElementType(),
                                         type.getLayout(), workgroup);
        // Loads and stores take their types from the memref, so the uses
        // need no rewriting.
        Value alloc = memref::AllocOp::create(b, fn.getLoc(), spirvType);
        arg.replaceAllUsesWith(alloc);
      }
      unsigned count = fn.getNumWorkgroupAttributions();
      fn.getBody().front().eraseArguments(
          fn.getFirstWorkgroupAttributionIndex(), count);
      fn->setAttr(fn.getNumWorkgroupAttributionsAttrName(),
                  b.getI64IntegerAttr(0));
    });
  }
};

/// math.exp2 -> GL.Exp2, which upstream's math patterns do not cover.
struct Exp2Pattern : public OpConversionPattern<math::Exp2Op> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(math::Exp2Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "unsupported type");
    rewriter.replaceOpWithNewOp<spirv::GLExp2Op>(op, type,
                                                 adaptor.getOperand());
    return success();
  }
};

struct MathToSPIRVPass
    : public attn::impl::ConvertAttnMathToSPIRVBase<MathToSPIRVPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    for (auto kernels : module.getOps<gpu::GPUModuleOp>()) {
      spirv::TargetEnvAttr env = spirv::lookupTargetEnvOrDefault(kernels);
      std::unique_ptr<ConversionTarget> target =
          SPIRVConversionTarget::get(env);
      SPIRVTypeConverter converter(env);
      RewritePatternSet patterns(ctx);
      populateMathToSPIRVPatterns(converter, patterns);
      patterns.add<Exp2Pattern>(converter, ctx);
      if (failed(applyPartialConversion(kernels, *target,
                                        std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace

bool attn::usesMatrixProducts(Operation *op) {
  return op
      ->walk([](gpu::SubgroupMmaComputeOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// The pipeline up to the kernels' ABI: target environment, workgroup
/// memory, wide loads, math, the conversion, and the bindings of the
/// arguments (spirv-lower-abi-attrs).
static void buildConversion(OpPassManager &pm,
                            const GPUToSPIRVPipelineOptions &options) {
  pm.addPass(createAttnSPIRVAttachTarget(
      {options.subgroupSize, options.bufferAddresses}));
  pm.addPass(createAttnSPIRVWorkgroupMemory());
  pm.addPass(createAttnSPIRVVectorLoads({options.aliasWideLoads}));
  pm.addPass(createConvertAttnMathToSPIRV());
  pm.addPass(createConvertGPUToSPIRVPass());
  pm.nest<spirv::ModuleOp>().addPass(spirv::createSPIRVLowerABIAttributesPass());
}

/// The rest: buffers by address when asked, then the version, capabilities
/// and extensions each spirv.module uses.
static void buildABI(OpPassManager &pm, bool bufferAddresses) {
  OpPassManager &spv = pm.nest<spirv::ModuleOp>();
  if (bufferAddresses)
    spv.addPass(createAttnSPIRVBufferAddresses());
  spv.addPass(spirv::createSPIRVUpdateVCEPass());
}

void attn::buildGPUToSPIRVPipeline(OpPassManager &pm,
                                   const GPUToSPIRVPipelineOptions &options) {
  buildConversion(pm, options);
  buildABI(pm, options.bufferAddresses);
}

/// Serializes each spirv.module of `module`, in order.
static FailureOr<SmallVector<SPIRVKernel>> serializeKernels(ModuleOp module) {
  SmallVector<SPIRVKernel> kernels;
  for (auto spv : module.getOps<spirv::ModuleOp>()) {
    SPIRVKernel kernel;
    auto entries = spv.getOps<spirv::EntryPointOp>();
    if (std::distance(entries.begin(), entries.end()) != 1)
      return spv.emitError() << "expects one entry point per SPIR-V module";
    kernel.entryPoint = (*entries.begin()).getFn().str();
    if (failed(spirv::serialize(spv, kernel.words)))
      return failure();
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

FailureOr<SmallVector<SPIRVKernel>>
attn::translateKernelsToSPIRV(ModuleOp module, bool aliasWideLoads,
                              bool bufferAddresses) {
  PassManager pm(module.getContext());
  buildGPUToSPIRVPipeline(pm, {/*subgroupSize=*/0, aliasWideLoads,
                               bufferAddresses});
  if (failed(pm.run(module)))
    return failure();
  return serializeKernels(module);
}

/// translateKernelsToSPIRVForms for kernels on cooperative matrices: their
/// gpu.modules carry a target environment of their own, which the address
/// form's must replace before the conversion, so each form converts.
static FailureOr<SPIRVForms> translateEachForm(ModuleOp module,
                                               bool aliasWideLoads) {
  OwningOpRef<ModuleOp> copy = module.clone();
  FailureOr<SmallVector<SPIRVKernel>> bound =
      attn::translateKernelsToSPIRV(module, aliasWideLoads, false);
  if (failed(bound))
    return failure();
  FailureOr<SmallVector<SPIRVKernel>> addressed =
      attn::translateKernelsToSPIRV(*copy, aliasWideLoads, true);
  if (failed(addressed))
    return failure();
  return SPIRVForms{std::move(*bound), std::move(*addressed)};
}

FailureOr<SPIRVForms> attn::translateKernelsToSPIRVForms(ModuleOp module,
                                                         bool aliasWideLoads) {
  // The conversion is most of the time and does not depend on the ABI: it
  // runs once, in the binding form's environment; a copy then takes the
  // address form's environment and attn-spirv-buffer-addresses.
  MLIRContext *ctx = module.getContext();
  if (usesMatrixProducts(module))
    return translateEachForm(module, aliasWideLoads);
  FailureOr<int64_t> subgroupSize =
      resolveSubgroupSize(module, 0, "attn-gpu-to-spirv");
  if (failed(subgroupSize))
    return failure();
  PassManager convert(ctx);
  buildConversion(convert, {*subgroupSize, aliasWideLoads,
                            /*bufferAddresses=*/false});
  if (failed(convert.run(module)))
    return failure();
  OwningOpRef<ModuleOp> addressed = module.clone();
  Attribute env = parseAttribute(
      getTargetEnvText(*subgroupSize, /*cooperativeMatrix=*/false,
                       /*bufferAddresses=*/true),
      ctx);
  if (!env)
    return failure();
  (*addressed)->setAttr(spirv::getTargetEnvAttrName(), env);
  SPIRVForms forms;
  for (bool byAddress : {false, true}) {
    ModuleOp form = byAddress ? *addressed : module;
    PassManager pm(ctx);
    buildABI(pm, byAddress);
    if (failed(pm.run(form)))
      return failure();
    FailureOr<SmallVector<SPIRVKernel>> kernels = serializeKernels(form);
    if (failed(kernels))
      return failure();
    (byAddress ? forms.addressed : forms.bound) = std::move(*kernels);
  }
  return forms;
}
