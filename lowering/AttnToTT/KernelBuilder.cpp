//===- KernelBuilder.cpp - Builds TT-Metalium kernel bodies --------------===//
#include "lowering/AttnToTT/KernelBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn::tt {

Value KernelBuilder::c(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
}
Value KernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelBuilder::sub(Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value KernelBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value KernelBuilder::div(Value x, Value y) {
  return arith::DivSIOp::create(b, loc, x, y);
}
Value KernelBuilder::rem(Value x, Value y) {
  return arith::RemSIOp::create(b, loc, x, y);
}
Value KernelBuilder::cmp(arith::CmpIPredicate pred, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, pred, x, y);
}
Value KernelBuilder::andI(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value KernelBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value KernelBuilder::alignUp(Value x, int64_t a) {
  return mul(div(add(x, a - 1), a), a);
}

void KernelBuilder::forLoop(Value lb, Value ub,
                            llvm::function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, lb, ub, c(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void KernelBuilder::ifThen(Value cond, llvm::function_ref<void()> body) {
  auto op = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  body();
}

void KernelBuilder::ifThenElse(Value cond, llvm::function_ref<void()> thenBody,
                               llvm::function_ref<void()> elseBody) {
  auto op = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  thenBody();
  b.setInsertionPoint(op.elseBlock()->getTerminator());
  elseBody();
}

Value KernelBuilder::emit(TTFn fn, ArrayRef<Attribute> templateArgs,
                          ValueRange operands) {
  const TTFnInfo &i = info(fn);
  SmallVector<Type, 1> results;
  if (i.result == TTResult::U32)
    results.push_back(b.getI32Type());
  else if (i.result == TTResult::U64)
    results.push_back(b.getI64Type());
  auto op = emitc::CallOpaqueOp::create(
      b, loc, results, i.name, operands, /*args=*/ArrayAttr(),
      templateArgs.empty() ? ArrayAttr() : b.getArrayAttr(templateArgs));
  return results.empty() ? Value() : op.getResult(0);
}

Attribute KernelBuilder::spelled(llvm::StringRef text) {
  return emitc::OpaqueAttr::get(b.getContext(), text);
}

Value KernelBuilder::runtimeArg(Value index) {
  return call<TTFn::GetArgVal>(TemplateArgs<1>{spelled("uint32_t")}, index);
}

Value KernelBuilder::compileTimeArg(int64_t index) {
  // The index is a literal: the SDK's macro needs a constant expression.
  auto op = emitc::CallOpaqueOp::create(
      b, loc, TypeRange(b.getI32Type()),
      info(TTFn::GetCompileTimeArgVal).name, ValueRange(),
      b.getArrayAttr(Attribute(b.getI32IntegerAttr(index))), ArrayAttr());
  return op.getResult(0);
}

Value KernelBuilder::dramPageAddr(Value base, Value pageStride, Value numBanks,
                                  Value page, Value offset) {
  Value bank = rem(page, numBanks);
  Value address = add(add(base, mul(div(page, numBanks), pageStride)), offset);
  return call<TTFn::GetNocAddrFromBankId>(TemplateArgs<1>{spelled("true")},
                                          bank, address);
}

/// reinterpret_cast<T *>(l1Addr) for T = `element` (i32 or f32).
static Value l1Pointer(OpBuilder &b, Location loc, Value l1Addr,
                       Type element) {
  auto ptrType = emitc::PointerType::get(element);
  auto op = emitc::CallOpaqueOp::create(
      b, loc, TypeRange(ptrType), "reinterpret_cast", ValueRange(l1Addr),
      ArrayAttr(), b.getArrayAttr(Attribute(TypeAttr::get(ptrType))));
  return op.getResult(0);
}

static void storeL1(OpBuilder &b, Location loc, Value l1Addr, Value index,
                    Value value) {
  Type element = value.getType();
  Value ptr = l1Pointer(b, loc, l1Addr, element);
  auto lv = emitc::SubscriptOp::create(b, loc, emitc::LValueType::get(element),
                                       ptr, ValueRange(index));
  emitc::AssignOp::create(b, loc, lv, value);
}

static Value loadL1(OpBuilder &b, Location loc, Value l1Addr, Value index,
                    Type element) {
  Value ptr = l1Pointer(b, loc, l1Addr, element);
  auto lv = emitc::SubscriptOp::create(b, loc, emitc::LValueType::get(element),
                                       ptr, ValueRange(index));
  return emitc::LoadOp::create(b, loc, element, lv);
}

void KernelBuilder::storeL1Word(Value l1Addr, Value index, Value value) {
  storeL1(b, loc, l1Addr, index, value);
}
Value KernelBuilder::loadL1Word(Value l1Addr, Value index) {
  return loadL1(b, loc, l1Addr, index, b.getI32Type());
}
void KernelBuilder::storeL1Float(Value l1Addr, Value index, Value value) {
  storeL1(b, loc, l1Addr, index, value);
}
Value KernelBuilder::loadL1Float(Value l1Addr, Value index) {
  return loadL1(b, loc, l1Addr, index, b.getF32Type());
}

Value KernelBuilder::toFloat(Value i32) {
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), i32);
}
Value KernelBuilder::mulF(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}

Value KernelBuilder::faceOffset(Value row, Value col) {
  Value face = add(mul(div(row, 16), 2), div(col, 16));
  return add(add(mul(face, 256), mul(rem(row, 16), 16)), rem(col, 16));
}

} // namespace mlir::attn::tt
