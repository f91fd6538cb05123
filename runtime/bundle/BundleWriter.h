//===- BundleWriter.h - Writes bundles that survive crashes and rivals -*- C++ -*-===//
//
// How attn-compile writes a bundle so that a reader always finds either the
// old bundle or the new one, both whole, whatever happens to the writer:
//
//  - Kernel files are content-addressed (their name carries their hash) and
//    written to a temporary name, then renamed into place: a file under its
//    final name is always complete, and a new kernel never overwrites a file
//    an old manifest names.
//  - The manifest is written last, the same way: the rename is the moment
//    the new bundle replaces the old one. A run that fails writes no
//    manifest and keeps the old one.
//  - Only after the new manifest is in place are the files no manifest names
//    any more removed.
//  - One writer at a time: BundleLock holds an exclusive lock (flock) on
//    DIR/.lock; a second writer waits for it. The kernel releases the lock
//    when a writer dies, kill -9 included.
//  - A run that created DIR and fails before its manifest removes DIR again
//    (lock file included), so a failed first run leaves nothing behind.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_RUNTIME_BUNDLEWRITER_H
#define ATTN_RUNTIME_BUNDLEWRITER_H

#include "runtime/bundle/Bundle.h"

#include <string>
#include <string_view>
#include <utility>

namespace attn::runtime {

/// An exclusive lock on a bundle directory (created if missing), held until
/// destruction.
class BundleLock {
public:
  /// Locks `directory`, waiting for another writer; `onWait` is called once
  /// before waiting (to say so).
  static Result<BundleLock> acquire(const std::string &directory,
                                    void (*onWait)(const std::string &) = nullptr);
  BundleLock(BundleLock &&other) noexcept;
  BundleLock &operator=(BundleLock &&) = delete;
  ~BundleLock();

  /// Whether acquire() created the directory (it was not there before).
  bool createdDirectory() const { return created_; }
  /// Removes the directory acquire() created, lock file included, for a run
  /// that failed before writing a manifest: it leaves nothing behind. A
  /// directory that was there before is never removed (an error). A writer
  /// waiting for this lock then creates the directory anew.
  Status removeCreatedDirectory();

private:
  BundleLock(int fd, std::string directory, bool created)
      : fd_(fd), directory_(std::move(directory)), created_(created) {}
  int fd_ = -1;
  std::string directory_;
  bool created_ = false;
};

/// The file name a kernel of `bytes` gets in a bundle: the entry point (for
/// readers), the content hash, the extension.
std::string contentAddressedName(std::string_view entryPoint,
                                 std::string_view bytes,
                                 std::string_view extension);

/// Writes `bytes` to `directory`/`relativePath` through a temporary file and
/// a rename, creating folders; a file already there with the same content is
/// kept as it is.
Status writeFileAtomically(const std::string &directory,
                           const std::string &relativePath,
                           std::string_view bytes);

/// Writes bundle.directory/manifest.json atomically. Write the kernel files
/// first, so that a manifest never names a file that is not there.
Status writeManifest(const Bundle &bundle);

/// Removes the files under bundle.directory/kernels that `bundle` does not
/// name (left by earlier builds), and empty folders. Call after the manifest
/// is in place, holding the lock.
Status removeUnnamedKernelFiles(const Bundle &bundle);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BUNDLEWRITER_H
