//===- OperandChecks.h - Checks the attention impls share -----------------===//
//
// What FLASH_ATTN's and TRITON_MLA's impls check of their operands before
// anything is enqueued: shapes and dtypes, that a device tensor is on the
// executor's device, that the paged cache accesses stay inside the cache,
// and the refusals every forward starts with. Each message starts with
// `who`, the backend's name.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_HOST_OPERANDCHECKS_H
#define ATTN_RUNTIME_HOST_OPERANDCHECKS_H

#include "core/DType.h"
#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/executor/KernelExecutor.h"
#include "runtime/executor/VariantQuery.h"
#include "runtime/host/MetadataBuilder.h"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace attn::runtime {

/// `values` separated by ", " (dtypes by name), for messages.
template <typename Range> std::string joined(const Range &values) {
  std::ostringstream os;
  bool first = true;
  for (const auto &v : values) {
    if (!first)
      os << ", ";
    first = false;
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, DType>)
      os << toString(v);
    else
      os << v;
  }
  return os.str();
}

/// "[2, 3] f16".
std::string shapeOf(const OperandType &t);

/// Checks that `t` (a host or device tensor) is `shape` (a negative entry
/// matches any size) and, when given, of `dtype`.
Status checkShape(std::string_view who, std::string_view name,
                  const OperandType &t, std::vector<int64_t> shape,
                  std::optional<DType> dtype);

/// A device tensor is on the executor's device, so its kernels can read it.
Status checkOnDevice(std::string_view who, std::string_view name,
                     const DeviceTensor &t, const PlanDevice &device);

/// Checks that every block a request reads (those covering [0, seq_len))
/// and every non-padding slot lies inside a cache of `numBlocks` blocks of
/// `blockSize` tokens, so no executor reads or writes out of bounds
/// (core/Metadata.h's rules).
Status checkPagedAccess(std::string_view who, const Tensor &seqLens,
                        const Tensor &blockTable, const Tensor *slotMapping,
                        int64_t numBlocks, int64_t blockSize);

/// What every impl's forward refuses first: fused output quantization, and
/// metadata of another backend's kind than `Metadata`. The metadata as a
/// `Metadata` otherwise.
template <typename Metadata>
Result<const Metadata *>
forwardMetadata(std::string_view who, const AttentionMetadata &metadata,
                const Tensor *outputScale, const Tensor *outputBlockScale) {
  if (outputScale || outputBlockScale)
    return errorf(who, ": fused output quantization is not supported");
  const auto *md = dynCastMetadata<Metadata>(&metadata);
  if (!md)
    return errorf(who, ": attention metadata must be ",
                  toString(Metadata::kKind), ", got ",
                  toString(metadata.kind()));
  return md;
}

} // namespace attn::runtime

#endif // ATTN_RUNTIME_HOST_OPERANDCHECKS_H
