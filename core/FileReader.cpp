//===- FileReader.cpp - Files read no further than a bound ----------------===//
#include "core/FileReader.h"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>

namespace attn {

Result<BoundedFile> BoundedFile::open(const std::string &path) {
  BoundedFile file;
  file.path_ = path;
  file.file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file.file_)
    return errorf(path, ": cannot open for reading: ", std::strerror(errno));
  struct stat info;
  if (fstat(fileno(file.file_.get()), &info) != 0)
    return errorf(path, ": cannot stat: ", std::strerror(errno));
  if (S_ISDIR(info.st_mode))
    return errorf(path, ": is a directory");
  if (S_ISREG(info.st_mode))
    file.regularSize_ = static_cast<uint64_t>(info.st_size);
  return file;
}

Result<uint64_t> BoundedFile::read(void *out, uint64_t bytes) {
  auto *dst = static_cast<char *>(out);
  uint64_t done = 0;
  while (done < bytes) {
    const size_t n = std::fread(dst + done, 1, bytes - done, file_.get());
    if (n == 0)
      break;
    done += n;
  }
  if (std::ferror(file_.get()))
    return errorf(path_, ": read error: ", std::strerror(errno));
  return done;
}

Result<bool> BoundedFile::atEnd() {
  char byte;
  Result<uint64_t> n = read(&byte, 1);
  if (!n)
    return n.status();
  return *n == 0;
}

Result<std::string> readFileBounded(const std::string &path, uint64_t maxBytes,
                                    std::string_view what) {
  Result<BoundedFile> file = BoundedFile::open(path);
  if (!file)
    return file.status();
  auto tooLarge = [&] {
    return errorf(what, " ", path, " is larger than the limit of ", maxBytes,
                  " bytes");
  };
  if (file->regularSize() && *file->regularSize() > maxBytes)
    return tooLarge();
  std::string text;
  // A regular file's size may change while it is read: read to the bound.
  char buffer[1 << 16];
  while (true) {
    Result<uint64_t> n = file->read(buffer, sizeof(buffer));
    if (!n)
      return n.status();
    if (*n == 0)
      return text;
    if (text.size() + *n > maxBytes)
      return tooLarge();
    text.append(buffer, *n);
  }
}

} // namespace attn
