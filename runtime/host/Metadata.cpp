//===- Metadata.cpp - Per-step attention metadata -------------------------===//

#include "runtime/host/Metadata.h"

#include <cstring>

namespace attn::runtime {

namespace {

template <typename T>
Result<Tensor> copyToTensor(const std::vector<T> &data, DType dtype,
                            std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return errorf("tensor dimension ", d, " is negative");
    count *= d;
  }
  if (count != static_cast<int64_t>(data.size()))
    return errorf("shape holds ", count, " elements but the data has ",
                  data.size());
  Tensor t(dtype, std::move(shape));
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  if (!data.empty())
    std::memcpy(t.data(), data.data(), data.size() * sizeof(T));
  return t;
}

} // namespace

Result<CommonAttentionMetadata> makeCommonAttentionMetadata(
    const StepInputs &step, const std::vector<int32_t> &blockTableFlat,
    int32_t blockTableNumCols, bool causal, int32_t kvCacheGroupId) {
  CommonAttentionMetadata cam;
  cam.queryStartLoc = step.queryStartLoc;
  cam.seqLens = step.seqLens;
  cam.hasBlockTable = true;
  cam.blockTable = blockTableFlat;
  cam.blockTableCols = blockTableNumCols;
  // One slot mapping per KV cache group; pick the requested one.
  if (!step.slotMapping.empty()) {
    if (kvCacheGroupId < 0 ||
        static_cast<size_t>(kvCacheGroupId) >= step.slotMapping.size())
      return errorf("kv cache group ", kvCacheGroupId,
                    " has no slot mapping (the step has ",
                    step.slotMapping.size(), " groups)");
    cam.slotMapping = step.slotMapping[kvCacheGroupId];
  }
  cam.causal = causal;
  return attn::makeCommonAttentionMetadata(std::move(cam));
}

Result<Tensor> toTensor(const std::vector<int32_t> &data,
                        std::vector<int64_t> shape) {
  return copyToTensor(data, DType::I32, std::move(shape));
}

Result<Tensor> toTensor(const std::vector<int64_t> &data,
                        std::vector<int64_t> shape) {
  return copyToTensor(data, DType::I64, std::move(shape));
}

Tensor toTensor(const std::vector<int32_t> &data) {
  return std::move(
      copyToTensor(data, DType::I32, {static_cast<int64_t>(data.size())})
          .value());
}

Tensor toTensor(const std::vector<int64_t> &data) {
  return std::move(
      copyToTensor(data, DType::I64, {static_cast<int64_t>(data.size())})
          .value());
}

} // namespace attn::runtime
