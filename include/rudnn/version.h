//===- rudnn/version.h - rudnn's version ------------------------*- C++ -*-===//

#ifndef RUDNN_VERSION_H
#define RUDNN_VERSION_H

#include "rudnn/version_number.h"

#include <string>

namespace rudnn {

/// The rudnn release, "MAJOR.MINOR.PATCH". Part of every kernel-cache key.
const char *version();

/// What this machine offers rudnn, one "name: value" line each: the version,
/// NVRTC (library and version), the CUDA headers and ptxas NVRTC's toolkit
/// brings, the CUDA driver and each device, and why any of them is missing.
/// Throws nothing for a missing piece: it says so.
std::string setupReport();

} // namespace rudnn

#endif // RUDNN_VERSION_H
