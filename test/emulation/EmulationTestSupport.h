//===- EmulationTestSupport.h - Running kernels in emulation ----*- C++ -*-===//

#ifndef RUDNN_TEST_EMULATION_EMULATIONTESTSUPPORT_H
#define RUDNN_TEST_EMULATION_EMULATIONTESTSUPPORT_H

#include "runtime/backends/EmulationBackend.h"
#include "test/support/DeviceHeaders.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rudnn::test {

/// `data` copied into a new allocation of `backend`, noted in
/// `allocations` for release.
template <typename T>
runtime::DevicePtr uploadTo(runtime::EmulationBackend &backend,
                            std::vector<runtime::DevicePtr> &allocations,
                            const std::vector<T> &data) {
  runtime::DevicePtr pointer =
      backend.allocate(std::max<size_t>(1, data.size()) * sizeof(T));
  backend.copyToDevice(pointer, data.data(), data.size() * sizeof(T), nullptr);
  allocations.push_back(pointer);
  return pointer;
}

/// `count` values of type T read back from `pointer`.
template <typename T>
std::vector<T> downloadFrom(runtime::EmulationBackend &backend,
                            runtime::DevicePtr pointer, size_t count) {
  std::vector<T> data(count);
  backend.copyToHost(data.data(), pointer, count * sizeof(T), nullptr);
  return data;
}

/// A rank-3 map over a [rows][cols] matrix of 2-byte elements at `data` (a
/// trailing dim of 1), boxes of 64 columns by `boxRows`, 128-byte swizzle.
inline runtime::TensorMapBytes matrixMap(runtime::EmulationBackend &backend,
                                         runtime::DevicePtr data, uint64_t rows,
                                         uint64_t cols, uint32_t boxRows) {
  runtime::TensorMapRequest request;
  request.address = data;
  request.elementBytes = 2;
  request.rank = 3;
  request.dims[0] = cols, request.dims[1] = rows, request.dims[2] = 1;
  request.strideBytes[0] = 2 * cols, request.strideBytes[1] = 2 * cols * rows;
  request.box[0] = 64, request.box[1] = boxRows, request.box[2] = 1;
  return backend.encodeTensorMap(request);
}

/// One emulation backend per test suite (compiling is the slow part) and
/// helpers to move typed arrays in and out of its memory.
class EmulationTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    runtime::EmulationOptions options =
        runtime::EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.threads = 4; // several blocks at once, even on 2 cores
    backend = new runtime::EmulationBackend(options);
  }
  static void TearDownTestSuite() {
    delete backend;
    backend = nullptr;
  }

  std::shared_ptr<runtime::LoadedKernel> build(const std::string &entry,
                                               const std::string &source) {
    return backend->load(backend->compile({entry, source}), entry);
  }

  template <typename T> runtime::DevicePtr upload(const std::vector<T> &data) {
    return uploadTo(*backend, allocations, data);
  }

  template <typename T>
  std::vector<T> download(runtime::DevicePtr pointer, size_t count) {
    return downloadFrom<T>(*backend, pointer, count);
  }

  void launch(const runtime::LoadedKernel &kernel, runtime::Dim3 grid,
              runtime::Dim3 block, runtime::ArgPack &args,
              uint32_t dynamicShared = 0, bool cooperative = false) {
    backend->launch(kernel, {grid, block, dynamicShared, cooperative}, args,
                    nullptr);
  }

  void TearDown() override {
    for (runtime::DevicePtr pointer : allocations)
      backend->release(pointer);
  }

  static inline runtime::EmulationBackend *backend = nullptr;
  std::vector<runtime::DevicePtr> allocations;
};

/// A backend of its own, in or out of check mode, under a schedule the
/// test names (or the environment's), and typed buffers for it.
class Emulator {
public:
  explicit Emulator(bool check, const std::string &schedule = "",
                    unsigned threads = 2) {
    runtime::EmulationOptions options =
        runtime::EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.threads = threads;
    options.check = check;
    options.sanitize = false;
    if (!schedule.empty())
      options.schedule = runtime::Schedule::parse(schedule);
    backend = std::make_unique<runtime::EmulationBackend>(options);
  }
  ~Emulator() {
    for (runtime::DevicePtr pointer : allocations)
      backend->release(pointer);
  }

  template <typename T> runtime::DevicePtr upload(const std::vector<T> &data) {
    return uploadTo(*backend, allocations, data);
  }

  template <typename T>
  std::vector<T> download(runtime::DevicePtr pointer, size_t count) {
    return downloadFrom<T>(*backend, pointer, count);
  }

  /// Compiles `source` and launches `entry` once.
  void run(const std::string &entry, const std::string &source,
           runtime::Dim3 grid, runtime::Dim3 block, runtime::ArgPack &args,
           uint32_t dynamicShared = 0) {
    auto kernel = backend->load(backend->compile({entry, source}), entry);
    backend->launch(*kernel, {grid, block, dynamicShared}, args, nullptr);
  }

  std::unique_ptr<runtime::EmulationBackend> backend;
  std::vector<runtime::DevicePtr> allocations;
};

} // namespace rudnn::test

#endif // RUDNN_TEST_EMULATION_EMULATIONTESTSUPPORT_H
