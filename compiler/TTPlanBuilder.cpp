//===- TTPlanBuilder.cpp - A TT function -> runtime plan -----------------===//

#include "compiler/TTPlanBuilder.h"
#include "compiler/PlanBuilder.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;
using ::attn::runtime::Plan;
using ::attn::runtime::PlanOp;
using ::attn::runtime::PlanOpKind;
using ::attn::runtime::PlanTensorType;

namespace {

class TTPlanBuilder {
public:
  explicit TTPlanBuilder(func::FuncOp func) : func(func) {}

  FailureOr<Plan> run() {
    plan.function = func.getSymName().str();
    for (BlockArgument arg : func.getArguments()) {
      FailureOr<PlanTensorType> t = tensorType(arg.getLoc(), arg.getType());
      if (failed(t))
        return failure();
      plan.arguments.push_back(*t);
      slots[arg] = next++;
    }
    for (Type result : func.getResultTypes()) {
      FailureOr<PlanTensorType> t = tensorType(func.getLoc(), result);
      if (failed(t))
        return failure();
      plan.results.push_back(*t);
    }
    if (!func.getBody().hasOneBlock())
      return func.emitError() << "tt plans need a single-block function";
    for (Operation &op : func.getBody().front())
      if (failed(visit(&op)))
        return failure();
    plan.numSlots = next;
    if (::attn::Status s = plan.verify(); !s)
      return func.emitError()
             << "internal error, invalid tt plan: " << s.message();
    return plan;
  }

private:
  FailureOr<PlanTensorType> tensorType(Location loc, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<::attn::DType> dtype =
        tensor ? planElementType(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      return emitError(loc) << "tt plans pass ranked tensors of f32, f16, "
                               "bf16, i32 or i64, got "
                            << type;
    PlanTensorType t{*dtype, {}};
    for (int64_t d : tensor.getShape())
      t.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return t;
  }

  int32_t emit(PlanOpKind kind, std::vector<int32_t> operands, int64_t imm,
               bool hasResult = true) {
    PlanOp op;
    op.kind = kind;
    op.result = hasResult ? next++ : -1;
    op.operands = std::move(operands);
    op.imm = imm;
    plan.ops.push_back(std::move(op));
    return plan.ops.back().result;
  }

  FailureOr<int32_t> slotOf(Operation *user, Value v) {
    auto it = slots.find(v);
    if (it == slots.end())
      return user->emitOpError()
             << "uses a value a tt plan cannot compute (operands must be "
                "function arguments, tensor.empty or attn results)";
    return it->second;
  }

  FailureOr<int32_t> dimOf(Operation *user, Value v, int64_t index) {
    FailureOr<int32_t> s = slotOf(user, v);
    if (failed(s))
      return failure();
    return emit(PlanOpKind::Dim, {*s}, index);
  }

  /// The launch of `op`'s program: grid slots, then buffer slots; `outs`
  /// are written in place and become the op's results.
  LogicalResult launch(Operation *op, ArrayRef<FailureOr<int32_t>> grid,
                       ArrayRef<Value> buffers, ArrayRef<Value> outs) {
    PlanOp l;
    l.kind = PlanOpKind::Launch;
    l.kernel = programName(op);
    l.block = {1, 1, 1};
    for (FailureOr<int32_t> g : grid) {
      if (failed(g))
        return failure();
      l.operands.push_back(*g);
    }
    while (l.operands.size() < 3)
      l.operands.push_back(emit(PlanOpKind::Const, {}, 1));
    for (Value v : buffers) {
      FailureOr<int32_t> s = slotOf(op, v);
      if (failed(s))
        return failure();
      l.operands.push_back(*s);
    }
    for (auto [out, result] : llvm::zip(outs, op->getResults())) {
      if (!out.hasOneUse())
        return op->emitOpError()
               << "writes its outs in place on tt, so each must have no "
                  "other use";
      FailureOr<int32_t> s = slotOf(op, out);
      if (failed(s))
        return failure();
      l.operands.push_back(*s);
      slots[result] = *s;
    }
    if (op->getNumResults() != outs.size())
      return op->emitOpError() << "on memrefs has no tt plan";
    plan.ops.push_back(std::move(l));
    return success();
  }

  std::string programName(Operation *op) {
    std::string name = func.getSymName().str();
    if (numAttnOps > 1)
      name += "_" + std::to_string(attnIndex[op]);
    return name;
  }

  LogicalResult visit(Operation *op) {
    if (numAttnOps < 0) {
      numAttnOps = 0;
      func.walk([&](Operation *o) {
        if (isa<PagedAttentionOp, ReshapeAndCacheOp, MlaDecodeOp,
                MergeStatesOp>(o))
          attnIndex[o] = numAttnOps++;
      });
    }
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](arith::ConstantOp c) -> LogicalResult {
          auto attr = dyn_cast<IntegerAttr>(c.getValue());
          if (!attr)
            return c.emitOpError() << "only integer constants reach tt plans";
          slots[c.getResult()] =
              emit(PlanOpKind::Const, {}, attr.getValue().getSExtValue());
          return success();
        })
        .Case([&](tensor::DimOp d) -> LogicalResult {
          std::optional<int64_t> index = d.getConstantIndex();
          if (!index)
            return d.emitOpError() << "needs a constant index in a tt plan";
          FailureOr<int32_t> s = dimOf(d, d.getSource(), *index);
          if (failed(s))
            return failure();
          slots[d.getResult()] = *s;
          return success();
        })
        .Case([&](tensor::EmptyOp e) -> LogicalResult {
          auto type = e.getType();
          std::optional<::attn::DType> dtype =
              planElementType(type.getElementType());
          if (!dtype)
            return e.emitOpError() << "has no runtime element type";
          std::vector<int32_t> shape;
          size_t dynamic = 0;
          for (int64_t d : type.getShape()) {
            if (!ShapedType::isDynamic(d)) {
              shape.push_back(emit(PlanOpKind::Const, {}, d));
              continue;
            }
            FailureOr<int32_t> s = slotOf(e, e.getDynamicSizes()[dynamic++]);
            if (failed(s))
              return failure();
            shape.push_back(*s);
          }
          int32_t slot = emit(PlanOpKind::Alloc, std::move(shape), 0);
          plan.ops.back().dtype = *dtype;
          slots[e.getResult()] = slot;
          return success();
        })
        .Case([&](MetadataOp) { return success(); })
        .Case([&](PagedAttentionOp p) -> LogicalResult {
          auto md = p.getMetadata().getDefiningOp<MetadataOp>();
          if (!md)
            return p.emitOpError() << "needs its metadata from attn.metadata";
          SmallVector<Value> buffers = {p.getQuery(), p.getKvCache(),
                                        md.getBlockTable(), md.getSeqLens(),
                                        md.getQueryStartLoc()};
          if (p.getAlibiSlopes())
            buffers.push_back(p.getAlibiSlopes());
          if (p.getSinks())
            buffers.push_back(p.getSinks());
          return launch(p,
                        {dimOf(p, p.getQuery(), 0),
                         dimOf(p, md.getSeqLens(), 0),
                         dimOf(p, md.getBlockTable(), 1)},
                        buffers, {p.getOutInit(), p.getLseInit()});
        })
        .Case([&](ReshapeAndCacheOp r) {
          return launch(r, {dimOf(r, r.getKey(), 0)},
                        {r.getKey(), r.getValue(), r.getSlotMapping()},
                        {r.getKvCache()});
        })
        .Case([&](MlaDecodeOp m) {
          return launch(
              m, {dimOf(m, m.getQ(), 0), dimOf(m, m.getBlockTable(), 1)},
              {m.getQ(), m.getKvCache(), m.getBlockTable(), m.getSeqLens()},
              {m.getOutInit(), m.getLseInit()});
        })
        .Case([&](MergeStatesOp m) {
          return launch(m, {dimOf(m, m.getOutA(), 0)},
                        {m.getOutA(), m.getLseA(), m.getOutB(), m.getLseB()},
                        {m.getOutInit(), m.getLseInit()});
        })
        .Case([&](func::ReturnOp r) -> LogicalResult {
          std::vector<int32_t> results;
          for (Value v : r.getOperands()) {
            FailureOr<int32_t> s = slotOf(r, v);
            if (failed(s))
              return failure();
            results.push_back(*s);
          }
          emit(PlanOpKind::Return, std::move(results), 0, /*hasResult=*/false);
          return success();
        })
        .Default([](Operation *o) {
          return o->emitOpError() << "has no place in a tt plan";
        });
  }

  func::FuncOp func;
  Plan plan;
  int32_t next = 0;
  llvm::DenseMap<Value, int32_t> slots;
  int numAttnOps = -1;
  llvm::DenseMap<Operation *, int> attnIndex;
};

} // namespace

FailureOr<Plan> mlir::attn::buildTTPlan(func::FuncOp func) {
  return TTPlanBuilder(func).run();
}
