//===- Base64.h - Base64 text of binary data --------------------*- C++ -*-===//
//
// RFC 4648's base64 with padding: how plans embed their kernels' binaries
// in JSON.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_SUPPORT_BASE64_H
#define RUDNN_RUNTIME_SUPPORT_BASE64_H

#include <optional>
#include <string>
#include <string_view>

namespace rudnn::runtime {

std::string encodeBase64(std::string_view bytes);

/// The bytes `text` encodes; none when it is not padded base64.
std::optional<std::string> decodeBase64(std::string_view text);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_SUPPORT_BASE64_H
