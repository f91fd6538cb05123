//===- Npy.cpp - NumPy .npy files <-> tensors ------------------------------===//
//
// A .npy file: the magic "\x93NUMPY", a major and minor version byte, the
// header length (u16 in 1.0, u32 in 2.0, little-endian), an ASCII Python dict
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n', then the raw elements.
//
//===----------------------------------------------------------------------===//
#include "reference/testing/Npy.h"

#include "core/FileReader.h"

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

namespace {

/// Longer than any header of a tensor attn reads (NumPy's own reader stops
/// at 10000 bytes), so that a corrupt length is not read as a header.
constexpr size_t kMaxHeaderBytes = 1 << 20;
/// Magic, version and the longest header length field (2.0's).
constexpr size_t kPreambleBytes = 12;

/// What the header says: the stored and the returned dtype, the shape, and
/// where the data starts and how long it is.
struct NpyLayout {
  std::string descr;
  DType stored = DType::F32;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t dataStart = 0;
  /// SIZE_MAX for a shape no file can hold.
  uint64_t dataBytes = 0;
};

/// Where the data starts per the preamble among the file's first bytes,
/// `prefix` (kPreambleBytes of them, or the whole file when shorter).
Result<size_t> dataStart(std::string_view prefix, std::string_view name) {
  if (prefix.size() < magic.size() + 2 ||
      prefix.substr(0, magic.size()) != magic)
    return errorf(name, ": not a .npy file (wrong magic)");
  const int major = static_cast<uint8_t>(prefix[6]);
  const int minor = static_cast<uint8_t>(prefix[7]);
  if (major != 1 && major != 2)
    return errorf(name, ": unsupported .npy version ", major, ".", minor,
                  " (supported: 1.0, 2.0)");
  const size_t lengthWidth = major == 1 ? 2 : 4;
  const size_t headerStart = 8 + lengthWidth;
  if (prefix.size() < headerStart)
    return errorf(name, ": truncated .npy file (", prefix.size(),
                  " bytes, the header length alone needs ", headerStart, ")");
  const size_t headerLength = readLittleEndian(prefix, 8, lengthWidth);
  if (headerLength > kMaxHeaderBytes)
    return errorf(name, ": a .npy header of ", headerLength,
                  " bytes is longer than the limit of ", kMaxHeaderBytes);
  return headerStart + headerLength;
}

size_t headerStart(std::string_view prefix) {
  return static_cast<uint8_t>(prefix[6]) == 1 ? 10 : 12;
}

/// The error for a file of `size` bytes that ends inside the header whose
/// preamble `prefix` holds.
Status truncatedHeader(std::string_view name, std::string_view prefix,
                       size_t size) {
  const size_t start = headerStart(prefix);
  return errorf(name, ": truncated .npy header (",
                readLittleEndian(prefix, 8, start - 8),
                " header bytes declared, ", size - start, " present)");
}

/// Parses the header, `head` = the file's bytes before its data.
Result<NpyLayout> parseLayout(std::string_view head, std::string_view name,
                              std::optional<DType> expected) {
  Result<NpyHeader> parsed =
      HeaderParser(head.substr(headerStart(head))).parse();
  if (!parsed)
    return errorf(name, ": cannot parse the .npy header: ", parsed.message());
  NpyHeader &header = *parsed;
  if (header.fortranOrder)
    return errorf(name, ": Fortran-order arrays are not supported (write it "
                        "C-contiguous, e.g. with numpy.ascontiguousarray)");
  if (!header.descr.empty() && header.descr[0] == '>')
    return errorf(name, ": big-endian dtype '", header.descr,
                  "' is not supported (use little-endian '<')");
  NpyLayout layout;
  std::optional<DType> stored;
  for (DType t : {DType::F32, DType::F16, DType::I32, DType::I64})
    if (header.descr == fileDescr(t))
      stored = t;
  if (!stored)
    return errorf(name, ": unsupported dtype '", header.descr,
                  "' (supported: <f4, <f2, <i4, <i8)");
  layout.dtype = expected.value_or(*stored);
  if (fileDType(layout.dtype) != *stored)
    return errorf(name, ": holds '", header.descr, "', but a ",
                  toString(layout.dtype), " tensor is read from '",
                  fileDescr(layout.dtype), "'");
  layout.descr = header.descr;
  layout.stored = *stored;
  layout.shape = std::move(header.shape);
  layout.dataStart = head.size();
  // The size the shape needs, known before anything of it is allocated: a
  // corrupt shape must not make us allocate (or overflow computing) a huge
  // buffer.
  Result<uint64_t> bytes = tensorBytes(layout.stored, layout.shape);
  layout.dataBytes = bytes ? *bytes : SIZE_MAX;
  return layout;
}

/// The error for data of `present` bytes (none: more than the layout's).
Status sizeMismatch(const NpyLayout &layout, std::string_view name,
                    std::optional<uint64_t> present) {
  std::ostringstream shape;
  for (size_t i = 0; i < layout.shape.size(); ++i)
    shape << (i ? ", " : "") << layout.shape[i];
  const bool truncated = present && *present < layout.dataBytes;
  return errorf(name, ": ", truncated ? "truncated" : "oversized",
                " data: shape [", shape.str(), "] of '", layout.descr,
                "' needs ",
                layout.dataBytes == SIZE_MAX ? std::string("more")
                                             : std::to_string(layout.dataBytes),
                " bytes, the file has ",
                present ? std::to_string(*present) : std::string("more"));
}

/// The file's tensor in the layout's dtype (bf16 and fp8 rounded from f32).
Tensor toDType(const NpyLayout &layout, Tensor fileTensor) {
  if (layout.dtype == layout.stored)
    return fileTensor;
  Tensor rounded(layout.dtype, layout.shape);
  for (int64_t i = 0; i < rounded.numElements(); ++i)
    rounded.setFloat(i, fileTensor.getFloat(i));
  return rounded;
}

} // namespace

