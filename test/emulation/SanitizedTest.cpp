//===- SanitizedTest.cpp - Sanitized emulation catches bad accesses
//--------===//
//
// Runs with the AddressSanitizer runtime preloaded (see CMakeLists.txt). A
// kernel that writes or reads out of bounds dies with ASan's report and a
// line naming the emulated kernel, block and thread.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"
#include "test/support/SampleKernels.h"

#include <gmock/gmock.h>

#include <dlfcn.h>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

class SanitizedTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
  void SetUp() override {
    if (!::dlsym(RTLD_DEFAULT, "__asan_init"))
      GTEST_SKIP() << "run through ctest, which preloads the ASan runtime";
    EmulationOptions options =
        EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.sanitize = true;
    options.check = false;
    options.threads = 2;
    backend = std::make_unique<EmulationBackend>(options);
  }

  /// Compiles, loads and runs `entry` on `elements` ints with one block.
  void run(const std::string &entry, const std::string &source, int elements,
           uint32_t dynamicShared = 0) {
    auto kernel = backend->load(backend->compile({entry, source}), entry);
    DevicePtr data = backend->allocate(elements * sizeof(int));
    backend->fillZero(data, elements * sizeof(int), nullptr);
    ArgPack args;
    args.push(elements).push(data);
    backend->launch(*kernel, {{1}, {64}, dynamicShared}, args, nullptr);
    backend->release(data);
  }

  std::unique_ptr<EmulationBackend> backend;
};

TEST_F(SanitizedTest, InBoundsKernelRunsAndIsRight) {
  EXPECT_THAT(backend->deviceDescription(), ::testing::HasSubstr("sanitized"));
  auto kernel = backend->load(
      backend->compile({samples::kAxpyEntry, samples::kAxpySource}),
      samples::kAxpyEntry);
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  DevicePtr dx = backend->allocate(12), dy = backend->allocate(12);
  backend->copyToDevice(dx, x.data(), 12, nullptr);
  backend->copyToDevice(dy, y.data(), 12, nullptr);
  ArgPack args;
  args.push(3).push(2.0f).push(dx).push(dy);
  backend->launch(*kernel, {{1}, {64}, 0}, args, nullptr);
  backend->copyToHost(y.data(), dy, 12, nullptr);
  EXPECT_EQ(y, (std::vector<float>{12, 24, 36}));
  backend->release(dx);
  backend->release(dy);
}

TEST_F(SanitizedTest, GlobalWritePastTheEndIsReported) {
  // Thread 63 writes element 63 of a 60-element buffer.
  EXPECT_DEATH(run("oob_global", R"cuda(
extern "C" __global__ void oob_global(int n, int *data) {
  data[threadIdx.x] = 1;
}
)cuda",
                   60),
               "heap-buffer-overflow.*emulated kernel 'oob_global', block "
               "\\(0,0,0\\), thread \\(60,0,0\\)");
}

TEST_F(SanitizedTest, SharedReadPastTheEndIsReported) {
  EXPECT_DEATH(run("oob_shared", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void oob_shared(int n, int *data) {
  RUDNN_DYNAMIC_SHARED(int, tile);
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  data[threadIdx.x % n] = tile[threadIdx.x + 1];
}
)cuda",
                   64, 64 * sizeof(int)),
               "heap-buffer-overflow.*emulated kernel 'oob_shared'");
}

} // namespace
