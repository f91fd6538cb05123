//===- AttnToGPU.cpp - The convert-attn-to-gpu pass -----------------------===//
//
// Collects the attn ops of every function, checks that they are bufferized
// and that their operands can be flattened (identity layouts), and hands
// each to its kernel builder (PagedAttention.cpp, ReshapeAndCache.cpp,
// MergeStates.cpp, MlaDecode.cpp). Each kernel gets its own `gpu.module`; attn.metadata ops left without users are erased.
//
//===----------------------------------------------------------------------===//

#include "lowering/AttnToGPU/Lowerings.h"
#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The most invocations a workgroup of these kernels may have (CUDA's
/// limit; Vulkan devices may allow fewer, down to 128).
constexpr int64_t kMaxWorkgroupSize = 1024;

/// Upstream's RegionBranchOpInterface canonicalizations, by debug name.
const std::string kQuadraticCanonicalizations[] = {
    "(anonymous namespace)::MakeRegionBranchOpSuccessorInputsDead",
    "(anonymous namespace)::RemoveDeadRegionBranchOpSuccessorInputs",
    "(anonymous namespace)::RemoveDuplicateSuccessorInputUses",
};

/// Operands must be memrefs with an identity layout: the host flattens them
/// with one collapse_shape and the kernel indexes them row-major.
LogicalResult checkOperands(Operation *op) {
  for (Value v : op->getOperands()) {
    if (isa<TensorType>(v.getType()))
      return op->emitOpError()
             << "expects memref operands; bufferize before "
                "convert-attn-to-gpu";
    auto type = dyn_cast<MemRefType>(v.getType());
    if (type && !type.getLayout().isIdentity())
      return op->emitOpError()
             << "expects operands with an identity layout, got " << type
             << " (bufferize with "
                "function-boundary-type-conversion=identity-layout-map)";
  }
  return success();
}

