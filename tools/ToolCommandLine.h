//===- ToolCommandLine.h - llvm::cl as attn's tools want it ----*- C++ -*-===//
//
// attn-opt, attn-translate, attn-compile, attn-run and attn-diff parse their
// flags with llvm::cl. Its --version prints LLVM's version: they print
// attn's instead (the MLIR-free tools print core/Version.h's themselves):
//   attn-opt 0.3.0 (LLVM 22.1.8)
// And its --help lists every flag of the LLVM libraries linked in (hundreds
// of backend flags): hideOtherOptions keeps a tool's own on --help
// (attn-opt's are MLIR's, which MlirOptMain registers after it hides the
// rest).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TOOLS_TOOLCOMMANDLINE_H
#define ATTN_TOOLS_TOOLCOMMANDLINE_H

#include "core/Version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {

/// Makes --version print "`tool` <attn's version> (LLVM <version>)". Call
/// before parsing the command line.
inline void setToolVersionPrinter(const char *tool) {
  static const char *name;
  name = tool;
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << name << " " << ::attn::version() << " (LLVM " LLVM_VERSION_STRING
       << ")\n";
  });
}

/// Hides from --help every flag registered so far outside `category` (every
/// one when it is null) but --help, --help-list and --version. Unlike
/// llvm::cl::HideUnrelatedOptions, which makes them ReallyHidden,
/// --help-hidden and --help-list-hidden still list them all.
inline void hideOtherOptions(llvm::cl::OptionCategory *category) {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions())
    if (option->getOptionHiddenFlag() == llvm::cl::NotHidden &&
        !(category && llvm::is_contained(option->Categories, category)) &&
        name != "help" && name != "help-list" && name != "version")
      option->setHiddenFlag(llvm::cl::Hidden);
}

} // namespace mlir::attn

#endif // ATTN_TOOLS_TOOLCOMMANDLINE_H
