//===- TTMetalTarget.h - attn to TT-Metalium C++ sources ------*- C++ -*-===//
//
// Emits the programs of convert-attn-to-ttkernel as TT-Metalium sources:
// per program a folder with reader.cpp / compute.cpp / writer.cpp (each the
// EmitC translation of one kernel function, renamed to the pinned SDK's
// entry name kernel_main, with the SDK headers of its calls) and
// program.json, the
// host side as data (devices/tt/Program.h reads it).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOTT_TTMETALTARGET_H
#define ATTN_LOWERING_ATTNTOTT_TTMETALTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::attn {

/// One file of an emitted program: "reader.cpp", "compute.cpp",
/// "writer.cpp" or "program.json".
struct TTMetalFile {
  std::string name;
  std::string text;
};

/// One TT-Metalium program: its name (the function's, `_<i>` appended when a
/// function holds several attn ops) and its files, program.json last.
struct TTMetalProgram {
  std::string name;
  SmallVector<TTMetalFile> files;
};

/// Fails, naming the op, when an attn op of `module` has an fp8 KV cache:
/// TT-Metalium has no e4m3 / e5m2 data format (its Bfp8_b / Bfp4_b are
/// block floats, one exponent shared by 16 values), so an fp8 cache cannot
/// be kept as vLLM defines it.
LogicalResult checkNoFp8Cache(ModuleOp module);

/// Lowers the attn ops of `module` (on tensors or memrefs) and returns every
/// program's files. `module` is modified.
FailureOr<SmallVector<TTMetalProgram>> emitTTMetalPrograms(ModuleOp module);

/// Lowers the attn ops of `module` (on tensors or memrefs) and writes one
/// folder per program under `outputDir`. `module` is modified.
LogicalResult translateAttnToTTMetal(ModuleOp module, llvm::StringRef outputDir);

/// Lowers and prints every file of every program to `os`, each after a
/// `// ----- <program>/<file>` line (for tests and inspection).
LogicalResult translateAttnToTTMetal(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::attn

#endif // ATTN_LOWERING_ATTNTOTT_TTMETALTARGET_H
