//===- compile_bench.cpp - Kernel compile and cache-hit costs -------------===//
//
// BM_NvrtcCold: NVRTC on a representative kernel (bf16 headers, the device
// library, mma.sync), cache bypassed. BM_CacheHitMemory / BM_CacheHitDisk:
// the same request answered by the kernel cache's memory and disk levels,
// key hashing included.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "test/support/SampleKernels.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <unistd.h>

using namespace rudnn;
namespace fs = std::filesystem;

static const runtime::KernelSource kKernel{samples::kMmaTileEntry,
                                           samples::kMmaTileSource};

static void BM_NvrtcCold(benchmark::State &state) {
  runtime::NvrtcCompiler compiler(deviceLibraryHeaders());
  for (auto _ : state)
    benchmark::DoNotOptimize(compiler.compile(kKernel, "sm_90"));
}
BENCHMARK(BM_NvrtcCold)->Unit(benchmark::kMillisecond)->MinTime(2.0);

/// A context whose cache directory lives for one benchmark.
struct ScratchContext {
  ScratchContext()
      : directory(fs::temp_directory_path() /
                  ("rudnn-bench-" + std::to_string(::getpid()))),
        context([&] {
          ContextOptions options;
          options.cacheDirectory = directory.string();
          return options;
        }()) {}
  ~ScratchContext() { fs::remove_all(directory); }
  fs::path directory;
  Context context;
};

static void BM_CacheHitMemory(benchmark::State &state) {
  ScratchContext scratch;
  Context::Impl &impl = scratch.context.impl();
  impl.compileForArch(kKernel, "sm_90");
  for (auto _ : state)
    benchmark::DoNotOptimize(impl.compileForArch(kKernel, "sm_90"));
  if (scratch.context.counters().kernelsCompiled != 1)
    state.SkipWithError("a memory hit compiled");
}
BENCHMARK(BM_CacheHitMemory)->Unit(benchmark::kMicrosecond);

static void BM_CacheHitDisk(benchmark::State &state) {
  ScratchContext scratch;
  Context::Impl &impl = scratch.context.impl();
  impl.compileForArch(kKernel, "sm_90");
  for (auto _ : state) {
    impl.kernelCache.clearMemory();
    benchmark::DoNotOptimize(impl.compileForArch(kKernel, "sm_90"));
  }
  if (scratch.context.counters().kernelsCompiled != 1 ||
      scratch.context.counters().kernelCacheDiskHits == 0)
    state.SkipWithError("a disk hit compiled");
}
BENCHMARK(BM_CacheHitDisk)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
