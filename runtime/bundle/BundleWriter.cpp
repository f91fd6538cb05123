//===- BundleWriter.cpp - Writes bundles that survive crashes and rivals --===//

#include "runtime/bundle/BundleWriter.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::runtime {

namespace fs = std::filesystem;

Result<BundleLock>
BundleLock::acquire(const std::string &directory,
                    void (*onWait)(const std::string &)) {
  std::string path = directory + "/.lock";
  bool waited = false;
  for (;;) {
    std::error_code ec;
    bool created = fs::create_directories(directory, ec);
    if (ec)
      return errorf("cannot create ", directory, ": ", ec.message());
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return errorf("cannot open ", path, ": ", std::strerror(errno));
    int rc = ::flock(fd, LOCK_EX | LOCK_NB);
    if (rc != 0 && errno == EWOULDBLOCK) {
      if (onWait && !waited)
        onWait(directory);
      waited = true;
      while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
      }
    }
    if (rc != 0) {
      int error = errno;
      ::close(fd);
      return errorf("cannot lock ", path, ": ", std::strerror(error));
    }
    // The writer we waited for may have removed the directory it created
    // (removeCreatedDirectory), lock file included: then this lock guards
    // nothing, and we start over.
    struct stat locked, named;
    if (::fstat(fd, &locked) == 0 && ::stat(path.c_str(), &named) == 0 &&
        locked.st_dev == named.st_dev && locked.st_ino == named.st_ino)
      return BundleLock(fd, directory, created);
    ::close(fd);
  }
}

BundleLock::BundleLock(BundleLock &&other) noexcept
    : fd_(other.fd_), directory_(std::move(other.directory_)),
      created_(other.created_) {
  other.fd_ = -1;
}

BundleLock::~BundleLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the lock
}

Status BundleLock::removeCreatedDirectory() {
  if (!created_)
    return errorf(directory_, " was there before this lock: not removing it");
  std::error_code ec;
  fs::remove_all(directory_, ec);
  if (ec)
    return errorf("cannot remove ", directory_, ": ", ec.message());
  created_ = false;
  return Status::ok();
}

std::string contentAddressedName(std::string_view entryPoint,
                                 std::string_view bytes,
                                 std::string_view extension) {
  return std::string(entryPoint) + "." + contentHash(bytes) + "." +
         std::string(extension);
}

Status writeFileAtomically(const std::string &directory,
                           const std::string &relativePath,
                           std::string_view bytes) {
  fs::path path = fs::path(directory) / relativePath;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return errorf("cannot create the folder of ", path.string(), ": ",
                  ec.message());
  // Content-addressed files that exist are complete (they got there by a
  // rename); manifest.json always differs.
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == bytes.size()) {
    std::ifstream in(path, std::ios::binary);
    std::string have((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (have == bytes)
      return Status::ok();
  }
  // Unique per process and call: attn-compile's workers are threads of one
  // process, and two variants may write the same content-addressed file at
  // once (each renames a whole file of its own onto it).
  static std::atomic<uint64_t> writes{0};
  fs::path temporary = path.string() + ".tmp." +
                       std::to_string(static_cast<long>(::getpid())) + "." +
                       std::to_string(writes.fetch_add(1));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      return errorf("cannot write ", temporary.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(temporary, ec);
      return errorf("error writing ", temporary.string());
    }
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    return errorf("cannot move ", temporary.string(), " to ", path.string(),
                  ": ", ec.message());
  }
  return Status::ok();
}

Status writeManifest(const Bundle &bundle) {
  return writeFileAtomically(bundle.directory, "manifest.json",
                             manifestToJson(bundle));
}

Status removeUnnamedKernelFiles(const Bundle &bundle) {
  std::set<fs::path> named;
  for (const BundleVariant &v : bundle.variants)
    for (const BundleKernel &k : v.kernels)
      named.insert(fs::path(bundle.directory) / k.file);
  fs::path kernels = fs::path(bundle.directory) / "kernels";
  std::error_code ec;
  if (!fs::is_directory(kernels, ec))
    return Status::ok();
  std::vector<fs::path> files, folders;
  for (auto it = fs::recursive_directory_iterator(kernels, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec))
      folders.push_back(it->path());
    else if (!named.count(it->path()))
      files.push_back(it->path());
  }
  if (ec)
    return errorf("cannot list ", kernels.string(), ": ", ec.message());
  for (const fs::path &f : files)
    if (!fs::remove(f, ec) && ec)
      return errorf("cannot remove ", f.string(), ": ", ec.message());
  // Deepest first, so that a folder emptied by its children goes too.
  for (auto it = folders.rbegin(); it != folders.rend(); ++it)
    if (fs::is_empty(*it, ec))
      fs::remove(*it, ec);
  return Status::ok();
}

} // namespace attn::runtime
