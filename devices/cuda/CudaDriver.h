//===- CudaDriver.h - The CUDA driver API, loaded at run time --*- C++ -*-===//
//
// The few driver entry points the CUDA executor uses, looked up with dlsym in
// libcuda.so.1 so that one binary runs on machines with and without an
// NVIDIA driver. Types come from the toolkit's cuda.h (build time only); the
// symbol names are spelled out because cuda.h maps many functions to
// versioned symbols (cuMemAlloc -> cuMemAlloc_v2) with macros.
//
// Only the executor's sources include this header: it pulls in cuda.h.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_CUDA_CUDADRIVER_H
#define ATTN_RUNTIME_EXECUTORS_CUDA_CUDADRIVER_H

#include "core/Status.h"

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace attn::cuda {

// X(member, symbol, return type and parameters)
#define ATTN_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(init, "cuInit", CUresult(unsigned int))                                    \
  X(driverGetVersion, "cuDriverGetVersion", CUresult(int *))                   \
  X(getErrorName, "cuGetErrorName", CUresult(CUresult, const char **))         \
  X(getErrorString, "cuGetErrorString", CUresult(CUresult, const char **))     \
  X(deviceGetCount, "cuDeviceGetCount", CUresult(int *))                       \
  X(deviceGet, "cuDeviceGet", CUresult(CUdevice *, int))                       \
  X(deviceGetName, "cuDeviceGetName", CUresult(char *, int, CUdevice))         \
  X(deviceGetAttribute, "cuDeviceGetAttribute",                                \
    CUresult(int *, CUdevice_attribute, CUdevice))                             \
  X(deviceTotalMem, "cuDeviceTotalMem_v2", CUresult(size_t *, CUdevice))       \
  X(primaryCtxRetain, "cuDevicePrimaryCtxRetain",                              \
    CUresult(CUcontext *, CUdevice))                                           \
  X(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult(CUdevice))     \
  X(ctxSetCurrent, "cuCtxSetCurrent", CUresult(CUcontext))                     \
  X(ctxSynchronize, "cuCtxSynchronize", CUresult())                            \
  X(moduleLoadDataEx, "cuModuleLoadDataEx",                                    \
    CUresult(CUmodule *, const void *, unsigned int, CUjit_option *, void **)) \
  X(moduleUnload, "cuModuleUnload", CUresult(CUmodule))                        \
  X(moduleGetFunction, "cuModuleGetFunction",                                  \
    CUresult(CUfunction *, CUmodule, const char *))                            \
  X(memAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr *, size_t))                \
  X(memFree, "cuMemFree_v2", CUresult(CUdeviceptr))                            \
  X(memsetD8, "cuMemsetD8_v2", CUresult(CUdeviceptr, unsigned char, size_t))   \
  X(memcpyHtoD, "cuMemcpyHtoD_v2",                                             \
    CUresult(CUdeviceptr, const void *, size_t))                               \
  X(memcpyDtoH, "cuMemcpyDtoH_v2", CUresult(void *, CUdeviceptr, size_t))      \
  X(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                   \
    CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))                      \
  X(streamCreate, "cuStreamCreate", CUresult(CUstream *, unsigned int))        \
  X(streamDestroy, "cuStreamDestroy_v2", CUresult(CUstream))                   \
  X(streamSynchronize, "cuStreamSynchronize", CUresult(CUstream))              \
  X(eventCreate, "cuEventCreate", CUresult(CUevent *, unsigned int))           \
  X(eventDestroy, "cuEventDestroy_v2", CUresult(CUevent))                      \
  X(eventRecord, "cuEventRecord", CUresult(CUevent, CUstream))                 \
  X(eventSynchronize, "cuEventSynchronize", CUresult(CUevent))                 \
  X(eventElapsedTime, "cuEventElapsedTime",                                    \
    CUresult(float *, CUevent, CUevent))                                       \
  X(launchKernel, "cuLaunchKernel",                                            \
    CUresult(CUfunction, unsigned int, unsigned int, unsigned int,             \
             unsigned int, unsigned int, unsigned int, unsigned int, CUstream, \
             void **, void **))                                                \
  X(graphCreate, "cuGraphCreate", CUresult(CUgraph *, unsigned int))           \
  X(graphDestroy, "cuGraphDestroy", CUresult(CUgraph))                         \
  X(graphAddKernelNode, "cuGraphAddKernelNode_v2",                             \
    CUresult(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,              \
             const CUDA_KERNEL_NODE_PARAMS *))                                 \
  X(graphAddMemcpyNode, "cuGraphAddMemcpyNode",                                \
    CUresult(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,              \
             const CUDA_MEMCPY3D *, CUcontext))                                \
  X(graphAddMemsetNode, "cuGraphAddMemsetNode",                                \
    CUresult(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,              \
             const CUDA_MEMSET_NODE_PARAMS *, CUcontext))                      \
  X(graphInstantiate, "cuGraphInstantiateWithFlags",                           \
    CUresult(CUgraphExec *, CUgraph, unsigned long long))                      \
  X(graphExecDestroy, "cuGraphExecDestroy", CUresult(CUgraphExec))             \
  X(graphLaunch, "cuGraphLaunch", CUresult(CUgraphExec, CUstream))

/// libcuda's entry points. Loading fails with a message when the library is
/// missing or lacks one of them; calls go through the members.
class CudaDriver {
public:
  /// dlopen()s `library` ("libcuda.so.1", or a path) and resolves every
  /// entry point.
  static Result<std::unique_ptr<CudaDriver>> load(const std::string &library);
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// Ok for CUDA_SUCCESS, else "<what>: CUDA_ERROR_X (description)".
  Status check(CUresult result, std::string_view what) const;

  const std::string &library() const { return library_; }

#define ATTN_CUDA_DRIVER_MEMBER(member, symbol, type)                          \
  std::add_pointer_t<type> member = nullptr;
  ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_CUDA_DRIVER_MEMBER)
#undef ATTN_CUDA_DRIVER_MEMBER

private:
  CudaDriver() = default;
  void *handle_ = nullptr;
  std::string library_;
};

} // namespace attn::cuda

#endif // ATTN_RUNTIME_EXECUTORS_CUDA_CUDADRIVER_H
