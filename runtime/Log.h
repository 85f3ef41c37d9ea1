//===- Log.h - RUDNN_LOG diagnostics on stderr ------------------*- C++ -*-===//
//
// RUDNN_LOG=info logs compiles and cache events; RUDNN_LOG=debug adds every
// lookup. Off by default. Warnings are always printed.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_LOG_H
#define RUDNN_RUNTIME_LOG_H

#include <string>

namespace rudnn::runtime {

enum class LogLevel { Off = 0, Info = 1, Debug = 2 };

/// The level RUDNN_LOG asks for, read once.
LogLevel logLevel();

/// Writes "rudnn: <message>" to stderr when `level` is enabled.
void log(LogLevel level, const std::string &message);

/// Writes "rudnn: warning: <message>" to stderr, whatever the level.
void warn(const std::string &message);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_LOG_H
