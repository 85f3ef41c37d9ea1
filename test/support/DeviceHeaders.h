//===- DeviceHeaders.h - The embedded device library as compiler headers -*- C++
//-*-===//

#ifndef RUDNN_TEST_SUPPORT_DEVICEHEADERS_H
#define RUDNN_TEST_SUPPORT_DEVICEHEADERS_H

#include "codegen/device/DeviceLibrary.h"
#include "runtime/compile/Kernel.h"

#include <vector>

namespace rudnn::samples {

inline std::vector<runtime::HeaderFile> deviceHeaders() {
  std::vector<runtime::HeaderFile> headers;
  for (const device::EmbeddedHeader &header : device::embeddedHeaders())
    headers.push_back({std::string(header.name), std::string(header.contents)});
  return headers;
}

} // namespace rudnn::samples

#endif // RUDNN_TEST_SUPPORT_DEVICEHEADERS_H
