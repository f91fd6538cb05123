//===- StatusError.h - attn::Status to llvm::Error -----------------*- C++ -*-===//
//
// The reference ops report failures as attn::Status (they depend on neither
// LLVM nor MLIR); the interpreter and the tools speak llvm::Error.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_INTERP_STATUSERROR_H
#define ATTN_REFERENCE_INTERP_STATUSERROR_H

#include "core/Status.h"

#include "llvm/Support/Error.h"

namespace attn {

/// Success for an ok status, else a string error with its message.
inline llvm::Error toError(const Status &status) {
  if (status.isOk())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 status.message());
}

} // namespace attn

#endif // ATTN_REFERENCE_INTERP_STATUSERROR_H
