//===- RunFlags.h - What attn-run and attn-diff start from -----*- C++ -*-===//
//
// The flags attn-run and attn-diff share (the module, the function and its
// inputs, the kernel knobs) and the step both take first: parse the module,
// find the function, read or make its inputs.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_DEVICERUN_RUNFLAGS_H
#define ATTN_TOOLS_DEVICERUN_RUNFLAGS_H

#include "reference/interp/Entry.h"
#include "tools/DeviceRun/DeviceRun.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mlir::attn {

/// The flags of a tool that runs a function of a module: the module file
/// (positional), EntryFlags, KernelKnobFlags and CpuEmulatorFlags,
/// registered in `category`
/// when constructed. --backend is the tool's own: its help and default
/// differ.
struct RunFlags {
  explicit RunFlags(llvm::cl::OptionCategory &category);

  llvm::cl::opt<std::string> inputFile;
  ::attn::EntryFlags entry;
  KernelKnobFlags knobs;
  CpuEmulatorFlags cpuEmulator;
};

/// A parsed module, the function to run and its inputs. Owns the context
/// and its diagnostic handler, which print later diagnostics too.
struct LoadedRun {
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  OwningOpRef<ModuleOp> module;
  func::FuncOp fn;
  ::attn::Signature signature;
  std::vector<::attn::Tensor> inputs;
};

/// Parses the module of `flags`, finds its entry and reads or makes the
/// entry's inputs. On failure, prints why as an error of `tool` (a parse
/// error prints at its location) and returns failure.
FailureOr<LoadedRun> loadRun(const RunFlags &flags, llvm::StringRef tool);

} // namespace mlir::attn

#endif // ATTN_TOOLS_DEVICERUN_RUNFLAGS_H
