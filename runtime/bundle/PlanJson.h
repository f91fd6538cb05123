//===- PlanJson.h - Plans as nlohmann::json values -------------*- C++ -*-===//
//
// For code that embeds plans in a larger JSON document (bundle manifests).
// Kept out of Plan.h so hosts that include the runtime's public headers do
// not need nlohmann/json.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_PLANJSON_H
#define ATTN_RUNTIME_PLANJSON_H

#include "runtime/bundle/Plan.h"

#include <nlohmann/json.hpp>

namespace attn::runtime {

nlohmann::json planToJsonValue(const Plan &plan);
/// Parses and verifies.
Result<Plan> planFromJsonValue(const nlohmann::json &j);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_PLANJSON_H
