//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "tools/npy/Npy.h"
#include "runtime/support/HostFloat.h"
#include "runtime/support/InputFile.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::npy;
using namespace rudnn::runtime;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy aligns the data to this many bytes so that it can be memory-mapped.
constexpr size_t kAlign = 64;
// NumPy leaves room for the first dimension to grow to this many digits so
// that appending can rewrite the header in place; we pad the same way so our
// files are byte-identical to NumPy's.
constexpr size_t kGrowthAxisMaxDigits = 21;

[[noreturn]] void fail(const std::string &path, const std::string &problem) {
  throw InvalidArgument("npy file '" + path + "': " + problem);
}

std::string shapeString(const std::vector<int64_t> &shape) {
  // Python's repr of a tuple: "()", "(7,)", "(2, 3, 4)".
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

const char *descrOf(ElementType type) {
  switch (type) {
  case ElementType::F64:
    return "<f8";
  case ElementType::F32:
    return "<f4";
  case ElementType::F16:
    return "<f2";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  case ElementType::Bool:
    return "|b1";
  case ElementType::BF16:
    break;
  }
  return nullptr;
}

// Explicit little-endian loads and stores keep the byte order of files and
// arrays independent of the host's.
uint64_t loadLittle(const uint8_t *p, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

void storeLittle(uint8_t *p, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i)
    p[i] = static_cast<uint8_t>(value >> (8 * i));
}

double doubleFromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, 8);
  return value;
}

float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

/// One source element, exactly: integers (and bools) as int64, floating-point
/// values as double, which holds every float64, float32, float16 and bfloat16
/// value exactly.
struct Value {
  bool isInteger;
  int64_t integer;
  double real;
};

bool isFloating(ElementType type) {
  return type == ElementType::F64 || type == ElementType::F32 ||
         type == ElementType::F16 || type == ElementType::BF16;
}

Value load(ElementType type, const uint8_t *p) {
  switch (type) {
  case ElementType::F64:
    return {false, 0, doubleFromBits(loadLittle(p, 8))};
  case ElementType::F32:
    return {false, 0, floatFromBits(static_cast<uint32_t>(loadLittle(p, 4)))};
  case ElementType::F16:
    return {false, 0, fromFloat16(static_cast<uint16_t>(loadLittle(p, 2)))};
  case ElementType::BF16:
    return {false, 0, fromBfloat16(static_cast<uint16_t>(loadLittle(p, 2)))};
  case ElementType::I32:
    return {true, static_cast<int32_t>(static_cast<uint32_t>(loadLittle(p, 4))),
            0};
  case ElementType::I64:
    return {true, static_cast<int64_t>(loadLittle(p, 8)), 0};
  case ElementType::Bool:
    return {true, p[0] != 0, 0};
  }
  return {true, 0, 0};
}

uint64_t roundValue(const Value &value, const FloatFormat &format) {
  if (!value.isInteger)
    return roundToFormat(value.real, format);
  const bool negative = value.integer < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(value.integer)
               : static_cast<uint64_t>(value.integer);
  return roundToFormat(negative, magnitude, 0, format);
}

double toDouble(const Value &value) {
  return value.isInteger ? static_cast<double>(value.integer) : value.real;
}

/// The product of the non-negative `shape`; false if it overflows int64.
/// A zero dimension makes the array empty however large the others are.
bool countElements(const std::vector<int64_t> &shape, int64_t &count) {
  count = 1;
  for (int64_t dim : shape)
    if (dim == 0) {
      count = 0;
      return true;
    }
  for (int64_t dim : shape) {
    if (count > std::numeric_limits<int64_t>::max() / dim)
      return false;
    count *= dim;
  }
  return true;
}

