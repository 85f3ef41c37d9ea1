//===- NamedBarrierTest.cpp - bar.sync and bar.arrive emulated exactly ----===//
//
// Named barriers (arch/named_barrier.cuh) as the hardware runs them: a
// barrier completes when its count of threads has arrived, arrivals that
// do not wait go on, a count that is not whole warps or that disagrees
// traps, and one that can never complete is a deadlock report. In check
// mode they order shared-memory accesses from the threads that arrived to
// those that waited, and nothing else: a hand-off without its barrier is a
// race.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::Emulator;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

// Two warps produce a tile for two others over several rounds, the
// hand-off of a producer warpgroup and a consumer one: the producers write
// and arrive at barrier 1 (FULL), the consumers wait there, read a
// neighbour's element and arrive at barrier 2 (EMPTY), which the producers
// wait at before writing the next round.
constexpr const char *kHandOffSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void hand_off(const int *in, int *out, int rounds) {
  __shared__ int tile[64];
  const int t = threadIdx.x;
  for (int round = 0; round < rounds; ++round) {
    if (t < 64) {
      if (round > 0)
        EMPTY_WAIT
      tile[t] = in[64 * round + t];
      FULL_ARRIVE
    } else {
      FULL_WAIT
      out[64 * round + t - 64] = tile[(t - 64 + 1) % 64];
      if (round + 1 < rounds)
        EMPTY_ARRIVE
    }
  }
}
)cuda";

/// The hand-off with its barriers, or with those `without` names left out.
std::string handOff(const std::vector<std::string> &without = {}) {
  std::string source = kHandOffSource;
  auto place = [&](const std::string &name, const std::string &call) {
    const bool dropped =
        std::find(without.begin(), without.end(), name) != without.end();
    source.replace(source.find(name), name.size(), dropped ? ";" : call);
  };
  place("EMPTY_WAIT", "named_barrier_sync(2, 128);");
  place("FULL_ARRIVE", "named_barrier_arrive(1, 128);");
  place("FULL_WAIT", "named_barrier_sync(1, 128);");
  place("EMPTY_ARRIVE", "named_barrier_arrive(2, 128);");
  return source;
}

constexpr int kRounds = 3;

/// Runs `source` as hand_off over 128 threads; returns what it wrote.
std::vector<int> runHandOff(Emulator &emulator, const std::string &source) {
  std::vector<int> in(64 * kRounds);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int(7 * i + 3);
  DevicePtr dIn = emulator.upload(in);
  DevicePtr dOut = emulator.upload(std::vector<int>(in.size(), -1));
  ArgPack args;
  args.push(dIn).push(dOut).push(kRounds);
  emulator.run("hand_off", source, {1}, {128}, args);
  return emulator.download<int>(dOut, in.size());
}

TEST(NamedBarrier, HandOffBetweenWarpgroupsIsExactUnderEverySchedule) {
  for (const char *schedule :
       {"forward", "reverse", "random:1", "random:7", "random:1234"}) {
    Emulator emulator(/*check=*/true, schedule);
    const std::vector<int> out = runHandOff(emulator, handOff());
    for (int round = 0; round < kRounds; ++round)
      for (int t = 0; t < 64; ++t)
        ASSERT_EQ(out[64 * round + t], 7 * (64 * round + (t + 1) % 64) + 3)
            << schedule << ", round " << round << ", consumer " << t;
  }
}

template <typename Matcher>
void expectFailure(const std::function<void()> &launch, Matcher matcher) {
  EXPECT_THAT(launch, ThrowsMessage<DeviceError>(matcher));
}

TEST(NamedBarrier, CheckModeReportsAHandOffWithoutItsBarrierAsARace) {
  // The consumers read with no barrier after the producers' writes (the
  // EMPTY barrier still paces the rounds): a race in every order.
  for (const char *schedule : {"forward", "reverse", "random:3"}) {
    Emulator emulator(/*check=*/true, schedule);
    expectFailure(
        [&] {
          runHandOff(emulator, handOff({"FULL_WAIT", "FULL_ARRIVE"}));
        },
        AllOf(HasSubstr("emulated kernel 'hand_off'"),
              HasSubstr("data race on static shared memory")));
  }
}

/// Runs a one-block kernel `entry` of `threads` threads, expecting it to
/// fail with `matcher`.
template <typename Matcher>
void expectKernelFailure(const std::string &entry, const std::string &source,
                         unsigned threads, Matcher matcher) {
  for (bool check : {false, true}) {
    Emulator emulator(check);
    DevicePtr out = emulator.upload(std::vector<int>(threads, 0));
    ArgPack args;
    args.push(out);
    expectFailure([&] { emulator.run(entry, source, {1}, {threads}, args); },
                  AllOf(HasSubstr("emulated kernel '" + entry + "'"), matcher));
  }
}

TEST(NamedBarrier, ACountOfPartWarpsOrABadIdTraps) {
  expectKernelFailure("part_warps", R"cuda(
#include "rudnn/core.cuh"
extern "C" __global__ void part_warps(int *out) {
  rudnn::arch::named_barrier_sync(1, 48);
  out[threadIdx.x] = 1;
}
)cuda",
                      64, HasSubstr("the count must be a multiple of 32"));
  expectKernelFailure("block_barrier", R"cuda(
#include "rudnn/core.cuh"
extern "C" __global__ void block_barrier(int *out) {
  rudnn::arch::named_barrier_sync(0, 64);
  out[threadIdx.x] = 1;
}
)cuda",
                      64, HasSubstr("ids are 1 to 15"));
}

TEST(NamedBarrier, ArrivalsExpectingDifferentCountsTrap) {
  expectKernelFailure("disagree", R"cuda(
#include "rudnn/core.cuh"
extern "C" __global__ void disagree(int *out) {
  if (threadIdx.x < 64)
    rudnn::arch::named_barrier_arrive(3, 128);
  else
    rudnn::arch::named_barrier_sync(3, 96);
  out[threadIdx.x] = 1;
}
)cuda",
                      128,
                      AllOf(HasSubstr("named barrier 3 expects"),
                            HasSubstr("the threads already arrived expect")));
}

TEST(NamedBarrier, ABarrierThatCanNeverCompleteIsADeadlockNotAHang) {
  // The consumers wait for 128 threads; the producers exit instead.
  expectKernelFailure("deserted", R"cuda(
#include "rudnn/core.cuh"
extern "C" __global__ void deserted(int *out) {
  if (threadIdx.x >= 64)
    rudnn::arch::named_barrier_sync(1, 128);
  out[threadIdx.x] = 1;
}
)cuda",
                      128,
                      AllOf(HasSubstr("deadlock"),
                            HasSubstr("64 at a named barrier"),
                            HasSubstr("named barrier 1 expects 128 threads, "
                                      "64 arrived")));
}

TEST(NamedBarrier, AWarpArrivesWhole) {
  // Half of each of two warps makes the count; the other halves are still
  // running (they wait at __syncthreads), so bar.sync (.aligned) diverged.
  expectKernelFailure("half_warps", R"cuda(
#include "rudnn/core.cuh"
extern "C" __global__ void half_warps(int *out) {
  if (threadIdx.x % 32 < 16)
    rudnn::arch::named_barrier_sync(1, 32);
  __syncthreads();
  out[threadIdx.x] = 1;
}
)cuda",
                      64, HasSubstr("take whole warps"));
}

} // namespace
