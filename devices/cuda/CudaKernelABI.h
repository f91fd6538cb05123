//===- CudaKernelABI.h - How PTX kernels take their arguments --*- C++ -*-===//
//
// The launch side of the PTX target's kernel ABI (lowering/GPUToPTX/
// GPUToPTX.h): the kernel parameters a launch passes, from the kernel's
// launch facts (core/LaunchFacts.h). Plain C++: no CUDA headers, so it
// is tested on machines without CUDA.
//
// convert-gpu-to-nvvm keeps upstream's default memref calling convention:
// each `memref<?xT>` argument of the kernel IR is five `.param .u64` values,
// (allocated pointer, aligned pointer, offset, size, stride), in argument
// order. A buffer at device address p holding n elements is passed as
// (p, p, 0, n, 1); the kernels index from the aligned pointer and never read
// the size, which is passed truthfully anyway.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_CUDA_CUDAKERNELABI_H
#define ATTN_RUNTIME_EXECUTORS_CUDA_CUDAKERNELABI_H

#include "core/LaunchFacts.h"
#include "core/Status.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::cuda {

/// u64 kernel parameters per memref argument.
inline constexpr int kMemrefDescriptorWords = 5;

/// The kernel parameters of one launch: kMemrefDescriptorWords u64 per
/// buffer, for buffers at device `addresses` of `bytes` bytes each. An error
/// when the counts disagree with the facts.
Result<std::vector<uint64_t>>
packKernelParams(const LaunchFacts &facts,
                 std::span<const uint64_t> addresses,
                 std::span<const uint64_t> bytes);

} // namespace attn::cuda

#endif // ATTN_RUNTIME_EXECUTORS_CUDA_CUDAKERNELABI_H
