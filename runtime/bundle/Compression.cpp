//===- Compression.cpp - zstd frames for kernel files ---------------------===//

#include "runtime/bundle/Compression.h"

#ifdef ATTN_HAVE_ZSTD
#include <zstd.h>
#endif

namespace attn::runtime {

#ifdef ATTN_HAVE_ZSTD

bool haveZstd() { return true; }

Result<std::string> zstdCompress(std::string_view bytes) {
  std::string frame(ZSTD_compressBound(bytes.size()), '\0');
  size_t n = ZSTD_compress(frame.data(), frame.size(), bytes.data(),
                           bytes.size(), /*compressionLevel=*/9);
  if (ZSTD_isError(n))
    return errorf("zstd: ", ZSTD_getErrorName(n));
  frame.resize(n);
  return frame;
}

Result<std::string> zstdDecompress(std::string_view frame, uint64_t maxBytes,
                                   const std::string &what) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    return errorf(what, " is not a zstd frame that declares its size");
  if (size > maxBytes)
    return errorf(what, " decompresses to ", size, " bytes, more than the ",
                  maxBytes, " a kernel may have");
  std::string bytes(size, '\0');
  size_t n = ZSTD_decompress(bytes.data(), bytes.size(), frame.data(),
                             frame.size());
  if (ZSTD_isError(n) || n != size)
    return errorf(what, ": zstd: ",
                  ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short frame");
  return bytes;
}

#else

bool haveZstd() { return false; }

Result<std::string> zstdCompress(std::string_view) {
  return Status::error("this attn was built without zstd (libzstd-dev): it "
                       "cannot compress kernel files");
}

Result<std::string> zstdDecompress(std::string_view, uint64_t,
                                   const std::string &what) {
  return errorf(what, " is zstd-compressed, and this attn was built without "
                      "zstd (libzstd-dev)");
}

#endif

} // namespace attn::runtime