/// Checks that `bytes` holds exactly the elements `shape` and `type` call
/// for, so that no loop over an array can run past its end.
void validate(const Array &array, const std::string &operation) {
  const uint64_t count = static_cast<uint64_t>(numElements(array.shape));
  const size_t size = itemSize(array.type);
  const std::string what = operation + ": a " + typeName(array.type) +
                           " array of shape " + shapeString(array.shape);
  if (count > std::numeric_limits<uint64_t>::max() / size)
    throw InvalidArgument(what + " is too large");
  if (array.bytes.size() != count * size)
    throw InvalidArgument(what + " needs " + std::to_string(count * size) +
                          " bytes, it has " +
                          std::to_string(array.bytes.size()));
}

//===----------------------------------------------------------------------===//
// Header
//===----------------------------------------------------------------------===//

/// The header's fields once parsed.
struct Header {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  bool fortranOrder = false;
};

/// A parser for the one Python dict literal a .npy header holds; anything
/// else is an InvalidArgument naming the file.
class HeaderParser {
public:
  HeaderParser(const std::string &path, std::string_view text)
      : path(path), text(text) {}

  Header parse() {
    skipSpace();
    if (!consume('{'))
      fail(path, "header is not a dict: " + excerpt(pos));
    bool sawDescr = false, sawOrder = false, sawShape = false;
    Header header;
    skipSpace();
    while (!consume('}')) {
      if (!atQuote())
        fail(path, "header dict: expected a string key at " + excerpt(pos));
      const std::string key = parseString();
      skipSpace();
      if (!consume(':'))
        fail(path, "header dict: expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        markSeen(sawDescr, key);
        header.type = parseDescr();
      } else if (key == "fortran_order") {
        markSeen(sawOrder, key);
        header.fortranOrder = parseBool(key);
      } else if (key == "shape") {
        markSeen(sawShape, key);
        header.shape = parseShape();
      } else {
        fail(path, "unexpected key '" + key + "' in header");
      }
      skipSpace();
      if (consume(','))
        skipSpace();
      else if (peek() != '}')
        fail(path, "header dict: expected ',' or '}' at " + excerpt(pos));
    }
    skipSpace();
    if (pos != text.size())
      fail(path, "unexpected text after the header dict: " + excerpt(pos));
    if (!sawDescr || !sawOrder || !sawShape)
      fail(path, std::string("header lacks '") +
                     (!sawDescr   ? "descr"
                      : !sawOrder ? "fortran_order"
                                  : "shape") +
                     "'");
    return header;
  }

private:
  const std::string &path;
  std::string_view text;
  size_t pos = 0;

