//===- CudaBackendGpuTest.cpp - The CUDA backend on a real device ---------===//
//
// Every test skips without a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "runtime/backends/CudaBackend.h"

#include "rudnn/errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

const KernelSource kAxpy{"axpy", R"(
extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)"};

// Every element goes through shared memory and comes back from another
// thread's slot, so the whole allocation is written and read.
const KernelSource kReverseThroughShared{"reverse", R"(
extern "C" __global__ void reverse(int n, const float *in, float *out) {
  extern __shared__ float buffer[];
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    buffer[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[i] = buffer[n - 1 - i];
}
)"};

class CudaBackendGpu : public ::testing::Test {
protected:
  CudaBackend &backend() {
    if (!instance)
      instance = std::make_unique<CudaBackend>(0, NvrtcCompiler());
    return *instance;
  }

  /// A device buffer holding `values`, released with the test.
  DevicePtr upload(const std::vector<float> &values) {
    DevicePtr pointer = allocate(values.size() * sizeof(float));
    backend().copyToDevice(pointer, values.data(),
                           values.size() * sizeof(float), nullptr);
    return pointer;
  }
  DevicePtr allocate(size_t bytes) {
    DevicePtr pointer = backend().allocate(bytes);
    buffers.push_back(pointer);
    return pointer;
  }
  std::vector<float> download(DevicePtr pointer, size_t count,
                              StreamHandle stream = nullptr) {
    std::vector<float> values(count);
    backend().copyToHost(values.data(), pointer, count * sizeof(float), stream);
    backend().synchronize(stream);
    return values;
  }

  void launchAxpy(const LoadedKernel &kernel, int n, float a, DevicePtr x,
                  DevicePtr y, StreamHandle stream = nullptr) {
    ArgPack args;
    args.push(n).push(a).push(x).push(y);
    LaunchGeometry geometry;
    geometry.block.x = 256;
    geometry.grid.x = static_cast<uint32_t>((n + 255) / 256);
    backend().launch(kernel, geometry, args, stream);
  }

  void TearDown() override {
    if (!instance)
      return;
    for (DevicePtr pointer : buffers)
      instance->release(pointer);
  }

  std::unique_ptr<CudaBackend> instance;
  std::vector<DevicePtr> buffers;
};

std::vector<float> pattern(size_t count, int modulus, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(i % modulus) * scale;
  return values;
}

TEST_F(CudaBackendGpu, DeviceInfoIsSane) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  std::vector<CudaDeviceInfo> devices = listCudaDevices();
  ASSERT_FALSE(devices.empty());
  for (size_t i = 0; i < devices.size(); ++i) {
    const CudaDeviceInfo &info = devices[i];
    EXPECT_EQ(info.ordinal, static_cast<int>(i));
    EXPECT_FALSE(info.name.empty());
    EXPECT_EQ(info.arch().rfind("sm_", 0), 0u) << info.arch();
    EXPECT_GT(info.smCount, 0);
    EXPECT_EQ(info.warpSize, 32);
    EXPECT_GE(info.maxSharedPerBlockOptin, 48 * 1024);
    EXPECT_GT(info.totalMemoryBytes, size_t(1) << 30);
  }
  const CudaDeviceInfo &info = backend().device();
  EXPECT_EQ(info.name, devices[0].name);
  EXPECT_EQ(backend().name(), "cuda");
  std::string description = backend().deviceDescription();
  EXPECT_NE(description.find(info.name), std::string::npos) << description;
  EXPECT_NE(description.find(info.arch()), std::string::npos) << description;
  EXPECT_EQ(backend().compileArch().rfind("sm_", 0), 0u);
  EXPECT_NE(backend().compilerIdentity().find(backend().compileArch()),
            std::string::npos);
  EXPECT_TRUE(backend().supportsGraphs());
  EXPECT_THROW(CudaBackend(static_cast<int>(devices.size()), NvrtcCompiler()),
               InvalidArgument);
  EXPECT_THROW(CudaBackend(-1, NvrtcCompiler()), InvalidArgument);
}

TEST_F(CudaBackendGpu, AxpyMatchesHostLoop) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  const int n = 1000003;
  const float a = 1.75f;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = std::sin(0.001f * i);
    y[i] = std::cos(0.003f * i);
  }
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  EXPECT_EQ(kernel->entry(), "axpy");
  DevicePtr dx = upload(x), dy = upload(y);
  launchAxpy(*kernel, n, a, dx, dy);
  std::vector<float> result = download(dy, n);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double expected = static_cast<double>(a) * x[i] + y[i];
    worst = std::max(worst, std::abs(result[i] - expected) /
                                std::max(1.0, std::abs(expected)));
  }
  EXPECT_LE(worst, 1e-6);
}

