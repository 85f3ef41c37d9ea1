//===- TmaOrderTest.cpp - TMA boxes and stores at the schedule's moments --===//
//
// A TMA box lands at any moment between its issue and its barrier's phase
// completing, a TMA store reads its shared source at any moment before the
// wait that retires it: the forward schedule takes the earliest, reverse
// the latest, random draws. A kernel that reads a box through another box's
// barrier, reuses a store's source before its wait, or exits with a store
// in flight computes garbage under some schedule and is refused in check
// mode under all of them; its correct twin is exact under every one.
//
//===----------------------------------------------------------------------===//

#include "runtime/compile/NvrtcCompiler.h"
#include "test/emulation/EmulationTestSupport.h"
#include "test/support/DeviceHeaders.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <string>
#include <utility>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::Emulator;
using rudnn::test::matrixMap;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

const char *const kSchedules[] = {"forward", "reverse", "random:1"};

/// `source` with each placeholder of `edits` replaced.
std::string
edited(std::string source,
       const std::vector<std::pair<std::string, std::string>> &edits) {
  for (const auto &[name, text] : edits)
    source.replace(source.find(name), name.size(), text);
  return source;
}

// Two boxes of a 32 x 64 matrix, rows 0-15 and 16-31, each completing on
// its own barrier; the warp waits (WAITS) and copies both tiles out as they
// lie in shared memory.
constexpr const char *kTwoBoxesSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
extern "C" __global__ void two_boxes(const __grid_constant__ TensorMap map,
                                     unsigned short *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  unsigned char *tiles = swizzle_aligned(raw);
  unsigned long long *full = (unsigned long long *)(tiles + 2 * 16 * 128);
  if (threadIdx.x == 0) {
    mbarrier_init(&full[0], 1);
    mbarrier_init(&full[1], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int box = 0; box < 2; ++box) {
      mbarrier_arrive_expect_tx(&full[box], 16 * 128);
      const int at[3] = {0, 16 * box, 0};
      tma_load<3>(tiles + box * 16 * 128, map, at, &full[box]);
    }
  WAITS
  const unsigned short *words = (const unsigned short *)tiles;
  for (int i = threadIdx.x; i < 2 * 16 * 64; i += blockDim.x)
    out[i] = words[i];
}
)cuda";

constexpr uint32_t kTwoBoxesShared = 1024 + 2 * 16 * 128 + 16;

/// Runs the two-box kernel with `waits`; returns the words it copied.
std::vector<uint16_t> runTwoBoxes(Emulator &emulator, const std::string &waits,
                                  const std::vector<uint16_t> &matrix) {
  DevicePtr data = emulator.upload(matrix);
  DevicePtr out = emulator.upload(std::vector<uint16_t>(2 * 16 * 64, 7));
  ArgPack args;
  args.push(matrixMap(*emulator.backend, data, 32, 64, 16)).push(out);
  emulator.run("two_boxes", edited(kTwoBoxesSource, {{"WAITS", waits}}), {1},
               {32}, args, kTwoBoxesShared);
  return emulator.download<uint16_t>(out, 2 * 16 * 64);
}

std::vector<uint16_t> countingMatrix() {
  std::vector<uint16_t> matrix(32 * 64);
  for (size_t i = 0; i < matrix.size(); ++i)
    matrix[i] = static_cast<uint16_t>(i + 1);
  return matrix;
}

/// Where the swizzle puts element (r, c) of a 64-column box.
size_t swizzled(int r, int c) { return r * 64 + (c / 8 ^ r % 8) * 8 + c % 8; }

TEST(TmaOrder, BoxesReadAfterTheirOwnBarriersAreExactUnderEverySchedule) {
  const std::vector<uint16_t> matrix = countingMatrix();
  for (bool check : {false, true})
    for (const char *schedule : kSchedules) {
      Emulator emulator(check, schedule);
      const std::vector<uint16_t> got = runTwoBoxes(
          emulator, "mbarrier_wait(&full[0], 0); mbarrier_wait(&full[1], 0);",
          matrix);
      for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 64; ++c)
          ASSERT_EQ(got[swizzled(r, c)], matrix[r * 64 + c])
              << schedule << (check ? " checked" : "") << " at " << r << ", "
              << c;
    }
}

