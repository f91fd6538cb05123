//===- FuzzInput.h - Typed values drawn from a fuzzer's bytes --*- C++ -*-===//
//
// The fuzz targets turn their input bytes into sizes, flags and tensor
// contents. Once the bytes run out every draw returns zero, so any input,
// however short, decodes to something.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_FUZZ_FUZZINPUT_H
#define ATTN_TEST_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string_view>

namespace attn::fuzz {

class FuzzInput {
public:
  FuzzInput(const uint8_t *data, size_t size)
      : bytes_(reinterpret_cast<const char *>(data), size) {}

  /// The next `sizeof(T)` bytes as T (zero-padded at the end).
  template <typename T> T take() {
    T v{};
    const size_t n = std::min(sizeof(T), bytes_.size());
    if (n) // an empty view may have a null data()
      std::memcpy(&v, bytes_.data(), n);
    bytes_.remove_prefix(n);
    return v;
  }
  /// An integer in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const uint64_t v = span < 0xff       ? take<uint8_t>()
                       : span < 0xffff   ? take<uint16_t>()
                       : span < 0xffffffff ? take<uint32_t>()
                                         : take<uint64_t>();
    if (span == UINT64_MAX)
      return static_cast<int64_t>(v);
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + v % (span + 1));
  }
  bool flag() { return take<uint8_t>() & 1; }
  /// What is left, consumed.
  std::string_view rest() {
    std::string_view r = bytes_;
    bytes_ = {};
    return r;
  }
  size_t remaining() const { return bytes_.size(); }

private:
  std::string_view bytes_;
};

} // namespace attn::fuzz

#endif // ATTN_TEST_FUZZ_FUZZINPUT_H
