//===- TensorCheck.h - Shape and dtype checks with readable messages ------===//
//
// The ops check every operand before reading it; these helpers phrase the
// common checks the same way everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_TENSORCHECK_H
#define ATTN_CORE_TENSORCHECK_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <initializer_list>
#include <string_view>

namespace attn {

/// Checks that `t` (called `name` in messages) has `rank` dimensions and one
/// of `dtypes`.
Status checkRankAndDType(const Tensor &t, std::string_view name, int64_t rank,
                         std::initializer_list<DType> dtypes);

/// Checks that dimension `axis` of `t` is `expected`; `what` says where the
/// expected value comes from ("num_reqs", "query dim 2", ...).
Status checkDim(const Tensor &t, std::string_view name, int64_t axis,
                int64_t expected, std::string_view what);

/// Checks that `t` has the same dtype as `reference` (called `referenceName`).
Status checkSameDType(const Tensor &t, std::string_view name,
                      const Tensor &reference, std::string_view referenceName);

} // namespace attn

#endif // ATTN_CORE_TENSORCHECK_H
