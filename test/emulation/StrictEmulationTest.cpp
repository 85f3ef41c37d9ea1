//===- StrictEmulationTest.cpp - Emulation as strict as the hardware ------===//
//
// One kernel per way the emulator used to be kinder (or harsher) than a GPU:
// each was wrong but passing (or right but failing) before. Every test sets
// check mode itself; the schedule comes from the environment, so the suite
// runs under each schedule ctest gives it.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::Emulator;
using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

template <typename Matcher>
void expectFailure(const std::function<void()> &launch, Matcher matcher) {
  EXPECT_THAT(launch, ThrowsMessage<DeviceError>(matcher));
}

//===----------------------------------------------------------------------===//
// Asynchronous copies through the CUDA pipeline primitives
//===----------------------------------------------------------------------===//

constexpr const char *kPipelineSource = R"cuda(
#include <cuda_pipeline_primitives.h>
extern "C" __global__ void pipeline(const float *in, float *out) {
  __shared__ __align__(16) float stage[64];
  const int t = threadIdx.x;
  // The last 8 bytes of every 16-byte copy are zero-filled.
  __pipeline_memcpy_async(&stage[4 * t], &in[4 * t], 16, 8);
  __pipeline_commit();
  WAIT
  __syncthreads();
  out[t] = stage[(4 * t + 4) % 64] + stage[(4 * t + 6) % 64];
}
)cuda";

std::string withWait(const std::string &wait) {
  std::string source = kPipelineSource;
  source.replace(source.find("WAIT"), 4, wait);
  return source;
}

TEST(StrictEmulation, PipelinePrimitivesDeliverOnlyThroughAWait) {
  Emulator emulator(false);
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i)
    in[i] = float(i);
  DevicePtr dIn = emulator.upload(in);
  for (const char *wait : {"__pipeline_wait_prior(0);", ""}) {
    DevicePtr dOut = emulator.upload(std::vector<float>(16, -1));
    ArgPack args;
    args.push(dIn).push(dOut);
    emulator.run("pipeline", withWait(wait), {1}, {16}, args);
    std::vector<float> out = emulator.download<float>(dOut, 16);
    for (int t = 0; t < 16; ++t) {
      const int next = (4 * t + 4) % 64;
      // The copy's first two floats arrive, the next two are zeros.
      if (*wait)
        EXPECT_EQ(out[t], in[next] + 0.0f) << "thread " << t;
      else // never waited for: garbage (NaN), as on a GPU
        EXPECT_TRUE(std::isnan(out[t])) << "thread " << t;
    }
  }
}

TEST(StrictEmulation, PipelineCopyIntoGlobalMemoryFaults) {
  Emulator emulator(false);
  DevicePtr buffer = emulator.upload(std::vector<float>(8, 0));
  ArgPack args;
  args.push(buffer);
  expectFailure(
      [&] {
        emulator.run("to_global", R"cuda(
#include <cuda_pipeline_primitives.h>
extern "C" __global__ void to_global(float *data) {
  __pipeline_memcpy_async(data + 4, data, 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
}
)cuda",
                     {1}, {1}, args);
      },
      HasSubstr("destination is not shared memory"));
}

TEST(StrictEmulation, TheProgrammingGuidesPipelineHeaderRuns) {
  // <cuda_pipeline.h>, as the Programming Guide's examples include it (and
  // <cuda_runtime.h>): the emulated primitives, never the toolkit's header.
  Emulator emulator(true);
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i)
    in[i] = float(i);
  DevicePtr dIn = emulator.upload(in);
  DevicePtr dOut = emulator.upload(std::vector<float>(16, -1));
  ArgPack args;
  args.push(dIn).push(dOut);
  std::string source = withWait("__pipeline_wait_prior(0);");
  source.replace(source.find("<cuda_pipeline_primitives.h>"),
                 std::string("<cuda_pipeline_primitives.h>").size(),
                 "<cuda_pipeline.h>\n#include <cuda_runtime.h>");
  emulator.run("pipeline", source, {1}, {16}, args);
  std::vector<float> out = emulator.download<float>(dOut, 16);
  for (int t = 0; t < 16; ++t)
    EXPECT_EQ(out[t], in[(4 * t + 4) % 64]) << "thread " << t;
}

