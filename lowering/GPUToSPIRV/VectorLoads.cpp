//===- VectorLoads.cpp - Wide loads of attn's kernels for SPIR-V ----------===//
//
// attn-spirv-vector-loads (see lowering/Passes.td): a vector.load of 4, 8,
// 16 or 32 bytes from a kernel's buffer argument becomes a load of 32- or
// 64-bit words from a second argument bound to the same buffer, or scalar
// loads.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"
#include "lowering/WordsType.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSPIRVVECTORLOADS
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

/// What a rewritable load reads: `count` elements of `bits` bits.
struct LoadShape {
  int64_t count, bits;
  int64_t bytes() const { return count * bits / 8; }
};

/// The load's shape when this pass can rewrite it: 1-D, 8-, 16- or 32-bit
/// elements, 4, 8, 16 or 32 bytes aligned to their size, from an argument of
/// the kernel, and used only by static extracts and bitcasts to words.
std::optional<LoadShape> matchLoad(vector::LoadOp load, gpu::GPUFuncOp fn) {
  auto arg = dyn_cast<BlockArgument>(load.getBase());
  if (!arg || arg.getOwner() != &fn.getBody().front() ||
      arg.getArgNumber() >= fn.getNumArguments())
    return std::nullopt;
  VectorType type = load.getVectorType();
  if (type.getRank() != 1 || load.getIndices().size() != 1)
    return std::nullopt;
  LoadShape shape{type.getNumElements(), type.getElementTypeBitWidth()};
  if ((shape.bits != 8 && shape.bits != 16 && shape.bits != 32) ||
      !llvm::is_contained({4, 8, 16, 32}, shape.bytes()))
    return std::nullopt;
  std::optional<uint64_t> align = load.getAlignment();
  if (!align || *align < static_cast<uint64_t>(shape.bytes()))
    return std::nullopt;
  for (Operation *user : load->getUsers()) {
    if (auto extract = dyn_cast<vector::ExtractOp>(user)) {
      if (extract.hasDynamicPosition() ||
          extract.getStaticPosition().size() != 1)
        return std::nullopt;
      continue;
    }
    auto cast = dyn_cast<vector::BitCastOp>(user);
    Type words = mlir::attn::getWordsType(load.getContext(), shape.bytes());
    if (!cast || (cast.getResultVectorType() != words &&
                  !(shape.bytes() == 4 &&
                    cast.getResultVectorType().getNumElements() == 1)))
      return std::nullopt;
  }
  return shape;
}

/// Element `k` (of `bits` bits, type `type`) of the little-endian words
/// `words` (all i32 or all i64).
Value elementOfWords(OpBuilder &b, Location loc, ArrayRef<Value> words,
                     int64_t k, int64_t bits, Type type) {
  Type wordType = words.front().getType();
  int64_t wordBits = wordType.getIntOrFloatBitWidth();
  int64_t perWord = wordBits / bits;
  Value word = words[k / perWord];
  int64_t shift = (k % perWord) * bits;
  if (shift)
    word = arith::ShRUIOp::create(
        b, loc, word, arith::ConstantIntOp::create(b, loc, wordType, shift));
  auto intType = b.getIntegerType(bits);
  if (wordBits != bits)
    word = arith::TruncIOp::create(b, loc, intType, word);
  return type == intType ? word : arith::BitcastOp::create(b, loc, type, word);
}

/// The words of `elements` (little-endian), as `wordsType` (i32, or a
/// vector of i32 or i64).
Value wordsOfElements(OpBuilder &b, Location loc, ArrayRef<Value> elements,
                      int64_t bits, Type wordsType) {
  Type wordType = getElementTypeOrSelf(wordsType);
  int64_t perWord = wordType.getIntOrFloatBitWidth() / bits;
  auto intType = b.getIntegerType(bits);
  SmallVector<Value> words;
  for (size_t i = 0; i < elements.size(); i += perWord) {
    Value word;
    for (int64_t k = 0; k < perWord; ++k) {
      Value e = elements[i + k];
      if (e.getType() != intType)
        e = arith::BitcastOp::create(b, loc, intType, e);
      if (intType != wordType)
        e = arith::ExtUIOp::create(b, loc, wordType, e);
      if (k)
        e = arith::ShLIOp::create(
            b, loc, e,
            arith::ConstantIntOp::create(b, loc, wordType, k * bits));
      word = word ? arith::OrIOp::create(b, loc, word, e).getResult() : e;
    }
    words.push_back(word);
  }
  if (!isa<VectorType>(wordsType))
    return words.front();
  return vector::FromElementsOp::create(b, loc, cast<VectorType>(wordsType),
                                        words);
}

/// `words` (i32 or a vector of i32) as `type`, a vector of the same bits.
Value asType(OpBuilder &b, Location loc, Value words, VectorType type) {
  if (words.getType() == type)
    return words;
  if (!isa<VectorType>(words.getType())) {
    // One word: a vector<1x32-bit>.
    Value word = words;
    if (word.getType() != type.getElementType())
      word = arith::BitcastOp::create(b, loc, type.getElementType(), word);
    return vector::BroadcastOp::create(b, loc, type, word);
  }
  return vector::BitCastOp::create(b, loc, type, words);
}

