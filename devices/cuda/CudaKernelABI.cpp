//===- CudaKernelABI.cpp - How PTX kernels take their arguments -----------===//

#include "devices/cuda/CudaKernelABI.h"

namespace attn::cuda {

Result<std::vector<uint64_t>>
packKernelParams(const LaunchFacts &facts,
                 std::span<const uint64_t> addresses,
                 std::span<const uint64_t> bytes) {
  if (addresses.size() != bytes.size())
    return errorf("packKernelParams: ", addresses.size(), " addresses but ",
                  bytes.size(), " sizes");
  if (addresses.size() != facts.argElementBytes.size())
    return errorf("the launch passes ", addresses.size(),
                  " buffers, the kernel takes ", facts.argElementBytes.size());
  std::vector<uint64_t> words;
  words.reserve(addresses.size() * kMemrefDescriptorWords);
  for (size_t i = 0; i < addresses.size(); ++i) {
    uint64_t elements = bytes[i] / facts.argElementBytes[i];
    // allocated, aligned, offset, size, stride
    words.insert(words.end(), {addresses[i], addresses[i], 0, elements, 1});
  }
  return words;
}

} // namespace attn::cuda
