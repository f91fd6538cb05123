//===- TensorCheck.cpp - Shape and dtype checks with readable messages ----===//
#include "core/TensorCheck.h"

#include <algorithm>
#include <sstream>

namespace attn {

Status checkRankAndDType(const Tensor &t, std::string_view name, int64_t rank,
                         std::initializer_list<DType> dtypes) {
  const bool dtypeOk =
      std::find(dtypes.begin(), dtypes.end(), t.dtype()) != dtypes.end();
  if (t.rank() == rank && dtypeOk)
    return Status::ok();
  std::ostringstream allowed;
  size_t i = 0;
  for (DType d : dtypes) {
    if (i > 0)
      allowed << (i + 1 == dtypes.size() ? " or " : ", ");
    allowed << toString(d);
    ++i;
  }
  return errorf(name, " must be a rank-", rank, " tensor of ", allowed.str(),
                ", got ", t.describe());
}

Status checkDim(const Tensor &t, std::string_view name, int64_t axis,
                int64_t expected, std::string_view what) {
  if (t.dim(axis) == expected)
    return Status::ok();
  return errorf(name, " dim ", axis, " is ", t.dim(axis), ", expected ",
                expected, " (", what, "); ", name, " is ", t.describe());
}

Status checkSameDType(const Tensor &t, std::string_view name,
                      const Tensor &reference, std::string_view referenceName) {
  if (t.dtype() == reference.dtype())
    return Status::ok();
  return errorf(name, " has dtype ", toString(t.dtype()), ", expected ",
                toString(reference.dtype()), " (the dtype of ", referenceName,
                ")");
}

} // namespace attn