TEST(StrictEmulation, AToolkitHeaderTheEmulatorLacksIsRefusedByName) {
  // The toolkit's own headers hold device-only code the host compiler
  // cannot build; wherever it would find them, a kernel including one is
  // refused with the header's name.
  Emulator emulator(false);
  for (const char *header :
       {"cooperative_groups.h", "mma.h", "cuda_awbarrier.h", "cuda/barrier",
        "cuda/pipeline"}) {
    ArgPack args;
    EXPECT_THAT(
        [&] {
          emulator.run("uses",
                       "#include <" + std::string(header) +
                           ">\nextern \"C\" __global__ void uses() {}\n",
                       {1}, {1}, args);
        },
        ThrowsMessage<CompileError>(HasSubstr(
            "the emulator does not provide <" + std::string(header) + ">")))
        << header;
  }
}

//===----------------------------------------------------------------------===//
// Check mode: races on shared memory
//===----------------------------------------------------------------------===//

constexpr const char *kBroadcastSource = R"cuda(
extern "C" __global__ void broadcast(int *out) {
  __shared__ int value;
  if (threadIdx.x == 0)
    value = 42;
  SYNC
  out[threadIdx.x] = value;
}
)cuda";

void runBroadcast(Emulator &emulator, const std::string &sync) {
  std::string source = kBroadcastSource;
  source.replace(source.find("SYNC"), 4, sync);
  DevicePtr out = emulator.upload(std::vector<int>(64, 0));
  ArgPack args;
  args.push(out);
  emulator.run("broadcast", source, {1}, {64}, args);
}

TEST(StrictEmulation, CheckModeReportsARaceOnStaticSharedMemory) {
  Emulator emulator(true);
  // Thread 0 writes, the others read with no barrier: the report names both
  // threads and the place, whichever order the schedule runs them in.
  expectFailure([&] { runBroadcast(emulator, ""); },
                AllOf(HasSubstr("emulated kernel 'broadcast'"),
                      HasSubstr("block (0,0,0)"),
                      ContainsRegex("data race on static shared memory at "
                                    "offset 0x[0-9a-f]+ \\(address"),
                      HasSubstr("thread (0,0,0)"),
                      HasSubstr("with no barrier between")));
  runBroadcast(emulator, "__syncthreads();"); // no race
  Emulator relaxed(false);
  runBroadcast(relaxed, ""); // unchecked: runs (and may read garbage)
}

TEST(StrictEmulation, CheckModeOrdersLanesOfAWarpOnlyBySyncwarp) {
  const std::string source = R"cuda(
extern "C" __global__ void neighbours(int *out) {
  extern __shared__ __align__(16) int row[];
  const int lane = threadIdx.x;
  row[lane] = lane * 3;
  SYNC
  out[lane] = __shfl_sync(0xffffffffu, 0, 0) + row[(lane + 1) % 32];
}
)cuda";
  Emulator emulator(true);
  auto run = [&](const std::string &sync) {
    std::string text = source;
    text.replace(text.find("SYNC"), 4, sync);
    DevicePtr out = emulator.upload(std::vector<int>(32, 0));
    ArgPack args;
    args.push(out);
    emulator.run("neighbours", text, {1}, {32}, args, 32 * sizeof(int));
    return emulator.download<int>(out, 32);
  };
  // A shuffle exchanges registers only: it orders no memory.
  expectFailure([&] { run(""); },
                HasSubstr("data race on dynamic shared memory"));
  std::vector<int> out = run("__syncwarp();");
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(out[lane], (lane + 1) % 32 * 3);
}

TEST(StrictEmulation, ExternSharedDeclarationsAnywhereNameDynamicShared) {
  // File scope and function scope, aligned or not: each name is the
  // launch's dynamic shared memory, as in CUDA.
  Emulator emulator(true);
  DevicePtr out = emulator.upload(std::vector<int>(64, 0));
  ArgPack args;
  args.push(out);
  emulator.run("two_views", R"cuda(
extern __shared__ __align__(16) unsigned char raw[];
extern "C" __global__ void two_views(int *out) {
  extern __shared__ int words[];
  words[threadIdx.x] = 1000 + threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = reinterpret_cast<int *>(raw)[63 - threadIdx.x];
}
)cuda",
               {1}, {64}, args, 64 * sizeof(int));
  std::vector<int> got = emulator.download<int>(out, 64);
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(got[t], 1000 + 63 - t);
}

