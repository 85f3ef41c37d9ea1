//===- Log.cpp - RUDNN_LOG diagnostics on stderr --------------------------===//

#include "runtime/Log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace rudnn::runtime;

LogLevel rudnn::runtime::logLevel() {
  static const LogLevel level = [] {
    const char *value = std::getenv("RUDNN_LOG");
    if (!value)
      return LogLevel::Off;
    if (!std::strcmp(value, "debug"))
      return LogLevel::Debug;
    if (!std::strcmp(value, "info"))
      return LogLevel::Info;
    return LogLevel::Off;
  }();
  return level;
}

static void writeLine(const char *prefix, const std::string &message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "rudnn: %s%s\n", prefix, message.c_str());
}

void rudnn::runtime::log(LogLevel level, const std::string &message) {
  if (level != LogLevel::Off && logLevel() >= level)
    writeLine("", message);
}

void rudnn::runtime::warn(const std::string &message) {
  writeLine("warning: ", message);
}
