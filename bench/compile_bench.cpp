//===- compile_bench.cpp - Kernel compile and cache-hit costs -------------===//
//
//   rudnn-bench-compile [--repetitions N] [--json FILE]
//
// nvrtc_cold: NVRTC on a representative kernel (bf16 headers, the device
// library, mma.sync), cache bypassed. cache_hit_memory: the same request
// answered by the kernel cache's memory level; cache_hit_disk: by its disk
// level, from a freshly opened context (opening it counts); key hashing
// included. Each figure is the median of N samples.
//
//===----------------------------------------------------------------------===//

#include "bench/Timing.h"
#include "codegen/device/DeviceLibrary.h"
#include "rudnn/rudnn.hpp"
#include "runtime/compile/NvrtcCompiler.h"
#include "test/support/SampleKernels.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace rudnn;
namespace fs = std::filesystem;

static const runtime::KernelSource kKernel{samples::kMmaTileEntry,
                                           samples::kMmaTileSource};

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

int main(int argc, char **argv) {
  int repetitions = 5;
  std::string json;
  const char *usage = "usage: rudnn-bench-compile [--repetitions N] "
                      "[--json FILE]\n";
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (i + 1 == argc || (flag != "--repetitions" && flag != "--json")) {
      std::fprintf(stderr, "rudnn-bench-compile: bad option %s\n%s", argv[i],
                   usage);
      return 2;
    }
    if (flag == "--repetitions")
      repetitions = std::max(1, std::atoi(argv[++i]));
    else
      json = argv[++i];
  }
  try {
    std::vector<bench::Measurement> results;
    runtime::NvrtcCompiler compiler(device::headerFiles());
    results.push_back(bench::measure("nvrtc_cold", "ms", repetitions, 2.0, [&] {
      compiler.compile(kKernel, "sm_90");
    }));
    bench::print(results.back());

    bool correct = true;
    {
      ScratchContext scratch;
      results.push_back(
          bench::measure("cache_hit_memory", "us", repetitions, 0.2, [&] {
            scratch.context.compileKernel(kKernel.entry, kKernel.source,
                                          "sm_90");
          }));
      bench::print(results.back());
      correct &= scratch.context.counters().kernelsCompiled == 1;
    }
    {
      // A fresh context each time finds the kernel on disk only (opening
      // the context counts).
      ScratchContext scratch;
      scratch.context.compileKernel(kKernel.entry, kKernel.source, "sm_90");
      uint64_t compiled = 0, diskHits = 0;
      results.push_back(
          bench::measure("cache_hit_disk", "us", repetitions, 0.2, [&] {
            Context fresh(scratch.context.options());
            fresh.compileKernel(kKernel.entry, kKernel.source, "sm_90");
            compiled += fresh.counters().kernelsCompiled;
            diskHits += fresh.counters().kernelCacheDiskHits;
          }));
      bench::print(results.back());
      correct &= compiled == 0 && diskHits > 0;
    }
    if (!json.empty()) {
      std::ofstream out(json);
      out << "{\"benchmarks\": [";
      for (size_t i = 0; i < results.size(); ++i)
        out << (i ? ",\n" : "\n") << "  {\"name\": \"" << results[i].name
            << "\", \"unit\": \"" << results[i].unit
            << "\", \"median\": " << results[i].median
            << ", \"min\": " << results[i].min
            << ", \"max\": " << results[i].max << "}";
      out << "\n]}\n";
    }
    if (!correct) {
      std::fprintf(stderr, "rudnn-bench-compile: a cache hit compiled\n");
      return 1;
    }
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "rudnn-bench-compile: %s\n", error.what());
    return 1;
  }
}