struct ConvertAttnToGPUPass
    : public mlir::attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using Base::Base;

  /// Checks each option on its own, naming it and its value. Reported at the
  /// module's location without the module itself: the problem is the
  /// command line, not the IR.
  LogicalResult checkOptions(Location loc) {
    auto bad = [&](StringRef option, int64_t value, StringRef expected) {
      mlir::emitError(loc) << "convert-attn-to-gpu: option " << option << "="
                           << value << " is invalid: expected " << expected;
      return failure();
    };
    if (subgroupSize <= 0 || (subgroupSize & (subgroupSize - 1)) != 0)
      return bad("subgroup-size", subgroupSize, "a power of two");
    if (vectorWidth <= 0)
      return bad("vector-width", vectorWidth, "a positive number");
    if (maxWorkgroupMemory <= 0)
      return bad("max-workgroup-memory", maxWorkgroupMemory,
                 "a positive number of bytes");
    if (matrixWorkgroupMemory < 0)
      return bad("matrix-workgroup-memory", matrixWorkgroupMemory,
                 ">= 0 (0: max-workgroup-memory)");
    if (attentionSubgroups <= 0)
      return bad("attention-subgroups", attentionSubgroups,
                 "a positive number");
    if (workgroupSize < 0)
      return bad("workgroup-size", workgroupSize, ">= 0 (0: the subgroup size)");
    if (vectorLoadBytes < 0)
      return bad("vector-load-bytes", vectorLoadBytes, ">= 0 (0: scalar)");
    if (splitKv < 0)
      return bad("split-kv", splitKv, ">= 0 (0: choose)");
    if (laneRegisters <= 0)
      return bad("lane-registers", laneRegisters, "a positive number");
    if (decodeThreshold < -1)
      return bad("decode-threshold", decodeThreshold,
                 ">= -1 (-1: the backend's threshold)");
    if (rowVectors && (subgroupSize != 1 || attentionSubgroups != 1)) {
      mlir::emitError(loc) << "convert-attn-to-gpu: option row-vectors needs "
                              "subgroup-size=1 and attention-subgroups=1, got "
                           << subgroupSize << " and " << attentionSubgroups;
      return failure();
    }
    // Vulkan guarantees 128 invocations per workgroup, CUDA allows 1024.
    if (attentionSubgroups * subgroupSize > kMaxWorkgroupSize) {
      mlir::emitError(loc) << "convert-attn-to-gpu: attention-subgroups x "
                              "subgroup-size = "
                           << attentionSubgroups * subgroupSize
                           << " invocations per workgroup, more than "
                           << kMaxWorkgroupSize;
      return failure();
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module.getLoc())))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<PagedAttentionOp, ReshapeAndCacheOp, MergeStatesOp,
              MlaDecodeOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;

    LoweringContext ctx;
    ctx.options.subgroupSize = subgroupSize;
    ctx.options.workgroupSize = workgroupSize;
    ctx.options.maxWorkgroupMemory = maxWorkgroupMemory;
    ctx.options.vectorWidth = vectorWidth;
    ctx.options.vectorLoadBytes = vectorLoadBytes;
    ctx.options.attentionSubgroups = attentionSubgroups;
    ctx.options.bf16AsI16 = bf16AsI16;
    ctx.options.splitKv = splitKv;
    ctx.options.laneRegisters = laneRegisters;
    ctx.options.tiledPrefill = tiledPrefill;
    ctx.options.decodeThreshold = decodeThreshold;
    ctx.options.rowVectors = rowVectors;
    ctx.options.fp8ViaF16 = fp8ViaF16;
    ctx.options.fp8Calls = fp8Calls;
    std::optional<PrefillMatrix> matrix =
        llvm::StringSwitch<std::optional<PrefillMatrix>>(prefillMatrix)
            .Case("none", PrefillMatrix::None)
            .Case("subgroup-mma", PrefillMatrix::SubgroupMma)
            .Case("auto", PrefillMatrix::Auto)
            .Case("emulate", PrefillMatrix::Emulate)
            .Default(std::nullopt);
    if (!matrix) {
      mlir::emitError(module.getLoc())
          << "convert-attn-to-gpu: option prefill-matrix=" << prefillMatrix
          << " is invalid: expected none, subgroup-mma, auto or emulate";
      return signalPassFailure();
    }
    ctx.options.prefillMatrix = *matrix;
    ctx.options.matrixWorkgroupMemory = matrixWorkgroupMemory;

    ctx.module = module;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));

    for (Operation *op : ops) {
      if (failed(checkOperands(op)))
        return signalPassFailure();
      LogicalResult lowered =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](PagedAttentionOp o) {
                return lowerPagedAttention(o, ctx);
              })
              .Case([&](ReshapeAndCacheOp o) {
                return lowerReshapeAndCache(o, ctx);
              })
              .Case([&](MergeStatesOp o) { return lowerMergeStates(o, ctx); })
              .Case([&](MlaDecodeOp o) { return lowerMlaDecode(o, ctx); });
      if (failed(lowered))
        return signalPassFailure();
      op->erase();
    }
    module.walk([&](MetadataOp md) {
      if (md->use_empty())
        md->erase();
    });
    if (ctx.options.fp8Calls)
      defineFp8Codecs(module, ctx.options);

    // The builders emit index arithmetic naively (a constant per use, one
    // expression per lane element); fold and share it so that the kernels
    // read well and every target starts from the same clean IR. The
    // region-branch patterns that look for dead or duplicate loop-carried
    // values take time quadratic in the number of values a loop carries
    // (thousands in the attention kernels, one per lane register of their
    // state; RemoveDuplicateSuccessorInputUses took most of a minute for
    // H / G = 128) and find none: the builders carry only live state.
    OpPassManager cleanup(gpu::GPUModuleOp::getOperationName());
    cleanup.addPass(createCanonicalizerPass(
        GreedyRewriteConfig(), kQuadraticCanonicalizations));
    cleanup.addPass(createCSEPass());
    for (auto kernels :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      if (!kernels->hasAttr("attn.kernels"))
        continue;
      kernels->setAttr(kBuiltSubgroupSizeAttr,
                       IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                        ctx.options.subgroupSize));
      if (failed(runPipeline(cleanup, kernels)))
        return signalPassFailure();
    }
  }
};

} // namespace