TEST(TmaOrder, ABoxReadThroughAnotherBoxsBarrierIsGarbageOrRefused) {
  // Waiting on the second box's barrier says nothing of the first. Reverse
  // lands each box only when its barrier is waited for: the first never is.
  const std::vector<uint16_t> matrix = countingMatrix();
  {
    Emulator emulator(/*check=*/false, "reverse");
    const std::vector<uint16_t> got =
        runTwoBoxes(emulator, "mbarrier_wait(&full[1], 0);", matrix);
    for (int i = 0; i < 16 * 64; ++i)
      ASSERT_EQ(got[i], 0xffff) << "word " << i << " of the first box";
  }
  for (const char *schedule : kSchedules) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] { runTwoBoxes(emulator, "mbarrier_wait(&full[1], 0);", matrix); },
        ThrowsMessage<DeviceError>(AllOf(
            HasSubstr("reads dynamic shared memory"), HasSubstr("a TMA box"),
            HasSubstr("this thread has not waited on that barrier"))))
        << schedule;
  }
}

TEST(TmaOrder, ABoxAnotherThreadWaitedForIsRefusedInCheckMode) {
  // Lane 0 waits; the other lanes read with nothing ordering them after it:
  // after the box landed (forward) or before it was issued (reverse).
  const std::vector<uint16_t> matrix = countingMatrix();
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] {
          runTwoBoxes(emulator,
                      "if (threadIdx.x == 0) { mbarrier_wait(&full[0], 0); "
                      "mbarrier_wait(&full[1], 0); }",
                      matrix);
        },
        ThrowsMessage<DeviceError>(
            AnyOf(HasSubstr("this thread has not waited on that barrier"),
                  HasSubstr("read it and thread (0,0,0) issued a TMA box "
                            "onto it with no barrier between"))))
        << schedule;
  }
}

TEST(TmaOrder, ASyncthreadsOrdersABoxOnlyAfterSomeThreadWaitedForIt) {
  // One thread waits for both boxes, then __syncthreads: every thread may
  // read them. Waiting for the second alone orders nothing of the first,
  // however long ago it landed: a __syncthreads orders threads, not the
  // TMA unit's writes.
  const std::vector<uint16_t> matrix = countingMatrix();
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    const std::vector<uint16_t> got =
        runTwoBoxes(emulator,
                    "if (threadIdx.x == 0) { mbarrier_wait(&full[0], 0); "
                    "mbarrier_wait(&full[1], 0); } __syncthreads();",
                    matrix);
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 64; ++c)
        ASSERT_EQ(got[swizzled(r, c)], matrix[r * 64 + c])
            << schedule << " at " << r << ", " << c;
    EXPECT_THAT(
        [&] {
          runTwoBoxes(emulator,
                      "if (threadIdx.x == 0) mbarrier_wait(&full[1], 0); "
                      "__syncthreads();",
                      matrix);
        },
        ThrowsMessage<DeviceError>(
            HasSubstr("this thread has not waited on that barrier")))
        << schedule;
  }
}

// Two threads on one mbarrier: INIT initialises it (or not), SYNC orders
// the initialisation before the others' use (or not); thread 1 arrives and
// both wait.
constexpr const char *kInitSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
extern "C" __global__ void init(int *out) {
  __shared__ unsigned long long barrier;
  INIT
  SYNC
  if (threadIdx.x == 1)
    mbarrier_arrive(&barrier);
  mbarrier_wait(&barrier, 0);
  out[threadIdx.x] = 1;
}
)cuda";

void runInit(Emulator &emulator, const std::string &init,
             const std::string &sync) {
  DevicePtr out = emulator.upload(std::vector<int>(2, 0));
  ArgPack args;
  args.push(out);
  emulator.run("init", edited(kInitSource, {{"INIT", init}, {"SYNC", sync}}),
               {1}, {2}, args);
  EXPECT_EQ(emulator.download<int>(out, 2), (std::vector<int>{1, 1}));
}

TEST(MbarrierInit, AnUninitialisedBarrierIsRefused) {
  // Shared memory starts as garbage: a barrier nobody initialised has no
  // phase to wait for.
  for (bool check : {false, true}) {
    Emulator emulator(check, check ? "reverse" : "forward");
    EXPECT_THAT(
        [&] { runInit(emulator, "", "__syncthreads();"); },
        ThrowsMessage<DeviceError>(HasSubstr("used before mbarrier.init")))
        << (check ? "checked" : "");
  }
}

TEST(MbarrierInit, AnInitNotOrderedBeforeTheUsesIsRefusedInCheckMode) {
  // Thread 1 uses the barrier after thread 0's init (forward: a race) or
  // before it (reverse: no barrier yet).
  const std::string init = "if (threadIdx.x == 0) mbarrier_init(&barrier, 1);";
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    runInit(emulator, init, "__syncthreads();");
    EXPECT_THAT([&] { runInit(emulator, init, ""); },
                ThrowsMessage<DeviceError>(
                    std::string(schedule) == "forward"
                        ? HasSubstr("with no barrier between")
                        : HasSubstr("used before mbarrier.init")))
        << schedule;
  }
}