TEST(StrictEmulation, CheckModeAllowsAtomicsAndSeparateWordsOfOneWarp) {
  Emulator emulator(true);
  DevicePtr out = emulator.upload(std::vector<int>(2, 0));
  ArgPack args;
  args.push(out);
  emulator.run("histogram", R"cuda(
extern "C" __global__ void histogram(int *out) {
  __shared__ int bins[2];
  __shared__ unsigned short halves[128];
  if (threadIdx.x < 2)
    bins[threadIdx.x] = 0;
  halves[threadIdx.x] = threadIdx.x; // neighbours write adjacent bytes
  __syncthreads();
  atomicAdd(&bins[threadIdx.x % 2], halves[threadIdx.x] % 3);
  __syncthreads();
  if (threadIdx.x < 2)
    out[threadIdx.x] = bins[threadIdx.x];
}
)cuda",
               {1}, {128}, args);
  int even = 0, odd = 0;
  for (int t = 0; t < 128; ++t)
    (t % 2 ? odd : even) += t % 3;
  EXPECT_EQ(emulator.download<int>(out, 2), (std::vector<int>{even, odd}));
}

//===----------------------------------------------------------------------===//
// Collectives matched by operation and call site
//===----------------------------------------------------------------------===//

TEST(StrictEmulation, DifferentShufflesNeverMeet) {
  Emulator emulator(false);
  DevicePtr out = emulator.upload(std::vector<int>(32, 0));
  ArgPack args;
  args.push(out);
  expectFailure(
      [&] {
        emulator.run("mixed", R"cuda(
extern "C" __global__ void mixed(int *out) {
  const int lane = threadIdx.x;
  if (lane < 16)
    out[lane] = __shfl_sync(0xffffffffu, lane, 0);
  else
    out[lane] = __shfl_down_sync(0xffffffffu, lane, 1);
}
)cuda",
                     {1}, {32}, args);
      },
      AllOf(HasSubstr("meet at different warp operations"),
            HasSubstr("lanes 0x0000ffff at __shfl_sync (mixed.cpp:5)"),
            HasSubstr("lanes 0xffff0000 at __shfl_down_sync (mixed.cpp:7)")));
}

TEST(StrictEmulation, CheckModeMatchesCollectivesByCallSite) {
  const std::string shuffles = R"cuda(
extern "C" __global__ void branchy(int *out) {
  const int lane = threadIdx.x;
  int value = lane;
  if (lane < 16)
    value = __shfl_sync(0xffffffffu, value, 0);
  value += __shfl_sync(0xffffffffu, value, 1);
  out[lane] = value;
}
)cuda";
  const std::string barriers = R"cuda(
extern "C" __global__ void split_barrier(int *out) {
  if (threadIdx.x < 32)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}
)cuda";
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr out = emulator.upload(std::vector<int>(64, 0));
    ArgPack args;
    args.push(out);
    auto runShuffles = [&] {
      emulator.run("branchy", shuffles, {1}, {32}, args);
    };
    auto runBarriers = [&] {
      emulator.run("split_barrier", barriers, {1}, {64}, args);
    };
    if (!check) { // matched by kind only
      runShuffles();
      runBarriers();
      continue;
    }
    expectFailure(runShuffles,
                  AllOf(HasSubstr("lanes 0x0000ffff at __shfl_sync "
                                  "(branchy.cpp:6)"),
                        HasSubstr("lanes 0xffff0000 at __shfl_sync "
                                  "(branchy.cpp:7)")));
    expectFailure(runBarriers,
                  AllOf(HasSubstr("threads meet at different barriers"),
                        HasSubstr("32 threads (first thread (0,0,0)) at "
                                  "__syncthreads (split_barrier.cpp:4)"),
                        HasSubstr("32 threads (first thread (32,0,0)) at "
                                  "__syncthreads (split_barrier.cpp:6)")));
  }
}

TEST(StrictEmulation, MmaAndLdmatrixNeedTheWholeWarp) {
  Emulator emulator(false);
  DevicePtr out = emulator.upload(std::vector<float>(128, 0));
  ArgPack args;
  args.push(out);
  expectFailure(
      [&] {
        emulator.run("short_mma", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void short_mma(float *out) {
  if (threadIdx.x == 31)
    return; // one lane missing
  const unsigned a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  const float c[4] = {0, 0, 0, 0};
  float d[4];
  rudnn::arch::mma_m16n8k16_bf16(d, a, b, c);
  out[threadIdx.x] = d[0];
}
)cuda",
                     {1}, {32}, args);
      },
      HasSubstr("mma.sync needs all 32 lanes of the warp; lanes 0x7fffffff"));
  expectFailure(
      [&] {
        emulator.run("global_ldmatrix", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void global_ldmatrix(float *out) {
  unsigned r[1];
  rudnn::arch::ldmatrix_x1(r, out + 4 * (threadIdx.x % 8));
  out[threadIdx.x] = r[0];
}
)cuda",
                     {1}, {32}, args);
      },
      HasSubstr("ldmatrix: row address is not shared memory"));
}

