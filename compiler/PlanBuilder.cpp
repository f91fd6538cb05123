//===- PlanBuilder.cpp - Host function -> runtime plan -------------------===//

#include "compiler/PlanBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using ::attn::runtime::Plan;
using ::attn::runtime::PlanOp;
using ::attn::runtime::PlanOpKind;
using ::attn::runtime::PlanTensorType;

std::optional<::attn::DType> mlir::attn::planElementType(Type t) {
  if (t.isF32())
    return ::attn::DType::F32;
  if (t.isF16())
    return ::attn::DType::F16;
  if (t.isBF16())
    return ::attn::DType::BF16;
  if (isa<Float8E4M3FNType>(t))
    return ::attn::DType::F8E4M3FN;
  if (isa<Float8E5M2Type>(t))
    return ::attn::DType::F8E5M2;
  if (t.isSignlessInteger(32))
    return ::attn::DType::I32;
  if (t.isSignlessInteger(64))
    return ::attn::DType::I64;
  return std::nullopt;
}

Type mlir::attn::elementTypeOf(::attn::DType dtype, MLIRContext *context) {
  Builder b(context);
  switch (dtype) {
  case ::attn::DType::F32:
    return b.getF32Type();
  case ::attn::DType::F16:
    return b.getF16Type();
  case ::attn::DType::BF16:
    return b.getBF16Type();
  case ::attn::DType::F8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case ::attn::DType::F8E5M2:
    return b.getType<Float8E5M2Type>();
  case ::attn::DType::I32:
    return b.getIntegerType(32);
  case ::attn::DType::I64:
    return b.getIntegerType(64);
  }
  llvm_unreachable("unknown dtype");
}

namespace {

FailureOr<PlanTensorType> toPlanType(Location loc, Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return emitError(loc) << "plans pass buffers only, got " << type;
  std::optional<::attn::DType> dtype =
      mlir::attn::planElementType(memref.getElementType());
  if (!dtype)
    return emitError(loc) << "no runtime element type for "
                          << memref.getElementType();
  PlanTensorType t{*dtype, {}};
  for (int64_t d : memref.getShape())
    t.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return t;
}

class PlanBuilder {
public:
  explicit PlanBuilder(func::FuncOp func) : func(func) {}

  FailureOr<Plan> run() {
    plan.function = func.getSymName().str();
    for (BlockArgument arg : func.getArguments()) {
      FailureOr<PlanTensorType> t = toPlanType(arg.getLoc(), arg.getType());
      if (failed(t))
        return failure();
      plan.arguments.push_back(*t);
      slots[arg] = nextSlot++;
    }
    for (Type result : func.getResultTypes()) {
      FailureOr<PlanTensorType> t = toPlanType(func.getLoc(), result);
      if (failed(t))
        return failure();
      plan.results.push_back(*t);
    }
    if (!func.getBody().hasOneBlock())
      return func.emitError() << "plans need a single-block host function";
    for (Operation &op : func.getBody().front())
      if (failed(visit(&op)))
        return failure();
    plan.numSlots = nextSlot;
    if (::attn::Status s = plan.verify(); !s)
      return func.emitError() << "internal error, invalid plan: "
                              << s.message();
    return plan;
  }

private:
  int32_t fresh() { return nextSlot++; }

  int32_t add(PlanOp op) {
    plan.ops.push_back(std::move(op));
    return plan.ops.back().result;
  }

  /// A new slot holding `v`, for one use. Constants are not shared between
  /// uses, so that two variants whose constants differ only in value (a head
  /// count that happens to equal a block size in one of them) get plans of
  /// the same shape, which a bundle's manifest writes once.
  int32_t constant(int64_t v) {
    PlanOp op;
    op.kind = PlanOpKind::Const;
    op.result = fresh();
    op.imm = v;
    return add(op);
  }

  int32_t dimOf(int32_t buffer, int64_t index) {
    PlanOp op;
    op.kind = PlanOpKind::Dim;
    op.result = fresh();
    op.operands = {buffer};
    op.imm = index;
    return add(op);
  }

  int32_t binary(PlanOpKind kind, int32_t a, int32_t b) {
    PlanOp op;
    op.kind = kind;
    op.result = fresh();
    op.operands = {a, b};
    return add(op);
  }

  FailureOr<int32_t> slotOf(Operation *user, Value v) {
    if (auto c = constantValues.find(v); c != constantValues.end())
      return constant(c->second);
    auto it = slots.find(v);
    if (it == slots.end())
      return user->emitOpError() << "uses a value a plan cannot compute";
    return it->second;
  }

  /// Static dims become constants, dynamic dims the given slots in order.
  SmallVector<int32_t> shapeSlots(MemRefType type, ArrayRef<int32_t> dynamic) {
    SmallVector<int32_t> shape;
    size_t next = 0;
    for (int64_t d : type.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? dynamic[next++] : constant(d));
    return shape;
  }