  int peek() const {
    return pos < text.size() ? static_cast<unsigned char>(text[pos]) : -1;
  }
  bool consume(char c) {
    if (peek() != static_cast<unsigned char>(c))
      return false;
    ++pos;
    return true;
  }
  bool atQuote() const { return peek() == '\'' || peek() == '"'; }
  void skipSpace() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
           peek() == '\r' || peek() == '\f' || peek() == '\v')
      ++pos;
  }

  /// Up to 40 characters from `at`, non-printable ones escaped, so that
  /// messages stay readable whatever the file holds.
  std::string excerpt(size_t at) const {
    if (at >= text.size())
      return "end of header";
    std::string out = "'";
    for (size_t i = at; i < text.size() && i < at + 40; ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c < 0x7f) {
        out += static_cast<char>(c);
      } else {
        char escaped[8];
        std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
        out += escaped;
      }
    }
    return out + (at + 40 < text.size() ? "...'" : "'");
  }

  void markSeen(bool &seen, const std::string &key) {
    if (seen)
      fail(path, "duplicate key '" + key + "' in header");
    seen = true;
  }

  std::string parseString() {
    const char quote = text[pos++];
    const size_t start = pos;
    while (pos < text.size() && text[pos] != quote) {
      // Escapes never occur in NumPy's headers; refusing them keeps the
      // parser honest about what the string is.
      if (text[pos] == '\\' || text[pos] == '\n')
        fail(path, "header dict: unsupported string literal at " +
                       excerpt(start - 1));
      ++pos;
    }
    if (pos == text.size())
      fail(path, "header dict: unterminated string at " + excerpt(start - 1));
    return std::string(text.substr(start, pos++ - start));
  }

  ElementType parseDescr() {
    if (peek() == '[')
      fail(path, "structured arrays (a list as descr) are not supported");
    if (!atQuote())
      fail(path, "descr is not a string: " + excerpt(pos));
    const std::string descr = parseString();
    // The byte order mark, then the kind and size NumPy's dtype.str gives.
    if (descr.size() == 3) {
      const char order = descr[0];
      const std::string kind = descr.substr(1);
      if (kind == "b1" &&
          (order == '|' || order == '<' || order == '=' || order == '>'))
        return ElementType::Bool; // one byte: the order does not matter
      static const struct {
        const char *kind;
        ElementType type;
      } kMultiByte[] = {{"f8", ElementType::F64},
                        {"f4", ElementType::F32},
                        {"f2", ElementType::F16},
                        {"i4", ElementType::I32},
                        {"i8", ElementType::I64}};
      for (const auto &entry : kMultiByte) {
        if (kind != entry.kind)
          continue;
        // NumPy never writes '=' (it spells the writer's order out), so one
        // can only mean native order, and every host rudnn runs on is little
        // endian.
        if (order == '<' || order == '=')
          return entry.type;
        if (order == '>')
          fail(path, "big-endian arrays are not supported (descr '" + descr +
                         "'); convert with astype('<" + kind + "')");
        if (order == '|')
          fail(path,
               "descr '" + descr + "' has no byte order for a multi-byte type");
      }
    }
    fail(path, "unsupported descr '" + descr +
                   "' (expected '<f8', '<f4', '<f2', '<i4', '<i8' or '|b1')");
  }

  bool parseBool(const std::string &key) {
    const size_t start = pos;
    while (std::isalnum(peek()) || peek() == '_')
      ++pos;
    const std::string_view word = text.substr(start, pos - start);
    if (word == "True")
      return true;
    if (word == "False")
      return false;
    fail(path, key + " is not True or False: " + excerpt(start));
  }

  std::vector<int64_t> parseShape() {
    if (!consume('('))
      fail(path, "shape is not a tuple: " + excerpt(pos));
    std::vector<int64_t> shape;
    skipSpace();
    bool comma = true;
    while (!consume(')')) {
      if (!comma)
        fail(path, "shape: expected ',' or ')' at " + excerpt(pos));
      shape.push_back(parseDimension());
      skipSpace();
      comma = consume(',');
      skipSpace();
    }
    // "(2)" is the integer 2 in Python, not a tuple.
    if (shape.size() == 1 && !comma)
      fail(path, "shape is not a tuple: (" + std::to_string(shape[0]) + ")");
    return shape;
  }

  int64_t parseDimension() {
    const size_t start = pos;
    const bool negative = consume('-');
    if (!negative)
      consume('+');
    if (!std::isdigit(peek()))
      fail(path, "shape: expected an integer at " + excerpt(start));
    uint64_t magnitude = 0;
    bool overflow = false;
    while (std::isdigit(peek())) {
      const auto digit = static_cast<unsigned>(text[pos++] - '0');
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + digit;
    }
    // Python 2 wrote long integers with a suffix; NumPy still reads them.
    if (peek() == 'L' || peek() == 'l')
      ++pos;
    const std::string literal(text.substr(start, pos - start));
    if (negative && (magnitude != 0 || overflow))
      fail(path, "negative dimension " + literal + " in shape");
    if (overflow ||
        magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(path, "dimension " + literal + " in shape is too large");
    return static_cast<int64_t>(magnitude);
  }
};

std::string headerText(const Array &array) {
  // NumPy's spelling: keys sorted, repr of each value, a trailing ", ".
  std::string header =
      std::string("{'descr': '") + descrOf(array.type) +
      "', 'fortran_order': False, 'shape': " + shapeString(array.shape) + ", }";
  if (!array.shape.empty())
    header.append(kGrowthAxisMaxDigits - std::to_string(array.shape[0]).size(),
                  ' ');
  return header;
}

