//===- KernelCompiler.h - Builds emitted TT kernels for the emulator -----===//
//
// TT-Metalium compiles kernels when a program is created, with the kernel's
// compile-time arguments as defines. The emulator does the same with the host
// compiler: each (kernel source, compile-time arguments) pair becomes a shared
// object, compiled once into a cache folder and loaded with dlopen. Doing it
// at run time, rather than compiling every kernel into the test binaries at
// build time, keeps compile-time arguments compile-time (constants the
// compiler folds, as on the device), lets one emitted kernel serve any
// argument values, and lets attn-tt-run take kernels emitted anywhere.
//
// The compiler is $ATTN_TT_CXX, else the C++ compiler the project was built
// with; the cache is $ATTN_TT_CACHE_DIR, else a folder under /tmp.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_EXECUTORS_TT_KERNELCOMPILER_H
#define ATTN_RUNTIME_EXECUTORS_TT_KERNELCOMPILER_H

#include "runtime/executors/tt/Emulator.h"

#include <string>
#include <vector>

namespace attn::tt {

class KernelCompiler {
public:
  KernelCompiler();
  ~KernelCompiler();
  KernelCompiler(const KernelCompiler &) = delete;
  KernelCompiler &operator=(const KernelCompiler &) = delete;

  /// Compiles (or finds in the cache) the kernel at `sourcePath` with
  /// `compileTimeArgs` and returns its entry point.
  Result<KernelEntry> load(const std::string &sourcePath,
                           const std::vector<uint32_t> &compileTimeArgs);

private:
  std::string cacheDir_;
  std::vector<void *> handles_;
};

} // namespace attn::tt

#endif // ATTN_RUNTIME_EXECUTORS_TT_KERNELCOMPILER_H