  LogicalResult alias(Value result, Value source, Operation *op) {
    if (auto c = constantValues.find(source); c != constantValues.end()) {
      constantValues[result] = c->second;
      return success();
    }
    FailureOr<int32_t> s = slotOf(op, source);
    if (failed(s))
      return failure();
    slots[result] = *s;
    return success();
  }

  LogicalResult view(Value result, int32_t source, ArrayRef<int32_t> shape) {
    PlanOp op;
    op.kind = PlanOpKind::View;
    op.result = fresh();
    op.operands.push_back(source);
    op.operands.insert(op.operands.end(), shape.begin(), shape.end());
    slots[result] = add(op);
    return success();
  }

  /// The slots of `values`, in order.
  FailureOr<SmallVector<int32_t>> slotsOf(Operation *user, ValueRange values) {
    SmallVector<int32_t> result;
    for (Value v : values) {
      FailureOr<int32_t> s = slotOf(user, v);
      if (failed(s))
        return failure();
      result.push_back(*s);
    }
    return result;
  }

  LogicalResult visit(Operation *op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](arith::ConstantOp c) { return visitConstant(c); })
        .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
              arith::ExtUIOp, arith::TruncIOp>([&](Operation *cast) {
          // Sizes are small non-negative integers: every integer cast keeps
          // their value.
          return alias(cast->getResult(0), cast->getOperand(0), cast);
        })
        .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
              arith::DivSIOp, arith::RemUIOp, arith::RemSIOp,
              arith::CeilDivUIOp, arith::CeilDivSIOp, arith::MinUIOp,
              arith::MaxUIOp, arith::MinSIOp, arith::MaxSIOp>(
            [&](Operation *bin) { return visitBinary(bin); })
        .Case([&](memref::DimOp dim) { return visitDim(dim); })
        .Case<memref::AllocOp, memref::AllocaOp>(
            [&](Operation *alloc) { return visitAlloc(alloc); })
        .Case([&](memref::CastOp cast) {
          return alias(cast.getResult(), cast.getSource(), cast);
        })
        .Case([&](arith::BitcastOp cast) { return visitBitcast(cast); })
        .Case([&](memref::CollapseShapeOp collapse) {
          return visitCollapseShape(collapse);
        })
        .Case([&](memref::ExpandShapeOp expand) {
          return visitExpandShape(expand);
        })
        .Case([&](memref::StoreOp store) { return visitStore(store); })
        .Case([&](gpu::LaunchFuncOp launch) { return visitLaunch(launch); })
        .Case([&](memref::DeallocOp) { return success(); })
        .Case([&](func::ReturnOp ret) { return visitReturn(ret); })
        .Default([](Operation *other) {
          return other->emitOpError()
                 << "cannot be expressed in a launch plan (host functions "
                    "may hold size arithmetic, allocations, views, stores "
                    "and gpu.launch_func only)";
        });
  }

  //===--------------------------------------------------------------------===//
  // Size arithmetic
  //===--------------------------------------------------------------------===//

  LogicalResult visitConstant(arith::ConstantOp c) {
    auto attr = dyn_cast<IntegerAttr>(c.getValue());
    if (!attr)
      return c.emitOpError() << "only integer constants reach plans";
    constantValues[c.getResult()] = attr.getValue().getSExtValue();
    return success();
  }

  /// The plan op of an arith binary op: signed and unsigned forms are one
  /// op, as sizes are never negative.
  static PlanOpKind binaryKind(Operation *bin) {
    return llvm::TypeSwitch<Operation *, PlanOpKind>(bin)
        .Case<arith::AddIOp>([](auto) { return PlanOpKind::Add; })
        .Case<arith::SubIOp>([](auto) { return PlanOpKind::Sub; })
        .Case<arith::MulIOp>([](auto) { return PlanOpKind::Mul; })
        .Case<arith::DivUIOp, arith::DivSIOp>(
            [](auto) { return PlanOpKind::DivU; })
        .Case<arith::RemUIOp, arith::RemSIOp>(
            [](auto) { return PlanOpKind::RemU; })
        .Case<arith::CeilDivUIOp, arith::CeilDivSIOp>(
            [](auto) { return PlanOpKind::CeilDivU; })
        .Case<arith::MinUIOp, arith::MinSIOp>(
            [](auto) { return PlanOpKind::MinU; })
        .Default([](auto) { return PlanOpKind::MaxU; });
  }

  LogicalResult visitBinary(Operation *bin) {
    FailureOr<int32_t> a = slotOf(bin, bin->getOperand(0));
    FailureOr<int32_t> b = slotOf(bin, bin->getOperand(1));
    if (failed(a) || failed(b))
      return failure();
    slots[bin->getResult(0)] = binary(binaryKind(bin), *a, *b);
    return success();
  }

  LogicalResult visitDim(memref::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return dim.emitOpError() << "needs a constant dimension in a plan";
    FailureOr<int32_t> source = slotOf(dim, dim.getSource());
    if (failed(source))
      return failure();
    slots[dim.getResult()] = dimOf(*source, *index);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Buffers and views
  //===--------------------------------------------------------------------===//

  /// memref.alloc and memref.alloca.
  LogicalResult visitAlloc(Operation *alloc) {
    auto type = cast<MemRefType>(alloc->getResult(0).getType());
    std::optional<::attn::DType> dtype =
        mlir::attn::planElementType(type.getElementType());
    if (!dtype)
      return alloc->emitOpError() << "allocates " << type.getElementType()
                                  << ", which the runtime has no type for";
    FailureOr<SmallVector<int32_t>> dynamic =
        slotsOf(alloc, alloc->getOperands());
    if (failed(dynamic))
      return failure();
    PlanOp a;
    a.kind = PlanOpKind::Alloc;
    a.dtype = *dtype;
    SmallVector<int32_t> shape = shapeSlots(type, *dynamic);
    a.operands.assign(shape.begin(), shape.end());
    // After the shape, whose constants take slots too.
    a.result = fresh();
    slots[alloc->getResult(0)] = add(a);
    return success();
  }

  LogicalResult visitBitcast(arith::BitcastOp cast) {
    // bf16 buffers handed to kernels as i16 words: same bytes.
    if (!isa<MemRefType>(cast.getType()))
      return cast.emitOpError() << "only buffer bitcasts reach plans";
    return alias(cast.getResult(), cast.getIn(), cast);
  }

  LogicalResult visitCollapseShape(memref::CollapseShapeOp collapse) {
    FailureOr<int32_t> source = slotOf(collapse, collapse.getSrc());
    if (failed(source))
      return failure();
    SmallVector<int32_t> shape;
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      int32_t size = dimOf(*source, group.front());
      for (int64_t d : ArrayRef(group).drop_front())
        size = binary(PlanOpKind::Mul, size, dimOf(*source, d));
      shape.push_back(size);
    }
    return view(collapse.getResult(), *source, shape);
  }

  LogicalResult visitExpandShape(memref::ExpandShapeOp expand) {
    FailureOr<int32_t> source = slotOf(expand, expand.getSrc());
    if (failed(source))
      return failure();
    FailureOr<SmallVector<int32_t>> dynamic =
        slotsOf(expand, expand.getOutputShape());
    if (failed(dynamic))
      return failure();
    return view(expand.getResult(), *source,
                shapeSlots(expand.getResultType(), *dynamic));
  }

  LogicalResult visitStore(memref::StoreOp store) {
    if (store.getIndices().size() != 1)
      return store.emitOpError() << "plans store into 1-D buffers only";
    FailureOr<int32_t> buffer = slotOf(store, store.getMemRef());
    FailureOr<int32_t> index = slotOf(store, store.getIndices()[0]);
    FailureOr<int32_t> value = slotOf(store, store.getValue());
    if (failed(buffer) || failed(index) || failed(value))
      return failure();
    PlanOp s;
    s.kind = PlanOpKind::Store;
    s.operands = {*buffer, *index, *value};
    add(s);
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Launches and the return
  //===--------------------------------------------------------------------===//

  LogicalResult visitLaunch(gpu::LaunchFuncOp launch) {
    PlanOp l;
    l.kind = PlanOpKind::Launch;
    l.kernel = (launch.getKernelModuleName().getValue() +
                "::" + launch.getKernelName().getValue())
                   .str();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    FailureOr<SmallVector<int32_t>> gridSlots =
        slotsOf(launch, {grid.x, grid.y, grid.z});
    if (failed(gridSlots))
      return failure();
    l.operands.assign(gridSlots->begin(), gridSlots->end());
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    int i = 0;
    for (Value b : {block.x, block.y, block.z}) {
      APInt value;
      if (!matchPattern(b, m_ConstantInt(&value)))
        return launch.emitOpError()
               << "needs a constant workgroup size in a plan";
      l.block[i++] = value.getSExtValue();
    }
    for (Value arg : launch.getKernelOperands()) {
      if (!isa<MemRefType>(arg.getType()))
        return launch.emitOpError() << "passes " << arg.getType()
                                    << "; attn kernels take buffers only";
      FailureOr<int32_t> s = slotOf(launch, arg);
      if (failed(s))
        return failure();
      l.operands.push_back(*s);
    }
    add(l);
    return success();
  }

  LogicalResult visitReturn(func::ReturnOp ret) {
    FailureOr<SmallVector<int32_t>> results = slotsOf(ret, ret.getOperands());
    if (failed(results))
      return failure();
    PlanOp r;
    r.kind = PlanOpKind::Return;
    r.operands.assign(results->begin(), results->end());
    add(r);
    return success();
  }

  func::FuncOp func;
  Plan plan;
  int32_t nextSlot = 0;
  llvm::DenseMap<Value, int32_t> slots;
  /// Integer constants of the host function; each use gets its own slot.
  llvm::DenseMap<Value, int64_t> constantValues;
};

} // namespace

FailureOr<Plan> mlir::attn::buildPlan(func::FuncOp func) {
  return PlanBuilder(func).run();
}
