//===- OperandChecks.cpp - Checks the attention impls share ---------------===//

#include "runtime/host/OperandChecks.h"

#include "core/Metadata.h"

namespace attn::runtime {

std::string shapeOf(const OperandType &t) {
  std::ostringstream os;
  os << "[" << joined(t.shape) << "] " << toString(t.dtype);
  return os.str();
}

Status checkShape(std::string_view who, std::string_view name,
                  const OperandType &t, std::vector<int64_t> shape,
                  std::optional<DType> dtype) {
  bool ok = t.shape.size() == shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = shape[i] < 0 || t.shape[i] == shape[i];
  if (!ok) {
    std::ostringstream want;
    want << "[";
    for (size_t i = 0; i < shape.size(); ++i)
      want << (i ? ", " : "")
           << (shape[i] < 0 ? "?" : std::to_string(shape[i]));
    want << "]";
    return errorf(who, ": ", name, " must be ", want.str(), ", got ",
                  shapeOf(t));
  }
  if (dtype && t.dtype != *dtype)
    return errorf(who, ": ", name, " must be ", toString(*dtype), ", got ",
                  toString(t.dtype));
  return Status::ok();
}

Status checkOnDevice(std::string_view who, std::string_view name,
                     const DeviceTensor &t, const PlanDevice &device) {
  if (t.device != &device)
    return errorf(who, ": ", name, " ", t.describe(), " is not on ",
                  device.name(), ", the device of the layer's executor");
  return Status::ok();
}

Status checkPagedAccess(std::string_view who, const Tensor &seqLens,
                        const Tensor &blockTable, const Tensor *slotMapping,
                        int64_t numBlocks, int64_t blockSize) {
  Status s =
      checkCacheBounds(seqLens, blockTable, slotMapping, numBlocks, blockSize);
  if (!s)
    return errorf(who, ": ", s.message());
  return Status::ok();
}

} // namespace attn::runtime