TEST_F(CudaBackendGpu, LargeDynamicSharedMemory) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  const uint32_t bytes = 100 * 1024;
  if (static_cast<uint32_t>(backend().device().maxSharedPerBlockOptin) < bytes)
    GTEST_SKIP() << "device allows less than 100 KiB of shared memory";
  const int n = bytes / sizeof(float);
  std::vector<float> input = pattern(n, 1000, 0.5f);
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kReverseThroughShared), "reverse");
  DevicePtr in = upload(input), out = allocate(bytes);
  ArgPack args;
  args.push(n).push(in).push(out);
  LaunchGeometry geometry;
  geometry.block.x = 256;
  geometry.dynamicSharedBytes = bytes;
  backend().launch(*kernel, geometry, args, nullptr);
  std::vector<float> result = download(out, n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(result[i], input[n - 1 - i]) << "at " << i;

  // Beyond the device's opt-in limit is refused before reaching the driver.
  geometry.dynamicSharedBytes =
      static_cast<uint32_t>(backend().device().maxSharedPerBlockOptin) + 1024;
  EXPECT_THROW(backend().launch(*kernel, geometry, args, nullptr),
               InvalidArgument);
}

TEST_F(CudaBackendGpu, LoadsPtxWhenTheCubinIsForAnotherArchitecture) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  // The oldest architecture NVRTC targets, if older than the device: its
  // PTX is what the driver must JIT.
  std::vector<int> supported = NvrtcCompiler::supportedArchitectures();
  ASSERT_FALSE(supported.empty());
  int oldest = *std::min_element(supported.begin(), supported.end());
  std::string deviceArch = backend().device().arch();
  if ("sm_" + std::to_string(oldest) == deviceArch)
    GTEST_SKIP() << "NVRTC targets nothing older than " << deviceArch;
  CudaBinary binary =
      NvrtcCompiler().compile(kAxpy, "sm_" + std::to_string(oldest));
  // Had the cubin been chosen, this would fail to load.
  binary.cubin = "not a cubin";
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(binary.serialize(), "axpy");

  const int n = 4099;
  std::vector<float> x = pattern(n, 7, 1.0f), y = pattern(n, 5, 1.0f);
  DevicePtr dx = upload(x), dy = upload(y);
  launchAxpy(*kernel, n, 2.0f, dx, dy);
  std::vector<float> result = download(dy, n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(result[i], 2.0f * x[i] + y[i]) << "at " << i;

  // Nothing to fall back to.
  binary.ptx.clear();
  EXPECT_THROW(backend().load(binary.serialize(), "axpy"), InvalidArgument);
}

TEST_F(CudaBackendGpu, BadBinariesAndEntries) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  EXPECT_THROW(backend().load("garbage", "axpy"), InvalidArgument);
  std::string binary = backend().compile(kAxpy);
  EXPECT_THROW(backend().load(binary.substr(0, binary.size() / 2), "axpy"),
               InvalidArgument);
  try {
    backend().load(binary, "no_such_kernel");
    FAIL() << "loading a missing entry succeeded";
  } catch (const DeviceError &error) {
    EXPECT_EQ(error.call(), "cuModuleGetFunction");
    EXPECT_EQ(error.cudaError(), "CUDA_ERROR_NOT_FOUND");
  }
}

TEST_F(CudaBackendGpu, CopiesAndFillZero) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(backend().allocate(0), 0u);
  backend().release(0);

  const size_t n = (1 << 20) + 3;
  std::vector<float> values = pattern(n, 1009, 0.25f);
  StreamHandle stream = backend().createStream();
  DevicePtr a = allocate(n * sizeof(float)), b = allocate(n * sizeof(float));
  backend().copyToDevice(a, values.data(), n * sizeof(float), stream);
  backend().copyOnDevice(b, a, n * sizeof(float), stream);
  // Zero a range in the middle that starts and ends off any alignment.
  const size_t first = 1001, count = 77777;
  backend().fillZero(b + first * sizeof(float), count * sizeof(float), stream);
  std::vector<float> fromA = download(a, n, stream);
  std::vector<float> fromB = download(b, n, stream);
  backend().destroyStream(stream);
  EXPECT_EQ(fromA, values);
  for (size_t i = 0; i < n; ++i) {
    float expected = i >= first && i < first + count ? 0.0f : values[i];
    ASSERT_EQ(fromB[i], expected) << "at " << i;
  }
}

