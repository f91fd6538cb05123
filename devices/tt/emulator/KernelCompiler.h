//===- KernelCompiler.h - Builds emitted TT kernels for the emulator -----===//
//
// TT-Metalium compiles kernels when a program is created: it writes a small
// source that includes the kernel after the defines of its RISC and the
// compile-time arguments (-DKERNEL_COMPILE_TIME_ARGS=...), and builds it with
// its JIT flags (-Wall -Werror and the rest). The emulator does the same with
// the host compiler against attn's SDK declarations (devices/tt/sdk/include): each
// (kernel source, compile-time arguments, architecture) becomes a shared
// object, compiled once into a cache folder and loaded with dlopen. The
// wrapper source adds the entry the emulator calls, attn_tt_kernel_entry,
// which runs the kernel's kernel_main.
//
// Doing it at run time keeps compile-time arguments compile-time (constants
// the compiler folds, as on the device), lets one emitted kernel serve any
// argument values, and lets attn-tt-run take kernels emitted anywhere.
//
// The compiler is $ATTN_TT_CXX, else the C++ compiler the project was built
// with; the cache is $ATTN_TT_CACHE_DIR, else a folder under /tmp.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TT_EMULATOR_KERNELCOMPILER_H
#define ATTN_TT_EMULATOR_KERNELCOMPILER_H

#include "devices/tt/emulator/Emulator.h"

#include <string>
#include <vector>

namespace attn::tt {

/// The warning and language flags of TT-Metalium's JIT kernel build, which
/// the emulator's kernel build and the SDK compile test use. (-ffast-math
/// and -flto are left to the compile test: in a shared object loaded into
/// the host process, -ffast-math would change its floating-point modes.)
const std::vector<std::string> &jitKernelFlags();

/// What attn's kernel builds add after the JIT flags: a call the SDK
/// deprecates is an error. The JIT's -Wno-deprecated-declarations lets an
/// SDK user's kernel call it, but tt-metal removes deprecated calls after a
/// grace period (devices/tt/sdk/README.md), so attn's kernels never make one.
const std::vector<std::string> &deprecationFlags();

/// The defines of an architecture's kernel build ("-DARCH_WORMHOLE", ...).
std::vector<std::string> archDefines(Arch arch);

/// Which of attn's SDK declarations a build compiles against.
enum class SdkDeclarations : uint8_t {
  /// The pinned SDK's, deprecated calls included.
  Pinned,
  /// The same without what the pinned SDK deprecates, as in the current SDK,
  /// which has removed it (-DATTN_TT_SDK_WITHOUT_DEPRECATED).
  WithoutDeprecated,
};

/// Compiles the `kind` kernel at `sourcePath` the way TT-Metalium's JIT build
/// does for a device, minus the RISC-V code generation: with the host
/// compiler, -O3, -flto and -ffast-math, the JIT flags, the kernel and
/// architecture defines, once per RISC that runs it (a compute kernel three
/// times: unpack, math, pack), against attn's SDK declarations `decls`, with
/// deprecated calls as errors. Fails with the compiler's messages and the
/// command.
Status checkDeviceBuild(const std::string &sourcePath, KernelKind kind,
                        Arch arch,
                        const std::vector<uint32_t> &compileTimeArgs,
                        SdkDeclarations decls = SdkDeclarations::Pinned);

class KernelCompiler {
public:
  KernelCompiler();
  ~KernelCompiler();
  KernelCompiler(const KernelCompiler &) = delete;
  KernelCompiler &operator=(const KernelCompiler &) = delete;

  /// Compiles (or finds in the cache) the `kind` kernel at `sourcePath` for
  /// `arch` with `compileTimeArgs` (deprecated SDK calls are errors) and
  /// returns its entry point.
  Result<KernelEntry> load(const std::string &sourcePath, KernelKind kind,
                           Arch arch,
                           const std::vector<uint32_t> &compileTimeArgs);

private:
  std::string cacheDir_;
  std::vector<void *> handles_;
};

} // namespace attn::tt

#endif // ATTN_TT_EMULATOR_KERNELCOMPILER_H
