//===- NVVMFp8Convert.cpp - sm_89's fp8 conversions for attn's codec ------===//
//
// attn-nvvm-fp8-convert: the fp8 codec functions of convert-attn-to-gpu
// (fp8-calls) get PTX's cvt on chips that have it and are inlined
// everywhere. Why each conversion equals the reference bit for bit:
// DESIGN.md, Targets, fp8 caches.
//
//===----------------------------------------------------------------------===//

#include "lowering/KernelModuleAttrs.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNNVVMFP8CONVERT
#include "lowering/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The number after `prefix` in `text` ("sm_90a" after "sm_": 90; the
/// largest "+ptxNN" in "+ptx81,+foo" after "+ptx": 81); 0 when none.
unsigned numberAfter(StringRef text, StringRef prefix) {
  unsigned largest = 0;
  for (size_t at = text.find(prefix); at != StringRef::npos;
       at = text.find(prefix, at + 1)) {
    unsigned n = 0;
    if (!text.drop_front(at + prefix.size())
             .take_while(llvm::isDigit)
             .getAsInteger(10, n))
      largest = std::max(largest, n);
  }
  return largest;
}

/// Whether LLVM's NVPTX back end emits cvt between f32 / f16x2 and e4m3x2 /
/// e5m2x2 for `target`: the PTX ISA has it from 7.8 on sm_90 and later,
/// from 8.1 on sm_89 (a lower version leaves LLVM unable to select it).
bool hasFp8Convert(NVVM::NVVMTargetAttr target) {
  unsigned sm = numberAfter(target.getChip(), "sm_");
  return sm >= 90 ||
         (sm == 89 && numberAfter(target.getFeatures(), "+ptx") >= 81);
}

/// Whether every #nvvm.target of `kernels` has the fp8 cvt; an error when
/// it has none.
FailureOr<bool> allHaveFp8Convert(gpu::GPUModuleOp kernels) {
  bool any = false, all = true;
  if (ArrayAttr targets = kernels.getTargetsAttr())
    for (Attribute a : targets)
      if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(a)) {
        any = true;
        all = all && hasFp8Convert(target);
      }
  if (any)
    return all;
  return kernels.emitError()
         << "attn-nvvm-fp8-convert expects an #nvvm.target on gpu.module @"
         << kernels.getName()
         << ", which calls the fp8 codec (run nvvm-attach-target first)";
}

/// f32 values of the fp8 bytes `bytes` (i8 or vector<N x i8>) of `format`:
/// a pair of bytes at a time through cvt.rn.f16x2.{e4m3x2,e5m2x2} (a lone
/// byte with a zero beside it), then f16 to f32.
Value decodeBytes(ImplicitLocOpBuilder &b, Value bytes, Type format) {
  auto vector = dyn_cast<VectorType>(bytes.getType());
  int64_t n = vector ? vector.getNumElements() : 1;
  auto pairType = VectorType::get({2}, b.getI8Type());
  auto pairAt = [&](int64_t i) -> Value {
    if (vector && i + 1 < n)
      return vector::ShuffleOp::create(b, bytes, bytes,
                                       ArrayRef<int64_t>{i, i + 1});
    Value lone =
        vector ? vector::ExtractOp::create(b, bytes, i).getResult() : bytes;
    Value zero = arith::ConstantIntOp::create(b, b.getI8Type(), 0);
    return vector::FromElementsOp::create(b, pairType, ValueRange{lone, zero});
  };
  SmallVector<Value> values;
  for (int64_t i = 0; i < n; i += 2) {
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, VectorType::get({2}, b.getF16Type()), pairAt(i), /*relu=*/false,
        format);
    Value wide =
        arith::ExtFOp::create(b, VectorType::get({2}, b.getF32Type()), halves);
    for (int64_t k = i; k < std::min(i + 2, n); ++k)
      values.push_back(vector::ExtractOp::create(b, wide, k - i));
  }
  if (!vector)
    return values.front();
  return vector::FromElementsOp::create(b, vector.clone(b.getF32Type()),
                                        values);
}

