//===- AttnDialect.cpp - The attn dialect --------------------------------===//

#include "dialect/AttnDialect.h"
#include "dialect/AttnOps.h"
#include "dialect/Limits.h"

#include "core/CGSupport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "dialect/AttnDialect.cpp.inc"
#include "dialect/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/AttnTypes.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/AttnAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/AttnTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// BackendAttr
//===----------------------------------------------------------------------===//

// CGSupport is ODS's copy of core's AttentionCGSupport (AttnAttrs.td says why
// there are two): the same levels with the same values.
static constexpr bool sameCGSupport(CGSupport dialect,
                                    ::attn::AttentionCGSupport core) {
  return static_cast<uint32_t>(dialect) == static_cast<uint32_t>(core);
}
static_assert(sameCGSupport(CGSupport::never,
                            ::attn::AttentionCGSupport::NEVER) &&
                  sameCGSupport(CGSupport::uniform_single_token_decode,
                                ::attn::AttentionCGSupport::
                                    UNIFORM_SINGLE_TOKEN_DECODE) &&
                  sameCGSupport(CGSupport::uniform_batch,
                                ::attn::AttentionCGSupport::UNIFORM_BATCH) &&
                  sameCGSupport(CGSupport::always,
                                ::attn::AttentionCGSupport::ALWAYS),
              "CGSupport (AttnAttrs.td) must match core/CGSupport.h");

bool BackendAttr::isMla() const { return getName() == "TRITON_MLA"; }

bool BackendAttr::requiresBlockMultipleOf16() const {
  return getName() == "FLASH_ATTN" || getName() == "TRITON_MLA";
}

LogicalResult
BackendAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    StringRef name, CGSupport cudagraph,
                    std::optional<int64_t> reorderBatchThreshold,
                    KVLayout layout, int64_t blockSizeMultiple,
                    ArrayRef<int64_t> headSizes) {
  if (name.empty())
    return emitError() << "backend name must not be empty";
  if (blockSizeMultiple <= 0)
    return emitError() << "backend block_size_multiple must be positive, got "
                       << blockSizeMultiple;
  if (reorderBatchThreshold && *reorderBatchThreshold < 1)
    return emitError() << "backend reorder_batch_threshold must be at least 1, "
                          "got "
                       << *reorderBatchThreshold;
  if (reorderBatchThreshold &&
      *reorderBatchThreshold > kMaxReorderBatchThreshold)
    return emitError() << "backend reorder_batch_threshold must be at most "
                       << kMaxReorderBatchThreshold
                       << " (a query length, i32), got "
                       << *reorderBatchThreshold;
  for (int64_t size : headSizes)
    if (size <= 0)
      return emitError() << "backend head sizes must be positive, got "
                         << size;
  return success();
}