Result<Tensor> parseNpy(std::string_view bytes, std::string_view name,
                        std::optional<DType> expected) {
  Result<size_t> start = dataStart(bytes.substr(0, kPreambleBytes), name);
  if (!start)
    return start.status();
  if (bytes.size() < *start)
    return truncatedHeader(name, bytes, bytes.size());
  Result<NpyLayout> layout =
      parseLayout(bytes.substr(0, *start), name, expected);
  if (!layout)
    return layout.status();
  const uint64_t present = bytes.size() - *start;
  if (present != layout->dataBytes)
    return sizeMismatch(*layout, name, present);
  Result<Tensor> fileTensor = Tensor::create(layout->stored, layout->shape);
  if (!fileTensor)
    return errorf(name, ": ", fileTensor.message());
  // A zero-size tensor has no buffer: data() may be null, and memcpy must
  // not see a null pointer even for 0 bytes.
  if (present)
    std::memcpy(fileTensor->data(), bytes.data() + *start, present);
  return toDType(*layout, std::move(*fileTensor));
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
  // Header first, then exactly the data it declares: a file larger than
  // memory, or one without end, is refused before its data is read.
  Result<BoundedFile> file = BoundedFile::open(path);
  if (!file)
    return file.status();
  std::string head(kPreambleBytes, '\0');
  Result<uint64_t> n = file->read(head.data(), head.size());
  if (!n)
    return n.status();
  head.resize(*n);
  Result<size_t> start = dataStart(head, path);
  if (!start)
    return start.status();
  if (*start > head.size()) {
    const size_t have = head.size();
    head.resize(*start);
    n = file->read(head.data() + have, *start - have);
    if (!n)
      return n.status();
    if (have + *n < *start)
      return truncatedHeader(path, head, have + *n);
  }
  Result<NpyLayout> layout =
      parseLayout(head.substr(0, *start), path, expected);
  if (!layout)
    return layout.status();
  // A regular file says its size; a device or pipe is read no further than
  // the data and one byte.
  if (std::optional<uint64_t> size = file->regularSize();
      size && *size - *start != layout->dataBytes)
    return sizeMismatch(*layout, path, *size - *start);
  if (layout->dataBytes == SIZE_MAX)
    return sizeMismatch(*layout, path, std::nullopt);
  Result<Tensor> fileTensor = Tensor::create(layout->stored, layout->shape);
  if (!fileTensor)
    return errorf(path, ": ", fileTensor.message());
  n = file->read(fileTensor->data(), layout->dataBytes);
  if (!n)
    return n.status();
  if (*n < layout->dataBytes)
    return sizeMismatch(*layout, path, *n);
  Result<bool> atEnd = file->atEnd();
  if (!atEnd)
    return atEnd.status();
  if (!*atEnd)
    return sizeMismatch(*layout, path, std::nullopt);
  return toDType(*layout, std::move(*fileTensor));
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
