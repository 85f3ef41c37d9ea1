//===- rudnn/version.h - rudnn's version ------------------------*- C++ -*-===//

#ifndef RUDNN_VERSION_H
#define RUDNN_VERSION_H

namespace rudnn {

/// The rudnn release, "MAJOR.MINOR.PATCH". Part of every kernel-cache key.
const char *version();

} // namespace rudnn

#endif // RUDNN_VERSION_H
