//===- Backend.cpp - Defaults of the backend interface --------------------===//

#include "runtime/Backend.h"

#include "rudnn/errors.h"

#include <chrono>

using namespace rudnn::runtime;

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