/// The complete header: magic, version, length and the padded dict.
std::string encodeHeader(const Array &array) {
  const std::string dict = headerText(array);
  for (int major = 1; major <= 2; ++major) {
    const size_t lengthSize = major == 1 ? 2 : 4;
    const size_t length = dict.size() + 1; // the final newline
    const size_t prefix = kMagicSize + 2 + lengthSize;
    // Like NumPy, a header already aligned still gets a full block.
    const size_t padding = kAlign - (prefix + length) % kAlign;
    const uint64_t field = length + padding;
    if (major == 1 && field > 0xffff)
      continue;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < lengthSize; ++i)
      out += static_cast<char>((field >> (8 * i)) & 0xff);
    out += dict;
    out.append(padding, ' ');
    out += '\n';
    return out;
  }
  throw InvalidArgument("npy: a header for shape " + shapeString(array.shape) +
                        " is too long");
}

} // namespace

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

const char *rudnn::npy::typeName(ElementType type) {
  switch (type) {
  case ElementType::F64:
    return "float64";
  case ElementType::F32:
    return "float32";
  case ElementType::F16:
    return "float16";
  case ElementType::I32:
    return "int32";
  case ElementType::I64:
    return "int64";
  case ElementType::Bool:
    return "bool";
  case ElementType::BF16:
    return "bfloat16";
  }
  return "unknown";
}

size_t rudnn::npy::itemSize(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::Bool:
    return 1;
  }
  return 1;
}

int64_t rudnn::npy::numElements(const std::vector<int64_t> &shape) {
  for (int64_t dim : shape)
    if (dim < 0)
      throw InvalidArgument("npy: negative dimension in shape " +
                            shapeString(shape));
  int64_t count;
  if (!countElements(shape, count))
    throw InvalidArgument("npy: shape " + shapeString(shape) +
                          " has too many elements");
  return count;
}

