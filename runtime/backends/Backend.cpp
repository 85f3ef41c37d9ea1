//===- Backend.cpp - Defaults of the backend interface --------------------===//

#include "runtime/backends/Backend.h"
#include "runtime/support/Log.h"

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

void Backend::noteLaunches(
    const std::vector<std::shared_ptr<LoadedKernel>> &kernels,
    StreamHandle stream) {
  std::lock_guard<std::mutex> lock(launchedMutex);
  auto &launched = launchedWithFaultWords[stream];
  for (const std::shared_ptr<LoadedKernel> &kernel : kernels)
    if (kernel && kernel->indexFault)
      launched.emplace(kernel->indexFault, kernel);
}

std::vector<std::string> Backend::takeIndexFaults(StreamHandle stream) {
  std::vector<std::shared_ptr<LoadedKernel>> launched;
  {
    std::lock_guard<std::mutex> lock(launchedMutex);
    auto it = launchedWithFaultWords.find(stream);
    if (it == launchedWithFaultWords.end())
      return {};
    for (auto &[word, kernel] : it->second)
      if (std::shared_ptr<LoadedKernel> alive = kernel.lock())
        launched.push_back(std::move(alive));
    launchedWithFaultWords.erase(it);
  }
  std::vector<uint32_t> words(launched.size());
  for (size_t i = 0; i < launched.size(); ++i)
    copyToHost(&words[i], launched[i]->indexFault, sizeof(uint32_t), stream);
  synchronize(stream);
  std::vector<std::string> faulted;
  const uint32_t clear = 0;
  for (size_t i = 0; i < launched.size(); ++i)
    if (words[i] != 0) {
      faulted.push_back(launched[i]->entry());
      copyToDevice(launched[i]->indexFault, &clear, sizeof clear, stream);
    }
  if (!faulted.empty())
    synchronize(stream);
  return faulted;
}

void Backend::synchronizeCheckingIndices(StreamHandle stream) {
  synchronize(stream);
  const std::vector<std::string> faulted = takeIndexFaults(stream);
  if (faulted.empty())
    return;
  std::string kernels;
  for (const std::string &entry : faulted)
    kernels += (kernels.empty() ? "'" : ", '") + entry + "'";
  throw InvalidArgument(
      "a call on this stream since it was last synchronized read offsets "
      "(cu_seqlens) that do not start at 0, never decrease and end at the "
      "packed rows: the rows outside every entry were not written (kernel" +
      std::string(faulted.size() > 1 ? "s " : " ") + kernels + ")");
}

void Backend::beginCapture(StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot capture graphs");
}

std::unique_ptr<CapturedGraph> Backend::endCapture(StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot capture graphs");
}

std::unique_ptr<CapturedGraph>
Backend::endCaptureReusing(StreamHandle stream,
                           std::unique_ptr<CapturedGraph> previous) {
  previous.reset();
  return endCapture(stream);
}

void Backend::replay(CapturedGraph &, StreamHandle) {
  throw Unsupported("the " + name() + " backend cannot replay graphs");
}

TensorMapBytes Backend::encodeTensorMap(const TensorMapRequest &) {
  throw Unsupported("the " + name() + " backend has no tensor maps");
}

void rudnn::runtime::checkTensorMapRequest(const TensorMapRequest &request) {
  auto fail = [](const std::string &what) {
    throw InvalidArgument("cannot build a TMA tensor map: " + what);
  };
  if (request.rank < 1 || request.rank > 5)
    fail("rank " + std::to_string(request.rank) + " (1 to 5)");
  if (request.address % 16)
    fail("the address is not a multiple of 16 bytes");
  for (uint32_t i = 0; i < request.rank; ++i) {
    if (request.dims[i] < 1 || request.dims[i] > (uint64_t(1) << 32))
      fail("dim " + std::to_string(i) + " is " +
           std::to_string(request.dims[i]) + " (1 to 2^32)");
    if (request.box[i] < 1 || request.box[i] > 256)
      fail("box dim " + std::to_string(i) + " is " +
           std::to_string(request.box[i]) + " (1 to 256)");
    if (i > 0 && (request.strideBytes[i - 1] % 16 ||
                  request.strideBytes[i - 1] >= (uint64_t(1) << 40)))
      fail("the stride of dim " + std::to_string(i) + " is " +
           std::to_string(request.strideBytes[i - 1]) +
           " bytes (a multiple of 16 below 2^40)");
  }
  const uint64_t rowBytes = uint64_t(request.box[0]) * request.elementBytes;
  if (rowBytes % 16)
    fail("a box row is " + std::to_string(rowBytes) +
         " bytes (a multiple of 16)");
  if (request.swizzleBytes && rowBytes > request.swizzleBytes)
    fail("a box row of " + std::to_string(rowBytes) + " bytes exceeds the " +
         std::to_string(request.swizzleBytes) + "-byte swizzle");
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
