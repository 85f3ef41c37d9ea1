//===- Kernel.cpp - Kernel binaries as self-describing bytes --------------===//

#include "runtime/compile/Kernel.h"

#include <cstdint>
#include <cstring>

using namespace rudnn::runtime;

// Layout: magic, then each field as a little-endian uint64 length and bytes.
static constexpr char kMagic[8] = {'R', 'U', 'D', 'N', 'N', 'C', 'B', '1'};

static void putField(std::string &out, std::string_view field) {
  uint64_t size = field.size();
  out.append(reinterpret_cast<const char *>(&size), sizeof(size));
  out.append(field);
}

static bool takeField(std::string_view &in, std::string &field) {
  uint64_t size;
  if (in.size() < sizeof(size))
    return false;
  std::memcpy(&size, in.data(), sizeof(size));
  in.remove_prefix(sizeof(size));
  if (in.size() < size)
    return false;
  field.assign(in.substr(0, size));
  in.remove_prefix(size);
  return true;
}

std::string CudaBinary::serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  putField(out, entry);
  putField(out, arch);
  putField(out, cubin);
  putField(out, ptx);
  putField(out, log);
  putField(out, std::to_string(compileMilliseconds));
  return out;
}

std::optional<CudaBinary> CudaBinary::deserialize(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)))
    return std::nullopt;
  bytes.remove_prefix(sizeof(kMagic));
  CudaBinary binary;
  std::string milliseconds;
  if (!takeField(bytes, binary.entry) || !takeField(bytes, binary.arch) ||
      !takeField(bytes, binary.cubin) || !takeField(bytes, binary.ptx) ||
      !takeField(bytes, binary.log) || !takeField(bytes, milliseconds) ||
      !bytes.empty())
    return std::nullopt;
  binary.compileMilliseconds = std::strtod(milliseconds.c_str(), nullptr);
  return binary;
}
