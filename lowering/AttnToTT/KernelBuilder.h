//===- KernelBuilder.h - Builds TT-Metalium kernel bodies -----*- C++ -*-===//
//
// The kernel-level representation convert-attn-to-ttkernel writes: control
// and address arithmetic as scf and arith on i32 (the kernels' uint32_t),
// TT-Metalium API calls as emitc.call_opaque named from the table of
// TTApi.h, L1 words through emitc pointers. call<F>(...) checks the operand
// and template-argument counts of F against that table when attn compiles.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H
#define ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H

#include "lowering/AttnToTT/TTApi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir::attn::tt {

/// Template arguments of a call, as emitc attributes.
template <size_t N> using TemplateArgs = std::array<Attribute, N>;

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  //===--- i32 arithmetic -------------------------------------------------===//
  Value c(int64_t v);
  Value add(Value x, Value y);
  Value add(Value x, int64_t y) { return add(x, c(y)); }
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value mul(Value x, int64_t y) { return mul(x, c(y)); }
  Value div(Value x, Value y);
  Value div(Value x, int64_t y) { return div(x, c(y)); }
  Value rem(Value x, Value y);
  Value rem(Value x, int64_t y) { return rem(x, c(y)); }
  Value cmp(arith::CmpIPredicate pred, Value x, Value y);
  Value andI(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  /// (x + a - 1) / a * a for a power of two a.
  Value alignUp(Value x, int64_t a);

  //===--- Control ---------------------------------------------------------===//
  /// for (i = lb; i < ub; ++i) body(i)
  void forLoop(Value lb, Value ub, llvm::function_ref<void(Value)> body);
  void forLoop(int64_t lb, Value ub, llvm::function_ref<void(Value)> body) {
    forLoop(c(lb), ub, body);
  }
  void ifThen(Value cond, llvm::function_ref<void()> body);
  void ifThenElse(Value cond, llvm::function_ref<void()> thenBody,
                  llvm::function_ref<void()> elseBody);

  //===--- TT-Metalium API -------------------------------------------------===//
  /// Calls `F` with `operands` (Values or integer constants).
  template <TTFn F, typename... Operands> Value call(Operands... operands) {
    static_assert(info(F).numTemplateArgs == 0,
                  "this TT-Metalium function takes template arguments");
    static_assert(sizeof...(Operands) == info(F).numOperands,
                  "operand count differs from the TT-Metalium declaration");
    return emit(F, {}, {operand(operands)...});
  }
  template <TTFn F, size_t N, typename... Operands>
  Value call(const TemplateArgs<N> &templateArgs, Operands... operands) {
    static_assert(N == info(F).numTemplateArgs,
                  "template argument count differs from the TT-Metalium "
                  "declaration");
    static_assert(sizeof...(Operands) == info(F).numOperands,
                  "operand count differs from the TT-Metalium declaration");
    return emit(F, templateArgs, {operand(operands)...});
  }

  /// get_arg_val<uint32_t>(index)
  Value runtimeArg(Value index);
  Value runtimeArg(int64_t index) { return runtimeArg(c(index)); }
  /// get_compile_time_arg_val(index), a constant expression.
  Value compileTimeArg(int64_t index);

  /// A template argument spelled as in C++ (an enumerator, a type, true).
  Attribute spelled(llvm::StringRef text);
  template <typename E> Attribute tmpl(E value) { return spelled(spell(value)); }

  //===--- Data movement helpers ------------------------------------------===//
  void cbReserveBack(int64_t cb, Value n) { call<TTFn::CbReserveBack>(cb, n); }
  void cbPushBack(int64_t cb, Value n) { call<TTFn::CbPushBack>(cb, n); }
  void cbWaitFront(int64_t cb, Value n) { call<TTFn::CbWaitFront>(cb, n); }
  void cbPopFront(int64_t cb, Value n) { call<TTFn::CbPopFront>(cb, n); }
  Value getWritePtr(int64_t cb) { return call<TTFn::GetWritePtr>(cb); }
  Value getReadPtr(int64_t cb) { return call<TTFn::GetReadPtr>(cb); }
  /// The NOC address of byte `offset` of page `page` of an interleaved DRAM
  /// buffer at `base` whose pages are `pageStride` bytes apart in a bank:
  /// get_noc_addr_from_bank_id<true>(page % banks, base + page / banks *
  /// pageStride + offset).
  Value dramPageAddr(Value base, Value pageStride, Value numBanks, Value page,
                     Value offset);
  /// get_noc_addr(l1Addr): this core's L1 as a NOC address.
  Value localNocAddr(Value l1Addr) { return call<TTFn::GetNocAddr>(l1Addr); }
  void nocAsyncRead(Value srcNoc, Value dstL1, Value size) {
    call<TTFn::NocAsyncRead>(srcNoc, dstL1, size);
  }
  void nocAsyncWrite(Value srcL1, Value dstNoc, Value size) {
    call<TTFn::NocAsyncWrite>(srcL1, dstNoc, size);
  }
  void nocAsyncReadBarrier() { call<TTFn::NocAsyncReadBarrier>(); }
  void nocAsyncWriteBarrier() { call<TTFn::NocAsyncWriteBarrier>(); }

  /// reinterpret_cast<int32_t *>(l1Addr)[index] = value
  void storeL1Word(Value l1Addr, Value index, Value value);
  /// reinterpret_cast<int32_t *>(l1Addr)[index]
  Value loadL1Word(Value l1Addr, Value index);
  /// The same through float *: f32 values.
  void storeL1Float(Value l1Addr, Value index, Value value);
  Value loadL1Float(Value l1Addr, Value index);

  //===--- f32 arithmetic (ALiBi biases on a data movement RISC) ----------===//
  Value toFloat(Value i32);
  Value mulF(Value x, Value y);

  //===--- Tile helpers ----------------------------------------------------===//
  /// Offset of element (row, col) of a 32x32 tile in face order.
  Value faceOffset(Value row, Value col);

private:
  Value operand(Value v) { return v; }
  Value operand(int64_t v) { return c(v); }
  Value emit(TTFn fn, ArrayRef<Attribute> templateArgs, ValueRange operands);

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H
