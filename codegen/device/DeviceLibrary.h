//===- DeviceLibrary.h - The embedded device library ------------*- C++ -*-===//
//
// The headers of codegen/device, compiled into the binary. Generated kernels
// `#include "rudnn/device.cuh"`; the JIT hands these to the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_DEVICE_DEVICELIBRARY_H
#define RUDNN_CODEGEN_DEVICE_DEVICELIBRARY_H

#include "runtime/compile/Kernel.h"

#include <string_view>
#include <vector>

namespace rudnn::device {

struct EmbeddedHeader {
  /// The include name, e.g. "rudnn/arch/mma.cuh".
  std::string_view name;
  std::string_view contents;
};

/// Every header of the device library.
const std::vector<EmbeddedHeader> &embeddedHeaders();

/// The device library as the compilers take it (NVRTC, the emulation's
/// host compiler): every header, by its include name.
std::vector<runtime::HeaderFile> headerFiles();

} // namespace rudnn::device

#endif // RUDNN_CODEGEN_DEVICE_DEVICELIBRARY_H
