//===- Compression.h - zstd frames for kernel files -------------*- C++ -*-===//
//
// attn-compile --compress=zstd stores kernel files (SPIR-V, PTX, MSL, shared
// objects) as zstd frames, named "<entry>.<hash>.<ext>.zst"; the hash is of
// the stored bytes, so a file is checked before anything decompresses it,
// and Bundle::readKernel returns the kernel itself. SPIR-V shrinks about 4x.
// zstd is optional at build time: a runtime without it refuses compressed
// files by name.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLE_COMPRESSION_H
#define ATTN_RUNTIME_BUNDLE_COMPRESSION_H

#include "core/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::runtime {

/// The name suffix of a compressed kernel file.
inline constexpr std::string_view kCompressedSuffix = ".zst";

/// Whether this build reads and writes zstd frames.
bool haveZstd();

/// One zstd frame of `bytes` (level 9: 4x on SPIR-V, a millisecond a
/// kernel).
Result<std::string> zstdCompress(std::string_view bytes);

/// The content of one zstd frame that declares its size, at most
/// `maxBytes`; `what` names the file in errors.
Result<std::string> zstdDecompress(std::string_view frame, uint64_t maxBytes,
                                   const std::string &what);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLE_COMPRESSION_H
