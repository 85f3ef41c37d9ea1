//===- KernelArguments.cpp - rudnn-emulate's arguments --------------------===//

#include "tools/rudnn-emulate/KernelArguments.h"
#include "runtime/support/InputFile.h"
#include "tools/npy/Npy.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::emulate;

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &problem) {
  throw InvalidArgument(path + ": " + problem);
}

/// The value of `key` in a .npy header dictionary ("'descr': '<f4'").
std::string headerField(const std::string &header, const std::string &key,
                        const std::string &path) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    bad(path, "the .npy header has no '" + key + "'");
  at = header.find(':', at);
  size_t end = key == "shape" ? header.find(')', at) + 1
                              : header.find_first_of(",}", at);
  if (at == std::string::npos || end == std::string::npos || end <= at)
    bad(path, "malformed .npy header");
  std::string value = header.substr(at + 1, end - at - 1);
  value.erase(0, value.find_first_not_of(" "));
  return value;
}

/// `file`'s data rearranged between Fortran and C order.
std::string reordered(const NpyFile &file, bool toC) {
  std::vector<uint8_t> bytes(file.data.begin(), file.data.end());
  bytes = npy::reorder(bytes, file.shape, file.itemBytes, toC);
  return std::string(bytes.begin(), bytes.end());
}

} // namespace

NpyFile rudnn::emulate::readNpy(const std::string &path) {
  const std::string bytes =
      runtime::readInputFile(path, "argument", runtime::kMaxTensorFileBytes);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    bad(path, "not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || bytes.size() < 8 + lengthBytes)
    bad(path, "unknown .npy version " + std::to_string(major));
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > bytes.size())
    bad(path, "truncated .npy header");
  const std::string header = bytes.substr(8 + lengthBytes, headerLength);

  std::string descr = headerField(header, "descr", path);
  static const std::regex simple(R"('([<|])([a-zA-Z])(\d+)')");
  std::smatch match;
  if (!std::regex_match(descr, match, simple))
    bad(path, "dtype " + descr +
                  " is not a little-endian scalar type (structured and "
                  "big-endian arrays are not supported)");
  const size_t itemSize = std::stoul(match.str(3));
  const std::string order = headerField(header, "fortran_order", path);
  if (order != "False" && order != "True")
    bad(path, "fortran_order is " + order + ", not True or False");
  std::string shape = headerField(header, "shape", path);
  uint64_t elements = 1;
  std::vector<int64_t> dims;
  static const std::regex dimension(R"(\d+)");
  for (std::sregex_iterator it(shape.begin(), shape.end(), dimension), end;
       it != end; ++it) {
    uint64_t size = std::stoull(it->str());
    if (size > uint64_t(std::numeric_limits<int64_t>::max()) ||
        (size && elements > std::numeric_limits<uint64_t>::max() / size))
      bad(path, "shape too large");
    elements *= size;
    dims.push_back(static_cast<int64_t>(size));
  }
  if (elements > (bytes.size() - dataStart) / itemSize ||
      elements * itemSize != bytes.size() - dataStart)
    bad(path, "the data (" + std::to_string(bytes.size() - dataStart) +
                  " bytes) does not match the shape " + shape + " of " +
                  std::to_string(itemSize) + "-byte elements");
  NpyFile file{path,
               bytes.substr(0, dataStart),
               bytes.substr(dataStart),
               std::move(dims),
               itemSize,
               order == "True"};
  if (file.fortranOrder)
    file.data = reordered(file, /*toC=*/true);
  return file;
}

void rudnn::emulate::writeNpy(const std::string &path, const NpyFile &file) {
  std::string temporary = path + ".partial-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << file.header
        << (file.fortranOrder ? reordered(file, /*toC=*/false) : file.data);
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      throw InvalidArgument(path + ": cannot write");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InvalidArgument(path + ": cannot write (" + reason + ")");
  }
}

size_t KernelArgument::bytes() const {
  switch (kind) {
  case Kind::I32:
  case Kind::U32:
  case Kind::F32:
    return 4;
  case Kind::TensorMap:
    return 128; // a CUtensorMap
  default:
    return 8; // arrays are passed as 64-bit pointers
  }
}

namespace {

/// "tmap:FILE.npy:box=B0xB1[xB2[xB3]]:swizzle=S".
KernelArgument parseTensorMap(const std::string &text) {
  auto fail = [&](const std::string &why) {
    throw InvalidArgument("argument '" + text + "': " + why +
                          " (tmap:FILE.npy:box=B0xB1[xB2[xB3]]:"
                          "swizzle=0|32|64|128, innermost dim first)");
  };
  static const std::regex form(
      R"(tmap:(.+\.npy):box=(\d+(?:x\d+){1,3}):swizzle=(0|32|64|128))");
  std::smatch match;
  if (!std::regex_match(text, match, form))
    fail("not a tensor map");
  KernelArgument argument;
  argument.kind = KernelArgument::Kind::TensorMap;
  argument.text = text;
  argument.array = readNpy(match.str(1));
  const size_t rank = std::max<size_t>(3, argument.array.shape.size());
  if (argument.array.shape.size() > 5)
    fail("a tensor map has at most 5 dims");
  std::stringstream boxes(match.str(2));
  for (std::string extent; std::getline(boxes, extent, 'x');)
    argument.box.push_back(static_cast<uint32_t>(std::stoul(extent)));
  if (argument.box.size() > rank)
    fail("the box has more dims than the array");
  argument.box.resize(rank, 1);
  argument.swizzleBytes = static_cast<uint32_t>(std::stoul(match.str(3)));
  return argument;
}

} // namespace