//===----------------------------------------------------------------------===//
// __activemask, static shared memory, spin-waits
//===----------------------------------------------------------------------===//

TEST(StrictEmulation, WarpAggregatedAtomicWithActivemaskCountsRight) {
  // The CUDA Programming Guide's pattern, inside a divergent branch: the
  // leader of the lanes __activemask names adds for all of them.
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr counter = emulator.upload(std::vector<int>(1, 0));
    ArgPack args;
    args.push(counter);
    emulator.run("aggregate", R"cuda(
extern "C" __global__ void aggregate(int *counter) {
  const int lane = threadIdx.x % 32;
  if (lane < 16 || lane % 3 == 0) {
    const unsigned active = __activemask();
    const int leader = __ffs(active) - 1;
    if (lane == leader)
      atomicAdd(counter, __popc(active));
  }
}
)cuda",
                 {2}, {64}, args);
    int expected = 0;
    for (int lane = 0; lane < 32; ++lane)
      expected += lane < 16 || lane % 3 == 0;
    EXPECT_EQ(emulator.download<int>(counter, 1)[0], 4 * expected);
  }
}

TEST(StrictEmulation, StaticSharedMemoryStartsAsGarbageInEveryBlock) {
  Emulator emulator(false);
  DevicePtr out = emulator.upload(std::vector<int>(4, 0));
  ArgPack args;
  args.push(out);
  // A histogram that never clears its bins counts from garbage.
  emulator.run("uncleared", R"cuda(
extern "C" __global__ void uncleared(int *out) {
  __shared__ int bins[1];
  __syncthreads();
  atomicAdd(&bins[0], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[blockIdx.x] = bins[0];
    bins[0] = 0; // what the next block on this OS thread must not see
  }
}
)cuda",
               {4}, {32}, args);
  EXPECT_EQ(emulator.download<int>(out, 4), (std::vector<int>(4, 31)));
}

TEST(StrictEmulation, SpinWaitOnAFlagAnotherThreadSetsFinishes) {
  // Under independent thread scheduling the waiting threads cannot starve
  // the one that sets the flag; atomics (and, in check mode, volatile
  // reads) let the others run.
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr out = emulator.upload(std::vector<int>(64, 0));
    ArgPack args;
    args.push(out);
    std::string poll = check ? "while (!*(volatile int *)&flag) {}"
                             : "while (atomicAdd(&flag, 0) == 0) {}";
    std::string source = R"cuda(
extern "C" __global__ void waiter(int *out) {
  __shared__ int flag;
  if (threadIdx.x == 0)
    atomicExch(&flag, 0);
  __syncthreads();
  if (threadIdx.x == 63) {
    atomicExch(&flag, 7);
  } else {
    POLL
  }
  out[threadIdx.x] = atomicAdd(&flag, 0);
}
)cuda";
    source.replace(source.find("POLL"), 4, poll);
    emulator.run("waiter", source, {1}, {64}, args);
    EXPECT_EQ(emulator.download<int>(out, 64), std::vector<int>(64, 7));
  }
}

TEST(StrictEmulation, SpinWaitThatCanNeverFinishIsReportedNotHung) {
  Emulator emulator(false);
  DevicePtr flag = emulator.upload(std::vector<int>(1, 0));
  ArgPack args;
  args.push(flag);
  expectFailure(
      [&] {
        emulator.run("forever", R"cuda(
extern "C" __global__ void forever(int *flag) {
  while (atomicAdd(flag, 0) == 0) {}
}
)cuda",
                     {1}, {32}, args);
      },
      AllOf(HasSubstr("emulated kernel 'forever'"), HasSubstr("watchdog"),
            HasSubstr("a spin-wait that can never finish")));
}