/// The fp8 byte of `format` of f32 `q`: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
/// (`q` into the low byte); a NaN is the sign and 0x7F, as the reference
/// writes it, whichever NaN the instruction gives.
Value encodeF32(ImplicitLocOpBuilder &b, Value q, Type format) {
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0f));
  Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
      b, b.getI16Type(), /*a=*/zero, /*b=*/q, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, format);
  Value byte = arith::TruncIOp::create(b, b.getI8Type(), pair);
  // The f32's top byte is the sign and exponent bits; with 0x7F or'ed in,
  // the sign and 0x7F.
  Type i32 = b.getI32Type();
  Value top = arith::ShRUIOp::create(b, arith::BitcastOp::create(b, i32, q),
                                     arith::ConstantIntOp::create(b, i32, 24));
  Value nanByte = arith::TruncIOp::create(
      b, b.getI8Type(),
      arith::OrIOp::create(b, top, arith::ConstantIntOp::create(b, i32, 0x7F)));
  Value isNan = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, q, q);
  return arith::SelectOp::create(b, isNan, nanByte, byte);
}

/// The fp8 format of codec function `fn`, or an error unless it has a
/// body and is what convert-attn-to-gpu makes: i8 (or a vector of i8) to
/// f32 (the same shape), or f32 to i8.
FailureOr<Type> codecFormat(func::FuncOp fn) {
  FunctionType type = fn.getFunctionType();
  auto toF32 = fn->getAttrOfType<TypeAttr>(kFp8ToF32Attr);
  auto toFp8 = fn->getAttrOfType<TypeAttr>(kF32ToFp8Attr);
  Type format = toF32 ? toF32.getValue() : toFp8 ? toFp8.getValue() : Type();
  bool known = format && isa<Float8E4M3FNType, Float8E5M2Type>(format) &&
               type.getNumInputs() == 1 && type.getNumResults() == 1;
  if (known && toF32) {
    Type in = type.getInput(0), out = type.getResult(0);
    Type f32 = Float32Type::get(fn.getContext());
    auto vector = dyn_cast<VectorType>(in);
    known = getElementTypeOrSelf(in).isInteger(8) &&
            out == (vector ? vector.clone(f32) : f32);
  } else if (known) {
    known = type.getInput(0).isF32() && type.getResult(0).isInteger(8);
  }
  if (!known || fn.isDeclaration() || !fn.getBody().hasOneBlock())
    return fn.emitError() << "attn-nvvm-fp8-convert expects an fp8 codec "
                             "function of one block, i8 (or a vector of i8) "
                             "to f32 or f32 to i8, got "
                          << type;
  return format;
}

/// Replaces the body of codec function `fn` (of `format`) by the hardware
/// conversion.
void useHardware(func::FuncOp fn, Type format) {
  bool toF32 = fn->hasAttr(kFp8ToF32Attr);
  Block &body = fn.getBody().front();
  Operation *ret = body.getTerminator();
  ImplicitLocOpBuilder b(fn.getLoc(), ret);
  Value in = body.getArgument(0);
  Value out = toF32 ? decodeBytes(b, in, format) : encodeF32(b, in, format);
  ret->setOperands(out);
  // The integer codec is dead now; erase it from the last op up.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>())
      op.erase();
}

/// Inlines `fn` (one block) at each of its calls in `kernels`; an error at
/// a use that is not a call.
LogicalResult inlineCalls(gpu::GPUModuleOp kernels, func::FuncOp fn) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(fn, kernels);
  if (!uses)
    return kernels.emitError()
           << "attn-nvvm-fp8-convert cannot find the uses of @"
           << fn.getName();
  Block &body = fn.getBody().front();
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return use.getUser()->emitError()
             << "attn-nvvm-fp8-convert expects only calls of @" << fn.getName();
    OpBuilder b(call);
    IRMapping map;
    map.map(body.getArguments(), call.getOperands());
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    for (auto [result, value] :
         llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(map.lookup(value));
    call.erase();
  }
  fn.erase();
  return success();
}

struct NVVMFp8ConvertPass
    : public attn::impl::AttnNVVMFp8ConvertBase<NVVMFp8ConvertPass> {
  void runOnOperation() override {
    for (auto kernels : getOperation().getOps<gpu::GPUModuleOp>()) {
      SmallVector<func::FuncOp> codecs;
      for (auto fn : kernels.getOps<func::FuncOp>())
        if (fn->hasAttr(kFp8ToF32Attr) || fn->hasAttr(kF32ToFp8Attr))
          codecs.push_back(fn);
      if (codecs.empty())
        continue;
      FailureOr<bool> hardware = allHaveFp8Convert(kernels);
      if (failed(hardware))
        return signalPassFailure();
      for (func::FuncOp fn : codecs) {
        FailureOr<Type> format = codecFormat(fn);
        if (failed(format))
          return signalPassFailure();
        if (*hardware)
          useHardware(fn, *format);
        if (failed(inlineCalls(kernels, fn)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