TEST_F(CudaBackendGpu, GraphOfTwoLaunchesReplayed) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  const int n = 100003;
  std::vector<float> x = pattern(n, 7, 1.0f), y = pattern(n, 5, 1.0f);
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  DevicePtr dx = upload(x), dy = upload(y);
  backend().synchronize(nullptr);
  StreamHandle stream = backend().createStream();
  EXPECT_THROW(backend().beginCapture(nullptr), InvalidArgument);
  backend().beginCapture(stream);
  launchAxpy(*kernel, n, 0.5f, dx, dy, stream);
  launchAxpy(*kernel, n, 2.0f, dx, dy, stream);
  std::unique_ptr<CapturedGraph> graph = backend().endCapture(stream);
  ASSERT_TRUE(graph);
  // Capturing runs nothing.
  EXPECT_EQ(download(dy, n, stream), y);
  for (int replay = 0; replay < 3; ++replay)
    backend().replay(*graph, stream);
  std::vector<float> result = download(dy, n, stream);
  graph.reset();
  backend().destroyStream(stream);
  // Small integers and halves: every step is exact in float.
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(result[i], y[i] + 3 * (0.5f + 2.0f) * x[i]) << "at " << i;
}

// A graph captured again with other arguments updates the last one's
// executable in place and replays the new arguments.
TEST_F(CudaBackendGpu, RecapturedGraphUpdatesTheLastOne) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  const int n = 4099;
  std::vector<float> x = pattern(n, 7, 1.0f), y = pattern(n, 5, 1.0f);
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  DevicePtr dx = upload(x), dy = upload(y), dz = upload(y);
  backend().synchronize(nullptr);
  StreamHandle stream = backend().createStream();
  backend().beginCapture(stream);
  launchAxpy(*kernel, n, 0.5f, dx, dy, stream);
  std::unique_ptr<CapturedGraph> graph = backend().endCapture(stream);
  CapturedGraph *first = graph.get();
  backend().beginCapture(stream);
  launchAxpy(*kernel, n, 2.0f, dx, dz, stream);
  graph = backend().endCaptureReusing(stream, std::move(graph));
  EXPECT_EQ(graph.get(), first); // updated, not rebuilt
  backend().replay(*graph, stream);
  std::vector<float> untouched = download(dy, n, stream),
                     result = download(dz, n, stream);
  graph.reset();
  backend().destroyStream(stream);
  EXPECT_EQ(untouched, y);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(result[i], y[i] + 2.0f * x[i]) << "at " << i;
}

TEST_F(CudaBackendGpu, InvalidLaunchThrowsDeviceError) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  DevicePtr dx = allocate(16), dy = allocate(16);
  ArgPack args;
  args.push(4).push(1.0f).push(dx).push(dy);
  LaunchGeometry geometry;
  geometry.block.x = 4096;
  try {
    backend().launch(*kernel, geometry, args, nullptr);
    FAIL() << "a 4096-thread block launched";
  } catch (const DeviceError &error) {
    EXPECT_EQ(error.call(), "cuLaunchKernel");
    EXPECT_FALSE(error.cudaError().empty());
    EXPECT_NE(std::string(error.what()).find("cuLaunchKernel"),
              std::string::npos);
  }
  // A configuration error is not sticky: the context still works.
  geometry.block.x = 32;
  backend().launch(*kernel, geometry, args, nullptr);
  backend().synchronize(nullptr);
}

TEST_F(CudaBackendGpu, TimeMillisecondsIsPositive) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  const int n = 1000003;
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  DevicePtr dx = allocate(n * sizeof(float)), dy = allocate(n * sizeof(float));
  backend().fillZero(dx, n * sizeof(float), nullptr);
  backend().fillZero(dy, n * sizeof(float), nullptr);
  StreamHandle stream = backend().createStream();
  float milliseconds = backend().timeMilliseconds(stream, [&] {
    for (int i = 0; i < 10; ++i)
      launchAxpy(*kernel, n, 1.0f, dx, dy, stream);
  });
  backend().destroyStream(stream);
  EXPECT_GT(milliseconds, 0.0f);
  EXPECT_LT(milliseconds, 10000.0f);
}

// The context is current per thread; a thread that never touched the
// backend before must still be able to use it.
TEST_F(CudaBackendGpu, UsableFromAnotherThread) {
  if (!cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  std::shared_ptr<LoadedKernel> kernel =
      backend().load(backend().compile(kAxpy), "axpy");
  const int n = 1025;
  std::vector<float> x = pattern(n, 3, 1.0f), y = pattern(n, 4, 1.0f);
  std::vector<float> result;
  std::thread worker([&] {
    DevicePtr dx = upload(x), dy = upload(y);
    launchAxpy(*kernel, n, 4.0f, dx, dy);
    result = download(dy, n);
  });
  worker.join();
  ASSERT_EQ(result.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(result[i], 4.0f * x[i] + y[i]) << "at " << i;
}

} // namespace