TEST(StrictEmulationDeathTest, RunawayThreadIsReportedByTheWatchdog) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Outside check mode a volatile read is no poll: the waiting thread never
  // lets the one that would set the flag run. The watchdog ends the process
  // with a report instead of hanging.
  auto spin = [] {
    EmulationOptions options =
        EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.check = false;
    options.sanitize = false;
    options.watchdogSeconds = 1;
    options.schedule = Schedule::parse("forward");
    EmulationBackend backend(options);
    auto kernel = backend.load(backend.compile({"volatile_spin", R"cuda(
extern "C" __global__ void volatile_spin(volatile int *flag) {
  if (threadIdx.x == 0)
    while (*flag == 0) {}
  else
    *flag = 1;
}
)cuda"}),
                               "volatile_spin");
    DevicePtr flag = backend.allocate(4);
    backend.fillZero(flag, 4, nullptr);
    ArgPack args;
    args.push(flag);
    backend.launch(*kernel, {{1}, {2}, 0}, args, nullptr);
  };
  EXPECT_DEATH(spin(), "emulated kernel 'volatile_spin', block \\(0,0,0\\), "
                       "thread \\(0,0,0\\) has run 1 s without reaching a "
                       "barrier, warp operation or poll");
}

TEST(StrictEmulation, CheckModeSwitchesThreadsAtSharedAccesses) {
  // Each thread writes its own shared slot and appends its index to a log
  // 20 times, with no barrier, warp operation or poll: only a switch at a
  // shared-memory access interleaves the threads.
  const std::string source = R"cuda(
extern "C" __global__ void interleave(int *log) {
  __shared__ int slot[8];
  for (int i = 0; i < 20; ++i) {
    ((volatile int *)slot)[threadIdx.x] = i; // kept in the loop
    int at = log[160];
    log[at] = threadIdx.x;
    log[160] = at + 1;
  }
}
)cuda";
  auto switches = [&](bool check, const char *schedule) {
    Emulator emulator(check, schedule);
    DevicePtr log = emulator.upload(std::vector<int>(161, 0));
    ArgPack args;
    args.push(log);
    emulator.run("interleave", source, {1}, {8}, args);
    std::vector<int> got = emulator.download<int>(log, 161);
    EXPECT_EQ(got[160], 160);
    int changes = 0;
    for (int i = 1; i < 160; ++i)
      changes += got[i] != got[i - 1];
    return changes;
  };
  EXPECT_EQ(switches(false, "random:4"), 7); // one thread after another
  EXPECT_EQ(switches(true, "reverse"), 7);
  EXPECT_GT(switches(true, "random:4"), 10); // interleaved
}

//===----------------------------------------------------------------------===//
// Arithmetic as the GPU does it
//===----------------------------------------------------------------------===//

TEST(StrictEmulation, MultiplyAddIsContractedAsNvrtcDoes) {
  if (!__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU has no FMA instruction";
  Emulator emulator(false);
  // mean * mean is inexact: fused, m2 - mean * mean is its rounding error,
  // not 0, and the variance of a constant row comes out negative.
  const float mean = 1.1f, m2 = mean * mean;
  DevicePtr out = emulator.upload(std::vector<float>(1, 0));
  ArgPack args;
  args.push(mean).push(m2).push(out);
  emulator.run("variance", R"cuda(
extern "C" __global__ void variance(float mean, float m2, float *out) {
  out[0] = m2 - mean * mean;
}
)cuda",
               {1}, {1}, args);
  const float fused = std::fma(-mean, mean, m2);
  ASSERT_NE(fused, 0.0f);
  EXPECT_EQ(emulator.download<float>(out, 1)[0], fused);
}

TEST(StrictEmulation, CheckModeMovesApproximationsWithinTheirBounds) {
  const int n = 256;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = -4.0f + 8.0f * i / n;
  std::vector<std::vector<float>> results;
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr dx = emulator.upload(x);
    DevicePtr out = emulator.upload(std::vector<float>(3 * n, 0));
    ArgPack args;
    args.push(dx).push(out);
    emulator.run("approximations", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void approximations(const float *x, float *out) {
  const int i = threadIdx.x;
  out[3 * i] = __expf(x[i]);
  out[3 * i + 1] = rudnn::arch::ex2_approx(x[i]);
  out[3 * i + 2] = __fdividef(1.0f, x[i] + 5.0f);
}
)cuda",
                 {1}, {n}, args);
    results.push_back(emulator.download<float>(out, 3 * n));
  }
  int moved = 0;
  for (int i = 0; i < n; ++i) {
    const float exact[3] = {std::exp(x[i]), std::exp2(x[i]),
                            1.0f / (x[i] + 5.0f)};
    const float ulps[3] = {2.0f + std::floor(std::fabs(1.173f * x[i])), 2, 2};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(results[0][3 * i + k], exact[k]) << "exact outside check";
      const float ulp = std::nextafter(exact[k], INFINITY) - exact[k];
      EXPECT_LE(std::fabs(results[1][3 * i + k] - exact[k]),
                ulps[k] * ulp * 1.0001f)
          << "function " << k << " at " << x[i];
      moved += results[1][3 * i + k] != exact[k];
    }
  }
  EXPECT_GT(moved, n); // most results move, each within its bound
}

