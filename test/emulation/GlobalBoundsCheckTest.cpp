//===- GlobalBoundsCheckTest.cpp - Check mode bounds global memory -------===//
//
// In check mode the emulation backend places each allocation between guard
// regions, and a kernel's load, store or atomic outside the allocation it
// falls near fails the launch, through the backend or a plan alike, naming
// the kernel, block, thread, address and allocation. Every test sets check
// mode itself; the schedule comes from the environment.
//
//===----------------------------------------------------------------------===//

#include "runtime/backends/EmulationBackend.h"
#include "runtime/emulation/GuardedMemory.h"
#include "runtime/plans/Plan.h"
#include "runtime/plans/PlanExecutor.h"
#include "test/support/DeviceHeaders.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

class GlobalBoundsCheck : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
  void SetUp() override {
    EmulationOptions options =
        EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.check = true;
    options.sanitize = false;
    options.threads = 2;
    backend = std::make_unique<EmulationBackend>(options);
  }
  void TearDown() override {
    for (DevicePtr pointer : allocations)
      backend->release(pointer);
  }

  std::shared_ptr<LoadedKernel> build(const std::string &entry,
                                      const std::string &source) {
    return backend->load(backend->compile({entry, source}), entry);
  }
  DevicePtr ints(const std::vector<int> &values) {
    DevicePtr pointer = backend->allocate(values.size() * sizeof(int));
    backend->copyToDevice(pointer, values.data(), values.size() * sizeof(int),
                          nullptr);
    allocations.push_back(pointer);
    return pointer;
  }
  std::vector<int> download(DevicePtr pointer, size_t count) {
    std::vector<int> values(count);
    backend->copyToHost(values.data(), pointer, count * sizeof(int), nullptr);
    return values;
  }
  /// Launches `kernel` on one block of 64 threads with (data, n).
  void launch(const LoadedKernel &kernel, DevicePtr data, int n) {
    ArgPack args;
    args.push(data).push(n);
    backend->launch(kernel, {{1}, {64}, 0}, args, nullptr);
  }
  /// How reports print an address.
  static std::string address(DevicePtr pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", reinterpret_cast<void *>(pointer));
    return text;
  }

  std::unique_ptr<EmulationBackend> backend;
  std::vector<DevicePtr> allocations;
};

TEST_F(GlobalBoundsCheck, StorePastTheEndFailsTheLaunch) {
  auto kernel = build("store_past", R"cuda(
extern "C" __global__ void store_past(int *data, int n) {
  if (threadIdx.x <= n)
    data[threadIdx.x] = 1;
}
)cuda");
  DevicePtr data = ints(std::vector<int>(60, 0));
  EXPECT_THAT(
      [&] { launch(*kernel, data, 60); },
      ThrowsMessage<DeviceError>(AllOf(
          HasSubstr("emulated kernel 'store_past' failed"),
          HasSubstr("block (0,0,0): thread (60,0,0): out-of-bounds global "
                    "memory write of 4 bytes at " +
                    address(data + 240) +
                    ": offset 240 of the nearest allocation (240 bytes at " +
                    address(data) + "): 4 bytes past its end"))));
  // The last element is in bounds; the backend runs on after the fault.
  launch(*kernel, data, 59);
  EXPECT_EQ(download(data, 60), std::vector<int>(60, 1));
}

TEST_F(GlobalBoundsCheck, FarStoreIsCaughtBeforeItLandsElsewhere) {
  auto kernel = build("store_far", R"cuda(
extern "C" __global__ void store_far(int *data, int n) {
  if (threadIdx.x == 7)
    data[n] = 1;
}
)cuda");
  DevicePtr data = ints(std::vector<int>(10, 0));
  DevicePtr other = ints(std::vector<int>(10, 5));
  // 16 MiB past the end and before the start, where on the heap they would
  // corrupt whatever lies there.
  for (int n : {1 << 22, -(1 << 22)})
    EXPECT_THAT(
        [&] { launch(*kernel, data, n); },
        ThrowsMessage<DeviceError>(AllOf(
            HasSubstr("thread (7,0,0): out-of-bounds global memory "
                      "write of 4 bytes"),
            ContainsRegex("of the nearest allocation \\(40 bytes at " +
                          address(data) + "\\): [0-9]+ bytes " +
                          (n > 0 ? "past its end" : "before its start")))))
        << n;
  EXPECT_EQ(download(data, 10), std::vector<int>(10, 0));
  EXPECT_EQ(download(other, 10), std::vector<int>(10, 5));
}

TEST_F(GlobalBoundsCheck, LoadBeforeTheStartAndAtomicPastTheEnd) {
  auto before = build("load_before", R"cuda(
extern "C" __global__ void load_before(int *data, int n) {
  int i = threadIdx.x; // signed: i - 1 is -1, not 2^32 - 1
  if (i == 0)
    data[i] = data[i - 1];
}
)cuda");
  auto atomic = build("atomic_past", R"cuda(
extern "C" __global__ void atomic_past(int *data, int n) {
  if (threadIdx.x <= n)
    atomicAdd(&data[threadIdx.x], 1);
}
)cuda");
  DevicePtr data = ints(std::vector<int>(32, 0));
  EXPECT_THAT([&] { launch(*before, data, 32); },
              ThrowsMessage<DeviceError>(HasSubstr(
                  "thread (0,0,0): out-of-bounds global memory read of 4 "
                  "bytes at " +
                  address(data - 4) +
                  ": offset -4 of the nearest allocation (128 bytes at " +
                  address(data) + "): 4 bytes before its start")));
  EXPECT_THAT([&] { launch(*atomic, data, 32); },
              ThrowsMessage<DeviceError>(
                  HasSubstr("thread (32,0,0): out-of-bounds global memory "
                            "atomic of 4 bytes at " +
                            address(data + 128))));
}

