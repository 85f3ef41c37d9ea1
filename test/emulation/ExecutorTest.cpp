//===- ExecutorTest.cpp - Grids, blocks, barriers and failures on the CPU -===//

#include "test/emulation/EmulationTestSupport.h"
#include "test/support/SampleKernels.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cmath>
#include <dlfcn.h>
#include <numeric>
#include <random>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::HasSubstr;

namespace {

using ExecutorTest = rudnn::test::EmulationTest;

TEST_F(ExecutorTest, AxpyMatchesHostLoopOnAnOddSize) {
  const int n = 100003;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> x(n), y(n), expected(n);
  for (int i = 0; i < n; ++i) {
    x[i] = uniform(random);
    y[i] = uniform(random);
    // NVRTC contracts a * x + y into one FMA, and so does the emulator
    // where the CPU has FMA.
    expected[i] = __builtin_cpu_supports("fma") ? std::fma(2.5f, x[i], y[i])
                                                : 2.5f * x[i] + y[i];
  }
  auto kernel = build(samples::kAxpyEntry, samples::kAxpySource);
  DevicePtr dx = upload(x), dy = upload(y);
  ArgPack args;
  args.push(n).push(2.5f).push(dx).push(dy);
  launch(*kernel, {(n + 255) / 256}, {256}, args);
  EXPECT_EQ(download<float>(dy, n), expected);
}

TEST_F(ExecutorTest, IndicesInThreeDimensions) {
  auto kernel = build("indices", R"cuda(
extern "C" __global__ void indices(unsigned *out) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned size = blockDim.x * blockDim.y * blockDim.z;
  unsigned *slot = out + 4 * (block * size + thread);
  slot[0] = threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16;
  slot[1] = blockIdx.x | blockIdx.y << 8 | blockIdx.z << 16;
  slot[2] = blockDim.x | blockDim.y << 8 | blockDim.z << 16;
  slot[3] = gridDim.x | gridDim.y << 8 | gridDim.z << 16;
}
)cuda");
  const Dim3 grid{3, 2, 2}, block{5, 3, 2};
  const unsigned threads = 30, blocks = 12;
  DevicePtr out = upload(std::vector<unsigned>(4 * threads * blocks, ~0u));
  ArgPack args;
  args.push(out);
  launch(*kernel, grid, block, args);
  std::vector<unsigned> got = download<unsigned>(out, 4 * threads * blocks);
  for (unsigned bz = 0, b = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx, ++b)
        for (unsigned tz = 0, t = 0; tz < 2; ++tz)
          for (unsigned ty = 0; ty < 3; ++ty)
            for (unsigned tx = 0; tx < 5; ++tx, ++t) {
              const unsigned *slot = &got[4 * (b * threads + t)];
              EXPECT_EQ(slot[0], tx | ty << 8 | tz << 16);
              EXPECT_EQ(slot[1], bx | by << 8 | bz << 16);
              EXPECT_EQ(slot[2], 5u | 3u << 8 | 2u << 16);
              EXPECT_EQ(slot[3], 3u | 2u << 8 | 2u << 16);
            }
}

/// Each round, every thread writes its slot and then reads a slot another
/// warp wrote: right only if the barrier orders the two.
constexpr const char *kRotateSource = R"cuda(
extern "C" __global__ void rotate(int rounds, int *out) {
  __shared__ int slots[256];
  int t = threadIdx.x, value = t;
  for (int round = 0; round < rounds; ++round) {
    slots[t] = value * 3 + 1;
    __syncthreads();
    value = slots[(t + 97) % 256];
    __syncthreads();
  }
  out[blockIdx.x * 256 + t] = value;
}
)cuda";

