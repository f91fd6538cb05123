//===- GPUKernelsToCPU.cpp - Single-invocation kernels as CPU functions ---===//
//
// convert-gpu-kernels-to-cpu: a kernel of one invocation per workgroup and
// subgroups of one lane computes on one thread exactly what it computes on a
// GPU, so its body carries over unchanged once the GPU ids, reductions and
// barriers take their one-invocation values. See lowering/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTGPUKERNELSTOCPU
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// `type` without a GPU memory space (workgroup, private): host memory.
Type withoutGPUMemorySpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref ||
      !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// Replaces the GPU ops of `func`'s body by their one-invocation values;
/// `workItem` holds the x, y, z arguments. Fails on a GPU op that has no
/// such value.
LogicalResult replaceGPUOps(func::FuncOp func, ArrayRef<Value> workItem) {
  OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
  Value zero = arith::ConstantIndexOp::create(builder, func.getLoc(), 0);
  WalkResult walked = func.walk([&](Operation *op) -> WalkResult {
    if (!isa_and_nonnull<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::advance();
    builder.setInsertionPoint(op);
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      op->getResult(0).replaceAllUsesWith(
          workItem[static_cast<unsigned>(id.getDimension())]);
    } else if (isa<gpu::ThreadIdOp, gpu::LaneIdOp>(op)) {
      op->getResult(0).replaceAllUsesWith(zero);
    } else if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op)) {
      op->getResult(0).replaceAllUsesWith(reduce.getValue());
    } else if (isa<gpu::BarrierOp>(op)) {
      // One invocation: nothing to wait for.
    } else if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(builder, op->getLoc());
    } else {
      return mlir::emitError(op->getLoc())
             << op->getName()
             << " has no single-invocation form for the cpu target";
    }
    op->erase();
    return WalkResult::skip();
  });
  return failure(walked.wasInterrupted());
}

/// The CPU function of `kernel`, created before `gpuModule`.
FailureOr<func::FuncOp> convertKernel(gpu::GPUFuncOp kernel,
                                      gpu::GPUModuleOp gpuModule) {
  if (std::optional<ArrayRef<int32_t>> block = kernel.getKnownBlockSize();
      !block || llvm::any_of(*block, [](int32_t n) { return n != 1; }))
    return mlir::emitError(kernel.getLoc())
           << "kernel @" << kernel.getName()
           << " needs one invocation per workgroup (known_block_size 1, 1, 1) "
              "for the cpu target";
  MLIRContext *context = kernel.getContext();
  Type index = IndexType::get(context);
  SmallVector<Type> inputs(3, index);
  llvm::append_range(inputs, kernel.getArgumentTypes());
  OpBuilder builder(gpuModule);
  auto func = func::FuncOp::create(builder, kernel.getLoc(), kernel.getName(),
                                   FunctionType::get(context, inputs, {}));
  func->setAttr(mlir::attn::kCpuKernelAttr, UnitAttr::get(context));
  // What attn's tools read of a kernel (attn.op, attn.params, ...).
  for (NamedAttribute attr : kernel->getAttrs())
    if (attr.getName().getValue().starts_with("attn."))
      func->setAttr(attr.getName(), attr.getValue());

  Region &body = func.getBody();
  body.takeBody(kernel.getBody());
  Block &entry = body.front();
  SmallVector<Value> workItem;
  for (int i = 0; i < 3; ++i)
    workItem.push_back(entry.insertArgument(i, index, kernel.getLoc()));
  // Attributions follow the arguments: stack memory of the work item.
  unsigned first = 3 + kernel.getNumArguments();
  builder.setInsertionPointToStart(&entry);
  while (entry.getNumArguments() > first) {
    BlockArgument arg = entry.getArgument(first);
    auto type = cast<MemRefType>(withoutGPUMemorySpace(arg.getType()));
    Value alloca = memref::AllocaOp::create(builder, arg.getLoc(), type);
    arg.replaceAllUsesWith(alloca);
    entry.eraseArgument(first);
  }
  if (failed(replaceGPUOps(func, workItem)))
    return failure();
  // Values that lived in workgroup memory now live on the stack. Vector
  // accesses keep only their element's alignment: a GPU buffer starts at
  // a 16-byte boundary or more, but host memory a CPU kernel reads may be
  // a framework's tensor or a view into one (x86's aligned vector loads
  // fault on anything less).
  func.walk([](Operation *op) {
    if (isa<vector::LoadOp, vector::StoreOp>(op))
      op->removeAttr("alignment");
    for (Value result : op->getResults())
      result.setType(withoutGPUMemorySpace(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(withoutGPUMemorySpace(arg.getType()));
  });
  return func;
}

struct ConvertGPUKernelsToCPUPass
    : public mlir::attn::impl::ConvertGPUKernelsToCPUBase<
          ConvertGPUKernelsToCPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult launches = module.walk([](gpu::LaunchFuncOp launch) {
      mlir::emitError(launch.getLoc())
          << "gpu.launch_func in the input: convert-gpu-kernels-to-cpu "
             "takes a module of kernels only";
      return WalkResult::interrupt();
    });
    if (launches.wasInterrupted())
      return signalPassFailure();
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      if (!gpuModule->hasAttr("attn.kernels"))
        continue;
      auto size = gpuModule->getAttrOfType<IntegerAttr>(
          mlir::attn::kBuiltSubgroupSizeAttr);
      if (!size || size.getInt() != 1) {
        mlir::emitError(gpuModule.getLoc())
            << "gpu.module @" << gpuModule.getName()
            << " holds kernels built for subgroup size "
            << (size ? size.getInt() : 0)
            << "; the cpu target runs kernels of subgroup size 1";
        return signalPassFailure();
      }
      for (auto kernel :
           llvm::make_early_inc_range(gpuModule.getOps<gpu::GPUFuncOp>()))
        if (failed(convertKernel(kernel, gpuModule)))
          return signalPassFailure();
      gpuModule.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
