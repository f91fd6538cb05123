//===- TTApi.cpp - The TT-Metalium calls attn's kernels make -------------===//
#include "lowering/AttnToTT/TTApi.h"

#include "llvm/ADT/STLExtras.h"

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
llvm::StringRef spell(ReuseDest v) {
  return v == ReuseDest::ToSrcA ? "EltwiseBinaryReuseDestType::DEST_TO_SRCA"
                                : "EltwiseBinaryReuseDestType::DEST_TO_SRCB";
}
llvm::StringRef spell(SrcOrder v) {
  return v == SrcOrder::Regular ? "SrcOrder::Regular" : "SrcOrder::Reverse";
}

} // namespace mlir::attn::tt
