//===- NpyTest.cpp - NumPy .npy files
//--------------------------------------===//

#include "tools/npy/Npy.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

using namespace rudnn::npy;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

//===----------------------------------------------------------------------===//
// Files written by NumPy 2.4 (np.save, or numpy.lib.format.write_array for
// versions 2.0 and 3.0), byte for byte: NumPy pads the header with spaces
// (20 of them reserved for the first dimension to grow, then up to a 64-byte
// boundary) and ends it with a newline.
//===----------------------------------------------------------------------===//

// <f4 (2, 3) = [[0.5, -1.25, 3.0], [1024.0, inf, -0.0]], version 1.0, 152 bytes
const char kF32Matrix[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }               "
    "                                           \n"
    "\x00\x00\x00\x3f\x00\x00\xa0\xbf\x00\x00\x40\x40\x00\x00\x80\x44\x00\x00"
    "\x80\x7f\x00\x00\x00\x80";
// <i8 () = -7, version 1.0, 136 bytes
const char kI64Scalar[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00"
    "{'descr': '<i8', 'fortran_order': False, 'shape': (), }                   "
    "                                           \n"
    "\xf9\xff\xff\xff\xff\xff\xff\xff";
// |b1 (4,) = [True, False, True, True], version 1.0, 132 bytes
const char kBoolVector[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00"
    "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }                 "
    "                                           \n"
    "\x01\x00\x01\x01";
// <f2 (3,) = [1.0, -2.5, 65504.0], version 1.0, 134 bytes
const char kF16Vector[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00"
    "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }                 "
    "                                           \n"
    "\x00\x3c\x00\xc1\xff\x7b";
// <f8 (0,) = [], version 1.0, 128 bytes
const char kF64Empty[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00"
    "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }                 "
    "                                           \n";
// <i4 (2, 2) = [[1, -2], [2147483647, -2147483648]], version 2.0, 144 bytes
const char kI32Version2[] =
    "\x93\x4e\x55\x4d\x50\x59\x02\x00\x74\x00\x00\x00"
    "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }               "
    "                                         \n"
    "\x01\x00\x00\x00\xfe\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00\x80";
// <f8 (3,) = [0.25, -1e+300, 5e-324], version 3.0, 152 bytes
const char kF64Version3[] =
    "\x93\x4e\x55\x4d\x50\x59\x03\x00\x74\x00\x00\x00"
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }                 "
    "                                         \n"
    "\x00\x00\x00\x00\x00\x00\xd0\x3f\x9c\x75\x00\x88\x3c\xe4\x37\xfe\x01\x00"
    "\x00\x00\x00\x00\x00\x00";

// |b1 (1, 1, 3) followed by 33 ones = [True, False, True], version 1.0,
// 259 bytes: the dict, its 20 spaces and the newline end exactly on 64 bytes,
// so NumPy adds a whole block of 64 more spaces.
const char kBoolFullPadding[] =
    "\x93\x4e\x55\x4d\x50\x59\x01\x00\xf6\x00"
    "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 1, 3, 1, 1, 1, 1, "
    "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
    "1, 1, 1, 1, 1), }                                                         "
    "                           \n"
    "\x01\x00\x01";

template <size_t N> std::string fileBytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

const ElementType kFileTypes[] = {ElementType::F64, ElementType::F32,
                                  ElementType::F16, ElementType::I32,
                                  ElementType::I64, ElementType::Bool};

/// An array of `type` whose elements have the given bit patterns, stored
/// little endian whatever the host.
Array fromBits(ElementType type, const std::vector<uint64_t> &bits,
               std::vector<int64_t> shape) {
  Array array;
  array.type = type;
  array.shape = std::move(shape);
  const size_t size = itemSize(type);
  for (uint64_t value : bits)
    for (size_t i = 0; i < size; ++i)
      array.bytes.push_back(static_cast<uint8_t>(value >> (8 * i)));
  return array;
}

std::vector<uint64_t> bitsOf(const Array &array) {
  const size_t size = itemSize(array.type);
  std::vector<uint64_t> bits(array.bytes.size() / size);
  for (size_t e = 0; e < bits.size(); ++e)
    for (size_t i = 0; i < size; ++i)
      bits[e] |= static_cast<uint64_t>(array.bytes[e * size + i]) << (8 * i);
  return bits;
}

/// The bits of `value` as an element of T (float or double) holds them.
template <typename T> uint64_t bitsOf(T value) {
  std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

Array doubles(const std::vector<double> &values) {
  std::vector<uint64_t> bits;
  for (double value : values)
    bits.push_back(bitsOf<double>(value));
  return fromBits(ElementType::F64, bits,
                  {static_cast<int64_t>(values.size())});
}

Array floats(const std::vector<float> &values) {
  return fromFloats(values, {static_cast<int64_t>(values.size())});
}

Array integers(ElementType type, const std::vector<int64_t> &values) {
  std::vector<uint64_t> bits(values.begin(), values.end());
  return fromBits(type, bits, {static_cast<int64_t>(values.size())});
}

/// The message of the InvalidArgument `action` throws; a failure if it
/// throws nothing or anything else.
std::string invalidArgument(const std::function<void()> &action) {
  try {
    action();
  } catch (const rudnn::InvalidArgument &error) {
    return error.what();
  } catch (const std::exception &error) {
    ADD_FAILURE() << "expected InvalidArgument, got: " << error.what();
    return "";
  }
  ADD_FAILURE() << "expected InvalidArgument, nothing was thrown";
  return "";
}

/// A fresh directory per test, removed afterwards.
class NpyTempDir : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() /
          ("rudnn-npy-" + std::to_string(::getpid()) + "-" +
           info->test_suite_name() + "-" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const {
    return (dir / name).string();
  }

  std::string put(const std::string &name, const std::string &bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out << bytes;
    return path(name);
  }

  static std::string slurp(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto &entry : fs::directory_iterator(dir))
      names.insert(entry.path().filename().string());
    return names;
  }

  /// A version 1.0 file with `header` (unpadded) followed by `data`.
  static std::string npyFile(const std::string &header, const std::string &data,
                             int version = 1) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(version);
    out += '\0';
    const size_t lengthSize = version == 1 ? 2 : 4;
    for (size_t i = 0; i < lengthSize; ++i)
      out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
  }

  fs::path dir;
};

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

class NpyRoundTrip : public NpyTempDir {};

TEST_F(NpyRoundTrip, EveryTypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {7}, {2, 3, 4}};
  for (ElementType type : kFileTypes)
    for (const auto &shape : shapes) {
      SCOPED_TRACE(std::string(typeName(type)) + " rank " +
                   std::to_string(shape.size()));
      Array array;
      array.type = type;
      array.shape = shape;
      const size_t count = static_cast<size_t>(numElements(shape));
      for (size_t i = 0; i < count * itemSize(type); ++i)
        array.bytes.push_back(type == ElementType::Bool
                                  ? static_cast<uint8_t>(i % 3 == 0)
                                  : static_cast<uint8_t>(i * 37 + 11));
      write(path("a.npy"), array);
      const Array back = read(path("a.npy"));
      EXPECT_EQ(back.type, type);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.bytes, array.bytes);

      // NumPy's layout: version 1.0, data aligned to 64 bytes.
      const std::string file = slurp(path("a.npy"));
      ASSERT_GE(file.size(), 10u);
      EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      const size_t headerEnd = 10 + static_cast<uint8_t>(file[8]) +
                               256 * static_cast<uint8_t>(file[9]);
      EXPECT_EQ(headerEnd % 64, 0u);
      EXPECT_EQ(file[headerEnd - 1], '\n');
      EXPECT_EQ(file.size(), headerEnd + array.bytes.size());

      // Writing what was read gives the same file again.
      write(path("b.npy"), back);
      EXPECT_EQ(slurp(path("b.npy")), file);
    }
  EXPECT_EQ(entries(), (std::set<std::string>{"a.npy", "b.npy"}));
}