TEST_F(ExecutorTest, BarrierOrdersWritesAcrossWarps) {
  auto kernel = build("rotate", kRotateSource);
  const int rounds = 5, blocks = 6;
  DevicePtr out = upload(std::vector<int>(256 * blocks, -1));
  ArgPack args;
  args.push(rounds).push(out);
  launch(*kernel, {blocks}, {256}, args);
  std::vector<int> expected(256);
  std::iota(expected.begin(), expected.end(), 0);
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> next(256);
    for (int t = 0; t < 256; ++t)
      next[t] = expected[(t + 97) % 256] * 3 + 1;
    expected.swap(next);
  }
  std::vector<int> got = download<int>(out, 256 * blocks);
  for (int b = 0; b < blocks; ++b)
    EXPECT_EQ(
        std::vector<int>(got.begin() + 256 * b, got.begin() + 256 * (b + 1)),
        expected)
        << "block " << b;
}

TEST_F(ExecutorTest, BarrierCountAndOr) {
  auto kernel = build("votes", R"cuda(
extern "C" __global__ void votes(int *out) {
  int t = threadIdx.x;
  int count = __syncthreads_count(t % 3 == 0);
  int all = __syncthreads_and(t < 1000);
  int none = __syncthreads_and(t != 77);
  int any = __syncthreads_or(t == 150);
  int nobody = __syncthreads_or(t > 1000);
  if (t == 5) {
    out[0] = count; out[1] = all; out[2] = none; out[3] = any; out[4] = nobody;
  }
}
)cuda");
  DevicePtr out = upload(std::vector<int>(5, -1));
  ArgPack args;
  args.push(out);
  launch(*kernel, {1}, {160}, args);
  EXPECT_EQ(download<int>(out, 5), (std::vector<int>{54, 1, 0, 1, 0}));
}

TEST_F(ExecutorTest, SharedMemoryIsPrivateToEachConcurrentBlock) {
  // Static and dynamic shared memory, many blocks on 4 OS threads: a block
  // that saw another's writes would report the wrong block id.
  auto kernel = build("private_shared", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void private_shared(int *out) {
  __shared__ int fixed[128];
  RUDNN_DYNAMIC_SHARED(int, dynamic);
  int t = threadIdx.x;
  for (int round = 0; round < 20; ++round) {
    fixed[t] = blockIdx.x * 1000 + t + round;
    dynamic[t] = blockIdx.x * 1000 + t - round;
    __syncthreads();
    int a = fixed[(t + 1) % 128] - ((t + 1) % 128) - round;
    int b = dynamic[(t + 5) % 128] - ((t + 5) % 128) + round;
    if (a != (int)blockIdx.x * 1000 || b != (int)blockIdx.x * 1000)
      out[blockIdx.x] += 1;
    __syncthreads();
  }
}
)cuda");
  const int blocks = 64;
  DevicePtr out = upload(std::vector<int>(blocks, 0));
  ArgPack args;
  args.push(out);
  launch(*kernel, {blocks}, {128}, args, 128 * sizeof(int));
  EXPECT_EQ(download<int>(out, blocks), std::vector<int>(blocks, 0));
}

// A race the default order hides: thread 0 writes what every thread reads
// without a barrier between. Forward, thread 0 always runs first; reversed
// or shuffled, the readers run before it. With the barrier, every order
// gives the same.
TEST_F(ExecutorTest, SchedulesExposeARaceTheDefaultOrderHides) {
  const std::string racy = R"cuda(
extern "C" __global__ void racy(int *out) {
  __shared__ int value;
  if (threadIdx.x == 0)
    value = 42 + blockIdx.x;
  SYNC
  out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}
)cuda";
  auto withSync = [&](bool sync) {
    std::string source = racy;
    source.replace(source.find("SYNC"), 4, sync ? "__syncthreads();" : "");
    return source;
  };
  auto run = [&](const std::string &schedule, bool sync) {
    runtime::EmulationOptions options =
        runtime::EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.threads = 2;
    options.schedule = runtime::Schedule::parse(schedule);
    options.check = false; // which would report the race instead
    runtime::EmulationBackend backend(options);
    auto kernel =
        backend.load(backend.compile({"racy", withSync(sync)}), "racy");
    const int blocks = 3, threads = 64;
    DevicePtr out = backend.allocate(blocks * threads * sizeof(int));
    ArgPack args;
    args.push(out);
    backend.launch(*kernel, {{blocks}, {threads}, 0}, args, nullptr);
    std::vector<int> values(blocks * threads);
    backend.copyToHost(values.data(), out, values.size() * sizeof(int),
                       nullptr);
    backend.release(out);
    int wrong = 0;
    for (int i = 0; i < blocks * threads; ++i)
      wrong += values[i] != 42 + i / threads;
    return wrong;
  };
  EXPECT_EQ(run("forward", false), 0); // hidden
  EXPECT_GT(run("reverse", false), 0);
  EXPECT_GT(run("random:7", false), 0);
  for (const char *schedule : {"forward", "reverse", "random:7"})
    EXPECT_EQ(run(schedule, true), 0) << schedule;
}

