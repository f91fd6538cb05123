//===- Entry.h - The function a tool runs, and its inputs ------*- C++ -*-===//
//
// Shared by attn-run and attn-diff: picking the function of a module to run
// and producing its inputs, from .npy files or the seeded generator.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_REFERENCE_INTERP_ENTRY_H
#define ATTN_REFERENCE_INTERP_ENTRY_H

#include "reference/interp/Signature.h"
#include "core/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
class ModuleOp;
template <typename OpTy> class OwningOpRef;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace attn {

/// Function `name` of `module`, or its only function when `name` is empty.
/// `fileName` is for messages.
llvm::Expected<mlir::func::FuncOp> findEntry(mlir::ModuleOp module,
                                             llvm::StringRef name,
                                             llvm::StringRef fileName);

/// Where inputs come from: a directory of arg<i>.npy, or a seed and
/// generator options ("key=value,...").
struct InputSource {
  std::string directory;
  std::optional<uint64_t> seed;
  std::string randomOptions;
};

/// The flags of tools that run a function on inputs (attn-run, attn-diff):
/// --entry, --inputs, --random, --random-options, registered in the tool's
/// option category when the object is constructed (before the command line
/// is parsed).
struct EntryFlags {
  explicit EntryFlags(llvm::cl::OptionCategory &category);

  /// The input source the flags name.
  InputSource source() const;

  llvm::cl::opt<std::string> entry;
  llvm::cl::opt<std::string> inputsDir;
  llvm::cl::opt<uint64_t> randomSeed;
  llvm::cl::opt<std::string> randomOptions;
};

/// Checks that exactly one source is given, then reads or makes the inputs.
llvm::Expected<std::vector<Tensor>> loadInputs(const Signature &signature,
                                               const InputSource &source);

} // namespace attn

#endif // ATTN_REFERENCE_INTERP_ENTRY_H
