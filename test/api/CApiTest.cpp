//===- CApiTest.cpp - The C API's statuses and last-error messages --------===//

#include "runtime/backends/CudaBackend.h"
#include "test/support/SampleKernels.h"

#include "rudnn/rudnn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using ::testing::HasSubstr;

namespace {

/// A memory-only context, destroyed at the end of the test.
class CApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    rudnn_context_options_t options{
        RUDNN_BACKEND_AUTO, 0, "", nullptr, nullptr, nullptr};
    ASSERT_EQ(rudnn_context_create(&options, &context), RUDNN_STATUS_OK)
        << rudnn_last_error();
    EXPECT_STREQ(rudnn_last_error(), "");
  }
  void TearDown() override {
    EXPECT_EQ(rudnn_context_destroy(context), RUDNN_STATUS_OK);
  }
  /// Copies `host` to fresh device memory and back: the bytes that came
  /// back equal, and the memory freed.
  void expectRoundTrip(const std::vector<float> &host) {
    std::vector<float> back(host.size());
    const size_t bytes = host.size() * sizeof(float);
    void *device = nullptr;
    ASSERT_EQ(rudnn_malloc(context, bytes, &device), RUDNN_STATUS_OK)
        << rudnn_last_error();
    EXPECT_EQ(rudnn_memcpy_to_device(context, device, host.data(), bytes),
              RUDNN_STATUS_OK);
    EXPECT_EQ(rudnn_memcpy_to_host(context, back.data(), device, bytes),
              RUDNN_STATUS_OK);
    EXPECT_EQ(rudnn_synchronize(context), RUDNN_STATUS_OK);
    EXPECT_EQ(std::memcmp(host.data(), back.data(), bytes), 0);
    EXPECT_EQ(rudnn_memcpy_to_host(context, nullptr, device, 4),
              RUDNN_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(rudnn_free(context, device), RUDNN_STATUS_OK);
  }
  rudnn_context_t context = nullptr;
};

