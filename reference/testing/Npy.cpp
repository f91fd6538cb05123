//===- Npy.cpp - NumPy .npy files <-> tensors ------------------------------===//
//
// A .npy file: the magic "\x93NUMPY", a major and minor version byte, the
// header length (u16 in 1.0, u32 in 2.0, little-endian), an ASCII Python dict
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n', then the raw elements.
//
//===----------------------------------------------------------------------===//
#include "reference/testing/Npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace attn {

static_assert(std::endian::native == std::endian::little,
              "npy I/O assumes a little-endian host");

namespace {

constexpr std::string_view magic = "\x93NUMPY";

/// The descr string of each dtype as stored (bf16 and the fp8 types, which
/// NumPy lacks, are stored as f32: exactly).
std::string_view fileDescr(DType t) {
  switch (t) {
  case DType::F32:
  case DType::BF16:
  case DType::F8E4M3FN:
  case DType::F8E5M2:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  }
  return "";
}

DType fileDType(DType t) {
  return t == DType::BF16 || isFp8(t) ? DType::F32 : t;
}

/// The parsed header dict.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent reader of the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  /// Parses the whole dict; on failure returns a message without the file.
  Result<NpyHeader> parse() {
    NpyHeader header;
    bool sawDescr = false, sawOrder = false, sawShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (!consume('}')) {
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key");
      if (!consume(':'))
        return fail("expected ':' after '" + key + "'");
      if (key == "descr") {
        if (!parseString(header.descr))
          return fail("expected a quoted string for 'descr'");
        sawDescr = true;
      } else if (key == "fortran_order") {
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (consumeWord("False"))
          header.fortranOrder = false;
        else
          return fail("expected True or False for 'fortran_order'");
        sawOrder = true;
      } else if (key == "shape") {
        if (!parseShape(header.shape))
          return fail("expected a tuple of non-negative integers for 'shape'");
        sawShape = true;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      if (!consume(',')) {
        if (!consume('}'))
          return fail("expected ',' or '}'");
        break;
      }
    }
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the dict");
    if (!sawDescr || !sawOrder || !sawShape)
      return fail("the dict needs 'descr', 'fortran_order' and 'shape'");
    return header;
  }

private:
  Status fail(const std::string &what) const {
    return errorf(what, " at offset ", pos_, " of header \"", text_, "\"");
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(
                                      text_[pos_])))
      ++pos_;
  }

  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool consumeWord(std::string_view word) {
    skipSpace();
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  bool parseString(std::string &out) {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return false;
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }

  bool parseInt(int64_t &out) {
    skipSpace();
    const size_t begin = pos_;
    out = 0;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (pos_ - begin >= 15) // beyond any real tensor; keeps out from overflow
        return false;
      out = out * 10 + (text_[pos_++] - '0');
    }
    // Python 2 era writers may append 'L' to a long.
    if (pos_ > begin && pos_ < text_.size() && text_[pos_] == 'L')
      ++pos_;
    return pos_ > begin;
  }

  /// "()", "(3,)", "(2, 3)", "(2, 3,)".
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return false;
    while (!consume(')')) {
      int64_t dim;
      if (!parseInt(dim))
        return false;
      shape.push_back(dim);
      if (!consume(',')) {
        if (!consume(')'))
          return false;
        break;
      }
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t readLittleEndian(std::string_view bytes, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return v;
}

} // namespace

