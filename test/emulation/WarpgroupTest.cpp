//===- WarpgroupTest.cpp - wgmma as a warpgroup runs it on Hopper ---------===//
//
// wgmma, its fence, commit and wait, and setmaxnreg are .sync.aligned over
// a warpgroup (warps 4i to 4i + 3): on a GPU, a warpgroup that issues one
// with a warp missing, with per-warp descriptors or operands, or at
// different instructions is undefined. And wgmma is asynchronous: its
// accumulators are garbage until the wait that retires its commit group,
// it needs a fence after the registers it reads were last touched, and
// its shared operands may be read at any point until that wait. The
// emulator used to run wgmma warp by warp and complete it at issue; each
// kernel here that it ran is now refused with a report or computes
// garbage, and the correct twin gives exact results under every schedule.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::Emulator;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

// Each warpgroup of the block computes A·Bᵀ over 64 x 64 bf16 tiles of
// ones in shared memory (every entry 64), written by the threads and fenced
// for the async proxy, its budget raised first as a consumer warpgroup's
// is. The placeholders make it go wrong.
constexpr const char *kGroupSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void group(float *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  __nv_bfloat16 *ta = swizzle_aligned<__nv_bfloat16>(raw);
  __nv_bfloat16 *tb = ta + 64 * 64;
  for (int i = threadIdx.x; i < 2 * 64 * 64; i += blockDim.x)
    ta[i] = __float2bfloat16(1.0f);
  PROXY_FENCE
  __syncthreads();
  const int warp = threadIdx.x / 32;
  (void)warp;
  BEFORE
  BUDGET
  float d[32] = {};
  FENCE
  for (int k = 0; k < 4; ++k)
    wgmma_ss<__nv_bfloat16>(
        d, wgmma_descriptor(ta + 16 * k, 16, 1024),
        wgmma_descriptor(tb + 16 * k + SKEW, 16, 1024));
  COMMIT
  IN_FLIGHT
  WAIT
  for (int i = 0; i < 32; ++i)
    out[32 * threadIdx.x + i] = d[i];
}
)cuda";

/// The kernel with `changes` made to its placeholders; the others take
/// their correct text.
std::string group(std::vector<std::pair<std::string, std::string>> changes) {
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"PROXY_FENCE", "fence_proxy_async_shared();"},
      {"BEFORE", ""},
      {"BUDGET", "set_register_budget<240, true>();"},
      {"SKEW", "0"},
      {"FENCE", "wgmma_fence();"},
      {"COMMIT", "wgmma_commit();"},
      {"IN_FLIGHT", ""},
      {"WAIT", "wgmma_wait<0>();"}};
  std::string source = kGroupSource;
  for (const auto &[name, text] : defaults) {
    std::string replacement = text;
    for (const auto &[changed, changedText] : changes)
      if (changed == name)
        replacement = changedText;
    source.replace(source.find(name), name.size(), replacement);
  }
  return source;
}

constexpr uint32_t kShared = 1024 + 2 * 64 * 64 * 2;

/// Runs `source` as one block of `threads`; returns what it wrote.
std::vector<float> runGroup(Emulator &emulator, const std::string &source,
                            unsigned threads) {
  DevicePtr out = emulator.upload(std::vector<float>(32 * threads, -1));
  ArgPack args;
  args.push(out);
  emulator.run("group", source, {1}, {threads}, args, kShared);
  return emulator.download<float>(out, 32 * threads);
}

TEST(Warpgroup, WholeWarpgroupsComputeExactlyUnderEverySchedule) {
  for (const char *schedule : {"forward", "reverse", "random:5"}) {
    Emulator emulator(/*check=*/true, schedule);
    // Two warpgroups, each on its own.
    const std::vector<float> out = runGroup(emulator, group({}), 256);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], 64.0f) << schedule << ", entry " << i;
  }
}