TEST_F(NpyRoundTrip, HeaderSpellsTheShapeLikeNumpy) {
  write(path("s.npy"), integers(ElementType::I32, {5}));
  Array scalar = integers(ElementType::I64, {9});
  scalar.shape = {};
  write(path("t.npy"), scalar);
  // (5,) leaves 21 - 1 spaces for the first dimension to grow.
  EXPECT_THAT(slurp(path("s.npy")),
              HasSubstr("{'descr': '<i4', 'fortran_order': False, "
                        "'shape': (1,), }" +
                        std::string(20, ' ') + " "));
  EXPECT_THAT(slurp(path("t.npy")), HasSubstr("'shape': (), }"));
}

TEST_F(NpyRoundTrip, LongHeaderIsWrittenAsVersion2) {
  // 30000 dimensions of 1 spell a header of about 90 kB, past version 1.0's
  // 16-bit length.
  const std::vector<int64_t> shape(30000, 1);
  Array array = fromFloats({2.5f}, shape);
  write(path("long.npy"), array);
  const std::string file = slurp(path("long.npy"));
  ASSERT_GE(file.size(), 12u);
  EXPECT_EQ(file[6], 2);
  const size_t headerSize = static_cast<uint8_t>(file[8]) |
                            static_cast<uint8_t>(file[9]) << 8 |
                            static_cast<uint8_t>(file[10]) << 16 |
                            static_cast<uint8_t>(file[11]) << 24;
  EXPECT_GT(headerSize, 65535u);
  EXPECT_EQ((12 + headerSize) % 64, 0u);
  const Array back = read(path("long.npy"));
  EXPECT_EQ(back.shape, shape);
  EXPECT_EQ(toDoubles(back), std::vector<double>{2.5});
}