// Fresh device memory is garbage, as cudaMalloc's may be, never zeros a
// kernel could come to rely on: reading workspace it never wrote gives NaN.
TEST_F(ExecutorTest, FreshMemoryIsGarbage) {
  auto kernel = build("read_fresh", R"cuda(
extern "C" __global__ void read_fresh(const float *fresh, float *out) {
  out[threadIdx.x] = fresh[threadIdx.x] + 1.0f;
}
)cuda");
  DevicePtr fresh = backend->allocate(32 * sizeof(float));
  allocations.push_back(fresh);
  DevicePtr out = upload(std::vector<float>(32, 0.f));
  ArgPack args;
  args.push(fresh).push(out);
  launch(*kernel, {1}, {32}, args);
  for (float value : download<float>(out, 32))
    EXPECT_TRUE(std::isnan(value)) << value;
}

TEST(Schedule, ParsesItsThreeOrders) {
  EXPECT_EQ(runtime::Schedule::parse("forward").name(), "forward");
  EXPECT_EQ(runtime::Schedule::parse("reverse").name(), "reverse");
  EXPECT_EQ(runtime::Schedule::parse("random:123").name(), "random:123");
  for (const char *bad : {"backward", "random:", "random:x", "random:-1"})
    EXPECT_THAT([&] { runtime::Schedule::parse(bad); },
                ::testing::ThrowsMessage<InvalidArgument>(
                    HasSubstr("forward, reverse or random:SEED")));
}

// As on the GPU, threads that have exited take no part in a barrier: the
// others pass it.
TEST_F(ExecutorTest, ABarrierWaitsOnlyForThreadsThatHaveNotExited) {
  auto kernel = build("early_exit", R"cuda(
extern "C" __global__ void early_exit(int *out) {
  if (threadIdx.x >= 16)
    return;
  __syncthreads();
  out[blockIdx.x * 16 + threadIdx.x] = 1;
}
)cuda");
  DevicePtr out = upload(std::vector<int>(4 * 16, 0));
  ArgPack args;
  args.push(out);
  launch(*kernel, {4}, {64}, args);
  EXPECT_EQ(download<int>(out, 4 * 16), std::vector<int>(4 * 16, 1));
}

TEST_F(ExecutorTest, BarrierNotAllThreadsReachIsADeadlockNamingTheBlock) {
  // In block 2, lanes 0-15 wait at the barrier while lanes 16-31 of their
  // warp wait for them at a shuffle: neither can complete.
  auto kernel = build("half_barrier", R"cuda(
extern "C" __global__ void half_barrier(int *out) {
  if (blockIdx.x == 2 && threadIdx.x < 16)
    __syncthreads();
  else if (blockIdx.x == 2)
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
)cuda");
  DevicePtr out = upload(std::vector<int>(4 * 64, 0));
  ArgPack args;
  args.push(out);
  try {
    launch(*kernel, {4}, {64}, args);
    FAIL() << "a half-reached barrier completed";
  } catch (const DeviceError &error) {
    EXPECT_THAT(error.what(), HasSubstr("'half_barrier'"));
    EXPECT_THAT(error.what(), HasSubstr("block (2,0,0)"));
    EXPECT_THAT(error.what(), HasSubstr("deadlock"));
    EXPECT_THAT(error.what(),
                HasSubstr("16 of 64 threads wait at __syncthreads, 16 at a "
                          "warp operation"));
  }
}

/// Each round every block publishes a value, meets the others at the grid
/// barrier and reads its neighbour's: right only if the barrier orders
/// the writes of one round before the reads of the next.
constexpr const char *kGridRoundsSource = R"cuda(
#include "rudnn/arch/grid.cuh"
extern "C" __global__ void grid_rounds(int *slots, int *sums, unsigned *word,
                                       int rounds) {
  const int blocks = gridDim.x, b = blockIdx.x;
  int sum = 0;
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0)
      slots[(r & 1) * blocks + b] = r * 1000 + b;
    rudnn::arch::grid_sync(word);
    sum += slots[(r & 1) * blocks + (b + 1) % blocks];
  }
  if (threadIdx.x == 0)
    sums[b] = sum;
}
)cuda";