/// Runs the kernel with `changes` on `threads` threads, expecting it to
/// fail with `matcher`, in and out of check mode.
template <typename Matcher>
void expectRefused(std::vector<std::pair<std::string, std::string>> changes,
                   unsigned threads, Matcher matcher) {
  for (bool check : {false, true}) {
    Emulator emulator(check);
    EXPECT_THAT([&] { runGroup(emulator, group(changes), threads); },
                ThrowsMessage<DeviceError>(
                    AllOf(HasSubstr("emulated kernel 'group'"), matcher)))
        << (check ? "check mode" : "default mode");
  }
}

TEST(Warpgroup, AWarpgroupWithAWarpMissingIsRefused) {
  expectRefused({{"BEFORE", "if (warp == 3) return;"}}, 128,
                AllOf(HasSubstr("warpgroup 0"), HasSubstr("96 of its 128"),
                      HasSubstr("32 have exited")));
  // The budget raised by three warps of four.
  expectRefused({{"BEFORE", "if (warp == 1) return;"}, {"BUDGET", ""}}, 128,
                AllOf(HasSubstr("wgmma.fence"), HasSubstr("have exited")));
}

TEST(Warpgroup, PerWarpDescriptorsAreRefused) {
  expectRefused({{"SKEW", "(warp == 2 ? 512 : 0)"}}, 128,
                HasSubstr("wgmma: the threads of the warpgroup issue "
                          "different shapes, descriptors"));
}

TEST(Warpgroup, PerWarpOperandsOfWaitAndSetmaxnregAreRefused) {
  expectRefused(
      {{"WAIT", "if (warp < 2) wgmma_wait<0>(); else wgmma_wait<1>();"}}, 128,
      HasSubstr("wgmma.wait_group: the warpgroup's threads give it "
                "different operands"));
  expectRefused(
      {{"BUDGET", "if (warp < 3) set_register_budget<240, true>(); "
                  "else set_register_budget<232, true>();"}},
      128,
      AllOf(HasSubstr("setmaxnreg.inc: the warpgroup's threads give it "
                      "different operands ("),
            HasSubstr("240"), HasSubstr("232")));
}

TEST(Warpgroup, AWarpgroupAtDifferentInstructionsIsRefused) {
  // Warp 1 commits while the others raise their budget.
  expectRefused(
      {{"BEFORE", "if (warp == 1) wgmma_commit();"},
       {"BUDGET", "if (warp != 1) set_register_budget<240, true>();"}},
      128, HasSubstr("meets at different warpgroup operations"));
}

TEST(Warpgroup, ABlockOfPartWarpgroupsIsRefused) {
  expectRefused({}, 96,
                HasSubstr("a warpgroup is 128 threads, warps 4i to 4i + 3"));
}

// A producer warpgroup and two consumers under launch bounds of 384
// threads, one block per SM: 168 registers a thread, 504 per three threads
// to share. The producer gives its registers back, the consumers take them.
constexpr const char *kBudgetSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void __launch_bounds__(384, 1) budgets(int *out) {
  if (threadIdx.x < 128) {
    PRODUCER
  } else {
    CONSUMER
  }
  out[threadIdx.x] = threadIdx.x;
}
)cuda";

/// Runs the budget kernel with its producer's and consumers' budgets on
/// `threads` threads.
void runBudgets(Emulator &emulator, const std::string &producer,
                const std::string &consumer, unsigned threads = 384) {
  std::string source = kBudgetSource;
  source.replace(source.find("PRODUCER"), 8, producer);
  source.replace(source.find("CONSUMER"), 8, consumer);
  DevicePtr out = emulator.upload(std::vector<int>(threads, -1));
  ArgPack args;
  args.push(out);
  emulator.run("budgets", source, {1}, {threads}, args);
  const std::vector<int> got = emulator.download<int>(out, threads);
  for (unsigned i = 0; i < threads; ++i)
    ASSERT_EQ(got[i], int(i));
}

const std::string kGiveBack = "set_register_budget<24, false>();",
                  kTake = "set_register_budget<240, true>();";

TEST(RegisterBudget, ASplitThatFitsTheLaunchRunsUnderEverySchedule) {
  // Reverse runs the consumers first: their increases wait for the
  // producer's decrease.
  for (const char *schedule : {"forward", "reverse", "random:4"}) {
    Emulator emulator(/*check=*/true, schedule);
    runBudgets(emulator, kGiveBack, kTake);
  }
}

