//===- Backend.cpp - Defaults of the backend interface --------------------===//

#include "runtime/Backend.h"

#include "rudnn/errors.h"

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
