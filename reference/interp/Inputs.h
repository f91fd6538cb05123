//===- Inputs.h - Where a run's inputs and outputs live ---------*- C++ -*-===//
//
// The inputs of a function run are read from `DIR/arg0.npy, arg1.npy, ...`
// in argument order, or made by the seeded problem generator of
// reference/testing/Random.h; outputs go to `DIR/result0.npy, ...`.
// MLIR-free: everything here works on a Signature.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_INTERP_INPUTS_H
#define ATTN_REFERENCE_INTERP_INPUTS_H

#include "reference/interp/Signature.h"
#include "reference/testing/Random.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace attn {

/// The keys --random-options accepts, with what each sets, for --help.
extern const char *const kRandomOptionsHelp;

/// Parses `key=value,...` into generator options on top of `base`: keys
/// num_requests, min_context, max_context, decode_fraction, cross_fraction,
/// max_query_len, shared_prefix (in blocks), extra_blocks, unread_fill.
/// Unknown keys and malformed values are errors naming the key.
llvm::Expected<ProblemOptions> parseRandomOptions(llvm::StringRef spec,
                                                  ProblemOptions base = {});

/// Makes one consistent random input per argument of `signature` from the
/// roles of the arguments: the static sizes come from the argument types,
/// the batch from `options` (whose seed is used). An argument without a role
/// is an error, as no sensible value can be made for it.
llvm::Expected<std::vector<Tensor>>
makeRandomInputs(const Signature &signature, const ProblemOptions &options);

/// Reads `dir/arg<i>.npy` for every argument and checks them against the
/// signature. NumPy has no bf16: a bf16 argument is read from an f32 file
/// and rounded once to nearest even.
llvm::Expected<std::vector<Tensor>> readInputs(const Signature &signature,
                                               llvm::StringRef dir);

/// Writes `dir/<prefix><i>.npy` for every tensor, creating `dir`.
llvm::Error writeTensors(llvm::StringRef dir, llvm::StringRef prefix,
                         llvm::ArrayRef<Tensor> tensors);

} // namespace attn

#endif // ATTN_REFERENCE_INTERP_INPUTS_H