TEST(RegisterBudget, ASplitPastTheLaunchsRegistersBlocksForever) {
  // 40 + 240 + 240 registers a thread is past the 504 the launch reserved,
  // and so is keeping the producer's 168.
  for (const std::string &producer :
       {std::string("set_register_budget<40, false>();"), std::string()}) {
    Emulator emulator(/*check=*/false, "forward");
    EXPECT_THAT(
        [&] { runBudgets(emulator, producer, kTake); },
        ThrowsMessage<DeviceError>(AllOf(HasSubstr("emulated kernel 'budgets'"),
                                         HasSubstr("watchdog"))))
        << producer;
  }
}

TEST(RegisterBudget, BudgetsMoveOnlyTheWayTheInstructionSays) {
  Emulator emulator(/*check=*/false);
  EXPECT_THAT(
      [&] {
        runBudgets(emulator, kGiveBack, "set_register_budget<160, true>();");
      },
      ThrowsMessage<DeviceError>(
          HasSubstr("setmaxnreg.inc to 160 registers from the warpgroup's "
                    "168: an increase must not lower the budget")));
  EXPECT_THAT(
      [&] {
        runBudgets(emulator, "set_register_budget<200, false>();", kTake);
      },
      ThrowsMessage<DeviceError>(HasSubstr("setmaxnreg.dec to 200")));
}

TEST(RegisterBudget, ABlockPastTheLaunchBoundsIsRefused) {
  Emulator emulator(/*check=*/false);
  EXPECT_THAT([&] { runBudgets(emulator, kGiveBack, kTake, 512); },
              ThrowsMessage<InvalidArgument>(
                  HasSubstr("a block of 512 threads for kernel 'budgets', "
                            "whose __launch_bounds__ allow 384")));
}

/// Runs the kernel with `changes` on one warpgroup; returns what it wrote.
std::vector<float>
runChanged(std::vector<std::pair<std::string, std::string>> changes,
           bool check) {
  Emulator emulator(check);
  return runGroup(emulator, group(changes), 128);
}

TEST(AsyncWgmma, AccumulatorsReadBeforeTheirWaitAreGarbage) {
  // No wait, a wait before the commit, a commit never made: the products
  // are still in flight when the accumulators are stored.
  for (const auto &changes :
       std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"WAIT", ""}},
           {{"COMMIT", ""}, {"WAIT", "wgmma_wait<0>(); wgmma_commit();"}},
           {{"COMMIT", ""}}})
    for (bool check : {false, true}) {
      const std::vector<float> out = runChanged(changes, check);
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_TRUE(std::isnan(out[i]))
            << changes[0].first << ", entry " << i << ": " << out[i];
    }
}

TEST(AsyncWgmma, AWgmmaWithNoFenceSinceTheRegistersWereWrittenIsRefused) {
  expectRefused({{"FENCE", ""}}, 128,
                HasSubstr("wgmma: issued with no wgmma_fence"));
}

TEST(AsyncWgmma, AccumulatorsWrittenWhileInFlightAreRefused) {
  expectRefused({{"IN_FLIGHT", "d[5] = 0.0f;"}}, 128,
                HasSubstr("accumulator 5 of a wgmma in flight was written "
                          "before the wgmma_wait that retires it"));
}

TEST(AsyncWgmma, OperandsThreadsWroteWithoutAProxyFenceAreRefused) {
  // wgmma reads through the async proxy: the threads' writes of the tiles
  // are not ordered before it without each writer's fence, whatever
  // barrier comes between. Only check mode sees proxies.
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] {
          runGroup(emulator, group({{"PROXY_FENCE", ""}}), 128);
        },
        ThrowsMessage<DeviceError>(
            AllOf(HasSubstr("issues an async-proxy read"),
                  HasSubstr("wrote it through the generic proxy and has "
                            "executed no fence.proxy.async since"))))
        << schedule;
  }
}

