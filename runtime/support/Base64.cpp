//===- Base64.cpp - Base64 text of binary data ----------------------------===//

#include "runtime/support/Base64.h"

#include <cstdint>
#include <cstring>

namespace rudnn::runtime {

static const char kDigits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string encodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size())
      chunk |= static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[chunk >> 18 & 63];
    out += kDigits[chunk >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[chunk >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[chunk & 63] : '=';
  }
  return out;
}

std::optional<std::string> decodeBase64(std::string_view text) {
  if (text.size() % 4)
    return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t chunk = 0;
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      char c = text[i + j];
      const char *position = c ? std::strchr(kDigits, c) : nullptr;
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++padding;
        chunk <<= 6;
        continue;
      }
      if (!position || padding)
        return std::nullopt;
      chunk = chunk << 6 | static_cast<uint32_t>(position - kDigits);
    }
    out += static_cast<char>(chunk >> 16 & 255);
    if (padding < 2)
      out += static_cast<char>(chunk >> 8 & 255);
    if (padding < 1)
      out += static_cast<char>(chunk & 255);
  }
  return out;
}

} // namespace rudnn::runtime