TEST_F(ExecutorTest, CooperativeGridMeetsAtGridBarriers) {
  auto kernel = build("grid_rounds", kGridRoundsSource);
  const int blocks = 24, rounds = 9;
  DevicePtr slots = upload(std::vector<int>(2 * blocks, -1));
  DevicePtr sums = upload(std::vector<int>(blocks, -1));
  DevicePtr word = upload(std::vector<unsigned>(1, 0));
  ArgPack args;
  args.push(slots).push(sums).push(word).push(rounds);
  launch(*kernel, {blocks}, {64}, args, 0, /*cooperative=*/true);
  std::vector<int> got = download<int>(sums, blocks);
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int r = 0; r < rounds; ++r)
      want += r * 1000 + (b + 1) % blocks;
    EXPECT_EQ(got[b], want) << "block " << b;
  }
}

TEST_F(ExecutorTest, GridBarrierOutsideACooperativeLaunchFails) {
  auto kernel = build("grid_rounds", kGridRoundsSource);
  DevicePtr slots = upload(std::vector<int>(4, -1));
  DevicePtr sums = upload(std::vector<int>(2, -1));
  DevicePtr word = upload(std::vector<unsigned>(1, 0));
  ArgPack args;
  args.push(slots).push(sums).push(word).push(1);
  EXPECT_THAT([&] { launch(*kernel, {2}, {32}, args); },
              ::testing::ThrowsMessage<DeviceError>(
                  HasSubstr("a grid barrier in a launch that is not "
                            "cooperative")));
}

TEST_F(ExecutorTest, ABlockFailingReleasesTheOthersFromTheGridBarrier) {
  auto kernel = build("grid_trap", R"cuda(
#include "rudnn/arch/grid.cuh"
extern "C" __global__ void grid_trap(unsigned *word) {
  if (blockIdx.x == 3)
    __trap();
  rudnn::arch::grid_sync(word);
}
)cuda");
  DevicePtr word = upload(std::vector<unsigned>(1, 0));
  ArgPack args;
  args.push(word);
  EXPECT_THAT(
      [&] { launch(*kernel, {8}, {32}, args, 0, true); },
      ::testing::ThrowsMessage<DeviceError>(HasSubstr("block (3,0,0)")));
}

TEST_F(ExecutorTest, BlocksEndingBeforeAGridBarrierAreADeadlockNotAHang) {
  // Block 0 returns at once; the others would wait for it for ever on a
  // GPU.
  auto kernel = build("grid_desert", R"cuda(
#include "rudnn/arch/grid.cuh"
extern "C" __global__ void grid_desert(unsigned *word) {
  if (blockIdx.x == 0)
    return;
  rudnn::arch::grid_sync(word);
}
)cuda");
  DevicePtr word = upload(std::vector<unsigned>(1, 0));
  ArgPack args;
  args.push(word);
  EXPECT_THAT([&] { launch(*kernel, {5}, {32}, args, 0, true); },
              ::testing::ThrowsMessage<DeviceError>(HasSubstr(
                  "waits at a grid barrier that other blocks ended without "
                  "reaching")));
}

