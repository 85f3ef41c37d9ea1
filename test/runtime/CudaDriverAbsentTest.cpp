//===- CudaDriverAbsentTest.cpp - The runtime without a usable driver -----===//
//
// On a machine without a CUDA driver or device every GPU entry point throws
// DeviceUnavailable, and compiling still works. With a device present the
// driver-absent tests skip.
//
//===----------------------------------------------------------------------===//

#include "runtime/backends/CudaBackend.h"
#include "runtime/backends/CudaDriver.h"
#include "runtime/compile/NvrtcCompiler.h"

#include "rudnn/errors.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Runs `call`, expecting DeviceUnavailable; returns its message.
template <typename Call> std::string unavailableMessage(Call call) {
  try {
    call();
  } catch (const DeviceUnavailable &error) {
    EXPECT_EQ(error.status(), Status::DeviceUnavailable);
    return error.what();
  } catch (const std::exception &error) {
    ADD_FAILURE() << "expected DeviceUnavailable, got: " << error.what();
    return "";
  }
  ADD_FAILURE() << "expected DeviceUnavailable, nothing was thrown";
  return "";
}

// First in the file: under ctest each test is its own process, so this one
// also races the very first initialization of the driver.
TEST(CudaDriverAbsent, ConcurrentCallsAllThrow) {
  if (cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  constexpr int kThreads = 8, kIterations = 50;
  std::atomic<int> unavailable{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        if (cudaAvailable())
          ++wrong;
        try {
          if ((t + i) % 2)
            listCudaDevices();
          else
            CudaBackend backend(0, NvrtcCompiler());
          ++wrong;
        } catch (const DeviceUnavailable &error) {
          if (std::string(error.what()).empty())
            ++wrong;
          else
            ++unavailable;
        } catch (...) {
          ++wrong;
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(unavailable.load(), kThreads * kIterations);
}

TEST(CudaDriverAbsent, NotAvailable) {
  if (cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(cudaAvailable());
  std::string message = unavailableMessage([] { CudaDriver::get(); });
  EXPECT_FALSE(message.empty());
  EXPECT_NE(message.find("CUDA"), std::string::npos) << message;
}

TEST(CudaDriverAbsent, ListDevicesThrows) {
  if (cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  std::string message = unavailableMessage([] { listCudaDevices(); });
  EXPECT_FALSE(message.empty());
}

TEST(CudaDriverAbsent, BackendThrows) {
  if (cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  std::string message =
      unavailableMessage([] { CudaBackend backend(0, NvrtcCompiler()); });
  EXPECT_FALSE(message.empty());
  // The ordinal is not what is wrong, so it is not what is reported.
  std::string otherOrdinal =
      unavailableMessage([] { CudaBackend backend(5, NvrtcCompiler()); });
  EXPECT_EQ(otherOrdinal, message);
}

TEST(CudaDriverAbsent, RepeatedCallsGiveTheSameReason) {
  if (cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  std::string first = unavailableMessage([] { listCudaDevices(); });
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(cudaAvailable());
    EXPECT_EQ(unavailableMessage([] { listCudaDevices(); }), first);
    EXPECT_EQ(unavailableMessage([] { CudaDriver::get(); }), first);
  }
}

// Needs no GPU, so it runs on both kinds of machine.
TEST(CudaDriverAbsent, NvrtcStillCompiles) {
  KernelSource kernel{"scale", R"(
extern "C" __global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}
)"};
  CudaBinary binary = NvrtcCompiler().compile(kernel, "sm_90");
  EXPECT_EQ(binary.entry, "scale");
  EXPECT_EQ(binary.arch, "sm_90");
  EXPECT_FALSE(binary.cubin.empty());
  EXPECT_NE(binary.ptx.find(".entry scale"), std::string::npos) << binary.ptx;
  std::optional<CudaBinary> roundTrip =
      CudaBinary::deserialize(binary.serialize());
  ASSERT_TRUE(roundTrip);
  EXPECT_EQ(roundTrip->cubin, binary.cubin);
}

} // namespace