TEST_F(CApiTest, NullArgumentsAreInvalid) {
  EXPECT_EQ(rudnn_context_create(nullptr, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("context is NULL"));
  EXPECT_EQ(rudnn_get_counters(context, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("counters is NULL"));
  EXPECT_EQ(rudnn_compile_kernel(nullptr, "a", "b", "sm_90"),
            RUDNN_STATUS_INVALID_ARGUMENT);
  rudnn_context_options_t bad{
      RUDNN_BACKEND_AUTO, 0, nullptr, nullptr, nullptr, nullptr};
  int outOfRange = 7; // what a C caller may store
  std::memcpy(&bad.backend, &outOfRange, sizeof(outOfRange));
  rudnn_context_t unused = nullptr;
  EXPECT_EQ(rudnn_context_create(&bad, &unused), RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(unused, nullptr);
}

TEST_F(CApiTest, CompileErrorKeepsTheLog) {
  EXPECT_EQ(rudnn_compile_kernel(context, rudnn::samples::kBrokenEntry,
                                 rudnn::samples::kBrokenSource, "sm_90"),
            RUDNN_STATUS_COMPILE_ERROR);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("'broken'"));
  EXPECT_THAT(rudnn_last_error(), HasSubstr("undeclared_name"));
  EXPECT_STREQ(rudnn_status_string(RUDNN_STATUS_COMPILE_ERROR),
               "RUDNN_STATUS_COMPILE_ERROR");

  // Success clears the message; counters count the one good compile.
  EXPECT_EQ(rudnn_compile_kernel(context, rudnn::samples::kAxpyEntry,
                                 rudnn::samples::kAxpySource, "sm_80"),
            RUDNN_STATUS_OK);
  EXPECT_STREQ(rudnn_last_error(), "");
  rudnn_counters_t counters;
  ASSERT_EQ(rudnn_get_counters(context, &counters), RUDNN_STATUS_OK);
  EXPECT_EQ(counters.kernels_compiled, 2u); // the failed one ran too
  EXPECT_EQ(rudnn_compile_kernel(context, rudnn::samples::kAxpyEntry,
                                 rudnn::samples::kAxpySource, "sm_80"),
            RUDNN_STATUS_OK);
  ASSERT_EQ(rudnn_get_counters(context, &counters), RUDNN_STATUS_OK);
  EXPECT_EQ(counters.kernel_cache_memory_hits, 1u);
}

TEST_F(CApiTest, UnsupportedArchitecture) {
  EXPECT_EQ(rudnn_compile_kernel(context, rudnn::samples::kAxpyEntry,
                                 rudnn::samples::kAxpySource, "sm_10"),
            RUDNN_STATUS_UNSUPPORTED);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("'sm_10'"));
}

TEST_F(CApiTest, LastErrorIsPerThread) {
  EXPECT_EQ(rudnn_get_counters(context, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  std::string seenByOtherThread = "unset";
  std::thread([&] { seenByOtherThread = rudnn_last_error(); }).join();
  EXPECT_EQ(seenByOtherThread, "");
  EXPECT_THAT(rudnn_last_error(), HasSubstr("counters is NULL"));
}

TEST_F(CApiTest, CudaWithoutDeviceIsUnavailable) {
  if (rudnn::runtime::cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  rudnn_context_options_t options{
      RUDNN_BACKEND_CUDA, 0, "", nullptr, nullptr, nullptr};
  rudnn_context_t cuda = nullptr;
  ASSERT_EQ(rudnn_context_create(&options, &cuda), RUDNN_STATUS_OK);
  void *pointer = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(rudnn_malloc(cuda, 256, &pointer), RUDNN_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("no CUDA"));
  EXPECT_EQ(rudnn_context_destroy(cuda), RUDNN_STATUS_OK);
  EXPECT_STREQ(rudnn_version(), "0.1.0");
}

TEST_F(CApiTest, MemoryRoundTripOnTheDefaultBackend) {
  expectRoundTrip({1.5f, -2.f, 3.25f, 0.f, 1e30f});
}

TEST_F(CApiTest, FreeOfAPointerNotAllocatedHereIsInvalid) {
  void *device = nullptr;
  ASSERT_EQ(rudnn_malloc(context, 256, &device), RUDNN_STATUS_OK)
      << rudnn_last_error();
  void *foreign = std::malloc(64);
  EXPECT_EQ(rudnn_free(context, foreign), RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(),
              HasSubstr("not a live allocation of this context"));
  std::free(foreign);
  EXPECT_EQ(rudnn_free(context, static_cast<char *>(device) + 16),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rudnn_free(context, device), RUDNN_STATUS_OK);
  EXPECT_EQ(rudnn_free(context, device), RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(),
              HasSubstr("not a live allocation of this context"));
  EXPECT_EQ(rudnn_free(context, nullptr), RUDNN_STATUS_OK);

  // The context still works.
  expectRoundTrip({1.f, 2.f, 3.f, 4.f});
}

TEST_F(CApiTest, CopiesStayInsideTheAllocationTheyTarget) {
  void *device = nullptr;
  ASSERT_EQ(rudnn_malloc(context, 16, &device), RUDNN_STATUS_OK)
      << rudnn_last_error();
  std::vector<char> host(1 << 20, 7), back(1 << 20, 0);
  EXPECT_EQ(rudnn_memcpy_to_device(context, device, host.data(), host.size()),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(),
              HasSubstr("1048576 bytes at offset 0 of an allocation of 16 "
                        "bytes run past its end"));
  char *inside = static_cast<char *>(device) + 8;
  EXPECT_EQ(rudnn_memcpy_to_device(context, inside, host.data(), 12),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rudnn_memcpy_to_host(context, back.data(), inside, 9),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("copyToHost: 9 bytes at offset 8"));
  // What fits is copied.
  EXPECT_EQ(rudnn_memcpy_to_device(context, inside, host.data(), 8),
            RUDNN_STATUS_OK);
  EXPECT_EQ(rudnn_memcpy_to_host(context, back.data(), device, 16),
            RUDNN_STATUS_OK);
  EXPECT_EQ(rudnn_synchronize(context), RUDNN_STATUS_OK);
  EXPECT_EQ(std::memcmp(back.data() + 8, host.data(), 8), 0);
  EXPECT_EQ(rudnn_free(context, device), RUDNN_STATUS_OK);
}

TEST_F(CApiTest, ModulesLoadOnlyFromRegularFiles) {
  rudnn_module_t module = nullptr;
  for (const char *path : {"/dev/zero", "/", "/nonexistent/module.mlir"}) {
    EXPECT_EQ(rudnn_module_load(context, path, &module),
              RUDNN_STATUS_INVALID_ARGUMENT)
        << path;
    EXPECT_THAT(rudnn_last_error(), HasSubstr(path));
    EXPECT_EQ(module, nullptr);
  }
  EXPECT_THAT(
      (rudnn_module_load(context, "/dev/zero", &module), rudnn_last_error()),
      HasSubstr("not a regular file (a character device)"));
}

TEST_F(CApiTest, ViewsMustBeAlignedToTheirElements) {
  rudnn_module_t module = nullptr;
  ASSERT_EQ(rudnn_module_parse(context, R"(
func.func @main(%x: tensor<?x32xf32> {rudnn.name = "x"})
    -> (tensor<?xf32> {rudnn.name = "mean"}, tensor<?xf32> {rudnn.name = "var"}) {
  %mean, %var = rudnn.moments %x : (tensor<?x32xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %mean, %var : tensor<?xf32>, tensor<?xf32>
})",
                               &module),
            RUDNN_STATUS_OK)
      << rudnn_last_error();
  rudnn_function_t function = nullptr;
  ASSERT_EQ(rudnn_module_function(module, "main", &function), RUDNN_STATUS_OK);
  // Host memory: this context emulates when no GPU is present; on a GPU the
  // call is refused before any pointer is read either way.
  std::vector<float> x(2 * 32 + 1, 1.f), mean(3, -1.f), var(3, -1.f);
  const int64_t xShape[] = {2, 32}, rowShape[] = {2};
  rudnn_tensor_t argument{reinterpret_cast<char *>(x.data()) + 2,
                          RUDNN_DTYPE_F32, 2, xShape, nullptr};
  rudnn_tensor_t results[] = {
      {mean.data(), RUDNN_DTYPE_F32, 1, rowShape, nullptr},
      {var.data(), RUDNN_DTYPE_F32, 1, rowShape, nullptr}};
  EXPECT_EQ(rudnn_function_call(function, &argument, 1, results, 2, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("'x' has a data pointer"));
  EXPECT_THAT(rudnn_last_error(),
              HasSubstr("not a multiple of its 4-byte elements"));
  EXPECT_EQ(mean[0], -1.f);
  rudnn_tensor_t misalignedResult = results[0];
  misalignedResult.data = reinterpret_cast<char *>(mean.data()) + 1;
  argument.data = x.data();
  rudnn_tensor_t mixed[] = {misalignedResult, results[1]};
  EXPECT_EQ(rudnn_function_call(function, &argument, 1, mixed, 2, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(rudnn_last_error(), HasSubstr("'mean' has a data pointer"));
  EXPECT_EQ(var[0], -1.f);
  EXPECT_EQ(rudnn_function_destroy(function), RUDNN_STATUS_OK);
  EXPECT_EQ(rudnn_module_destroy(module), RUDNN_STATUS_OK);
}

TEST_F(CApiTest, CompileKernelEntryMustBeACIdentifier) {
  for (const std::string &entry :
       std::vector<std::string>{"../../x", "/abs", "a b", "", "1st", "kernel\n",
                                std::string(256, 'k')}) {
    EXPECT_EQ(rudnn_compile_kernel(context, entry.c_str(),
                                   rudnn::samples::kAxpySource, "sm_90"),
              RUDNN_STATUS_INVALID_ARGUMENT)
        << entry;
    EXPECT_THAT(rudnn_last_error(), HasSubstr("entry must be a C identifier"));
  }
  rudnn_counters_t counters;
  ASSERT_EQ(rudnn_get_counters(context, &counters), RUDNN_STATUS_OK);
  EXPECT_EQ(counters.kernels_compiled, 0u);

  EXPECT_EQ(rudnn_compile_kernel(context, rudnn::samples::kAxpyEntry,
                                 rudnn::samples::kAxpySource, "sm_90"),
            RUDNN_STATUS_OK)
      << rudnn_last_error();
  // The longest name allowed.
  const std::string longest = "_" + std::string(253, 'k') + "9";
  ASSERT_EQ(longest.size(), 255u);
  const std::string source =
      "extern \"C\" __global__ void " + longest + "(float *x) { *x = 1; }\n";
  EXPECT_EQ(
      rudnn_compile_kernel(context, longest.c_str(), source.c_str(), "sm_90"),
      RUDNN_STATUS_OK)
      << rudnn_last_error();
}

} // namespace
