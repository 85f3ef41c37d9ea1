//===- ContextTest.cpp - The JIT context without a GPU --------------------===//

#include "lib/ContextImpl.h"
#include "runtime/backends/CudaBackend.h"
#include "test/api/PlanCacheCheck.h"
#include "test/support/SampleKernels.h"

#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

using namespace rudnn;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

/// A fresh cache directory per test, removed afterwards.
class ContextTest : public ::testing::Test {
protected:
  void SetUp() override {
    cacheDir =
        fs::temp_directory_path() /
        ("rudnn-context-" + std::to_string(::getpid()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cacheDir);
  }
  void TearDown() override { fs::remove_all(cacheDir); }

  ContextOptions options() {
    ContextOptions options;
    options.cacheDirectory = cacheDir.string();
    return options;
  }

  fs::path cacheDir;
};

const runtime::KernelSource kAxpy{samples::kAxpyEntry, samples::kAxpySource};
const runtime::KernelSource kMma{samples::kMmaTileEntry,
                                 samples::kMmaTileSource};

TEST_F(ContextTest, CompilesOnceThenHitsMemoryThenDisk) {
  {
    Context context(options());
    EXPECT_EQ(context.counters().kernelsCompiled, 0u);
    auto first = context.impl().compileForArch(kMma, "sm_90");
    auto second = context.impl().compileForArch(kMma, "sm_90");
    EXPECT_EQ(*first, *second);
    Counters counters = context.counters();
    EXPECT_EQ(counters.kernelsCompiled, 1u);
    EXPECT_EQ(counters.kernelCacheMemoryHits, 1u);
    EXPECT_EQ(counters.kernelCacheDiskHits, 0u);
    std::optional<runtime::CudaBinary> binary =
        runtime::CudaBinary::deserialize(*first);
    ASSERT_TRUE(binary);
    EXPECT_THAT(binary->ptx, HasSubstr("mma.sync.aligned.m16n8k16"));
  }
  Context fresh(options());
  fresh.impl().compileForArch(kMma, "sm_90");
  Counters counters = fresh.counters();
  EXPECT_EQ(counters.kernelsCompiled, 0u);
  EXPECT_EQ(counters.kernelCacheDiskHits, 1u);
}

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The one cache entry in `dir` not in `known`.
fs::path newEntry(const fs::path &dir, const std::vector<fs::path> &known) {
  for (const auto &file : fs::directory_iterator(dir))
    if (file.path().extension() == ".rdk" &&
        std::find(known.begin(), known.end(), file.path()) == known.end())
      return file.path();
  return {};
}

/// An entry for the key held in `entryFile`'s header, with `payload` and a
/// matching checksum: whole, so only loading it shows it is wrong.
std::string entryWithPayload(const std::string &entryFile,
                             const std::string &payload) {
  std::string bytes = entryFile.substr(0, 28);
  uint64_t size = payload.size(), checksum = runtime::hash64(payload);
  for (uint64_t value : {size, checksum})
    for (int i = 0; i < 8; ++i)
      bytes += static_cast<char>(value >> (8 * i));
  return bytes + payload;
}

TEST_F(ContextTest, CachedBinaryThatDoesNotLoadIsRebuiltOnce) {
  ContextOptions emulation = options();
  emulation.backend = BackendKind::Emulation;
  const runtime::KernelSource other{
      "other_kernel",
      "extern \"C\" __global__ void other_kernel(float *x) { x[0] = 1; }\n"};
  fs::path entry;
  std::string otherEntry;
  {
    Context context(emulation);
    context.impl().compile(kAxpy);
    entry = newEntry(cacheDir, {});
    context.impl().compile(other);
    otherEntry = readBytes(newEntry(cacheDir, {entry}));
  }
  ASSERT_FALSE(entry.empty());
  ASSERT_GT(otherEntry.size(), 44u);
  std::string axpyEntry = readBytes(entry);
  // Plants under axpy's name first a valid object lacking its symbol, then
  // bytes that are no object at all.
  for (const std::string &payload :
       {otherEntry.substr(44), std::string("not a shared object")}) {
    SCOPED_TRACE(payload.size());
    {
      std::ofstream out(entry, std::ios::binary | std::ios::trunc);
      out << entryWithPayload(axpyEntry, payload);
    }
    {
      Context context(emulation);
      ::testing::internal::CaptureStderr();
      auto binary = context.impl().compile(kAxpy);
      std::string err = ::testing::internal::GetCapturedStderr();
      EXPECT_EQ(context.counters().kernelsCompiled, 1u);
      EXPECT_EQ(context.counters().kernelCacheDiskHits, 0u);
      EXPECT_EQ(context.impl().kernelCache.counters().unusableEntries, 1u);
      EXPECT_THAT(err, HasSubstr(entry.string()));
      EXPECT_NO_THROW(context.impl().backend().load(*binary, kAxpy.entry));
    }
    // The next context finds the rebuilt entry.
    Context context(emulation);
    auto binary = context.impl().compile(kAxpy);
    EXPECT_EQ(context.counters().kernelsCompiled, 0u);
    EXPECT_EQ(context.counters().kernelCacheDiskHits, 1u);
    EXPECT_NO_THROW(context.impl().backend().load(*binary, kAxpy.entry));
  }
}

TEST_F(ContextTest, KeyCoversSourceArchitectureAndEnvironment) {
  Context context(options());
  context.impl().compileForArch(kAxpy, "sm_90");
  context.impl().compileForArch(kAxpy, "sm_80");
  runtime::KernelSource edited = kAxpy;
  edited.source += "\n// edited\n";
  context.impl().compileForArch(edited, "sm_90");
  // Changing a code-affecting variable changes the key; restoring it does
  // not, whatever the variable held when the test started.
  const char *original = std::getenv("RUDNN_HOST_CXX");
  std::string saved = original ? original : "";
  ::setenv("RUDNN_HOST_CXX", (saved + "-changed").c_str(), 1);
  context.impl().compileForArch(kAxpy, "sm_90");
  if (original)
    ::setenv("RUDNN_HOST_CXX", saved.c_str(), 1);
  else
    ::unsetenv("RUDNN_HOST_CXX");
  EXPECT_EQ(context.counters().kernelsCompiled, 4u);
  context.impl().compileForArch(kAxpy, "sm_90");
  EXPECT_EQ(context.counters().kernelsCompiled, 4u);
}

TEST_F(ContextTest, EmptyCacheDirectoryKeepsEverythingInMemory) {
  ContextOptions memoryOnly;
  memoryOnly.cacheDirectory = "";
  Context context(memoryOnly);
  context.impl().compileForArch(kAxpy, "sm_90");
  context.impl().compileForArch(kAxpy, "sm_90");
  EXPECT_EQ(context.counters().kernelsCompiled, 1u);
  EXPECT_FALSE(context.impl().kernelCache.diskEnabled());
}

TEST_F(ContextTest, DumpDirectoryReceivesSourcesOnCacheHitsToo) {
  const fs::path dump = cacheDir / "dump";
  { // A cold cache: compiled.
    Context context(options());
    context.impl().compileForArch(kAxpy, "sm_90");
  }
  ::setenv("RUDNN_DUMP_DIR", dump.c_str(), 1);
  Context context(options());
  context.impl().compileForArch(kAxpy, "sm_90");
  ::unsetenv("RUDNN_DUMP_DIR");
  EXPECT_EQ(context.counters().kernelsCompiled, 0u);
  EXPECT_EQ(context.counters().kernelCacheDiskHits, 1u);
  EXPECT_EQ(readBytes(dump / (std::string(samples::kAxpyEntry) + ".cu")),
            samples::kAxpySource);
}

TEST_F(ContextTest, CompileErrorsReachTheCaller) {
  Context context(options());
  EXPECT_THROW(context.impl().compileForArch(
                   {samples::kBrokenEntry, samples::kBrokenSource}, "sm_90"),
               CompileError);
  // Nothing was cached: the next call compiles (and fails) again.
  EXPECT_THROW(context.impl().compileForArch(
                   {samples::kBrokenEntry, samples::kBrokenSource}, "sm_90"),
               CompileError);
  EXPECT_EQ(context.counters().kernelsCompiled, 2u);
}

TEST_F(ContextTest, WithoutDeviceBackendIsUnavailableAndNothingElseBreaks) {
  if (runtime::cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  ContextOptions cuda = options();
  cuda.backend = BackendKind::Cuda;
  Context context(cuda);
  EXPECT_THROW(context.backend(), DeviceUnavailable);
  EXPECT_THROW(context.allocate(64), DeviceUnavailable);
  // Compilation needs no device.
  EXPECT_NO_THROW(context.impl().compileForArch(kAxpy, "sm_90"));
  EXPECT_THROW(context.backend(), DeviceUnavailable);
}

TEST_F(ContextTest, BackendNamesParseAndEnvironmentIsChecked) {
  EXPECT_EQ(parseBackend("cuda"), BackendKind::Cuda);
  EXPECT_EQ(parseBackend("emulation"), BackendKind::Emulation);
  EXPECT_EQ(parseBackend("auto"), BackendKind::Auto);
  EXPECT_THROW(parseBackend("gpu"), InvalidArgument);
  ::setenv("RUDNN_BACKEND", "tpu", 1);
  Context context(options());
  EXPECT_THAT([&] { context.backend(); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'tpu'")));
  ::unsetenv("RUDNN_BACKEND");
}

TEST_F(ContextTest, PlanCacheServesRepeatedCallsWithoutCompiling) {
  // The default backend: the GPU where there is one, else emulation.
  Context context(options());
  rudnn::test::checkPlanCache(context);
}

TEST_F(ContextTest, AutoPicksEmulationWithoutDevice) {
  if (runtime::cudaAvailable())
    GTEST_SKIP() << "a CUDA device is present";
  Context context(options());
  EXPECT_EQ(context.backend(), BackendKind::Emulation);
  EXPECT_THAT(context.deviceDescription(), HasSubstr("CPU emulation"));
}

TEST_F(ContextTest, ReleaseTakesOnlyItsOwnLiveAllocations) {
  Context context(options()), other(options());
  void *pointer = context.allocate(256);
  void *foreign = std::malloc(64);
  auto rejected = [&](void *bad) {
    EXPECT_THAT([&] { context.release(bad); },
                ::testing::ThrowsMessage<InvalidArgument>(
                    HasSubstr("not a live allocation of this context")));
  };
  rejected(foreign);
  rejected(static_cast<char *>(pointer) + 8);
  void *elsewhere = other.allocate(64);
  rejected(elsewhere);
  other.release(elsewhere);
  std::free(foreign);

  context.release(pointer);
  rejected(pointer); // already released
  static_assert(noexcept(context.releaseQuietly(pointer)));
  context.releaseQuietly(pointer); // logs, returns

  // Allocation and release still work.
  DeviceBuffer buffer(context, 128);
  void *again = context.allocate(32);
  EXPECT_NO_THROW(context.release(again));
}

TEST(TensorView, ContiguousStridesAndDescription) {
  float data[24];
  TensorView view = TensorView::contiguous(data, DType::BF16, {2, 3, 4});
  EXPECT_EQ(view.strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(view.numel(), 24);
  EXPECT_EQ(view.describe(), "bf16[2, 3, 4] strides [12, 4, 1]");
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_STREQ(dtypeName(DType::I32), "i32");
}

} // namespace

namespace {

/// Runs y = a·x + y (a plan per value of `a`) on 37 elements and checks it.
void runAxpy(Context &context, float a) {
  const int64_t n = 37;
  std::vector<float> x(n), y(n), expected(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.25f * static_cast<float>(i);
    y[i] = 2.0f - static_cast<float>(i % 5);
    expected[i] = a * x[i] + y[i];
  }
  DeviceBuffer dx(context, n * sizeof(float)), dy(context, n * sizeof(float));
  context.copyToDevice(dx.data(), x.data(), n * sizeof(float));
  context.copyToDevice(dy.data(), y.data(), n * sizeof(float));
  auto executor = context.impl().plan("axpy:f32:a=" + std::to_string(a), [&] {
    return test::axpyPlan(context, a);
  });
  executor->run({reinterpret_cast<runtime::DevicePtr>(dx.data()),
                 reinterpret_cast<runtime::DevicePtr>(dy.data())},
                {n}, nullptr, /*useGraph=*/false);
  context.copyToHost(y.data(), dy.data(), n * sizeof(float));
  context.synchronize();
  EXPECT_EQ(y, expected) << "a = " << a;
}

} // namespace

TEST(PlanCacheBound, LeastRecentlyUsedPlansAreDroppedAndCounted) {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  options.planCacheCapacity = 2;
  Context context(options);
  runAxpy(context, 1.0f);
  runAxpy(context, 2.0f);
  EXPECT_EQ(context.counters().planCacheEvictions, 0u);
  runAxpy(context, 1.0f); // a hit: a = 2 is now the least recent
  runAxpy(context, 3.0f); // drops a = 2
  Counters counters = context.counters();
  EXPECT_EQ(counters.planCacheMisses, 3u);
  EXPECT_EQ(counters.planCacheHits, 1u);
  EXPECT_EQ(counters.planCacheEvictions, 1u);
  runAxpy(context, 1.0f); // still kept
  EXPECT_EQ(context.counters().planCacheHits, 2u);
  runAxpy(context, 2.0f); // built again, dropping a = 3
  counters = context.counters();
  EXPECT_EQ(counters.planCacheMisses, 4u);
  EXPECT_EQ(counters.planCacheEvictions, 2u);
  // The kernel was compiled once: plans share the kernel cache.
  EXPECT_EQ(counters.kernelsCompiled, 1u);
}

TEST(PlanCacheBound, ManyDistinctAttributesKeepAtMostTheCapacity) {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  options.planCacheCapacity = 3;
  Context context(options);
  for (int i = 0; i < 20; ++i)
    runAxpy(context, 0.5f * static_cast<float>(i));
  EXPECT_EQ(context.counters().planCacheEvictions, 17u);
  EXPECT_EQ(context.counters().planCacheMisses, 20u);
}

TEST(FunctionCacheBound, OperatorFunctionsAreCountedAndDroppedBeyondTheBound) {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  options.planCacheCapacity = 5;
  Context context(options);
  std::vector<float> rows(2 * 3);
  const TensorView x = TensorView::contiguous(rows.data(), DType::F32, {2, 3});
  auto build = [&](double eps) {
    return operatorFunction(context, "rudnn.rms_norm", {{"eps", eps}},
                            {{"x", x}}, {"y"});
  };
  // The bound starts as the plan cache's.
  EXPECT_EQ(context.setFunctionCacheCapacity(2), 5u);
  build(1e-3);
  build(1e-4);
  build(1e-3); // a hit: 1e-4 is now the least recent
  build(1e-5); // drops 1e-4
  Counters counters = context.counters();
  EXPECT_EQ(counters.functionCacheMisses, 3u);
  EXPECT_EQ(counters.functionCacheHits, 1u);
  EXPECT_EQ(counters.functionCacheEvictions, 1u);
  EXPECT_EQ(counters.functionsCached, 2u);
  build(1e-4); // built again, dropping 1e-3
  EXPECT_EQ(context.counters().functionCacheMisses, 4u);
  // Shrinking drops at once; a bound of 0 is refused and changes nothing.
  EXPECT_EQ(context.setFunctionCacheCapacity(1), 2u);
  counters = context.counters();
  EXPECT_EQ(counters.functionsCached, 1u);
  EXPECT_EQ(counters.functionCacheEvictions, 3u);
  EXPECT_THROW(context.setFunctionCacheCapacity(0), InvalidArgument);
  EXPECT_EQ(context.setFunctionCacheCapacity(4), 1u);
  // Functions are not plans: none was planned or compiled.
  EXPECT_EQ(counters.planCacheMisses, 0u);
  EXPECT_EQ(counters.kernelsCompiled, 0u);
}