TEST_F(NpyRoundTrip, Bfloat16IsNotWritten) {
  const Array array = convert(floats({1.0f}), ElementType::BF16);
  EXPECT_THAT(invalidArgument([&] { write(path("b.npy"), array); }),
              HasSubstr("NumPy has no bfloat16"));
  EXPECT_TRUE(entries().empty());
}

//===----------------------------------------------------------------------===//
// Files written by NumPy
//===----------------------------------------------------------------------===//

class NpyNumpyFiles : public NpyTempDir {};

TEST_F(NpyNumpyFiles, Float32Matrix) {
  const Array array = read(put("m.npy", fileBytes(kF32Matrix)));
  EXPECT_EQ(array.type, ElementType::F32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  const std::vector<double> values = toDoubles(array);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(values, (std::vector<double>{0.5, -1.25, 3.0, 1024.0, inf, 0.0}));
  EXPECT_TRUE(std::signbit(values[5]));
}

TEST_F(NpyNumpyFiles, Int64Scalar) {
  const Array array = read(put("s.npy", fileBytes(kI64Scalar)));
  EXPECT_EQ(array.type, ElementType::I64);
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(toDoubles(array), std::vector<double>{-7.0});
  EXPECT_EQ(bitsOf(array), std::vector<uint64_t>{uint64_t(0) - 7});
}

TEST_F(NpyNumpyFiles, BoolVector) {
  const Array array = read(put("b.npy", fileBytes(kBoolVector)));
  EXPECT_EQ(array.type, ElementType::Bool);
  EXPECT_EQ(array.shape, std::vector<int64_t>{4});
  EXPECT_EQ(toDoubles(array), (std::vector<double>{1, 0, 1, 1}));
}

TEST_F(NpyNumpyFiles, Float16Vector) {
  const Array array = read(put("h.npy", fileBytes(kF16Vector)));
  EXPECT_EQ(array.type, ElementType::F16);
  EXPECT_EQ(array.shape, std::vector<int64_t>{3});
  EXPECT_EQ(toDoubles(array), (std::vector<double>{1.0, -2.5, 65504.0}));
}

TEST_F(NpyNumpyFiles, EmptyFloat64) {
  const Array array = read(put("e.npy", fileBytes(kF64Empty)));
  EXPECT_EQ(array.type, ElementType::F64);
  EXPECT_EQ(array.shape, std::vector<int64_t>{0});
  EXPECT_TRUE(array.bytes.empty());
}

TEST_F(NpyNumpyFiles, Version2) {
  const Array array = read(put("v2.npy", fileBytes(kI32Version2)));
  EXPECT_EQ(array.type, ElementType::I32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(toDoubles(array),
            (std::vector<double>{1, -2, 2147483647.0, -2147483648.0}));
}

TEST_F(NpyNumpyFiles, Version3) {
  const Array array = read(put("v3.npy", fileBytes(kF64Version3)));
  EXPECT_EQ(array.type, ElementType::F64);
  EXPECT_EQ(array.shape, std::vector<int64_t>{3});
  EXPECT_EQ(toDoubles(array),
            (std::vector<double>{0.25, -1e300,
                                 std::numeric_limits<double>::denorm_min()}));
}

TEST_F(NpyNumpyFiles, HeaderPaddedByAWholeBlock) {
  const Array array = read(put("p.npy", fileBytes(kBoolFullPadding)));
  EXPECT_EQ(array.type, ElementType::Bool);
  std::vector<int64_t> shape(36, 1);
  shape[2] = 3;
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(toDoubles(array), (std::vector<double>{1, 0, 1}));
}

TEST_F(NpyNumpyFiles, WritingWhatWasReadGivesNumpysBytes) {
  for (const std::string &file :
       {fileBytes(kF32Matrix), fileBytes(kI64Scalar), fileBytes(kBoolVector),
        fileBytes(kF16Vector), fileBytes(kF64Empty),
        fileBytes(kBoolFullPadding)}) {
    write(path("copy.npy"), read(put("original.npy", file)));
    EXPECT_EQ(slurp(path("copy.npy")), file);
  }
}

TEST_F(NpyNumpyFiles, LaterVersionsAreRewrittenAsVersion1) {
  const Array array = read(put("v2.npy", fileBytes(kI32Version2)));
  write(path("v1.npy"), array);
  const std::string file = slurp(path("v1.npy"));
  EXPECT_EQ(file[6], 1);
  EXPECT_EQ(read(path("v1.npy")).bytes, array.bytes);
}

TEST_F(NpyNumpyFiles, KeysInAnyOrderWithAnyWhitespace) {
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);
  const Array array = read(
      put("k.npy", npyFile(" {\"shape\" :( 2 ,) ,'fortran_order':False,\n\t"
                           "'descr'  :  '<f4'}\r\n",
                           data)));
  EXPECT_EQ(array.shape, std::vector<int64_t>{2});
  EXPECT_EQ(toDoubles(array), (std::vector<double>{1.0, 2.0}));
  // Python 2 wrote long dimensions with an L; NumPy still reads them.
  EXPECT_EQ(
      read(put("l.npy", npyFile("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (1L, 2L), }",
                                data)))
          .shape,
      (std::vector<int64_t>{1, 2}));
}

TEST_F(NpyNumpyFiles, ByteOrderMarks) {
  const std::string one("\x01", 1), four("\x00\x00\x80\x3f", 4);
  auto typeOf = [&](const std::string &descr, const std::string &data) {
    return read(put("o.npy", npyFile("{'descr': '" + descr +
                                         "', 'fortran_order': False, "
                                         "'shape': (), }",
                                     data)))
        .type;
  };
  EXPECT_EQ(typeOf("=f4", four), ElementType::F32);
  EXPECT_EQ(typeOf("<b1", one), ElementType::Bool);
  EXPECT_EQ(typeOf("=b1", one), ElementType::Bool);
  EXPECT_EQ(typeOf(">b1", one), ElementType::Bool);
  EXPECT_THAT(invalidArgument([&] { typeOf("|f4", four); }),
              HasSubstr("descr '|f4' has no byte order"));
}

//===----------------------------------------------------------------------===//
// Malformed files
//===----------------------------------------------------------------------===//

class NpyMalformed : public NpyTempDir {
protected:
  /// The message reading `bytes` as a file fails with; it always names the
  /// file.
  std::string failure(const std::string &bytes) {
    const std::string file = put("bad.npy", bytes);
    const std::string message = invalidArgument([&] { read(file); });
    EXPECT_THAT(message, HasSubstr(file));
    return message;
  }

  static std::string header(const std::string &descr, const std::string &order,
                            const std::string &shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + order +
           ", 'shape': " + shape + ", }";
  }
};

TEST_F(NpyMalformed, BadMagic) {
  std::string file = fileBytes(kF32Matrix);
  file[5] = 'Z';
  EXPECT_THAT(failure(file), HasSubstr("not a .npy file (bad magic)"));
  EXPECT_THAT(failure(""), HasSubstr("bad magic"));
  EXPECT_THAT(failure("PK\x03\x04"), HasSubstr("bad magic"));
}

TEST_F(NpyMalformed, Truncated) {
  const std::string file = fileBytes(kF32Matrix);
  EXPECT_THAT(failure(file.substr(0, 7)), HasSubstr("truncated header"));
  EXPECT_THAT(failure(file.substr(0, 9)), HasSubstr("truncated header"));
  EXPECT_THAT(failure(file.substr(0, 60)),
              HasSubstr("truncated header: it declares 118 bytes, the file "
                        "holds 50 after the prefix"));
  EXPECT_THAT(failure(file.substr(0, 140)),
              HasSubstr("data is 12 bytes, expected 24 for shape (2, 3) of "
                        "float32"));
}

TEST_F(NpyMalformed, WrongDataLength) {
  const std::string file = fileBytes(kF32Matrix);
  EXPECT_THAT(failure(file + "x"), HasSubstr("data is 25 bytes, expected 24"));
  EXPECT_THAT(failure(file.substr(0, file.size() - 1)),
              HasSubstr("data is 23 bytes, expected 24"));
  EXPECT_THAT(failure(fileBytes(kI64Scalar) + std::string(8, '\0')),
              HasSubstr("data is 16 bytes, expected 8 for shape () of int64"));
}

TEST_F(NpyMalformed, UnsupportedVersion) {
  std::string file = fileBytes(kF32Matrix);
  file[6] = 4;
  EXPECT_THAT(failure(file), HasSubstr("unsupported format version 4.0"));
  file[6] = 1;
  file[7] = 1;
  EXPECT_THAT(failure(file), HasSubstr("unsupported format version 1.1"));
}

TEST_F(NpyMalformed, BigEndian) {
  EXPECT_THAT(failure(npyFile(header(">f4", "False", "(1,)"), "abcd")),
              HasSubstr("big-endian arrays are not supported (descr '>f4')"));
  EXPECT_THAT(failure(npyFile(header(">i8", "False", "()"), "abcdefgh")),
              HasSubstr("big-endian arrays are not supported (descr '>i8')"));
}

TEST_F(NpyMalformed, FortranOrderIsReadIntoCOrder) {
  // np.asfortranarray(np.arange(24, dtype='<i4').reshape(2, 3, 4)): in the
  // file the first index runs fastest.
  std::string data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) {
        const int32_t value = (i * 3 + j) * 4 + k;
        data.append(reinterpret_cast<const char *>(&value), 4);
      }
  const Array array =
      read(put("f.npy", npyFile(header("<i4", "True", "(2, 3, 4)"), data)));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(array.bytes.size(), 96u);
  for (int32_t n = 0; n < 24; ++n) {
    int32_t value;
    std::memcpy(&value, &array.bytes[4 * n], 4);
    EXPECT_EQ(value, n) << "element " << n;
  }
  // Rank 0 and 1 read the same in either order; the size is still checked.
  EXPECT_EQ(read(put("v.npy", npyFile(header("<f4", "True", "(2,)"),
                                      std::string(8, '\0'))))
                .shape,
            (std::vector<int64_t>{2}));
  EXPECT_THAT(
      failure(npyFile(header("<f4", "True", "(2, 2)"), std::string(12, '\0'))),
      HasSubstr("data is 12 bytes, expected 16"));
}

