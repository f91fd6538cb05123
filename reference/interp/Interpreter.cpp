//===- Interpreter.cpp - Runs attn functions on the CPU reference --------===//
//
// As in the StableHLO reference interpreter: a Scope maps each SSA value to
// its runtime value, and every supported op has one eval function that reads
// its operands from the scope, calls the reference op, and binds its
// results. Readability comes before speed.
//
//===----------------------------------------------------------------------===//

#include "reference/interp/Interpreter.h"

#include "reference/interp/Signature.h"
#include "reference/interp/StatusError.h"
#include "core/Metadata.h"
#include "reference/ops/Ops.h"

#include "dialect/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <variant>

using namespace attn;
using mlir::Operation;
using mlir::Value;
namespace arith = mlir::arith;
namespace func = mlir::func;
namespace tensor = mlir::tensor;
namespace ir = mlir::attn;

namespace {

//===----------------------------------------------------------------------===//
// Runtime values and the scope
//===----------------------------------------------------------------------===//

/// The runtime value of an `!attn.metadata`: its tensors and flags, checked
/// when the metadata op ran.
struct MetadataValue {
  Tensor queryStartLoc;
  Tensor seqLens;
  Tensor blockTable;
  std::optional<Tensor> slotMapping;
  bool causal = true;
};

/// A tensor, an index or integer scalar, a float scalar, or metadata.
using RuntimeValue = std::variant<Tensor, int64_t, double, MetadataValue>;

/// Maps the SSA values defined so far to their runtime values.
class Scope {
public:
  void bind(Value v, RuntimeValue value) { values[v] = std::move(value); }

  /// The value bound to `v`. The verifier guarantees that operands have the
  /// kind their op expects, and every op binds all its results, so a missing
  /// or mistyped binding is a bug in the interpreter.
  template <typename T> const T &get(Value v) const {
    auto it = values.find(v);
    assert(it != values.end() && "value used before it was bound");
    assert(std::holds_alternative<T>(it->second) && "value of another kind");
    return std::get<T>(it->second);
  }

  /// Moves the tensor out of `v` (for an in-place update of its last use).
  Tensor take(Value v) {
    auto it = values.find(v);
    assert(it != values.end() && "value used before it was bound");
    Tensor t = std::move(std::get<Tensor>(it->second));
    values.erase(it);
    return t;
  }

private:
  llvm::DenseMap<Value, RuntimeValue> values;
};

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// "<loc>: 'attn.paged_attention': <message>".
llvm::Error opError(Operation *op, const llvm::Twine &message) {
  return llvm::createStringError(describeOp(op) + ": " + message);
}

/// An op error from a reference Status.
llvm::Error opError(Operation *op, const Status &status) {
  if (status.isOk())
    return llvm::Error::success();
  return opError(op, status.message());
}

/// Checks a computed tensor against the type of `result`.
llvm::Error checkResult(Operation *op, mlir::OpResult result, const Tensor &t) {
  llvm::Expected<TensorSpec> spec = specOf(
      result.getType(), "result #" + llvm::Twine(result.getResultNumber()));
  if (!spec)
    return opError(op, llvm::toString(spec.takeError()));
  if (std::optional<std::string> why = spec->mismatch(t))
    return opError(op, "result #" + llvm::Twine(result.getResultNumber()) +
                           ": " + *why);
  return llvm::Error::success();
}

/// Checks that a destination operand has the shape of the result computed
/// into it: tensors in destination-passing style keep their shape.
llvm::Error checkDestination(Operation *op, llvm::StringRef name,
                             const Tensor &init, const Tensor &result) {
  if (init.shape() == result.shape())
    return llvm::Error::success();
  return opError(op, name + " is " + init.describe() +
                         ", but the op computes " + result.describe());
}

//===----------------------------------------------------------------------===//
// The interpreter: one eval function per op
//===----------------------------------------------------------------------===//

class Interpreter {
public:
  explicit Interpreter(bool naiveDevicePrecision)
      : naiveDevicePrecision(naiveDevicePrecision) {}
  llvm::Expected<std::vector<Tensor>> run(func::FuncOp func,
                                          std::vector<Tensor> args);

private:
  bool naiveDevicePrecision;

  llvm::Error eval(Operation *op);
  llvm::Error eval(arith::ConstantOp op);
  llvm::Error eval(tensor::EmptyOp op);
  llvm::Error eval(tensor::DimOp op);
  llvm::Error eval(ir::MetadataOp op);
  llvm::Error eval(ir::PagedAttentionOp op);
  llvm::Error eval(ir::ReshapeAndCacheOp op);
  llvm::Error eval(ir::MlaDecodeOp op);
  llvm::Error eval(ir::MergeStatesOp op);

  /// Binds the results of an attention op (out, lse) after checking them
  /// against the destinations and the result types.
  llvm::Error bindAttention(Operation *op, Value outInit, Value lseInit,
                            AttentionOutput output);

  const Tensor &tensor(Value v) const { return scope.get<Tensor>(v); }
  /// The tensor of an optional operand, or null when it is absent.
  const Tensor *optionalTensor(Value v) const {
    return v ? &tensor(v) : nullptr;
  }

