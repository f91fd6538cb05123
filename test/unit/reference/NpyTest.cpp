//===- NpyTest.cpp - .npy round trips and every bad-file error -----------===//
#include "reference/testing/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace attn {
namespace {

namespace fs = std::filesystem;

class Npy : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attn-npy-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return dir_ / name; }

  std::string writeBytes(const std::string &name, const std::string &bytes) {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  /// A file with the given version, header dict and data bytes.
  std::string writeRaw(const std::string &name, int major,
                       const std::string &dict, const std::string &data) {
    std::string header = dict + "\n";
    std::string bytes = std::string("\x93NUMPY", 6);
    bytes += static_cast<char>(major);
    bytes += '\0';
    const size_t width = major == 1 ? 2 : 4;
    for (size_t i = 0; i < width; ++i)
      bytes += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    return writeBytes(name, bytes + header + data);
  }

  fs::path dir_;
};

Tensor sample(DType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (isFloat(dtype))
      t.setFloat(i, (i - 3) * 0.37);
    else
      t.setInt(i, (i - 3) * (dtype == DType::I64 ? 10000000007 : 1001));
  }
  return t;
}

TEST_F(Npy, RoundTripsEveryDType) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64})
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{2, 3, 4}, {5}, {}, {0, 3}}) {
      const Tensor t = sample(dtype, shape);
      SCOPED_TRACE(t.describe());
      const std::string file = path("t.npy");
      ASSERT_TRUE(writeNpy(file, t).isOk());
      Result<Tensor> back = readNpy(file, dtype);
      ASSERT_TRUE(back.isOk()) << back.message();
      EXPECT_TRUE(*back == t);
    }
}

TEST_F(Npy, WritesWhatNumPyWrites) {
  // numpy.save(f, numpy.arange(1, 7, dtype='<f4').reshape(2, 3)): a 128-byte
  // header, then the data.
  const Tensor t =
      test::floats(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string bytes = formatNpy(t);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(bytes.substr(10, 118),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                std::string(58, ' ') + "\n");
  EXPECT_EQ(formatNpy(Tensor(DType::I64, {1})).substr(10, 57),
            "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }");
}

TEST_F(Npy, BF16TravelsAsF32) {
  Tensor f(DType::F32, {2});
  f.setFloat(0, 1.0 + 0x1p-8 + 0x1p-20); // just above a bf16 tie
  f.setFloat(1, 1.0 + 0x1p-8);           // a tie: rounds to even
  ASSERT_TRUE(writeNpy(path("f.npy"), f).isOk());
  Result<Tensor> b = readNpy(path("f.npy"), DType::BF16);
  ASSERT_TRUE(b.isOk()) << b.message();
  EXPECT_EQ(b->dtype(), DType::BF16);
  EXPECT_EQ(b->getFloat(0), 1.0 + 0x1p-7);
  EXPECT_EQ(b->getFloat(1), 1.0);
  // Without an expected dtype the file's own dtype is kept.
  Result<Tensor> raw = readNpy(path("f.npy"));
  ASSERT_TRUE(raw.isOk());
  EXPECT_TRUE(*raw == f);
}

TEST_F(Npy, ReadsVersion2AndOddSpacing) {
  const int32_t data[3] = {7, -8, 9};
  const std::string file =
      writeRaw("v2.npy", 2, "{ \"shape\":(3 ,) ,'descr':'<i4','fortran_order':False}",
               std::string(reinterpret_cast<const char *>(data), 12));
  Result<Tensor> t = readNpy(file, DType::I32);
  ASSERT_TRUE(t.isOk()) << t.message();
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t->getInt(1), -8);
}

TEST_F(Npy, Errors) {
  const std::string four(4, '\0');
  EXPECT_ERROR(readNpy(path("missing.npy")),
               "missing.npy: cannot open for reading: No such file");
  EXPECT_ERROR(readNpy(writeBytes("magic.npy", "PK\x03\x04 not npy at all")),
               "magic.npy: not a .npy file (wrong magic)");
  EXPECT_ERROR(readNpy(writeBytes("short.npy", std::string("\x93NUMPY\x01\x00\x76", 9))),
               "short.npy: truncated .npy file");
  const std::string full = formatNpy(Tensor(DType::F32, {4}));
  EXPECT_ERROR(readNpy(writeBytes("header.npy", full.substr(0, 40))),
               "header.npy: truncated .npy header");
  EXPECT_ERROR(readNpy(writeBytes("data.npy", full.substr(0, full.size() - 1))),
               "data.npy: truncated data: shape [4] of '<f4' needs 16 bytes, "
               "the file has 15");
  EXPECT_ERROR(readNpy(writeBytes("long.npy", full + "x")),
               "long.npy: oversized data");
  EXPECT_ERROR(readNpy(writeRaw("huge.npy", 1,
                                "{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (100000000000, 100000000000), }",
                                four)),
               "huge.npy: truncated data");
  EXPECT_ERROR(readNpy(writeRaw("fortran.npy", 1,
                                "{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (1,), }",
                                four)),
               "fortran.npy: Fortran-order arrays are not supported");
  EXPECT_ERROR(readNpy(writeRaw("big.npy", 1,
                                "{'descr': '>f4', 'fortran_order': False, "
                                "'shape': (1,), }",
                                four)),
               "big.npy: big-endian dtype '>f4' is not supported");
  EXPECT_ERROR(readNpy(writeRaw("f8.npy", 1,
                                "{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (1,), }",
                                four + four)),
               "f8.npy: unsupported dtype '<f8' (supported: <f4, <f2, <i4, <i8)");
  EXPECT_ERROR(readNpy(writeRaw("parse.npy", 1,
                                "{'descr': '<f4', 'fortran_order': False, "
                                "'shape': [1], }",
                                four)),
               "parse.npy: cannot parse the .npy header: expected a tuple");
  EXPECT_ERROR(readNpy(writeRaw("keys.npy", 1,
                                "{'descr': '<f4', 'shape': (1,)}", four)),
               "keys.npy: cannot parse the .npy header: the dict needs");
  EXPECT_ERROR(readNpy(writeRaw("v3.npy", 3,
                                "{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1,), }",
                                four)),
               "v3.npy: unsupported .npy version 3.0");
  ASSERT_TRUE(writeNpy(path("f16.npy"), Tensor(DType::F16, {2})).isOk());
  EXPECT_ERROR(readNpy(path("f16.npy"), DType::F32),
               "f16.npy: holds '<f2', but a f32 tensor is read from '<f4'");
  EXPECT_ERROR(readNpy(path("f16.npy"), DType::BF16),
               "but a bf16 tensor is read from '<f4'");
  EXPECT_ERROR(writeNpy(path("no/such/dir/x.npy"), Tensor(DType::F32, {1})),
               "x.npy: cannot open for writing");
}

} // namespace
} // namespace attn