TEST_F(NpyMalformed, UnknownDescr) {
  EXPECT_THAT(failure(npyFile(header("<c8", "False", "(1,)"), "abcdefgh")),
              HasSubstr("unsupported descr '<c8'"));
  EXPECT_THAT(failure(npyFile(header("<u2", "False", "(1,)"), "ab")),
              HasSubstr("unsupported descr '<u2'"));
  EXPECT_THAT(failure(npyFile(header("<U10", "False", "(1,)"), "ab")),
              HasSubstr("unsupported descr '<U10'"));
  EXPECT_THAT(failure(npyFile("{'descr': [('a', '<f4')], 'fortran_order': "
                              "False, 'shape': (1,), }",
                              "abcd")),
              HasSubstr("structured arrays"));
}

TEST_F(NpyMalformed, HeaderNotADict) {
  EXPECT_THAT(failure(npyFile("['<f4', False, (1,)]", "abcd")),
              HasSubstr("header is not a dict"));
  EXPECT_THAT(failure(npyFile("", "")), HasSubstr("header is not a dict"));
  EXPECT_THAT(failure(npyFile("{'descr': '<f4', 'fortran_order': False", "")),
              HasSubstr("expected ',' or '}'"));
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "(1,)") + " x", "abcd")),
              HasSubstr("unexpected text after the header dict"));
  EXPECT_THAT(failure(npyFile("{'descr: '<f4'}", "")),
              HasSubstr("expected ':'"));
  EXPECT_THAT(failure(npyFile("{'descr", "")), HasSubstr("unterminated"));
}

