//===- emulation_bench.cpp - Throughput of the CPU emulation backend ------===//
//
// How fast emulated kernels run, so test times stay predictable: plain
// element-wise work, barrier-heavy blocks, and warp shuffles.
//
//===----------------------------------------------------------------------===//

#include "codegen/device/DeviceLibrary.h"
#include "runtime/backends/EmulationBackend.h"
#include "test/support/SampleKernels.h"

#include <benchmark/benchmark.h>

#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

constexpr const char *kBarrierSource = R"cuda(
extern "C" __global__ void barriers(int rounds, int *out) {
  __shared__ int slots[256];
  int t = threadIdx.x, value = t;
  for (int round = 0; round < rounds; ++round) {
    slots[t] = value + 1;
    __syncthreads();
    value = slots[(t + 1) % 256];
    __syncthreads();
  }
  out[blockIdx.x * 256 + t] = value;
}
)cuda";

constexpr const char *kShuffleSource = R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void shuffles(int rounds, float *out) {
  float value = threadIdx.x;
  for (int round = 0; round < rounds; ++round)
    value = rudnn::warp_sum(value) * (1.0f / 32);
  out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}
)cuda";

/// One backend and buffers for a benchmark.
struct Bench {
  Bench() : backend(EmulationOptions::fromEnvironment(device::headerFiles())) {}
  std::shared_ptr<LoadedKernel> build(const char *entry, const char *source) {
    return backend.load(backend.compile({entry, source}), entry);
  }
  EmulationBackend backend;
};

void BM_EmulatedAxpy(benchmark::State &state) {
  Bench bench;
  auto kernel = bench.build(samples::kAxpyEntry, samples::kAxpySource);
  const int n = 1 << 20;
  DevicePtr x = bench.backend.allocate(n * 4),
            y = bench.backend.allocate(n * 4);
  bench.backend.fillZero(x, n * 4, nullptr);
  bench.backend.fillZero(y, n * 4, nullptr);
  for (auto _ : state) {
    ArgPack args;
    args.push(n).push(1.0f).push(x).push(y);
    bench.backend.launch(*kernel, {{n / 256}, {256}, 0}, args, nullptr);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["threads/s"] = benchmark::Counter(
      double(state.iterations()) * n, benchmark::Counter::kIsRate);
  bench.backend.release(x);
  bench.backend.release(y);
}
BENCHMARK(BM_EmulatedAxpy)->Unit(benchmark::kMillisecond)->UseRealTime();

/// Runs `entry` on `blocks` blocks of `threads`, `rounds` rounds a launch,
/// and reports `operations` a round and block as `counter`/s.
void runRounds(benchmark::State &state, const char *entry, const char *source,
               int blocks, int threads, int rounds, double operations,
               const char *counter) {
  Bench bench;
  auto kernel = bench.build(entry, source);
  DevicePtr out = bench.backend.allocate(blocks * threads * 4);
  for (auto _ : state) {
    ArgPack args;
    args.push(rounds).push(out);
    bench.backend.launch(*kernel, {{unsigned(blocks)}, {unsigned(threads)}, 0},
                         args, nullptr);
  }
  state.counters[counter] = benchmark::Counter(double(state.iterations()) *
                                                   blocks * rounds * operations,
                                               benchmark::Counter::kIsRate);
  bench.backend.release(out);
}

void BM_EmulatedBarriers(benchmark::State &state) {
  runRounds(state, "barriers", kBarrierSource, 16, 256, 64, 2, "barriers/s");
}
BENCHMARK(BM_EmulatedBarriers)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EmulatedShuffles(benchmark::State &state) {
  // Four warps a block; warp_sum is five xor shuffles.
  runRounds(state, "shuffles", kShuffleSource, 16, 128, 32, 4 * 5,
            "warp-shuffles/s");
}
BENCHMARK(BM_EmulatedShuffles)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