  Scope scope;
};

llvm::Expected<std::vector<Tensor>> Interpreter::run(func::FuncOp func,
                                                     std::vector<Tensor> args) {
  llvm::Expected<Signature> signature = describeSignature(func);
  if (!signature)
    return signature.takeError();
  if (llvm::Error err = checkArguments(*signature, args, {}))
    return std::move(err);
  if (!func.getBody().hasOneBlock())
    return opError(func, "only functions of one block can be interpreted");

  mlir::Block &body = func.getBody().front();
  for (auto [arg, value] : llvm::zip(body.getArguments(), args))
    scope.bind(arg, std::move(value));
  for (Operation &op : body) {
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      std::vector<Tensor> results;
      for (Value v : ret.getOperands())
        results.push_back(tensor(v));
      return results;
    }
    if (llvm::Error err = eval(&op))
      return std::move(err);
  }
  return opError(func, "the function body has no func.return");
}

llvm::Error Interpreter::eval(Operation *op) {
  // Bufferized code writes into memrefs the caller owns; the interpreter
  // works on values only.
  for (mlir::Type t : op->getOperandTypes())
    if (llvm::isa<mlir::BaseMemRefType>(t))
      return opError(op, "operates on memrefs; the reference interpreter "
                         "runs tensor code only");
  return llvm::TypeSwitch<Operation *, llvm::Error>(op)
      .Case<arith::ConstantOp, tensor::EmptyOp, tensor::DimOp, ir::MetadataOp,
            ir::PagedAttentionOp, ir::ReshapeAndCacheOp, ir::MlaDecodeOp,
            ir::MergeStatesOp>([&](auto concrete) { return eval(concrete); })
      .Default([&](Operation *other) {
        return opError(other, "op is not supported by the reference "
                              "interpreter");
      });
}

/// Converts a float element of a dense attribute exactly to double.
double toDouble(llvm::APFloat value) {
  bool losesInfo = false;
  value.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToDouble();
}

llvm::Error Interpreter::eval(arith::ConstantOp op) {
  mlir::TypedAttr value = op.getValue();
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(value)) {
    scope.bind(op.getResult(), i.getValue().getSExtValue());
    return llvm::Error::success();
  }
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(value)) {
    scope.bind(op.getResult(), f.getValueAsDouble());
    return llvm::Error::success();
  }
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value);
  if (!dense)
    return opError(op, "only integer, float and dense tensor constants are "
                       "supported");
  llvm::Expected<TensorSpec> spec = specOf(dense.getType(), "the constant");
  if (!spec)
    return opError(op, llvm::toString(spec.takeError()));
  Tensor t(spec->dtype, spec->shape);
  int64_t i = 0;
  if (isFloat(spec->dtype)) {
    for (llvm::APFloat f : dense.getValues<llvm::APFloat>())
      t.setFloat(i++, toDouble(f));
  } else {
    for (llvm::APInt v : dense.getValues<llvm::APInt>())
      t.setInt(i++, v.getSExtValue());
  }
  scope.bind(op.getResult(), std::move(t));
  return llvm::Error::success();
}

llvm::Error Interpreter::eval(tensor::EmptyOp op) {
  llvm::Expected<TensorSpec> spec = specOf(op.getType(), "the result");
  if (!spec)
    return opError(op, llvm::toString(spec.takeError()));
  auto sizes = op.getDynamicSizes().begin();
  for (int64_t &d : spec->shape) {
    if (d != TensorSpec::kDynamic)
      continue;
    d = scope.get<int64_t>(*sizes++);
    if (d < 0)
      return opError(op, "dynamic size " + llvm::Twine(d) + " is negative");
  }
  scope.bind(op.getResult(), Tensor(spec->dtype, spec->shape));
  return llvm::Error::success();
}

llvm::Error Interpreter::eval(tensor::DimOp op) {
  const Tensor &source = tensor(op.getSource());
  int64_t index = scope.get<int64_t>(op.getIndex());
  if (index < 0 || index >= source.rank())
    return opError(op, llvm::formatv("dimension {0} is out of range for a "
                                     "rank-{1} tensor",
                                     index, source.rank())
                           .str());
  scope.bind(op.getResult(), source.dim(index));
  return llvm::Error::success();
}

llvm::Error Interpreter::eval(ir::MetadataOp op) {
  MetadataValue md;
  md.queryStartLoc = tensor(op.getQueryStartLoc());
  md.seqLens = tensor(op.getSeqLens());
  md.blockTable = tensor(op.getBlockTable());
  if (Value slots = op.getSlotMapping())
    md.slotMapping = tensor(slots);
  md.causal = op.getCausal();
  // The rules that need no cache geometry are checked here, where the
  // metadata is made; the ops check it against their cache.
  Result<CommonAttentionMetadata> checked = makeCommonAttentionMetadata(
      md.queryStartLoc, md.seqLens, &md.blockTable,
      md.slotMapping ? &*md.slotMapping : nullptr, md.causal);
  if (!checked)
    return opError(op, checked.status());
  scope.bind(op.getResult(), std::move(md));
  return llvm::Error::success();
}

