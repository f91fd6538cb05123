//===- PlanInputs.h - A plan's arguments drawn from fuzz bytes --*- C++ -*-===//
//
// The bundle and plan targets run plans on arguments whose dynamic sizes
// (0 to 5) and contents come from the input's bytes.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_FUZZ_PLANINPUTS_H
#define ATTN_TEST_FUZZ_PLANINPUTS_H

#include "core/Tensor.h"
#include "runtime/bundle/Plan.h"
#include "test/fuzz/FuzzInput.h"

#include <cstdint>
#include <vector>

namespace attn::fuzz {

/// Arguments of `plan`'s types, dynamic sizes and contents from `in`; none
/// when one would hold more than `maxBytes`.
inline std::vector<Tensor> drawPlanInputs(const runtime::Plan &plan,
                                          FuzzInput &in, uint64_t maxBytes) {
  std::vector<Tensor> inputs;
  for (const runtime::PlanTensorType &type : plan.arguments) {
    std::vector<int64_t> shape;
    for (int64_t d : type.shape)
      shape.push_back(d >= 0 ? d : in.range(0, 5));
    Result<Tensor> t = Tensor::create(type.dtype, shape);
    if (!t || t->numBytes() > maxBytes)
      return {};
    for (size_t i = 0; i < t->numBytes(); ++i)
      t->data()[i] = in.take<uint8_t>();
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

} // namespace attn::fuzz

#endif // ATTN_TEST_FUZZ_PLANINPUTS_H
