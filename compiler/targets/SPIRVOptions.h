//===- SPIRVOptions.h - The spirv target's knobs ----------------*- C++ -*-===//
//
// Target spirv's own knobs: CompileOptions holds one of these per
// target, and only that target's compile (compiler/targets/) reads it.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_COMPILER_TARGETS_SPIRVOPTIONS_H
#define ATTN_COMPILER_TARGETS_SPIRVOPTIONS_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::attn {

/// Target spirv's knobs.
struct SPIRVTargetOptions {
  /// How the kernels reach their buffers.
  enum class Abi {
    /// By 64-bit device address (attn-spirv-buffer-addresses): no buffer is
    /// limited to the device's maxStorageBufferRange (128 MiB on lavapipe).
    Addresses,
    /// By descriptor binding: each buffer a kernel sees is at most
    /// maxStorageBufferRange, and lavapipe serves bound buffers 1.5-2.5x
    /// faster than addressed ones (bench/README.md).
    Bindings,
    /// Each kernel in both forms, two files in the bundle; a Vulkan device
    /// launches the binding form when every buffer of a launch fits a
    /// binding, and the address form otherwise.
    Both,
  };
  Abi abi = Abi::Both;
};

/// The SPIRVTargetOptions::Abi named "addresses", "bindings" or "both"
/// (attn-compile's and attn-diff's --spirv-abi); nullopt for another name.
std::optional<SPIRVTargetOptions::Abi> parseSpirvAbi(llvm::StringRef name);

} // namespace mlir::attn

#endif // ATTN_COMPILER_TARGETS_SPIRVOPTIONS_H