llvm::Error Interpreter::bindAttention(Operation *op, Value outInit,
                                       Value lseInit, AttentionOutput output) {
  if (llvm::Error err =
          checkDestination(op, "out_init", tensor(outInit), output.out))
    return err;
  if (llvm::Error err =
          checkDestination(op, "lse_init", tensor(lseInit), output.lse))
    return err;
  if (op->getNumResults() != 2)
    return opError(op, "expects two results (out, lse) on tensors");
  if (llvm::Error err = checkResult(op, op->getResult(0), output.out))
    return err;
  if (llvm::Error err = checkResult(op, op->getResult(1), output.lse))
    return err;
  scope.bind(op->getResult(0), std::move(output.out));
  scope.bind(op->getResult(1), std::move(output.lse));
  return llvm::Error::success();
}

KvLayout toKvLayout(ir::KVLayout layout) {
  return layout == ir::KVLayout::nhd ? KvLayout::NHD : KvLayout::HND;
}

llvm::Error Interpreter::eval(ir::PagedAttentionOp op) {
  const auto &md = scope.get<MetadataValue>(op.getMetadata());
  PagedAttentionParams params;
  params.layout = toKvLayout(op.getLayout());
  params.scale = op.getScale().convertToDouble();
  params.causal = md.causal;
  params.windowLeft = op.getWindowLeftValue();
  params.windowRight = op.getWindowRightValue();
  params.softCap = op.getSoftCap().convertToDouble();
  params.naiveDevicePrecision = naiveDevicePrecision;
  Value alibi = op.getAlibiSlopes(), sinks = op.getSinks();
  Result<AttentionOutput> output = pagedAttention(
      tensor(op.getQuery()), tensor(op.getKvCache()), md.blockTable, md.seqLens,
      md.queryStartLoc, optionalTensor(alibi), optionalTensor(sinks), params,
      {optionalTensor(op.getKScale()), optionalTensor(op.getVScale())});
  if (!output)
    return opError(op, output.status());
  return bindAttention(op, op.getOutInit(), op.getLseInit(),
                       std::move(*output));
}

llvm::Error Interpreter::eval(ir::ReshapeAndCacheOp op) {
  if (op->getNumResults() != 1)
    return opError(op, "expects one result (the cache) on tensors");
  // Tensors are values: the update goes into a copy, unless this op is the
  // cache value's only use.
  Value cacheValue = op.getKvCache();
  Tensor cache =
      cacheValue.hasOneUse() ? scope.take(cacheValue) : tensor(cacheValue);
  // The verifier ties the form to the cache's rank: a latent cache has no
  // layout, a paged one always has one.
  Status written =
      op.isLatentCache()
          ? concatAndCacheMla(tensor(op.getKey()), tensor(op.getValue()), cache,
                              tensor(op.getSlotMapping()),
                              optionalTensor(op.getKScale()))
          : reshapeAndCache(tensor(op.getKey()), tensor(op.getValue()), cache,
                            tensor(op.getSlotMapping()),
                            toKvLayout(*op.getLayout()),
                            {optionalTensor(op.getKScale()),
                             optionalTensor(op.getVScale())});
  if (llvm::Error err = opError(op, written))
    return err;
  if (llvm::Error err = checkResult(op, op->getResult(0), cache))
    return err;
  scope.bind(op->getResult(0), std::move(cache));
  return llvm::Error::success();
}

llvm::Error Interpreter::eval(ir::MlaDecodeOp op) {
  MlaDecodeParams params;
  params.scale = op.getScale().convertToDouble();
  params.kvLoraRank = op.getKvLoraRankAttr().getInt();
  params.numKvSplits = op.getNumKvSplitsAttr().getInt();
  params.naiveDevicePrecision = naiveDevicePrecision;
  Result<AttentionOutput> output =
      mlaDecode(tensor(op.getQ()), tensor(op.getKvCache()),
                tensor(op.getBlockTable()), tensor(op.getSeqLens()), params,
                optionalTensor(op.getKScale()));
  if (!output)
    return opError(op, output.status());
  return bindAttention(op, op.getOutInit(), op.getLseInit(),
                       std::move(*output));
}

llvm::Error Interpreter::eval(ir::MergeStatesOp op) {
  Result<AttentionOutput> output =
      mergeStates(tensor(op.getOutA()), tensor(op.getLseA()),
                  tensor(op.getOutB()), tensor(op.getLseB()),
                  naiveDevicePrecision);
  if (!output)
    return opError(op, output.status());
  return bindAttention(op, op.getOutInit(), op.getLseInit(),
                       std::move(*output));
}

} // namespace

llvm::Expected<std::vector<Tensor>> attn::interpret(func::FuncOp func,
                                                    std::vector<Tensor> args,
                                                    bool naiveDevicePrecision) {
  return Interpreter(naiveDevicePrecision).run(func, std::move(args));
}
