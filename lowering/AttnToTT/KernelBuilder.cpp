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

Value KernelBuilder::call(StringRef callee, ValueRange operands,
                          bool hasResult, ArrayRef<Attribute> templateArgs) {
  TypeRange results;
  Type i32 = b.getI32Type();
  if (hasResult)
    results = TypeRange(i32);
  auto op = emitc::CallOpaqueOp::create(
      b, loc, results, callee, operands, /*args=*/ArrayAttr(),
      templateArgs.empty() ? ArrayAttr() : b.getArrayAttr(templateArgs));
  return hasResult ? op.getResult(0) : Value();
}

Value KernelBuilder::runtimeArg(Value index) {
  return call("get_arg_val", index, /*hasResult=*/true,
              TypeAttr::get(emitc::OpaqueType::get(b.getContext(), "uint32_t")));
}

Value KernelBuilder::runtimeArg(int64_t index) {
  // A literal index, as kernels usually spell it.
  auto op = emitc::CallOpaqueOp::create(
      b, loc, TypeRange(b.getI32Type()), "get_arg_val", ValueRange(),
      b.getArrayAttr(Attribute(b.getI32IntegerAttr(index))),
      b.getArrayAttr(Attribute(
          TypeAttr::get(emitc::OpaqueType::get(b.getContext(), "uint32_t")))));
  return op.getResult(0);
}

Value KernelBuilder::compileTimeArg(int64_t index) {
  auto op = emitc::CallOpaqueOp::create(
      b, loc, TypeRange(b.getI32Type()), "get_compile_time_arg_val",
      ValueRange(), b.getArrayAttr(Attribute(b.getI32IntegerAttr(index))),
      ArrayAttr());
  return op.getResult(0);
}

void KernelBuilder::cbReserveBack(int64_t cb, Value n) {
  call("cb_reserve_back", {c(cb), n});
}
void KernelBuilder::cbPushBack(int64_t cb, Value n) {
  call("cb_push_back", {c(cb), n});
}
void KernelBuilder::cbWaitFront(int64_t cb, Value n) {
  call("cb_wait_front", {c(cb), n});
}
void KernelBuilder::cbPopFront(int64_t cb, Value n) {
  call("cb_pop_front", {c(cb), n});
}
Value KernelBuilder::getWritePtr(int64_t cb) {
  return call("get_write_ptr", c(cb), /*hasResult=*/true);
}
Value KernelBuilder::getReadPtr(int64_t cb) {
  return call("get_read_ptr", c(cb), /*hasResult=*/true);
}

Value KernelBuilder::dramAddrGen(Value bankBase, Value pageSize) {
  auto genType = emitc::OpaqueType::get(b.getContext(),
                                        "InterleavedAddrGen<true>");
  auto lvalueType = emitc::LValueType::get(genType);
  auto var = emitc::VariableOp::create(
      b, loc, lvalueType, emitc::OpaqueAttr::get(b.getContext(), ""));
  auto i32LValue = emitc::LValueType::get(b.getI32Type());
  auto base = emitc::MemberOp::create(b, loc, i32LValue, "bank_base_address",
                                      var);
  emitc::AssignOp::create(b, loc, base, bankBase);
  auto size = emitc::MemberOp::create(b, loc, i32LValue, "page_size", var);
  emitc::AssignOp::create(b, loc, size, pageSize);
  return emitc::LoadOp::create(b, loc, genType, var);
}

Value KernelBuilder::nocAddr(Value page, Value addrGen, Value offset) {
  auto op = emitc::CallOpaqueOp::create(b, loc, TypeRange(b.getI64Type()),
                                        "get_noc_addr",
                                        ValueRange{page, addrGen, offset});
  return op.getResult(0);
}

void KernelBuilder::nocAsyncRead(Value srcNoc, Value dstL1, Value size) {
  call("noc_async_read", {srcNoc, dstL1, size});
}
void KernelBuilder::nocAsyncWrite(Value srcL1, Value dstNoc, Value size) {
  call("noc_async_write", {srcL1, dstNoc, size});
}
void KernelBuilder::nocAsyncReadBarrier() {
  call("noc_async_read_barrier", {});
}
void KernelBuilder::nocAsyncWriteBarrier() {
  call("noc_async_write_barrier", {});
}

static Value wordPointer(OpBuilder &b, Location loc, Value l1Addr) {
  auto ptrType = emitc::PointerType::get(b.getI32Type());
  auto op = emitc::CallOpaqueOp::create(
      b, loc, TypeRange(ptrType), "reinterpret_cast", ValueRange(l1Addr),
      ArrayAttr(), b.getArrayAttr(Attribute(TypeAttr::get(ptrType))));
  return op.getResult(0);
}

void KernelBuilder::storeL1Word(Value l1Addr, Value index, Value value) {
  Value ptr = wordPointer(b, loc, l1Addr);
  auto lv = emitc::SubscriptOp::create(
      b, loc, emitc::LValueType::get(b.getI32Type()), ptr, ValueRange(index));
  emitc::AssignOp::create(b, loc, lv, value);
}

Value KernelBuilder::loadL1Word(Value l1Addr, Value index) {
  Value ptr = wordPointer(b, loc, l1Addr);
  auto lv = emitc::SubscriptOp::create(
      b, loc, emitc::LValueType::get(b.getI32Type()), ptr, ValueRange(index));
  return emitc::LoadOp::create(b, loc, b.getI32Type(), lv);
}

Attribute KernelBuilder::opaque(StringRef text) {
  return emitc::OpaqueAttr::get(b.getContext(), text);
}

Value KernelBuilder::faceOffset(Value row, Value col) {
  Value face = add(mul(div(row, 16), 2), div(col, 16));
  return add(add(mul(face, 256), mul(rem(row, 16), 16)), rem(col, 16));
}

} // namespace mlir::attn::tt