// A 10 x 64 matrix written back through one 16-row TMA store (rows past the
// tensor dropped): the threads fill the box as a load would leave it, fence
// it for the async proxy, and thread 0 stores it, commits and waits.
constexpr const char *kStoreSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
extern "C" __global__ void store(const __grid_constant__ TensorMap map) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  unsigned short *tile = swizzle_aligned<unsigned short>(raw);
  for (int i = threadIdx.x; i < 16 * 64; i += blockDim.x) {
    const int r = i / 64, c = i % 64;
    tile[r * 64 + (c / 8 ^ r % 8) * 8 + c % 8] = (unsigned short)(1000 + i);
  }
  FENCE
  __syncthreads();
  if (threadIdx.x == 0) {
    const int at[3] = {0, 0, 0};
    tma_store<3>(map, at, tile);
    tma_store_commit();
    BEFORE_WAIT
    WAIT
  }
}
)cuda";

const std::vector<std::pair<std::string, std::string>> kStoreDefaults = {
    {"FENCE", "fence_proxy_async_shared();"},
    {"BEFORE_WAIT", ""},
    {"WAIT", "tma_store_wait<0>();"}};

/// Runs the store kernel with `changes` to its placeholders; returns the
/// matrix after it.
std::vector<uint16_t>
runStore(Emulator &emulator,
         const std::vector<std::pair<std::string, std::string>> &changes) {
  std::vector<std::pair<std::string, std::string>> edits = kStoreDefaults;
  for (auto &[name, text] : edits)
    for (const auto &[changed, changedText] : changes)
      if (changed == name)
        text = changedText;
  DevicePtr data = emulator.upload(std::vector<uint16_t>(10 * 64, 7));
  ArgPack args;
  args.push(matrixMap(*emulator.backend, data, 10, 64, 16));
  emulator.run("store", edited(kStoreSource, edits), {1}, {32}, args,
               1024 + 16 * 128);
  return emulator.download<uint16_t>(data, 10 * 64);
}

TEST(TmaStore, WritesTheBoxInsideTheTensorUnderEverySchedule) {
  for (bool check : {false, true})
    for (const char *schedule : kSchedules) {
      Emulator emulator(check, schedule);
      const std::vector<uint16_t> got = runStore(emulator, {});
      for (int i = 0; i < 10 * 64; ++i)
        ASSERT_EQ(got[i], 1000 + i)
            << schedule << (check ? " checked" : "") << " at " << i;
    }
}

TEST(TmaStore, ASourceReusedBeforeItsWaitIsGarbageOrRefused) {
  const std::string reuse = "tile[0] = 0;";
  {
    // Reverse reads the source at the wait: the reused value goes out.
    Emulator emulator(/*check=*/false, "reverse");
    EXPECT_EQ(runStore(emulator, {{"BEFORE_WAIT", reuse}})[0], 0);
  }
  for (const char *schedule : kSchedules) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] {
          runStore(emulator, {{"BEFORE_WAIT", reuse}});
        },
        ThrowsMessage<DeviceError>(
            HasSubstr("TMA store: its shared source changed between "
                      "its issue and the tma_store_wait")))
        << schedule;
  }
}

TEST(TmaStore, AThreadExitingWithAStoreInFlightIsRefused) {
  for (bool check : {false, true}) {
    Emulator emulator(check, "forward");
    EXPECT_THAT(
        [&] {
          runStore(emulator, {{"WAIT", ""}});
        },
        ThrowsMessage<DeviceError>(
            HasSubstr("exits with TMA stores still reading shared "
                      "memory")))
        << (check ? "check mode" : "default mode");
  }
}

TEST(TmaStore, ASourceTheThreadsDidNotFenceIsRefusedInCheckMode) {
  for (const char *schedule : {"forward", "reverse"}) {
    Emulator emulator(/*check=*/true, schedule);
    EXPECT_THAT(
        [&] {
          runStore(emulator, {{"FENCE", ""}});
        },
        ThrowsMessage<DeviceError>(
            AllOf(HasSubstr("issues an async-proxy read"),
                  HasSubstr("has executed no fence.proxy.async"))))
        << schedule;
  }
}

TEST(TmaStore, TheKernelsHereCompileForSm90aWithNvrtc) {
  // The wrappers' PTX (stores, bulk groups, the proxy fence) assembles.
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  EXPECT_NO_THROW(
      nvrtc.compile({"store", edited(kStoreSource, kStoreDefaults)}, "sm_90a"));
  EXPECT_NO_THROW(nvrtc.compile(
      {"two_boxes", edited(kTwoBoxesSource, {{"WAITS", ""}})}, "sm_90a"));
}

} // namespace