Result<Tensor> parseNpy(std::string_view bytes, std::string_view name,
                        std::optional<DType> expected) {
  if (bytes.size() < magic.size() + 2 ||
      bytes.substr(0, magic.size()) != magic)
    return errorf(name, ": not a .npy file (wrong magic)");
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if (major != 1 && major != 2)
    return errorf(name, ": unsupported .npy version ", major, ".", minor,
                  " (supported: 1.0, 2.0)");
  const size_t lengthWidth = major == 1 ? 2 : 4;
  const size_t headerStart = 8 + lengthWidth;
  if (bytes.size() < headerStart)
    return errorf(name, ": truncated .npy file (", bytes.size(),
                  " bytes, the header length alone needs ", headerStart, ")");
  const size_t headerLength = readLittleEndian(bytes, 8, lengthWidth);
  if (bytes.size() < headerStart + headerLength)
    return errorf(name, ": truncated .npy header (", headerLength,
                  " header bytes declared, ", bytes.size() - headerStart,
                  " present)");

  Result<NpyHeader> parsed =
      HeaderParser(bytes.substr(headerStart, headerLength)).parse();
  if (!parsed)
    return errorf(name, ": cannot parse the .npy header: ", parsed.message());
  const NpyHeader &header = *parsed;
  if (header.fortranOrder)
    return errorf(name, ": Fortran-order arrays are not supported (write it "
                        "C-contiguous, e.g. with numpy.ascontiguousarray)");
  if (!header.descr.empty() && header.descr[0] == '>')
    return errorf(name, ": big-endian dtype '", header.descr,
                  "' is not supported (use little-endian '<')");
  std::optional<DType> stored;
  for (DType t : {DType::F32, DType::F16, DType::I32, DType::I64})
    if (header.descr == fileDescr(t))
      stored = t;
  if (!stored)
    return errorf(name, ": unsupported dtype '", header.descr,
                  "' (supported: <f4, <f2, <i4, <i8)");
  const DType dtype = expected.value_or(*stored);
  if (fileDType(dtype) != *stored)
    return errorf(name, ": holds '", header.descr, "', but a ",
                  toString(dtype), " tensor is read from '", fileDescr(dtype),
                  "'");

  // The size the shape needs, compared before allocating it: a corrupt
  // shape must not make us allocate (or overflow computing) a huge buffer.
  const size_t dataStart = headerStart + headerLength;
  const size_t dataBytes = bytes.size() - dataStart;
  size_t neededBytes = byteWidth(*stored);
  bool overflow = false;
  for (int64_t d : header.shape)
    overflow |= __builtin_mul_overflow(neededBytes, static_cast<size_t>(d),
                                       &neededBytes);
  const bool hasZeroDim = std::find(header.shape.begin(), header.shape.end(),
                                    0) != header.shape.end();
  if (hasZeroDim)
    neededBytes = 0;
  else if (overflow)
    neededBytes = SIZE_MAX; // more than any file holds
  if (dataBytes != neededBytes) {
    std::ostringstream shape;
    for (size_t i = 0; i < header.shape.size(); ++i)
      shape << (i ? ", " : "") << header.shape[i];
    return errorf(name, ": ", dataBytes < neededBytes ? "truncated" : "oversized",
                  " data: shape [", shape.str(), "] of '", header.descr,
                  "' needs ",
                  neededBytes == SIZE_MAX ? std::string("more")
                                          : std::to_string(neededBytes),
                  " bytes, the file has ", dataBytes);
  }
  Tensor fileTensor(*stored, header.shape);
  // A zero-size tensor has no buffer: data() may be null, and memcpy must
  // not see a null pointer even for 0 bytes.
  if (dataBytes)
    std::memcpy(fileTensor.data(), bytes.data() + dataStart, dataBytes);
  if (dtype == *stored)
    return fileTensor;

  Tensor rounded(dtype, header.shape);
  for (int64_t i = 0; i < rounded.numElements(); ++i)
    rounded.setFloat(i, fileTensor.getFloat(i));
  return rounded;
}

std::string formatNpy(const Tensor &t) {
  // Python's tuple spelling: "()", "(3,)", "(2, 3)".
  std::string shape;
  for (int64_t i = 0; i < t.rank(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.dim(i));
  if (t.rank() == 1)
    shape += ",";
  std::string dict = "{'descr': '" + std::string(fileDescr(t.dtype())) +
                     "', 'fortran_order': False, 'shape': (" + shape + "), }";

  // Pad with spaces so that magic, version, length, dict and '\n' fill a
  // multiple of 64 bytes.
  const bool fitsV1 = 10 + dict.size() + 1 + 64 <= 65535;
  const size_t prefix = fitsV1 ? 10 : 12;
  const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';

  std::string bytes(magic);
  bytes += static_cast<char>(fitsV1 ? 1 : 2);
  bytes += static_cast<char>(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes += static_cast<char>((dict.size() >> (8 * i)) & 0xFF);
  bytes += dict;

  if (fileDType(t.dtype()) != t.dtype()) {
    Tensor widened(DType::F32, t.shape());
    for (int64_t i = 0; i < t.numElements(); ++i)
      widened.setFloat(i, t.getFloat(i));
    bytes.append(reinterpret_cast<const char *>(widened.data()),
                 widened.numBytes());
  } else {
    bytes.append(reinterpret_cast<const char *>(t.data()), t.numBytes());
  }
  return bytes;
}

Result<Tensor> readNpy(const std::string &path, std::optional<DType> expected) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"),
                                               &std::fclose);
  if (!file)
    return errorf(path, ": cannot open for reading: ", std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0)
    bytes.append(buffer, n);
  if (std::ferror(file.get()))
    return errorf(path, ": read error: ", std::strerror(errno));
  return parseNpy(bytes, path, expected);
}

Status writeNpy(const std::string &path, const Tensor &t) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "wb"),
                                               &std::fclose);
  if (!file)
    return errorf(path, ": cannot open for writing: ", std::strerror(errno));
  const std::string bytes = formatNpy(t);
  if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size())
    return errorf(path, ": write error: ", std::strerror(errno));
  if (std::fclose(file.release()) != 0)
    return errorf(path, ": write error on close: ", std::strerror(errno));
  return Status::ok();
}

} // namespace attn
