//===- Log.cpp - rudnn's messages, to stderr or a handler -----------------===//

#include "runtime/support/Log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace rudnn;

namespace {

LogLevel levelFromEnvironment() {
  const char *value = std::getenv("RUDNN_LOG");
  if (!value || !*value)
    return LogLevel::Progress;
  for (auto [name, level] :
       {std::pair{"warn", LogLevel::Warning},
        std::pair{"progress", LogLevel::Progress},
        std::pair{"info", LogLevel::Info}, std::pair{"debug", LogLevel::Debug}})
    if (!std::strcmp(value, name))
      return level;
  std::fprintf(stderr,
               "rudnn: warning: RUDNN_LOG=%s is none of warn, progress, info, "
               "debug: using progress\n",
               value);
  return LogLevel::Progress;
}

std::atomic<LogLevel> &levelInForce() {
  static std::atomic<LogLevel> level{levelFromEnvironment()};
  return level;
}

struct Sink {
  std::mutex mutex;
  LogHandler handler;
};

Sink &sink() {
  static Sink *sink = new Sink; // outlives static destructors that log
  return *sink;
}

} // namespace

LogHandler rudnn::setLogHandler(LogHandler handler) {
  std::lock_guard<std::mutex> lock(sink().mutex);
  std::swap(handler, sink().handler);
  return handler;
}

void rudnn::setLogLevel(LogLevel level) { levelInForce() = level; }

LogLevel rudnn::logLevel() { return levelInForce(); }

void rudnn::runtime::log(LogLevel level, const std::string &message) {
  if (level > logLevel())
    return;
  Sink &out = sink();
  std::lock_guard<std::mutex> lock(out.mutex);
  if (out.handler)
    out.handler(level, message);
  else
    std::fprintf(stderr, "rudnn: %s\n", message.c_str());
}

void rudnn::runtime::warn(const std::string &message) {
  log(LogLevel::Warning, "warning: " + message);
}