TEST_F(ExecutorTest, ALargeCooperativeGridRunsAtOnce) {
  // 130 blocks of 256 threads resident together: 33280 fiber stacks, more
  // than the default limit on mappings allows with a guard page each.
  auto kernel = build("grid_rounds", kGridRoundsSource);
  const int blocks = 130, rounds = 2;
  DevicePtr slots = upload(std::vector<int>(2 * blocks, -1));
  DevicePtr sums = upload(std::vector<int>(blocks, -1));
  DevicePtr word = upload(std::vector<unsigned>(1, 0));
  ArgPack args;
  args.push(slots).push(sums).push(word).push(rounds);
  launch(*kernel, {blocks}, {256}, args, 0, /*cooperative=*/true);
  std::vector<int> got = download<int>(sums, blocks);
  for (int b = 0; b < blocks; ++b)
    EXPECT_EQ(got[b], 1000 + 2 * ((b + 1) % blocks)) << "block " << b;
}

TEST_F(ExecutorTest, WarpOperationMissingALaneIsADeadlock) {
  // Half the warp shuffles, the other half waits at the block barrier.
  auto kernel = build("split_warp", R"cuda(
extern "C" __global__ void split_warp(int *out) {
  if (threadIdx.x < 16)
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
  else
    __syncthreads();
}
)cuda");
  DevicePtr out = upload(std::vector<int>(32, 0));
  ArgPack args;
  args.push(out);
  EXPECT_THAT([&] { launch(*kernel, {1}, {32}, args); },
              ::testing::ThrowsMessage<DeviceError>(::testing::AllOf(
                  HasSubstr("16 of 32 threads wait at __syncthreads"),
                  HasSubstr("16 at a warp operation"))));
}

TEST_F(ExecutorTest, ExitedAndMissingLanesTakeNoPartInWarpOperations) {
  // Lane 7 exits before the full-mask shuffle, and the block's last warp has
  // only 8 lanes: as on the GPU, the others complete it without them.
  auto kernel = build("early_exit", R"cuda(
extern "C" __global__ void early_exit(int *out) {
  if (threadIdx.x % 32 == 7)
    return;
  out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x + 100, 3);
}
)cuda");
  DevicePtr out = upload(std::vector<int>(40, -1));
  ArgPack args;
  args.push(out);
  launch(*kernel, {1}, {40}, args);
  std::vector<int> expected(40);
  for (int t = 0; t < 40; ++t)
    expected[t] = t % 32 == 7 ? -1 : (t / 32) * 32 + 3 + 100;
  EXPECT_EQ(download<int>(out, 40), expected);
}

TEST_F(ExecutorTest, TrapNamesKernelBlockAndThread) {
  auto kernel = build("trapper", R"cuda(
extern "C" __global__ void trapper(int *out) {
  if (blockIdx.x == 3 && threadIdx.x == 9)
    __trap();
  __syncthreads();
  out[0] = 1;
}
)cuda");
  DevicePtr out = upload(std::vector<int>(1, 0));
  ArgPack args;
  args.push(out);
  EXPECT_THAT([&] { launch(*kernel, {5}, {32}, args); },
              ::testing::ThrowsMessage<DeviceError>(::testing::AllOf(
                  HasSubstr("'trapper'"), HasSubstr("block (3,0,0)"),
                  HasSubstr("thread (9,0,0)"))));
  // The backend stays usable after a failed launch.
  auto axpy = build(samples::kAxpyEntry, samples::kAxpySource);
  DevicePtr x = upload(std::vector<float>{1, 2}),
            y = upload(std::vector<float>{3, 4});
  ArgPack more;
  more.push(2).push(2.0f).push(x).push(y);
  launch(*axpy, {1}, {32}, more);
  EXPECT_EQ(download<float>(y, 2), (std::vector<float>{5, 8}));
}

TEST_F(ExecutorTest, AfterATrapNoOtherThreadWrites) {
  // Thread 0 traps while the others wait for it at a barrier, in whatever
  // order they run: the launch fails and no other thread goes on to write.
  auto kernel = build("trap_first", R"cuda(
extern "C" __global__ void trap_first(int *out) {
  if (threadIdx.x == 0)
    __trap();
  __syncthreads();
  out[threadIdx.x] = 1;
}
)cuda");
  DevicePtr out = upload(std::vector<int>(64, 0));
  ArgPack args;
  args.push(out);
  EXPECT_THROW(launch(*kernel, {1}, {64}, args), DeviceError);
  EXPECT_EQ(download<int>(out, 64), std::vector<int>(64, 0));
}

