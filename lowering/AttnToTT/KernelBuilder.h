//===- KernelBuilder.h - Builds TT-Metalium kernel bodies -----*- C++ -*-===//
//
// The kernel-level representation of the TT-Metalium API that
// convert-attn-to-ttkernel writes: control and address arithmetic as scf and
// arith on i32 (the kernels' uint32_t), API calls as emitc.call_opaque with
// the API's names, L1 words through emitc pointers. Each method is one API
// call or one arithmetic op, so a kernel reads like its C++ form.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H
#define ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::attn::tt {

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }

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
  /// An API call returning uint32_t (as i32), or nothing when !hasResult.
  Value call(StringRef callee, ValueRange operands, bool hasResult = false,
             ArrayRef<Attribute> templateArgs = {});
  /// get_arg_val<uint32_t>(index)
  Value runtimeArg(int64_t index);
  Value runtimeArg(Value index);
  /// get_compile_time_arg_val(index)
  Value compileTimeArg(int64_t index);

  void cbReserveBack(int64_t cb, Value n);
  void cbPushBack(int64_t cb, Value n);
  void cbWaitFront(int64_t cb, Value n);
  void cbPopFront(int64_t cb, Value n);
  Value getWritePtr(int64_t cb);
  Value getReadPtr(int64_t cb);

  /// InterleavedAddrGen<true>{bankBase, pageSize}.
  Value dramAddrGen(Value bankBase, Value pageSize);
  /// get_noc_addr(page, addrGen, offset): a uint64_t NOC address (i64).
  Value nocAddr(Value page, Value addrGen, Value offset);
  void nocAsyncRead(Value srcNoc, Value dstL1, Value size);
  void nocAsyncWrite(Value srcL1, Value dstNoc, Value size);
  void nocAsyncReadBarrier();
  void nocAsyncWriteBarrier();

  /// reinterpret_cast<int32_t *>(l1Addr)[index] = value
  void storeL1Word(Value l1Addr, Value index, Value value);
  /// reinterpret_cast<int32_t *>(l1Addr)[index]
  Value loadL1Word(Value l1Addr, Value index);

  /// An enum value spelled as in the API ("PoolType::MAX").
  Attribute opaque(StringRef text);

  //===--- Tile helpers ----------------------------------------------------===//
  /// Offset of element (row, col) of a 32x32 tile in face order.
  Value faceOffset(Value row, Value col);

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn::tt

#endif // ATTN_LOWERING_ATTNTOTT_KERNELBUILDER_H
