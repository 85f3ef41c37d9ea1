//===- Log.h - rudnn's messages, to stderr or a handler ---------*- C++ -*-===//
//
// The runtime side of rudnn/log.h: every message of rudnn goes through
// `log`, at a level; RUDNN_LOG or setLogLevel choose how much is delivered.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_SUPPORT_LOG_H
#define RUDNN_RUNTIME_SUPPORT_LOG_H

#include "rudnn/log.h"

#include <string>

namespace rudnn::runtime {

using rudnn::LogLevel;

/// Delivers `message` when `level` is in force.
void log(LogLevel level, const std::string &message);

/// log(LogLevel::Warning, "warning: " + message).
void warn(const std::string &message);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_SUPPORT_LOG_H