TEST_F(NpyMalformed, Keys) {
  EXPECT_THAT(failure(npyFile("{'descr': '<f4', 'shape': (1,), }", "abcd")),
              HasSubstr("header lacks 'fortran_order'"));
  EXPECT_THAT(failure(npyFile("{'descr': '<f4', 'descr': '<f4', "
                              "'fortran_order': False, 'shape': (1,), }",
                              "abcd")),
              HasSubstr("duplicate key 'descr'"));
  EXPECT_THAT(failure(npyFile("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1,), 'extra': 1, }",
                              "abcd")),
              HasSubstr("unexpected key 'extra'"));
  EXPECT_THAT(failure(npyFile(header("<f4", "0", "(1,)"), "abcd")),
              HasSubstr("fortran_order is not True or False"));
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "[1]"), "abcd")),
              HasSubstr("shape is not a tuple"));
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "(1)"), "abcd")),
              HasSubstr("shape is not a tuple"));
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "(1 2)"), "abcd")),
              HasSubstr("expected ',' or ')'"));
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "(1.5,)"), "abcd")),
              HasSubstr("expected ',' or ')'"));
}

TEST_F(NpyMalformed, Dimensions) {
  EXPECT_THAT(failure(npyFile(header("<f4", "False", "(-1, 3)"), "")),
              HasSubstr("negative dimension -1 in shape"));
  EXPECT_THAT(
      failure(npyFile(header("<f4", "False", "(99999999999999999999,)"), "")),
      HasSubstr("dimension 99999999999999999999 in shape is too large"));
  EXPECT_THAT(
      failure(npyFile(header("<f4", "False", "(9223372036854775808,)"), "")),
      HasSubstr("is too large"));
  EXPECT_THAT(
      failure(npyFile(header("<f4", "False", "(4294967296, 4294967296)"), "")),
      HasSubstr("has too many elements"));
  // numel fits int64, its size in bytes does not.
  EXPECT_THAT(
      failure(npyFile(header("<f8", "False", "(4611686018427387904,)"), "")),
      HasSubstr("is too large"));
  // A zero anywhere makes the array empty, however large the rest.
  const Array empty = read(
      put("z.npy",
          npyFile(header("<f8", "False", "(0, 9223372036854775807)"), "")));
  EXPECT_TRUE(empty.bytes.empty());
}

