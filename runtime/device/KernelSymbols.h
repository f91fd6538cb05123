//===- KernelSymbols.h - What each kernel symbol of a device names -*- C++ -*-===//
//
// Plans launch kernels by symbol, and several bundles (several models) may
// load their kernels onto one device. A symbol therefore names one kernel for
// the life of a device: loading the same kernel under it again is a no-op,
// and loading a different one is an error. Silently replacing it would make
// the other bundle's plans launch a kernel they were not compiled with.
// attn-compile makes symbols unique to each compile, so two bundles only
// share a symbol when they share the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_KERNELSYMBOLS_H
#define ATTN_RUNTIME_KERNELSYMBOLS_H

#include "core/Status.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace attn::runtime {

class KernelSymbols {
public:
  /// True when `symbol` already names the kernel `source` identifies (its
  /// bytes, entry point and launch facts, concatenated), false when the
  /// symbol is free, an error naming `device` when it names another kernel.
  Result<bool> isLoaded(std::string_view device, std::string_view symbol,
                        std::string_view source) const {
    auto it = sources_.find(symbol);
    if (it == sources_.end())
      return false;
    if (it->second == source)
      return true;
    return errorf(device, " already has a different kernel under the symbol ",
                  symbol, "; a device never replaces a kernel (bundles that "
                  "share a device must not reuse symbols for other kernels)");
  }

  /// Records that `symbol` now names `source` (after the kernel loaded).
  void record(std::string_view symbol, std::string source) {
    sources_.emplace(std::string(symbol), std::move(source));
  }

private:
  std::map<std::string, std::string, std::less<>> sources_;
};

/// The identity of a kernel for KernelSymbols: bytes, entry point and facts.
inline std::string kernelSource(std::string_view bytes,
                                std::string_view entryPoint,
                                std::string_view facts) {
  std::string source(bytes);
  source.append(1, '\0').append(entryPoint).append(1, '\0').append(facts);
  return source;
}

} // namespace attn::runtime

#endif // ATTN_RUNTIME_KERNELSYMBOLS_H