TEST(StrictEmulation, CheckModeTruncatesTensorCoreSums) {
  // c = 1 plus sixteen products of 2^-25: rounded once the sum is
  // 1 + 2^-21; aligned to the largest addend of each group of eight and
  // truncated, as tensor cores do, the small products vanish.
  const std::string source = R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void small_products(float *out) {
  const __half a = __float2half(0x1p-12f), b = __float2half(0x1p-13f);
  const unsigned pairA = rudnn::arch::bits_of(__halves2half2(a, a));
  const unsigned pairB = rudnn::arch::bits_of(__halves2half2(b, b));
  const unsigned A[4] = {pairA, pairA, pairA, pairA}, B[2] = {pairB, pairB};
  const float c[4] = {1, 1, 1, 1};
  float d[4];
  rudnn::arch::mma_m16n8k16_f16(d, A, B, c);
  out[threadIdx.x] = d[0];
}
)cuda";
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr out = emulator.upload(std::vector<float>(32, 0));
    ArgPack args;
    args.push(out);
    emulator.run("small_products", source, {1}, {32}, args);
    EXPECT_EQ(emulator.download<float>(out, 32),
              std::vector<float>(32, check ? 1.0f : 1.0f + 0x1p-21f))
        << (check ? "check mode" : "default");
  }
}

TEST(StrictEmulation, FloatAtomicsFlushAndFollowTheBlockOrder) {
  // One value per block: 2^24, 1, -2^24 sum to 0 in launch order and to 1
  // in reverse; a subnormal is flushed to zero by atom.add.f32.
  std::set<uint32_t> sums;
  for (const char *schedule : {"forward", "reverse", "random:1", "random:2"}) {
    Emulator emulator(false, schedule, /*threads=*/1);
    DevicePtr values =
        emulator.upload(std::vector<float>{0x1p24f, 1.0f, -0x1p24f, 0x1p-140f});
    DevicePtr sum = emulator.upload(std::vector<float>(2, 0));
    ArgPack args;
    args.push(values).push(sum);
    emulator.run("ordered_sum", R"cuda(
extern "C" __global__ void ordered_sum(const float *values, float *sum) {
  if (blockIdx.x < 3)
    atomicAdd(&sum[0], values[blockIdx.x]);
  else
    atomicAdd(&sum[1], values[3]);
}
)cuda",
                 {4}, {1}, args);
    std::vector<float> got = emulator.download<float>(sum, 2);
    uint32_t bits;
    std::memcpy(&bits, &got[0], 4);
    sums.insert(bits);
    EXPECT_EQ(got[1], 0.0f) << schedule;
    if (std::string(schedule) == "forward") {
      EXPECT_EQ(got[0], 0.0f);
    } else if (std::string(schedule) == "reverse") {
      EXPECT_EQ(got[0], 1.0f);
    }
  }
  EXPECT_GE(sums.size(), 2u);
}

TEST(StrictEmulation, NanToIntegerFollowsThePtxIsa) {
  Emulator emulator(false);
  DevicePtr out = emulator.upload(std::vector<long long>(6, 7));
  ArgPack args;
  args.push(std::numeric_limits<float>::quiet_NaN()).push(out);
  emulator.run("nan_to_int", R"cuda(
extern "C" __global__ void nan_to_int(float nan, long long *out) {
  out[0] = __float2int_rn(nan);
  out[1] = __float2uint_rz(nan);
  out[2] = __float2ll_rn(nan);
  out[3] = (long long)__float2ull_rz(nan);
  out[4] = __double2int_rn((double)nan);
  out[5] = __double2uint_rz((double)nan);
}
)cuda",
               {1}, {1}, args);
  EXPECT_EQ(
      emulator.download<long long>(out, 6),
      (std::vector<long long>{0, 0, std::numeric_limits<long long>::min(),
                              std::numeric_limits<long long>::min(),
                              std::numeric_limits<int>::min(), 0x80000000ll}));
}

} // namespace
