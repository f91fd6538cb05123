//===- ParseFile.cpp - An .mlir input, parsed within limits ---------------===//

#include "compiler/ParseFile.h"

#include "core/TextNesting.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

mlir::OwningOpRef<mlir::ModuleOp>
mlir::attn::parseModuleFile(llvm::StringRef path, MLIRContext &context,
                            llvm::SourceMgr &sourceMgr, std::string &error) {
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file)
    return nullptr;
  if (::attn::Status s =
          ::attn::checkNesting(file->getBuffer(), file->getBufferIdentifier());
      !s) {
    error = s.message();
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
