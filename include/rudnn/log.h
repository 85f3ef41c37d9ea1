//===- rudnn/log.h - Where rudnn's messages go ------------------*- C++ -*-===//
//
// rudnn reports warnings, the progress of slow compiles, and on request its
// compiles and cache events, one line each. They go to stderr as
// "rudnn: ..." unless a program installs a handler of its own.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LOG_H
#define RUDNN_LOG_H

#include <functional>
#include <string>

namespace rudnn {

/// Least to most detail: each level includes those before it.
enum class LogLevel {
  Warning = 0,  ///< Something degraded (say, a cache directory refused).
  Progress = 1, ///< A cold compile past a second: a line a kernel (default).
  Info = 2,     ///< Every compile and cache event.
  Debug = 3     ///< Every lookup.
};

/// Receives each message (without the "rudnn: " prefix) at the levels in
/// force, from whichever thread logs it; calls are serialised.
using LogHandler =
    std::function<void(LogLevel level, const std::string &message)>;

/// Process-wide; an empty handler restores stderr. Returns the previous one.
LogHandler setLogHandler(LogHandler handler);

/// The most detailed level delivered. Until set here: RUDNN_LOG (`warn`,
/// `progress`, `info` or `debug`), else Progress.
void setLogLevel(LogLevel level);
LogLevel logLevel();

} // namespace rudnn

#endif // RUDNN_LOG_H
