//===- TTApi.cpp - The TT-Metalium calls attn's kernels make -------------===//
#include "lowering/AttnToTT/TTApi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn::tt {

std::optional<TTFn> lookupTTFn(llvm::StringRef name) {
  for (unsigned i = 0; i < unsigned(TTFn::NumFunctions); ++i)
    if (kTTFnInfos[i].name == name)
      return TTFn(i);
  return std::nullopt;
}

llvm::StringRef spell(PoolType v) {
  return v == PoolType::Sum ? "PoolType::SUM" : "PoolType::MAX";
}
llvm::StringRef spell(ReduceDim v) {
  return v == ReduceDim::Row ? "ReduceDim::REDUCE_ROW"
                             : "ReduceDim::REDUCE_COL";
}
llvm::StringRef spell(BinaryOp v) {
  switch (v) {
  case BinaryOp::Add:
    return "EltwiseBinaryType::ELWADD";
  case BinaryOp::Sub:
    return "EltwiseBinaryType::ELWSUB";
  case BinaryOp::Mul:
    return "EltwiseBinaryType::ELWMUL";
  }
  return "";
}
llvm::StringRef spell(ReuseDest v) {
  return v == ReuseDest::ToSrcA ? "EltwiseBinaryReuseDestType::DEST_TO_SRCA"
                                : "EltwiseBinaryReuseDestType::DEST_TO_SRCB";
}

std::string ttApiProbeSource(TTThread thread) {
  bool compute = thread == TTThread::Compute;
  llvm::SetVector<llvm::StringRef> headers;
  for (const TTFnInfo &fn : kTTFnInfos) {
    llvm::StringRef h = compute ? fn.computeHeader : fn.dataflowHeader;
    if (!h.empty())
      headers.insert(h);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Calls every TT-Metalium function of lowering/AttnToTT/TTApi.h "
        "that a "
     << (compute ? "compute" : "data movement")
     << " kernel may call, with the table's operand and template-argument "
        "counts.\n#include <cstdint>\n";
  if (compute)
    os << "#define REDUCE_OP PoolType::SUM\n"
          "#define REDUCE_DIM ReduceDim::REDUCE_ROW\n";
  for (llvm::StringRef h : headers)
    os << "#include \"" << h << "\"\n";
  os << "void kernel_main() {\n  uint32_t a = get_arg_val<uint32_t>(0);\n";
  for (const TTFnInfo &fn : kTTFnInfos) {
    llvm::StringRef h = compute ? fn.computeHeader : fn.dataflowHeader;
    if (h.empty())
      continue;
    os << "  ";
    if (fn.result == TTResult::U32)
      os << "a += uint32_t(";
    else if (fn.result == TTResult::U64)
      os << "a += uint32_t(";
    os << fn.name;
    if (!fn.probeTemplateArgs.empty())
      os << "<" << fn.probeTemplateArgs << ">";
    os << "(";
    // get_compile_time_arg_val takes its index as a literal.
    if (fn.name == "get_compile_time_arg_val")
      os << "0";
    for (unsigned i = 0; i < fn.numOperands; ++i)
      os << (i ? ", " : "") << "a";
    os << ")";
    if (fn.result != TTResult::None)
      os << ")";
    os << ";\n";
  }
  os << "}\n";
  return text;
}

} // namespace mlir::attn::tt