TEST(AsyncWgmma, RegistersWrittenAfterTheFenceAreRefusedInCheckMode) {
  // The fence orders the register writes before it only: ptxas serializes
  // a wgmma reading one written after it (C7519), which check mode refuses.
  if (Emulator(/*check=*/true).backend->compilerIdentity().find("clang") !=
      std::string::npos)
    GTEST_SKIP() << "Clang moves the store into the array's initialization, "
                    "before the fence: the array escapes only afterwards, "
                    "so the fence cannot read it (GCC keeps the order)";
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] {
          runGroup(emulator, group({{"FENCE", "wgmma_fence(); d[3] = 1.0f;"}}),
                   128);
        },
        ThrowsMessage<DeviceError>(
            HasSubstr("wgmma reads registers (accumulators or an A fragment) "
                      "the thread wrote after its wgmma_fence")))
        << schedule;
  }
}

TEST(AsyncWgmma, CheckModeRefusesAStageOverwrittenBeforeTheWait) {
  // Past a barrier, one thread refills B while the products are in flight,
  // as a producer refilling a stage released before the consumers' wait.
  // (Its writes are also a race with the other threads' reads at their
  // waits: the forward schedule lets it reach its own wait first.)
  Emulator emulator(/*check=*/true, "forward");
  EXPECT_THAT(
      [&] {
        runGroup(emulator,
                 group({{"IN_FLIGHT", "__syncthreads(); if (threadIdx.x == 0) "
                                      "for (int i = 0; i < 64 * 64; ++i) "
                                      "tb[i] = __float2bfloat16(2.0f);"}}),
                 128);
      },
      ThrowsMessage<DeviceError>(
          HasSubstr("its shared-memory operands changed between its issue "
                    "and the wgmma_wait that retires it")));
}

// Two commit groups in flight: wait<1> retires the older one only.
constexpr const char *kTwoGroupsSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void two_groups(float *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  __nv_bfloat16 *ta = swizzle_aligned<__nv_bfloat16>(raw);
  for (int i = threadIdx.x; i < 2 * 64 * 64; i += blockDim.x)
    ta[i] = __float2bfloat16(i < 64 * 64 ? 1.0f : 2.0f);
  fence_proxy_async_shared(); // seen by wgmma (the async proxy)
  __syncthreads();
  const __nv_bfloat16 *tb = ta + 64 * 64;
  float d[32] = {}, e[32] = {};
  wgmma_fence();
  wgmma_ss<__nv_bfloat16>(d, wgmma_descriptor(ta, 16, 1024),
                                    wgmma_descriptor(ta, 16, 1024));
  wgmma_commit();
  wgmma_ss<__nv_bfloat16>(e, wgmma_descriptor(ta, 16, 1024),
                                    wgmma_descriptor(tb, 16, 1024));
  wgmma_commit();
  wgmma_wait<1>();
  for (int i = 0; i < 32; ++i)
    out[64 * threadIdx.x + i] = d[i], out[64 * threadIdx.x + 32 + i] = e[i];
  wgmma_wait<0>();
  for (int i = 0; i < 32; ++i)
    out[64 * 128 + 32 * threadIdx.x + i] = e[i];
}
)cuda";

// A wgmma chained onto accumulators still in flight after a wait, its A
// fragment written after that wait: FENCE orders the write (or not).
constexpr const char *kChainedSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void chained(float *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  __nv_bfloat16 *tv = swizzle_aligned<__nv_bfloat16>(raw);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    tv[i] = __float2bfloat16(1.0f);
  fence_proxy_async_shared();
  __syncthreads();
  float d[32] = {};
  unsigned f[4];
  for (int r = 0; r < 4; ++r)
    f[r] = pack_bf16x2(1.0f, 1.0f);
  wgmma_fence();
  wgmma_rs<__nv_bfloat16>(d, f, wgmma_descriptor(tv, 64 * 128, 1024));
  wgmma_commit();
  wgmma_wait<1>(); // the product stays in flight
  for (int r = 0; r < 4; ++r)
    f[r] = pack_bf16x2(2.0f, 2.0f);
  FENCE
  wgmma_rs<__nv_bfloat16>(d, f, wgmma_descriptor(tv, 64 * 128, 1024));
  wgmma_commit();
  wgmma_wait<0>();
  for (int i = 0; i < 32; ++i)
    out[32 * threadIdx.x + i] = d[i];
}
)cuda";

