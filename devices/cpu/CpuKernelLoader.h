//===- CpuKernelLoader.h - Loads a cpu kernel object from bytes -*- C++ -*-===//
//
// A cpu kernel (core/CpuKernel.h) is a shared object the bundle reader has
// already checked against the manifest's hash. Loading it from the bundle's
// path would open the file again, and whoever can write the bundle folder
// could swap it between the check and the load. The loader therefore never
// opens the bundle: it copies the checked bytes into an anonymous memory
// file (memfd), seals it against any further change, and lets the dynamic
// loader map that file (/proc/self/fd/N). What is mapped is exactly what was
// checked.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_DEVICES_CPU_CPUKERNELLOADER_H
#define ATTN_DEVICES_CPU_CPUKERNELLOADER_H

#include "core/CpuKernel.h"
#include "core/Status.h"

#include <string>
#include <string_view>

namespace attn::cpu {

/// A kernel object loaded into the process, with its entry point. Closing
/// it (the destructor) unloads the object; the entry must not be called
/// after.
class CpuKernelObject {
public:
  CpuKernelObject() = default;
  ~CpuKernelObject();
  CpuKernelObject(CpuKernelObject &&other) noexcept;
  CpuKernelObject &operator=(CpuKernelObject &&other) noexcept;
  CpuKernelObject(const CpuKernelObject &) = delete;
  CpuKernelObject &operator=(const CpuKernelObject &) = delete;

  CpuKernelEntry entry() const { return entry_; }

private:
  friend Result<CpuKernelObject>
      loadCpuKernel(std::string_view, std::string_view, std::string_view);
  void close();

  /// The dlopen handle and the sealed memory file it was mapped from, kept
  /// open while the object is loaded so that no other object gets its
  /// /proc/self/fd name.
  void *handle_ = nullptr;
  int fd_ = -1;
  CpuKernelEntry entry_ = nullptr;
};

/// A memory file (close-on-exec) holding exactly `bytes`, sealed so that
/// nobody, this process included, can change, grow or shrink it (or unseal
/// it). `what` names it in errors.
Result<int> sealedMemoryFile(std::string_view what, std::string_view bytes);

/// Loads the shared object `bytes` from a sealed memory file and looks up
/// its ABI version (attn_cpu_abi, which must be kCpuKernelAbi) and
/// `entryPoint`. `what` names the kernel in errors ("kernel S (file)").
Result<CpuKernelObject> loadCpuKernel(std::string_view what,
                                      std::string_view bytes,
                                      std::string_view entryPoint);

} // namespace attn::cpu

#endif // ATTN_DEVICES_CPU_CPUKERNELLOADER_H
