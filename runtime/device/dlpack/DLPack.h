//===- DLPack.h - Device tensors to and from DLPack ------------*- C++ -*-===//
//
// Exchanges device tensors with other frameworks (PyTorch, JAX, CuPy, a C++
// engine's own allocator) through DLPack's DLManagedTensor, without copying:
// the two sides share the memory and the owner's deleter runs once, when
// both are done with it.
//
// Only devices whose memory has addresses a framework understands take part
// (PlanDevice::memorySpace): host memory as kDLCPU (or CUDA's page-locked
// kDLCUDAHost, which the host reads as its own), CUDA memory as kDLCUDA with
// the device's ordinal. Vulkan, Metal and TT buffers are opaque: DLPack
// names kDLVulkan and kDLMetal, but frameworks agree on no handle for them,
// so exchanging those is an error, not a guess.
//
// attn kernels read dense row-major tensors, so strides must be row-major
// (dimensions of one element may have any stride). Neither call orders
// work between queues: hand over a tensor once the work that writes it is
// done (toDLPack waits for the attn device's queue).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_DLPACK_DLPACK_H
#define ATTN_RUNTIME_DLPACK_DLPACK_H

#include "runtime/device/Device.h"

#include <dlpack/dlpack.h>

namespace attn::runtime {

/// A device tensor over `managed`'s memory on `device`. On success the
/// tensor owns `managed`: its deleter runs when the last device tensor on
/// the memory is dropped. On error nothing is taken; the caller still owns
/// `managed`. The device must be the one the memory is on.
Result<DeviceTensor> fromDLPack(PlanDevice &device, DLManagedTensor *managed);

/// A DLManagedTensor over `tensor`'s memory, which it keeps alive until its
/// deleter runs (the consumer calls it once). Waits for the work enqueued
/// on the tensor's device first.
Result<DLManagedTensor *> toDLPack(const DeviceTensor &tensor);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_DLPACK_DLPACK_H