Array rudnn::npy::read(const std::string &path) {
  // The size first, so that no length a malformed file declares is ever
  // allocated before it is known to be there.
  // Only a regular file: a FIFO or a device would block or never end.
  const uintmax_t fileSize = runtime::checkInputFile(
      path, "npy: tensor file", runtime::kMaxTensorFileBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, std::string("cannot open: ") + std::strerror(errno));
  auto readExactly = [&](void *buffer, size_t size, const char *what) {
    in.read(static_cast<char *>(buffer), static_cast<std::streamsize>(size));
    if (static_cast<size_t>(in.gcount()) != size)
      fail(path, std::string("read error in ") + what);
  };

  uint8_t prefix[12] = {};
  const size_t prefixRead =
      static_cast<size_t>(std::min<uintmax_t>(fileSize, sizeof(prefix)));
  readExactly(prefix, prefixRead, "the header");
  if (prefixRead < kMagicSize || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (bad magic)");
  if (prefixRead < 8)
    fail(path, "truncated header: the file ends inside the version");
  const int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    fail(path, "unsupported format version " + std::to_string(major) + "." +
                   std::to_string(minor));
  const size_t lengthSize = major == 1 ? 2 : 4;
  const size_t prefixSize = 8 + lengthSize;
  if (prefixRead < prefixSize)
    fail(path, "truncated header: the file ends inside the header length");
  const uint64_t headerSize = loadLittle(prefix + 8, lengthSize);
  if (headerSize > fileSize - prefixSize)
    fail(path, "truncated header: it declares " + std::to_string(headerSize) +
                   " bytes, the file holds " +
                   std::to_string(fileSize - prefixSize) + " after the prefix");

  std::string headerBytes(headerSize, '\0');
  in.seekg(static_cast<std::streamoff>(prefixSize));
  readExactly(headerBytes.data(), headerSize, "the header");
  const Header header = HeaderParser(path, headerBytes).parse();

  Array array;
  array.type = header.type;
  array.shape = header.shape;
  // The parser admits no negative dimension.
  int64_t count;
  if (!countElements(header.shape, count))
    fail(path, "shape " + shapeString(header.shape) + " has too many elements");
  const size_t size = itemSize(header.type);
  const uint64_t actual = fileSize - prefixSize - headerSize;
  if (static_cast<uint64_t>(count) >
      std::numeric_limits<uint64_t>::max() / size)
    fail(path, "shape " + shapeString(header.shape) + " is too large");
  const uint64_t expected = static_cast<uint64_t>(count) * size;
  if (actual != expected)
    fail(path, "data is " + std::to_string(actual) + " bytes, expected " +
                   std::to_string(expected) + " for shape " +
                   shapeString(header.shape) + " of " + typeName(header.type));
  array.bytes.resize(expected);
  readExactly(array.bytes.data(), expected, "the data");
  if (header.fortranOrder)
    array.bytes = reorder(array.bytes, array.shape, size, /*toC=*/true);
  return array;
}

std::string rudnn::npy::writeTemporary(const std::string &path,
                                       const Array &array) {
  if (array.type == ElementType::BF16)
    throw InvalidArgument("npy: cannot write '" + path +
                          "': NumPy has no bfloat16 type");
  validate(array, "npy: cannot write '" + path + "'");
  const std::string header = encodeHeader(array);

  // A name unique to this process and call, in the target's directory so
  // that the rename cannot cross file systems.
  static std::atomic<unsigned> counter{0};
  const std::string temporary = path + ".tmp." + std::to_string(::getpid()) +
                                "." + std::to_string(counter++);
  int fd = ::open(temporary.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    throw InvalidArgument("npy: cannot write '" + path + "': cannot create '" +
                          temporary + "': " + std::strerror(errno));
  auto writeAll = [&](const char *data, size_t size) {
    while (size > 0) {
      ssize_t n = ::write(fd, data, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  const bool written =
      writeAll(header.data(), header.size()) &&
      writeAll(reinterpret_cast<const char *>(array.bytes.data()),
               array.bytes.size());
  const int code = errno;
  if (::close(fd) != 0 || !written) {
    const int reason = written ? errno : code;
    std::remove(temporary.c_str());
    throw InvalidArgument("npy: cannot write '" + path + "': writing '" +
                          temporary + "' failed: " + std::strerror(reason));
  }
  return temporary;
}

void rudnn::npy::write(const std::string &path, const Array &array) {
  const std::string temporary = writeTemporary(path, array);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int code = errno;
    std::remove(temporary.c_str());
    throw InvalidArgument("npy: cannot write '" + path + "': renaming '" +
                          temporary + "' failed: " + std::strerror(code));
  }
}

Array rudnn::npy::convert(const Array &array, ElementType type) {
  validate(array, "npy::convert");
  if (type == array.type)
    return array;
  const bool integerTarget =
      type == ElementType::I32 || type == ElementType::I64;
  if (integerTarget && isFloating(array.type))
    throw InvalidArgument(std::string("npy::convert: cannot convert ") +
                          typeName(array.type) + " to " + typeName(type) +
                          ": floating-point values are not converted to "
                          "integers");
  const size_t from = itemSize(array.type), to = itemSize(type);
  const size_t count = array.bytes.size() / from;
  Array result;
  result.type = type;
  result.shape = array.shape;
  result.bytes.resize(count * to);
  for (size_t i = 0; i < count; ++i) {
    const Value value = load(array.type, array.bytes.data() + i * from);
    uint8_t *out = result.bytes.data() + i * to;
    switch (type) {
    case ElementType::F64:
      storeLittle(out, roundValue(value, kFloat64), 8);
      break;
    case ElementType::F32:
      storeLittle(out, roundValue(value, kFloat32), 4);
      break;
    case ElementType::F16:
      storeLittle(out, roundValue(value, kFloat16), 2);
      break;
    case ElementType::BF16:
      storeLittle(out, roundValue(value, kBfloat16), 2);
      break;
    case ElementType::I32:
      if (value.integer < std::numeric_limits<int32_t>::min() ||
          value.integer > std::numeric_limits<int32_t>::max())
        throw InvalidArgument("npy::convert: element " + std::to_string(i) +
                              " (" + std::to_string(value.integer) +
                              ") does not fit int32");
      storeLittle(out, static_cast<uint32_t>(value.integer), 4);
      break;
    case ElementType::I64:
      storeLittle(out, static_cast<uint64_t>(value.integer), 8);
      break;
    case ElementType::Bool:
      // NumPy's astype(bool): non-zero is true, NaN included.
      out[0] = value.isInteger ? value.integer != 0 : value.real != 0.0;
      break;
    }
  }
  return result;
}

std::vector<uint8_t> rudnn::npy::reorder(const std::vector<uint8_t> &bytes,
                                         const std::vector<int64_t> &shape,
                                         size_t itemBytes, bool toC) {
  std::vector<uint8_t> result(bytes.size());
  const size_t rank = shape.size(), count = bytes.size() / itemBytes;
  std::vector<int64_t> index(rank, 0); // the C-order index of element i
  for (size_t i = 0; i < count; ++i) {
    size_t fortran = 0; // its offset in Fortran order
    for (size_t d = rank; d-- > 0;)
      fortran = fortran * shape[d] + index[d];
    const size_t from = toC ? fortran : i, to = toC ? i : fortran;
    std::memcpy(&result[to * itemBytes], &bytes[from * itemBytes], itemBytes);
    for (size_t d = rank; d-- > 0 && ++index[d] == shape[d];)
      index[d] = 0;
  }
  return result;
}

std::vector<double> rudnn::npy::toDoubles(const Array &array) {
  validate(array, "npy::toDoubles");
  const size_t size = itemSize(array.type);
  std::vector<double> values(array.bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = toDouble(load(array.type, array.bytes.data() + i * size));
  return values;
}

Array rudnn::npy::fromFloats(const std::vector<float> &values,
                             std::vector<int64_t> shape) {
  const int64_t count = numElements(shape);
  if (static_cast<uint64_t>(count) != values.size())
    throw InvalidArgument("npy::fromFloats: shape " + shapeString(shape) +
                          " holds " + std::to_string(count) +
                          " elements, given " + std::to_string(values.size()));
  Array array;
  array.type = ElementType::F32;
  array.shape = std::move(shape);
  array.bytes.resize(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    storeLittle(array.bytes.data() + i * 4, bits, 4);
  }
  return array;
}

ElementType rudnn::npy::elementTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ElementType::F32;
  case DType::F16:
    return ElementType::F16;
  case DType::BF16:
    return ElementType::BF16;
  case DType::I32:
    return ElementType::I32;
  case DType::Bool:
    return ElementType::Bool;
  }
  throw InvalidArgument("npy: an unknown element type");
}

void rudnn::npy::writeAll(
    const std::string &directory,
    const std::vector<std::pair<std::string, Array>> &arrays) {
  namespace fs = std::filesystem;
  for (const auto &[name, array] : arrays)
    if (fs::path path = fs::path(directory) / (name + ".npy");
        fs::exists(fs::symlink_status(path)) &&
        !fs::is_regular_file(fs::symlink_status(path)))
      throw InvalidArgument("cannot write '" + path.string() +
                            "': something other than a file is there");
  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory))
    throw InvalidArgument("cannot create the folder '" + directory +
                          "': " + (error ? error.message() : "not a folder"));
  std::vector<std::pair<std::string, std::string>> pending; // temporary, final
  auto discard = [&] {
    for (const auto &[temporary, path] : pending)
      std::remove(temporary.c_str());
  };
  try {
    for (const auto &[name, array] : arrays) {
      const std::string path = (fs::path(directory) / (name + ".npy")).string();
      pending.emplace_back(writeTemporary(path, array), path);
    }
  } catch (...) {
    discard();
    throw;
  }
  for (size_t i = 0; i < pending.size(); ++i)
    if (std::rename(pending[i].first.c_str(), pending[i].second.c_str()) != 0) {
      const int code = errno;
      const std::string path = pending[i].second;
      pending.erase(pending.begin(), pending.begin() + i);
      discard();
      throw InvalidArgument("cannot write '" + path +
                            "': " + std::strerror(code));
    }
}