KernelArgument rudnn::emulate::parseArgument(const std::string &text) {
  if (text.rfind("tmap:", 0) == 0)
    return parseTensorMap(text);
  KernelArgument argument;
  argument.text = text;
  size_t equals = text.find('=');
  if (equals == std::string::npos) {
    if (text.size() < 4 || text.compare(text.size() - 4, 4, ".npy") != 0)
      throw InvalidArgument("argument '" + text +
                            "' is neither a .npy file, tmap:FILE.npy:... nor "
                            "TYPE=VALUE (i32, u32, i64, u64, f32, f64)");
    argument.array = readNpy(text);
    return argument;
  }
  const std::string type = text.substr(0, equals),
                    value = text.substr(equals + 1);
  auto fail = [&](const std::string &why) -> KernelArgument {
    throw InvalidArgument("argument '" + text + "': " + why);
  };
  if (value.empty())
    return fail("no value");
  char *rest = nullptr;
  errno = 0;
  if (type == "i32" || type == "i64") {
    long long v = std::strtoll(value.c_str(), &rest, 0);
    if (*rest || errno ||
        (type == "i32" && (v < std::numeric_limits<int32_t>::min() ||
                           v > std::numeric_limits<int32_t>::max())))
      return fail("not a " + type + " integer");
    argument.kind =
        type == "i32" ? KernelArgument::Kind::I32 : KernelArgument::Kind::I64;
    argument.bits = type == "i32" ? uint32_t(int32_t(v)) : uint64_t(v);
  } else if (type == "u32" || type == "u64") {
    unsigned long long v = std::strtoull(value.c_str(), &rest, 0);
    if (*rest || errno || value[0] == '-' ||
        (type == "u32" && v > std::numeric_limits<uint32_t>::max()))
      return fail("not a " + type + " integer");
    argument.kind =
        type == "u32" ? KernelArgument::Kind::U32 : KernelArgument::Kind::U64;
    argument.bits = v;
  } else if (type == "f32") {
    float v = std::strtof(value.c_str(), &rest);
    if (*rest || errno == ERANGE)
      return fail("not an f32 number");
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    argument.kind = KernelArgument::Kind::F32;
    argument.bits = bits;
  } else if (type == "f64") {
    double v = std::strtod(value.c_str(), &rest);
    if (*rest || errno == ERANGE)
      return fail("not an f64 number");
    std::memcpy(&argument.bits, &v, 8);
    argument.kind = KernelArgument::Kind::F64;
  } else {
    return fail("unknown type '" + type + "' (i32, u32, i64, u64, f32, f64)");
  }
  return argument;
}

std::vector<PtxParameter>
rudnn::emulate::ptxParameters(const std::string &ptx,
                              const std::string &entry) {
  const std::regex start(R"(\.entry\s+)" + entry + R"(\s*\()");
  std::smatch match;
  if (!std::regex_search(ptx, match, start))
    throw InvalidArgument("the file has no kernel '" + entry +
                          "' (kernels run by name must be extern \"C\" "
                          "__global__)");
  size_t open = match.position(0) + match.length(0);
  size_t close = ptx.find(')', open);
  const std::string list = ptx.substr(open, close - open);
  // ".param .u64 name" or ".param .align 8 .b8 name[24]".
  // Pointers may carry qualifiers: ".param .u64 .ptr .align 1 name".
  static const std::regex parameter(
      R"(\.param\s+(?:\.align\s+\d+\s+)?\.([a-z]+)(\d+))"
      R"((?:\s+\.[a-z]+(?:\s+\d+)?)*\s+[\w$]+(?:\[(\d+)\])?)");
  std::vector<PtxParameter> parameters;
  for (std::sregex_iterator it(list.begin(), list.end(), parameter), end;
       it != end; ++it) {
    size_t bytes = std::stoul((*it)[2].str()) / 8;
    if ((*it)[3].matched)
      bytes *= std::stoul((*it)[3].str());
    parameters.push_back({(*it)[1].str()[0], bytes});
  }
  return parameters;
}

bool rudnn::emulate::fits(const KernelArgument &argument,
                          const PtxParameter &parameter) {
  if (argument.bytes() != parameter.bytes)
    return false;
  const bool isFloat = argument.kind == KernelArgument::Kind::F32 ||
                       argument.kind == KernelArgument::Kind::F64;
  return parameter.kind == 'b' || (parameter.kind == 'f') == isFloat;
}
