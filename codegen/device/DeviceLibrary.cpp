//===- DeviceLibrary.cpp - The embedded device library --------------------===//

#include "codegen/device/DeviceLibrary.h"

std::vector<rudnn::runtime::HeaderFile> rudnn::device::headerFiles() {
  std::vector<runtime::HeaderFile> headers;
  for (const EmbeddedHeader &header : embeddedHeaders())
    headers.push_back({std::string(header.name), std::string(header.contents)});
  return headers;
}
