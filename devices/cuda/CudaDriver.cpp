//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//

#include "devices/cuda/CudaDriver.h"

#include <dlfcn.h>

namespace attn::cuda {

Result<std::unique_ptr<CudaDriver>>
CudaDriver::load(const std::string &library) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return errorf("no CUDA driver (", library, ") found",
                  why ? std::string(": ") + why : std::string());
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->handle_ = handle;
  driver->library_ = library;
#define ATTN_CUDA_DRIVER_RESOLVE(member, symbol, type)                         \
  driver->member =                                                             \
      reinterpret_cast<std::add_pointer_t<type>>(dlsym(handle, symbol));       \
  if (!driver->member)                                                         \
    return errorf(library, " is not a usable CUDA driver: it has no ", symbol);
  ATTN_CUDA_DRIVER_FUNCTIONS(ATTN_CUDA_DRIVER_RESOLVE)
#undef ATTN_CUDA_DRIVER_RESOLVE
  return driver;
}

CudaDriver::~CudaDriver() {
  if (handle_)
    dlclose(handle_);
}

Status CudaDriver::check(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS)
    return Status::ok();
  const char *name = nullptr;
  const char *description = nullptr;
  if (getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUDA error";
  if (getErrorString(result, &description) != CUDA_SUCCESS || !description)
    description = "";
  return errorf(what, ": ", name, " (", static_cast<int>(result), ")",
                *description ? std::string(": ") + description : std::string());
}

} // namespace attn::cuda
