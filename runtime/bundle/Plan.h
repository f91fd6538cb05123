//===- Plan.h - How to run one compiled function on a device ---*- C++ -*-===//
//
// A plan is the host side of a compiled attn function, as data: the small
// program that convert-attn-to-gpu leaves in the host function (sizes read
// from argument shapes, scratch and params buffers, kernel launches) in a
// form the MLIR-free runtime can execute on any device. attn-compile writes
// one plan per function into a bundle's manifest; runtime/device/PlanRunner.h runs
// it.
//
// Values are numbered slots: each holds either an integer (sizes, indices)
// or a buffer (a device allocation with an element type and a shape).
// Slots 0 .. arguments.size()-1 are the function's arguments.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PLAN_H
#define ATTN_RUNTIME_PLAN_H

#include "core/DType.h"
#include "core/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::runtime {

/// A tensor in a function signature; -1 marks a dynamic dimension.
struct PlanTensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  bool operator==(const PlanTensorType &) const = default;
};

enum class PlanOpKind {
  /// result = dim(operands[0], imm)
  Dim,
  /// result = imm
  Const,
  /// result = operands[0] <op> operands[1], on int64
  Add,
  Sub,
  Mul,
  DivU,
  RemU,
  CeilDivU,
  MinU,
  MaxU,
  /// result = a new buffer of `dtype`, shape = the integer slots `operands`,
  /// zero-filled.
  Alloc,
  /// result = operands[0] seen with shape = the integer slots operands[1..]
  /// (same bytes; the element count must not grow).
  View,
  /// buffer operands[0] [element operands[1]] = integer operands[2]
  Store,
  /// Runs `kernel` on a grid of operands[0..2] workgroups of `block`
  /// invocations, with the buffers operands[3..] as its arguments.
  Launch,
  /// The function's results, in order.
  Return,
};

std::string_view toString(PlanOpKind kind);

struct PlanOp {
  PlanOpKind kind = PlanOpKind::Const;
  /// The slot written, or -1 for Store / Launch / Return.
  int32_t result = -1;
  std::vector<int32_t> operands;
  /// Const: the value; Dim: the dimension.
  int64_t imm = 0;
  /// Alloc: the element type.
  DType dtype = DType::F32;
  /// Launch: the kernel's symbol and workgroup size.
  std::string kernel;
  std::array<int64_t, 3> block = {1, 1, 1};

  bool operator==(const PlanOp &) const = default;
};

/// Bounds on a plan's size, far above what convert-attn-to-gpu leaves in a
/// host function (tens of slots and ops), so that a damaged plan is refused
/// before anything is allocated for it.
inline constexpr int32_t kMaxPlanSlots = 1 << 16;
inline constexpr int32_t kMaxPlanOps = 1 << 16;

struct Plan {
  /// The function this plan runs, e.g. "paged_attention".
  std::string function;
  std::vector<PlanTensorType> arguments;
  std::vector<PlanTensorType> results;
  int32_t numSlots = 0;
  std::vector<PlanOp> ops;

  bool operator==(const Plan &) const = default;

  /// Checks slot numbering, operand counts and kinds: every slot is written
  /// once before it is read, Return comes last.
  Status verify() const;
};

/// JSON text of a plan, and back. Parsing verifies the plan.
std::string planToJson(const Plan &plan);
Result<Plan> planFromJson(std::string_view json);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PLAN_H
