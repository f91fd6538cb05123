//===- CPUEntryPoints.cpp - The C entry point of each CPU kernel ----------===//
//
// attn-cpu-entry-points: the bridge between upstream's memref calling
// convention, which the kernel bodies keep, and the one C signature the
// CPU device calls (core/CpuKernel.h). See lowering/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "core/CpuKernel.h"
#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCPUENTRYPOINTS
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// Memref descriptors of a 1-D memref, as upstream's conversion expands
/// them: allocated pointer, aligned pointer, offset, size, stride.
constexpr unsigned kDescriptorValues = 5;

/// Checks that `body` takes (i64 x3, then 1-D memref descriptors) and
/// returns how many buffers it takes.
FailureOr<unsigned> countBuffers(LLVM::LLVMFuncOp body) {
  ArrayRef<Type> params = body.getFunctionType().getParams();
  auto bad = [&]() {
    return mlir::emitError(body.getLoc())
           << "cpu kernel @" << body.getName()
           << " must take three i64 work item indices and then 1-D memrefs "
              "(pointer, pointer, i64 offset, size, stride each)";
  };
  if (params.size() < 3 || (params.size() - 3) % kDescriptorValues != 0)
    return bad();
  for (unsigned i = 0; i < params.size(); ++i) {
    unsigned slot = i < 3 ? 2 : (i - 3) % kDescriptorValues;
    bool pointer = slot < 2;
    if (pointer ? !isa<LLVM::LLVMPointerType>(params[i])
                : !params[i].isInteger(64))
      return bad();
  }
  return (params.size() - 3) / kDescriptorValues;
}

/// Emits the external entry named `name` that calls `body`.
void buildEntry(OpBuilder &builder, LLVM::LLVMFuncOp body, StringRef name,
                unsigned buffers) {
  MLIRContext *context = builder.getContext();
  Location loc = body.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = IntegerType::get(context, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                          {ptr, ptr, ptr});
  auto entry = LLVM::LLVMFuncOp::create(builder, loc, name, type);
  Block *block = entry.addEntryBlock(builder);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(block);
  Value workItem = block->getArgument(0), pointers = block->getArgument(1),
        elements = block->getArgument(2);
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(builder, loc, i64, v);
  };
  // base[i] as `element` (a pointer or an i64).
  auto load = [&](Value base, int64_t i, Type element) -> Value {
    Value at =
        LLVM::GEPOp::create(builder, loc, ptr, element, base,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    return LLVM::LoadOp::create(builder, loc, element, at);
  };
  SmallVector<Value> args;
  for (int64_t d = 0; d < 3; ++d)
    args.push_back(load(workItem, d, i64));
  Value zero = constant(0), one = constant(1);
  for (unsigned i = 0; i < buffers; ++i) {
    Value p = load(pointers, i, ptr);
    args.append({p, p, zero, load(elements, i, i64), one});
  }
  LLVM::CallOp::create(builder, loc, body, args);
  LLVM::ReturnOp::create(builder, loc, ValueRange());
}

struct AttnCPUEntryPointsPass
    : public mlir::attn::impl::AttnCPUEntryPointsBase<AttnCPUEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(mlir::attn::kCpuKernelAttr))
        kernels.push_back(func);
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    for (LLVM::LLVMFuncOp body : kernels) {
      FailureOr<unsigned> buffers = countBuffers(body);
      if (failed(buffers))
        return signalPassFailure();
      std::string name = body.getName().str();
      body.setSymName(name + ".work_item");
      body.setLinkage(LLVM::Linkage::Internal);
      body->removeAttr(mlir::attn::kCpuKernelAttr);
      buildEntry(builder, body, name, *buffers);
    }
    if (kernels.empty() || module.lookupSymbol(::attn::kCpuKernelAbiSymbol))
      return;
    Type i32 = IntegerType::get(context, 32);
    LLVM::GlobalOp::create(builder, module.getLoc(), i32, /*isConstant=*/true,
                           LLVM::Linkage::External, ::attn::kCpuKernelAbiSymbol,
                           builder.getI32IntegerAttr(::attn::kCpuKernelAbi));
  }
};

} // namespace
