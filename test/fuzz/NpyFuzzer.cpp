//===- NpyFuzzer.cpp - Fuzz target: the .npy reader ----------------------===//
//
// Input: the bytes of a .npy file. The first byte picks the dtype the caller
// expects (none, f32, f16, bf16, i32, i64); the rest is the file. Whatever
// parses must format back into a file that parses to the same tensor.
//
//===----------------------------------------------------------------------===//

#include "reference/testing/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace attn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static constexpr std::optional<DType> expectations[] = {
      std::nullopt, DType::F32, DType::F16, DType::BF16, DType::I32,
      DType::I64};
  const std::optional<DType> expected =
      expectations[data[0] % std::size(expectations)];
  std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  Result<Tensor> tensor = parseNpy(bytes, "fuzz.npy", expected);
  if (!tensor)
    return 0;
  Result<Tensor> again = parseNpy(formatNpy(*tensor), "again.npy", expected);
  if (!again || !(*again == *tensor)) {
    std::fprintf(stderr, "npy: %s does not read back as itself\n",
                 tensor->describe().c_str());
    std::abort();
  }
  return 0;
}