TEST_F(ExecutorTest, VotesCountOnlyLanesThatExist) {
  // 48 threads: the second warp has 16 lanes; lane 5 of each warp exits.
  auto kernel = build("partial_votes", R"cuda(
extern "C" __global__ void partial_votes(unsigned *out) {
  if (threadIdx.x % 32 == 5)
    return;
  unsigned *slot = out + 4 * threadIdx.x;
  slot[0] = __ballot_sync(0xffffffffu, 1);
  slot[1] = __all_sync(0xffffffffu, 1);
  slot[2] = __any_sync(0xffffffffu, threadIdx.x == 40);
  slot[3] = __reduce_min_sync(0xffffffffu, threadIdx.x + 10u);
}
)cuda");
  DevicePtr out = upload(std::vector<unsigned>(4 * 48, 0));
  ArgPack args;
  args.push(out);
  launch(*kernel, {1}, {48}, args);
  std::vector<unsigned> got = download<unsigned>(out, 4 * 48);
  for (unsigned t = 0; t < 48; ++t) {
    if (t % 32 == 5)
      continue;
    const unsigned *slot = &got[4 * t];
    EXPECT_EQ(slot[0], t < 32 ? 0xffffffdfu : 0x0000ffdfu) << t;
    EXPECT_EQ(slot[1], 1u) << t;
    EXPECT_EQ(slot[2], t < 32 ? 0u : 1u) << t;
    EXPECT_EQ(slot[3], t < 32 ? 10u : 42u) << t;
  }
}

TEST_F(ExecutorTest, CompileErrorCarriesCompilerOutput) {
  try {
    build(samples::kBrokenEntry, samples::kBrokenSource);
    FAIL() << "a broken kernel compiled";
  } catch (const CompileError &error) {
    EXPECT_EQ(error.kernel(), samples::kBrokenEntry);
    EXPECT_THAT(error.log(), HasSubstr("undeclared_name"));
  }
}

TEST_F(ExecutorTest, ImpossibleGeometryIsRejected) {
  auto kernel = build(samples::kAxpyEntry, samples::kAxpySource);
  ArgPack args;
  args.push(0).push(1.0f).push(DevicePtr(0)).push(DevicePtr(0));
  EXPECT_THROW(launch(*kernel, {1}, {2048}, args), InvalidArgument);
  EXPECT_THROW(launch(*kernel, {0}, {32}, args), InvalidArgument);
  EXPECT_THROW(backend->load("not an object", "axpy"), InvalidArgument);
}

} // namespace

namespace {

TEST(EmulationSanitizers, NeedTheSanitizerRuntimeInTheProcess) {
  if (::dlsym(RTLD_DEFAULT, "__asan_init"))
    GTEST_SKIP() << "this process has AddressSanitizer";
  EmulationOptions options =
      EmulationOptions::fromEnvironment(samples::deviceHeaders());
  options.sanitize = true;
  options.check = false;
  EmulationBackend backend(options);
  std::string binary =
      backend.compile({samples::kAxpyEntry, samples::kAxpySource});
  EXPECT_THAT([&] { backend.load(binary, samples::kAxpyEntry); },
              ::testing::ThrowsMessage<Unsupported>(HasSubstr(
                  "RUDNN_EMULATION_SANITIZE needs AddressSanitizer")));
}

} // namespace

namespace {

TEST(EmulationCompiler, MissingCompilerIsACompileError) {
  EmulationOptions options =
      EmulationOptions::fromEnvironment(samples::deviceHeaders());
  options.hostCompiler = "/nonexistent/c++";
  EmulationBackend backend(options);
  try {
    backend.compile({samples::kAxpyEntry, samples::kAxpySource});
    FAIL() << "compiled without a compiler";
  } catch (const CompileError &error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/c++"));
    EXPECT_THAT(error.what(), HasSubstr("RUDNN_HOST_CXX"));
  }
}

} // namespace
