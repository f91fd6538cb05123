//===- PlanBuilder.h - Host function -> runtime plan -----------*- C++ -*-===//
//
// After convert-attn-to-gpu, a host function holds only size arithmetic,
// buffer allocations and views, params stores and gpu.launch_func. This
// turns it into a runtime::Plan (runtime/bundle/Plan.h), the data a bundle carries
// so the MLIR-free runtime can run the function on any device.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_PLANBUILDER_H
#define ATTN_COMPILER_PLANBUILDER_H

#include "runtime/bundle/Plan.h"

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace attn {

/// The runtime element type of `type` (f32, f16, bf16, fp8, i32 or i64), or
/// none. elementTypeOf is its inverse: the two are the one mapping between
/// MLIR element types and core's DType.
std::optional<::attn::DType> planElementType(Type type);
Type elementTypeOf(::attn::DType dtype, MLIRContext *context);

/// Builds the plan of `func`. Ops a plan cannot express are reported as
/// errors at their location.
FailureOr<::attn::runtime::Plan> buildPlan(func::FuncOp func);

} // namespace attn
} // namespace mlir

#endif // ATTN_COMPILER_PLANBUILDER_H