TEST(AsyncWgmma, AChainedWgmmaNeedsAFenceForAFragmentWrittenAfterAWait) {
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    auto run = [&](const std::string &fence) {
      DevicePtr out = emulator.upload(std::vector<float>(32 * 128, -1));
      ArgPack args;
      args.push(out);
      std::string source = kChainedSource;
      source.replace(source.find("FENCE"), 5, fence);
      emulator.run("chained", source, {1}, {128}, args, kShared);
      return emulator.download<float>(out, 32 * 128);
    };
    for (float value : run("wgmma_fence();"))
      ASSERT_EQ(value, 48.0f) << schedule; // 16 ones, then 16 fours
    EXPECT_THAT([&] { run(""); }, ThrowsMessage<DeviceError>(HasSubstr(
                                      "issued with no wgmma_fence since the "
                                      "warpgroup last waited")))
        << schedule;
  }
}

TEST(AsyncWgmma, WaitRetiresTheOlderGroupsOnly) {
  for (const char *schedule : {"forward", "reverse", "random:9"}) {
    Emulator emulator(/*check=*/true, schedule);
    DevicePtr out = emulator.upload(std::vector<float>(96 * 128, -1));
    ArgPack args;
    args.push(out);
    emulator.run("two_groups", kTwoGroupsSource, {1}, {128}, args, kShared);
    const std::vector<float> got = emulator.download<float>(out, 96 * 128);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(got[64 * t + i], 16.0f) << schedule; // 16 ones
        ASSERT_TRUE(std::isnan(got[64 * t + 32 + i])) << schedule;
        ASSERT_EQ(got[64 * 128 + 32 * t + i], 32.0f) << schedule; // 16 twos
      }
  }
}

// m64n64k8 in TF32 over 64 x 32 fp32 tiles, four instructions deep: A(m, k)
// is k + 1 with its low 13 bits all set (cvt.rna would round them up), B
// picks column k = n % 32, so D(m, n) is A(m, n % 32) as the tensor cores
// read it.
constexpr const char *kTf32Source = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void tf32(float *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  float *ta = swizzle_aligned<float>(raw);
  float *tb = ta + 64 * 32;
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
    const int r = i / 32, c = i % 32;
    // The 128-byte swizzle: 16-byte chunk c / 4 of row r moves to
    // (c / 4) ^ (r % 8).
    const int at = 32 * r + 4 * ((c / 4) ^ (r % 8)) + c % 4;
    ta[at] = __uint_as_float(__float_as_uint(c + 1.0f) | 0x1fffu);
    tb[at] = c == r % 32 ? 1.0f : 0.0f;
  }
  fence_proxy_async_shared();
  __syncthreads();
  float d[32] = {};
  wgmma_fence();
  for (int k = 0; k < 4; ++k)
    wgmma_ss_tf32(d, wgmma_descriptor(ta + 8 * k, 16, 1024),
                  wgmma_descriptor(tb + 8 * k, 16, 1024));
  wgmma_commit();
  wgmma_wait<0>();
  for (int i = 0; i < 32; ++i)
    out[32 * threadIdx.x + i] = d[i];
}
)cuda";

TEST(Warpgroup, Tf32ReadsTheTopNineteenBitsOfK8Rows) {
  for (const char *schedule : {"forward", "reverse", "random:3"}) {
    Emulator emulator(/*check=*/true, schedule);
    DevicePtr out = emulator.upload(std::vector<float>(32 * 128, -1));
    ArgPack args;
    args.push(out);
    emulator.run("tf32", kTf32Source, {1}, {128}, args, 1024 + 2 * 64 * 32 * 4);
    const std::vector<float> got = emulator.download<float>(out, 32 * 128);
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < 32; ++i) {
        // d[4j + e]: column 8j + 2 (lane % 4) + e % 2.
        const int column = 8 * (i / 4) + 2 * (t % 4) + i % 2;
        ASSERT_EQ(got[32 * t + i], column % 32 + 1.0f)
            << schedule << ", thread " << t << ", accumulator " << i;
      }
  }
}

} // namespace
