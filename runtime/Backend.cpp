//===- Backend.cpp - Defaults of the backend interface --------------------===//

#include "runtime/Backend.h"
#include "runtime/Log.h"

#include "rudnn/errors.h"

#include <chrono>

using namespace rudnn::runtime;

/// Runs `cleanup`, turning any exception into a warning.
template <typename Cleanup>
static void quietly(const char *what, Cleanup cleanup) noexcept {
  try {
    cleanup();
  } catch (const std::exception &error) {
    try {
      warn(std::string(what) + " failed during clean-up: " + error.what());
    } catch (...) {
    }
  } catch (...) {
  }
}

void Backend::releaseQuietly(DevicePtr pointer) noexcept {
  quietly("releasing device memory", [&] { release(pointer); });
}

void Backend::destroyStreamQuietly(StreamHandle stream) noexcept {
  quietly("destroying a stream", [&] { destroyStream(stream); });
}

void Backend::beginCapture(StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot capture graphs");
}

std::unique_ptr<CapturedGraph> Backend::endCapture(StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot capture graphs");
}

void Backend::replay(CapturedGraph &, StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot replay graphs");
}

float Backend::timeMilliseconds(StreamHandle stream,
                                const std::function<void()> &work) {
  synchronize(stream);
  const auto start = std::chrono::steady_clock::now();
  work();
  synchronize(stream);
  return std::chrono::duration<float, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}