TEST_F(NpyMalformed, Unreadable) {
  EXPECT_THAT(invalidArgument([&] { read(path("absent.npy")); }),
              HasSubstr("cannot read"));
  EXPECT_THAT(invalidArgument([&] { read(dir.string()); }),
              HasSubstr(dir.string()));
}

TEST_F(NpyMalformed, NeverCrashes) {
  // Every prefix of real files, and single-byte corruptions of everything
  // but their padding and data (which only ever read back as other values),
  // either read or throw InvalidArgument.
  const std::string files[] = {fileBytes(kF32Matrix), fileBytes(kI32Version2),
                               fileBytes(kF64Version3)};
  const char replacements[] = {'\0', '\xff', ' ', '\'', '(', ')',  ',',
                               ':',  '{',    '}', '-',  '9', '\n', '\\'};
  size_t reads = 0, errors = 0;
  auto attempt = [&](const std::string &bytes) {
    const std::string file = put("fuzz.npy", bytes);
    try {
      read(file);
      ++reads;
    } catch (const rudnn::InvalidArgument &) {
      ++errors;
    }
  };
  for (const std::string &file : files) {
    for (size_t size = 0; size < file.size(); ++size)
      attempt(file.substr(0, size));
    const size_t dictEnd = file.find('}') + 1;
    for (size_t at = 0; at <= dictEnd; ++at)
      for (char c : replacements) {
        std::string mutated = file;
        mutated[at == dictEnd ? 127 : at] = c;
        attempt(mutated);
      }
  }
  // Only the complete files read, and a few corruptions that keep them
  // valid (a space for a space, '9' for a dimension's digit, ...).
  EXPECT_GE(reads, 3u);
  EXPECT_GT(errors, 1000u);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class NpyWrite : public NpyTempDir {};

TEST_F(NpyWrite, MissingDirectoryThrowsAndLeavesNothing) {
  const std::string target = path("missing/out.npy");
  EXPECT_THAT(invalidArgument([&] { write(target, floats({1.0f})); }),
              HasSubstr("cannot write '" + target + "'"));
  EXPECT_FALSE(fs::exists(dir / "missing"));
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyWrite, FailedRenameLeavesNoTemporary) {
  // A directory cannot be replaced by a file: the temporary is written, the
  // rename fails, and the temporary must go.
  fs::create_directory(dir / "taken");
  EXPECT_THAT(invalidArgument([&] { write(path("taken"), floats({1.0f})); }),
              HasSubstr("cannot write '" + path("taken") + "'"));
  EXPECT_EQ(entries(), std::set<std::string>{"taken"});
  EXPECT_TRUE(fs::is_empty(dir / "taken"));
}

TEST_F(NpyWrite, ReplacesAnExistingFile) {
  write(path("x.npy"), floats({1.0f, 2.0f}));
  write(path("x.npy"), integers(ElementType::I64, {3}));
  const Array back = read(path("x.npy"));
  EXPECT_EQ(back.type, ElementType::I64);
  EXPECT_EQ(toDoubles(back), std::vector<double>{3.0});
  EXPECT_EQ(entries(), std::set<std::string>{"x.npy"});
}

TEST_F(NpyWrite, InconsistentArrayThrowsAndLeavesNothing) {
  Array array = floats({1.0f, 2.0f});
  array.bytes.pop_back();
  EXPECT_THAT(invalidArgument([&] { write(path("x.npy"), array); }),
              HasSubstr("needs 8 bytes, it has 7"));
  array = floats({1.0f});
  array.shape = {-1};
  EXPECT_THAT(invalidArgument([&] { write(path("x.npy"), array); }),
              HasSubstr("negative dimension"));
  EXPECT_TRUE(entries().empty());
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

TEST(NpyConvert, Float64ToBfloat16RoundsOnceToNearestEven) {
  const double quiet = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Array result = convert(
      doubles({
          1.0,                                          // exact
          1.0 + std::ldexp(1, -8),                      // tie, down to even
          1.0 + 3 * std::ldexp(1, -8),                  // tie, up to even
          1.0 + std::ldexp(1, -8) + std::ldexp(1, -40), // just above the tie:
          // through float32 it would become the tie and round down
          -(1.0 + std::ldexp(1, -8)),               // negative tie
          std::ldexp(255, 120),                     // largest bfloat16
          std::ldexp(511, 119) - std::ldexp(1, 90), // below overflow
          std::ldexp(511, 119),                     // tie at the top: inf
          -1e300,                                   // overflow
          std::ldexp(1, -133),                      // smallest subnormal
          std::ldexp(1, -134),                      // half of it: tie to 0
          std::ldexp(3, -134),                      // 1.5 of it: to 2
          quiet,
          -quiet,
          inf,
          -inf,
          -0.0,
      }),
      ElementType::BF16);
  EXPECT_EQ(result.type, ElementType::BF16);
  EXPECT_EQ(bitsOf(result), (std::vector<uint64_t>{
                                0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xbf80, 0x7f7f,
                                0x7f7f, 0x7f80, 0xff80, 0x0001, 0x0000, 0x0002,
                                0x7fff, 0x7fff, 0x7f80, 0xff80, 0x8000}));
}

TEST(NpyConvert, Float32ToFloat16RoundsToNearestEven) {
  const float quiet = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Array result =
      convert(floats({
                  1.0f,
                  1.0f + std::ldexp(1.0f, -11),     // tie, down
                  1.0f + 3 * std::ldexp(1.0f, -11), // tie, up
                  1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), // above
                  -2.5f,
                  65504.0f, // largest half
                  65519.0f, // rounds down to it
                  65520.0f, // the tie above it goes to infinity
                  -1e10f,
                  quiet,
                  -quiet,
                  inf,
                  -inf,
              }),
              ElementType::F16);
  EXPECT_EQ(result.type, ElementType::F16);
  EXPECT_EQ(bitsOf(result),
            (std::vector<uint64_t>{0x3c00, 0x3c00, 0x3c02, 0x3c01, 0xc100,
                                   0x7bff, 0x7bff, 0x7c00, 0xfc00, 0x7fff,
                                   0x7fff, 0x7c00, 0xfc00}));
}

TEST(NpyConvert, Float16Subnormals) {
  const float tiny = std::ldexp(1.0f, -24); // the smallest half subnormal
  const Array result =
      convert(floats({
                  tiny,
                  tiny / 2,                         // tie to 0
                  std::nextafter(tiny / 2, 1.0f),   // above the tie
                  3 * tiny / 2,                     // tie to 2
                  5 * tiny / 2,                     // tie to 2
                  1023 * tiny,                      // largest subnormal
                  std::ldexp(1.0f, -14) - tiny / 2, // tie to the normal
                  std::ldexp(1.0f, -14),            // smallest normal
                  -tiny,
                  tiny / 4,
                  -tiny / 4,
              }),
              ElementType::F16);
  EXPECT_EQ(bitsOf(result), (std::vector<uint64_t>{
                                0x0001, 0x0000, 0x0001, 0x0002, 0x0002, 0x03ff,
                                0x0400, 0x0400, 0x8001, 0x0000, 0x8000}));
  // And back, exactly.
  EXPECT_EQ(
      toDoubles(fromBits(ElementType::F16, {0x0001, 0x03ff, 0x8001}, {3})),
      (std::vector<double>{std::ldexp(1, -24), std::ldexp(1023, -24),
                           -std::ldexp(1, -24)}));
}

TEST(NpyConvert, Float64ToFloat32) {
  const Array result =
      convert(doubles({1.0 + std::ldexp(1, -24), // tie, down
                       1.0 + std::ldexp(1, -24) + std::ldexp(1, -50), // above
                       1e39, std::ldexp(1, -149), std::ldexp(1, -150),
                       std::numeric_limits<double>::quiet_NaN()}),
              ElementType::F32);
  EXPECT_EQ(bitsOf(result),
            (std::vector<uint64_t>{0x3f800000, 0x3f800001, 0x7f800000,
                                   0x00000001, 0x00000000, 0x7fffffff}));
}

TEST(NpyConvert, IntegersToFloats) {
  const Array ints = integers(
      ElementType::I32, {0, 16777217, 16777219, -2147483648LL, 2147483647});
  EXPECT_EQ(bitsOf(convert(ints, ElementType::F32)),
            (std::vector<uint64_t>{
                0, bitsOf<float>(16777216.0f), bitsOf<float>(16777220.0f),
                bitsOf<float>(-2147483648.0f), bitsOf<float>(2147483648.0f)}));
  EXPECT_EQ(
      bitsOf(convert(integers(ElementType::I64, {2049, 2051, 65504, 70000, -3}),
                     ElementType::F16)),
      (std::vector<uint64_t>{0x6800, 0x6802, 0x7bff, 0x7c00, 0xc200}));
  EXPECT_EQ(bitsOf(convert(integers(ElementType::I64,
                                    {std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min()}),
                           ElementType::BF16)),
            (std::vector<uint64_t>{0x5f00, 0xdf00}));
  EXPECT_EQ(bitsOf(convert(integers(ElementType::I64, {(1LL << 53) + 1}),
                           ElementType::F64)),
            std::vector<uint64_t>{bitsOf<double>(std::ldexp(1, 53))});
}

TEST(NpyConvert, BoolToFloat32) {
  // Any non-zero byte is true.
  const Array bools = fromBits(ElementType::Bool, {1, 0, 2}, {3});
  const Array result = convert(bools, ElementType::F32);
  EXPECT_EQ(result.shape, std::vector<int64_t>{3});
  EXPECT_EQ(bitsOf(result), (std::vector<uint64_t>{bitsOf<float>(1.0f), 0,
                                                   bitsOf<float>(1.0f)}));
}

TEST(NpyConvert, FloatToIntegerIsRejected) {
  for (ElementType from : {ElementType::F64, ElementType::F32, ElementType::F16,
                           ElementType::BF16})
    for (ElementType to : {ElementType::I32, ElementType::I64}) {
      Array array;
      array.type = from;
      array.shape = {1};
      array.bytes.assign(itemSize(from), 0);
      EXPECT_THAT(invalidArgument([&] { convert(array, to); }),
                  HasSubstr(std::string("cannot convert ") + typeName(from) +
                            " to " + typeName(to) +
                            ": floating-point values are not converted"));
    }
}

TEST(NpyConvert, ToInt32) {
  EXPECT_EQ(bitsOf(convert(
                integers(ElementType::I64, {-2147483648LL, 2147483647, -1}),
                ElementType::I32)),
            (std::vector<uint64_t>{0x80000000, 0x7fffffff, 0xffffffff}));
  EXPECT_THAT(invalidArgument([] {
                convert(integers(ElementType::I64, {0, 2147483648LL}),
                        ElementType::I32);
              }),
              HasSubstr("element 1 (2147483648) does not fit int32"));
  EXPECT_EQ(bitsOf(convert(fromBits(ElementType::Bool, {0, 1, 7}, {3}),
                           ElementType::I32)),
            (std::vector<uint64_t>{0, 1, 1}));
  EXPECT_EQ(bitsOf(convert(integers(ElementType::I32, {-5}), ElementType::I64)),
            std::vector<uint64_t>{uint64_t(0) - 5});
}

TEST(NpyConvert, ToBool) {
  const Array result =
      convert(floats({0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                      0.5f, -std::numeric_limits<float>::infinity()}),
              ElementType::Bool);
  EXPECT_EQ(result.bytes, (std::vector<uint8_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(
      convert(integers(ElementType::I32, {0, -3}), ElementType::Bool).bytes,
      (std::vector<uint8_t>{0, 1}));
}

TEST(NpyConvert, Bfloat16ToFloat32IsExact) {
  const Array result =
      convert(fromBits(ElementType::BF16, {0x3f81, 0x0001, 0xff80}, {3}),
              ElementType::F32);
  EXPECT_EQ(bitsOf(result),
            (std::vector<uint64_t>{0x3f810000, 0x00010000, 0xff800000}));
}

TEST(NpyConvert, SameTypeCopiesAndShapeIsKept) {
  const Array nan =
      fromBits(ElementType::F32, {0x7fc00001, 0xffc00000}, {2, 1});
  const Array copy = convert(nan, ElementType::F32);
  EXPECT_EQ(copy.bytes, nan.bytes);
  EXPECT_EQ(copy.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(convert(nan, ElementType::F16).shape, (std::vector<int64_t>{2, 1}));
}

TEST(NpyConvert, InconsistentArrayIsRejected) {
  Array array = floats({1.0f});
  array.bytes.push_back(0);
  EXPECT_THAT(invalidArgument([&] { convert(array, ElementType::F16); }),
              HasSubstr("needs 4 bytes, it has 5"));
  EXPECT_THAT(invalidArgument([&] { toDoubles(array); }),
              HasSubstr("needs 4 bytes, it has 5"));
}

TEST(NpyArray, FromFloats) {
  const Array array = fromFloats({1.5f, -2.0f, 0.25f, 8.0f}, {2, 2});
  EXPECT_EQ(array.type, ElementType::F32);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(bitsOf(array), (std::vector<uint64_t>{0x3fc00000, 0xc0000000,
                                                  0x3e800000, 0x41000000}));
  EXPECT_THAT(invalidArgument([] {
                fromFloats({1.0f, 2.0f}, {3});
              }),
              HasSubstr("shape (3,) holds 3 elements, given 2"));
  EXPECT_EQ(fromFloats({7.0f}, {}).bytes.size(), 4u);
}

TEST(NpyArray, Names) {
  EXPECT_STREQ(typeName(ElementType::F64), "float64");
  EXPECT_STREQ(typeName(ElementType::F32), "float32");
  EXPECT_STREQ(typeName(ElementType::F16), "float16");
  EXPECT_STREQ(typeName(ElementType::I32), "int32");
  EXPECT_STREQ(typeName(ElementType::I64), "int64");
  EXPECT_STREQ(typeName(ElementType::Bool), "bool");
  EXPECT_STREQ(typeName(ElementType::BF16), "bfloat16");
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({5, 0}), 0);
}

} // namespace
