//===- PlanTemplate.h - Plans as a shared shape and their values -*- C++
//-*-===//
//
// Variants of one op with the same knobs compile to plans that differ only
// in numbers: static dims, constants, workgroup sizes, element types. A
// bundle's manifest writes each plan as a template (its JSON with those
// leaves set to null), shared by every entry whose plan has that shape, and
// each entry's leaves as a flat array, in the order forEachPlanValue visits
// them:
//
//   arguments then results, each: dtype, then every dim of shape
//   ops, in order: const's imm, alloc's dtype, launch's block (x, y, z)
//
// Everything else (the op sequence, slots, dims' indices, kernel symbols,
// the function's name) is the template's. Launch bounds are split the same
// way, with every number a value (splitNumbers).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PLANTEMPLATE_H
#define ATTN_RUNTIME_PLANTEMPLATE_H

#include "core/Status.h"

#include <nlohmann/json.hpp>

namespace attn::runtime {

/// A JSON value (a plan, launch bounds) as its shape and its values.
struct SplitJson {
  /// The JSON with every value leaf null.
  nlohmann::json shape;
  /// The leaves, in visiting order.
  nlohmann::json values = nlohmann::json::array();
};

/// Splits a plan's JSON (planToJsonValue) into its shape and values.
SplitJson splitPlanValues(nlohmann::json plan);

/// The inverse: `shape` with its null leaves filled from `values`, in order.
/// An error if a value leaf of `shape` is not null, or the counts differ;
/// the result still has to be parsed and verified (planFromJsonValue).
Result<nlohmann::json> fillPlanValues(nlohmann::json shape,
                                      const nlohmann::json &values);

/// The same for any JSON value where every number is a value (a kernel's
/// launch bounds, core/LaunchBounds.h): the shape has each number null,
/// the values are the numbers in document order (object members in key
/// order).
SplitJson splitNumbers(nlohmann::json value);

/// The inverse of splitNumbers, with fillPlanValues's errors.
Result<nlohmann::json> fillNumbers(nlohmann::json shape,
                                   const nlohmann::json &values);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PLANTEMPLATE_H
