//===- FileReader.h - Files read no further than a bound --------*- C++ -*-===//
//
// The one way the MLIR-free code reads a file whose size it does not
// control (a manifest, a kernel file, an .npy): a path may name a device or
// a pipe that never ends (a symlink to /dev/zero), or a file far larger than
// its format allows, so no read goes past the size the caller expects.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_FILEREADER_H
#define ATTN_CORE_FILEREADER_H

#include "core/Status.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

/// An open file read front to back in pieces the caller sizes.
class BoundedFile {
public:
  /// Opens `path` for reading; the error names it.
  static Result<BoundedFile> open(const std::string &path);

  const std::string &path() const { return path_; }
  /// The size of a regular file; none for a device, pipe or socket, whose
  /// end only reading finds.
  std::optional<uint64_t> regularSize() const { return regularSize_; }
  /// Reads up to `bytes` bytes into `out`, fewer only at the end of the
  /// file; returns how many it read.
  Result<uint64_t> read(void *out, uint64_t bytes);
  /// Whether nothing follows what was read (reads at most one byte).
  Result<bool> atEnd();

private:
  std::string path_;
  std::optional<uint64_t> regularSize_;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file_{nullptr, &std::fclose};
};

/// The whole file at `path`, or an error naming it and `maxBytes` when it
/// holds more (found before reading for a regular file, after `maxBytes`
/// bytes for any other). `what` says what the file is ("manifest").
Result<std::string> readFileBounded(const std::string &path, uint64_t maxBytes,
                                    std::string_view what);

} // namespace attn

#endif // ATTN_CORE_FILEREADER_H