struct VectorLoadsPass
    : public attn::impl::AttnSPIRVVectorLoadsBase<VectorLoadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUFuncOp> kernels;
    module.walk([&](gpu::GPUFuncOp fn) {
      if (fn.isKernel())
        kernels.push_back(fn);
    });
    for (gpu::GPUFuncOp fn : kernels)
      if (failed(rewriteKernel(fn)))
        return signalPassFailure();
  }

  LogicalResult rewriteKernel(gpu::GPUFuncOp fn) {
    SmallVector<std::pair<vector::LoadOp, LoadShape>> loads;
    WalkResult walk = fn.walk([&](vector::LoadOp load) {
      std::optional<LoadShape> shape = matchLoad(load, fn);
      if (!shape) {
        if (isa<BlockArgument>(load.getBase())) {
          load.emitOpError() << "reads a kernel argument in a way "
                                "attn-spirv-vector-loads cannot express in "
                                "SPIR-V (expects 4, 8, 16 or 32 aligned bytes of "
                                "8-, 16- or 32-bit elements, used by static "
                                "extracts and bitcasts to i32 words)";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      loads.emplace_back(load, *shape);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (loads.empty())
      return success();

    MLIRContext *ctx = fn.getContext();
    unsigned numOriginal = fn.getNumArguments();
    // One aliasing argument per (argument, word size).
    llvm::DenseMap<std::pair<unsigned, int64_t>, BlockArgument> aliases;
    SmallVector<std::pair<unsigned, Type>> added;
    for (auto &[load, shape] : loads) {
      OpBuilder b(load);
      Location loc = load.getLoc();
      auto arg = cast<BlockArgument>(load.getBase());
      Type wordsType = mlir::attn::getWordsType(ctx, shape.bytes());
      Type elementType = load.getVectorType().getElementType();
      SmallVector<Value> words, elements;
      if (alias) {
        BlockArgument &view = aliases[{arg.getArgNumber(), shape.bytes()}];
        if (!view) {
          auto type = MemRefType::get({ShapedType::kDynamic}, wordsType);
          unsigned index = fn.getNumArguments();
          DictionaryAttr attrs = DictionaryAttr::get(
              ctx, {NamedAttribute(StringAttr::get(
                                       ctx, spirv::getInterfaceVarABIAttrName()),
                                   spirv::getInterfaceVarABIAttr(
                                       0, arg.getArgNumber(), std::nullopt,
                                       ctx))});
          if (failed(fn.insertArgument(index, type, attrs, fn.getLoc())))
            return failure();
          view = fn.getArgument(index);
          added.emplace_back(arg.getArgNumber(), type);
        }
        Value at = arith::DivUIOp::create(
            b, loc, load.getIndices()[0],
            arith::ConstantIndexOp::create(b, loc, shape.count));
        Value w = memref::LoadOp::create(b, loc, view, ValueRange{at});
        bool extracted = llvm::any_of(load->getUsers(), [](Operation *u) {
          return isa<vector::ExtractOp>(u);
        });
        if (auto vt = dyn_cast<VectorType>(wordsType); vt && extracted) {
          for (int64_t i = 0; i < vt.getNumElements(); ++i)
            words.push_back(vector::ExtractOp::create(b, loc, w, i));
        } else {
          words.push_back(w);
        }
        for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
          OpBuilder ub(user);
          if (auto extract = dyn_cast<vector::ExtractOp>(user)) {
            extract.replaceAllUsesWith(elementOfWords(
                ub, user->getLoc(), words, extract.getStaticPosition()[0],
                shape.bits, elementType));
          } else {
            auto castOp = cast<vector::BitCastOp>(user);
            castOp.replaceAllUsesWith(
                asType(ub, user->getLoc(), w, castOp.getResultVectorType()));
          }
          user->erase();
        }
      } else {
        Value base = load.getIndices()[0];
        for (int64_t k = 0; k < shape.count; ++k) {
          Value at = arith::AddIOp::create(
              b, loc, base, arith::ConstantIndexOp::create(b, loc, k));
          elements.push_back(
              memref::LoadOp::create(b, loc, arg, ValueRange{at}));
        }
        for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
          OpBuilder ub(user);
          if (auto extract = dyn_cast<vector::ExtractOp>(user)) {
            extract.replaceAllUsesWith(
                elements[extract.getStaticPosition()[0]]);
          } else {
            auto castOp = cast<vector::BitCastOp>(user);
            Value v = wordsOfElements(ub, user->getLoc(), elements,
                                      shape.bits, wordsType);
            castOp.replaceAllUsesWith(
                asType(ub, user->getLoc(), v, castOp.getResultVectorType()));
          }
          user->erase();
        }
      }
      load.erase();
    }
    if (added.empty())
      return success();
    // Upstream gives arguments default bindings only when none has one.
    for (unsigned i = 0; i < numOriginal; ++i)
      if (!fn.getArgAttr(i, spirv::getInterfaceVarABIAttrName()))
        fn.setArgAttr(i, spirv::getInterfaceVarABIAttrName(),
                      spirv::getInterfaceVarABIAttr(0, i, std::nullopt, ctx));

    // The launches pass each aliased buffer again under its word type.
    auto module = fn->getParentOfType<gpu::GPUModuleOp>();
    auto top = module->getParentOfType<ModuleOp>();
    WalkResult launches = top.walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName() != module.getNameAttr() ||
          launch.getKernelName() != fn.getNameAttr())
        return WalkResult::advance();
      OpBuilder b(launch);
      SmallVector<Value> operands(launch.getKernelOperands());
      if (operands.size() != numOriginal) {
        launch.emitOpError() << "expects " << numOriginal << " operands";
        return WalkResult::interrupt();
      }
      for (auto &[index, type] : added)
        operands.push_back(UnrealizedConversionCastOp::create(
                               b, launch.getLoc(), type, operands[index])
                               .getResult(0));
      launch.getKernelOperandsMutable().assign(operands);
      return WalkResult::advance();
    });
    return failure(launches.wasInterrupted());
  }
};

} // namespace
