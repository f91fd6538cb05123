//===- TestKernels.h - The SPIR-V kernels lowered for these tests --------===//
//
// Inputs/<name>.mlir is lowered at build time to <build>/kernels/<name>.spv
// (see LowerKernel.cmake).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_UNIT_VULKAN_TESTKERNELS_H
#define ATTN_TEST_UNIT_VULKAN_TESTKERNELS_H

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace attn::test {

/// The words of kernels/<name>.spv; empty when the file is missing.
inline std::vector<uint32_t> readKernel(const std::string &name) {
  std::ifstream file(std::string(ATTN_VULKAN_TEST_KERNELS) + "/" + name +
                         ".spv",
                     std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / sizeof(uint32_t));
  std::copy(bytes.begin(), bytes.begin() + words.size() * sizeof(uint32_t),
            reinterpret_cast<char *>(words.data()));
  return words;
}

} // namespace attn::test

#endif // ATTN_TEST_UNIT_VULKAN_TESTKERNELS_H