// The window a launch remembers between accesses: an allocation's bytes or
// the gap between two mappings, never a guard byte.
TEST(BoundsWindow, IsAnAllocationOrAGapAndNeverAGuard) {
  const GuardedAllocations live = {{0x1000, 0x5000, 0x2f00, 0x3000},
                                   {0x9000, 0xd000, 0xa000, 0xa040}};
  auto window = [&](uintptr_t address) {
    BoundsWindow w = boundsWindowOf(live, address);
    return std::make_pair(w.begin, w.end);
  };
  EXPECT_EQ(window(0x0800), std::make_pair(uintptr_t(0), uintptr_t(0x1000)));
  EXPECT_EQ(window(0x2f10),
            std::make_pair(uintptr_t(0x2f00), uintptr_t(0x3000)));
  EXPECT_EQ(window(0x6000),
            std::make_pair(uintptr_t(0x5000), uintptr_t(0x9000)));
  EXPECT_EQ(window(0xa03f),
            std::make_pair(uintptr_t(0xa000), uintptr_t(0xa040)));
  EXPECT_EQ(window(0xe000), std::make_pair(uintptr_t(0xd000), UINTPTR_MAX));
  for (uintptr_t guard : {uintptr_t(0x1000), uintptr_t(0x2eff),
                          uintptr_t(0x3000), uintptr_t(0xa040)})
    EXPECT_EQ(window(guard), std::make_pair(uintptr_t(0), uintptr_t(0)));
  // Held only whole: the last bytes of an allocation, not one past them.
  const BoundsWindow tail = boundsWindowOf(live, 0x2ff8);
  EXPECT_TRUE(tail.allocation);
  EXPECT_FALSE(boundsWindowOf(live, 0x6000).allocation);
  EXPECT_TRUE(tail.holds(0x2ff8, 8));
  EXPECT_FALSE(tail.holds(0x2ff8, 9));
  EXPECT_FALSE(tail.holds(0x2ef8, 8));
}

TEST_F(GlobalBoundsCheck, AllocationsEndAtTheirGuardPage) {
  const DevicePtr page = static_cast<DevicePtr>(::sysconf(_SC_PAGESIZE));
  DevicePtr whole = backend->allocate(1024);
  DevicePtr odd = backend->allocate(40);
  allocations = {whole, odd};
  // cudaMalloc's alignment; a multiple of 256 bytes ends at the page.
  EXPECT_EQ(whole % 256, 0u);
  EXPECT_EQ((whole + 1024) % page, 0u);
  EXPECT_EQ(odd % 256, 0u);
  EXPECT_EQ((odd + 256) % page, 0u);
}

TEST_F(GlobalBoundsCheck, UnobservedCopyIsReportedAtTheGuardPage) {
  // A memcpy of a length the compiler does not know is a library call the
  // check hooks do not see: the guard page after the buffer stops it. The
  // report comes before the fault takes its course (under AddressSanitizer,
  // its own report follows).
  auto kernel = build("copy_past", R"cuda(
extern "C" __global__ void copy_past(int *data, int n) {
  int local[128];
  if (threadIdx.x == 0) {
    memcpy(local, data, n * sizeof(int));
    data[0] = local[n - 1];
  }
}
)cuda");
  DevicePtr data = ints(std::vector<int>(64, 0)); // 256 bytes
  // The child that dies runs the test afresh: its addresses are its own.
  EXPECT_DEATH(launch(*kernel, data, 100),
               "emulated kernel 'copy_past', block \\(0,0,0\\), thread "
               "\\(0,0,0\\): out-of-bounds global memory access at "
               "0x[0-9a-f]+, unseen by check mode's hooks, reached a guard "
               "page: offset [0-9]+ of the nearest allocation \\(256 bytes "
               "at 0x[0-9a-f]+\\): [0-9]+ bytes? past its end");
}

TEST_F(GlobalBoundsCheck, PlanLaunchOutsideItsWorkspaceFails) {
  // A plan's buffers and its workspace come from the backend: a store past
  // the workspace fails the call.
  std::string binary = backend->compile({"fill", R"cuda(
extern "C" __global__ void fill(int *out, int *scratch, int n) {
  scratch[threadIdx.x + n] = threadIdx.x;
  out[threadIdx.x] = scratch[threadIdx.x + n];
}
)cuda"});
  Plan plan;
  plan.name = "bounds";
  plan.kernels = {{"fill", binary}};
  PlanBuffer out{"out", BufferAccess::Out};
  PlanBuffer scratch{"scratch", BufferAccess::Workspace, SizeExpr::of(256)};
  plan.buffers = {out, scratch};
  PlanLaunch launch;
  launch.block[0] = 64;
  launch.args = {LaunchArg::buffer(0), LaunchArg::buffer(1),
                 LaunchArg::paramI32(0)};
  plan.params = {"n"};
  plan.launches = {launch};
  PlanExecutor executor(*backend, plan);
  DevicePtr result = ints(std::vector<int>(64, 0));
  executor.run({result, 0}, {0}, nullptr);
  EXPECT_EQ(download(result, 64)[63], 63);
  EXPECT_THAT(
      [&] {
        executor.run({result, 0}, {1 << 20}, nullptr);
      },
      ThrowsMessage<DeviceError>(
          AllOf(HasSubstr("emulated kernel 'fill' failed"),
                HasSubstr("out-of-bounds global memory write of 4 bytes"),
                HasSubstr("bytes past its end"))));
}

} // namespace
