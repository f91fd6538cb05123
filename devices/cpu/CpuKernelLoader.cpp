//===- CpuKernelLoader.cpp - Loads a cpu kernel object from bytes ---------===//

#include "devices/cpu/CpuKernelLoader.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace attn::cpu {

namespace {

/// How often loadCpuKernel takes another descriptor number for the memory
/// file before it gives up (see freeDlopenName): once per earlier object
/// that stayed mapped after its close under a name now free (an object
/// linked with -z nodelete, as LLVM's CMake links modules, never unmaps), so
/// a process that loads and closes many such objects needs many. 16 ran out
/// in a test process of a few dozen.
constexpr int kNameTries = 1024;

std::string errnoText() { return std::strerror(errno); }

std::string dlerrorText() {
  const char *text = dlerror();
  return text ? text : "no reason given";
}

std::string procName(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

/// Moves `fd` to a descriptor number whose /proc/self/fd name no loaded
/// object has. The dynamic loader returns an object already loaded under
/// the name it is given without opening anything, and an object that could
/// not be unmapped when it was closed keeps its name after its descriptor
/// is reused.
Result<int> freeDlopenName(std::string_view what, int fd) {
  for (int tries = 0; tries < kNameTries; ++tries) {
    void *resident = dlopen(procName(fd).c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!resident)
      return fd;
    dlclose(resident);
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    int err = errno;
    ::close(fd);
    if (moved < 0)
      return errorf(what,
                    ": moving its memory file failed: ", std::strerror(err));
    fd = moved;
  }
  ::close(fd);
  return errorf(what, ": found no /proc/self/fd name that no loaded object "
                      "holds");
}

/// The address of `symbol` in the object at `path` (`handle`): null, with
/// `error` set, when neither it nor, as dlsym would find, one of its
/// dependencies defines it there.
void *lookup(void *handle, const std::string &path, const std::string &symbol,
             std::string &error) {
  dlerror();
  void *address = dlsym(handle, symbol.c_str());
  if (!address) {
    error = dlerrorText();
    return nullptr;
  }
  // dlsym also searches the object's dependencies (the C library...).
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname || info.dli_fname != path) {
    error = "defined by " +
            std::string(info.dli_fname ? info.dli_fname : "another object") +
            ", not by the kernel object";
    return nullptr;
  }
  return address;
}

} // namespace

Result<int> sealedMemoryFile(std::string_view what, std::string_view bytes) {
  int fd = memfd_create("attn-cpu-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return errorf(what, ": memfd_create failed: ", errnoText());
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      Status error = errorf(what, ": writing its memory file failed: ",
                            n < 0 ? errnoText() : "nothing written");
      ::close(fd);
      return error;
    }
    done += size_t(n);
  }
  if (fcntl(fd, F_ADD_SEALS,
            F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    Status error =
        errorf(what, ": sealing its memory file failed: ", errnoText());
    ::close(fd);
    return error;
  }
  return fd;
}

CpuKernelObject::~CpuKernelObject() { close(); }

CpuKernelObject::CpuKernelObject(CpuKernelObject &&other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      fd_(std::exchange(other.fd_, -1)),
      entry_(std::exchange(other.entry_, nullptr)) {}

CpuKernelObject &CpuKernelObject::operator=(CpuKernelObject &&other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    entry_ = std::exchange(other.entry_, nullptr);
  }
  return *this;
}

void CpuKernelObject::close() {
  if (handle_)
    dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
  handle_ = nullptr;
  fd_ = -1;
  entry_ = nullptr;
}

Result<CpuKernelObject> loadCpuKernel(std::string_view what,
                                      std::string_view bytes,
                                      std::string_view entryPoint) {
  Result<int> fd = sealedMemoryFile(what, bytes);
  if (fd)
    fd = freeDlopenName(what, *fd);
  if (!fd)
    return fd.status();
  CpuKernelObject object;
  object.fd_ = *fd;
  std::string path = procName(object.fd_);
  object.handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!object.handle_)
    return errorf(what, ": cannot load the kernel object: ", dlerrorText());

  // From here on, an error closes the object again (its destructor).
  std::string error;
  const std::string abiSymbol(kCpuKernelAbiSymbol);
  const auto *abi = static_cast<const uint32_t *>(
      lookup(object.handle_, path, abiSymbol, error));
  if (!abi)
    return errorf(what, " exports no ", abiSymbol, " (", error,
                  "); this runtime runs kernels of ", abiSymbol, " = ",
                  kCpuKernelAbi);
  if (*abi != kCpuKernelAbi)
    return errorf(what, " has ", abiSymbol, " = ", *abi,
                  "; this runtime runs kernels of ", abiSymbol, " = ",
                  kCpuKernelAbi,
                  " (recompile it with a matching attn-compile)");
  void *entry = lookup(object.handle_, path, std::string(entryPoint), error);
  if (!entry)
    return errorf(what, " has no entry point ", entryPoint, " (", error, ")");
  object.entry_ = reinterpret_cast<CpuKernelEntry>(entry);
  return object;
}

} // namespace attn::cpu
