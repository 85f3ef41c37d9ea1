//===- IndexFaultTest.cpp - Offsets outside their contract are reported ---===//
//
// Kernels read packed offsets (cu_seqlens) on the device and clamp them, so
// offsets that do not start at 0, decrease or do not end at the packed
// rows touch nothing outside the tensors but leave rows unwritten. The
// device library's packed_rows raises its module's index-fault word; the
// backend reads and clears the words of the kernels a plan launched when
// the stream is synchronized.
//
//===----------------------------------------------------------------------===//

#include "runtime/backends/EmulationBackend.h"
#include "runtime/plans/Plan.h"
#include "runtime/plans/PlanExecutor.h"
#include "test/support/DeviceHeaders.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <memory>
#include <string>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

/// Each entry's row count, by packed_rows.
const char *kRowsSource = R"cuda(
#include "rudnn/packed.cuh"
extern "C" __global__ void entry_rows(const int *offsets, int *counts,
                                      int entries, int total) {
  for (int b = threadIdx.x; b < entries; b += blockDim.x)
    counts[b] = rudnn::packed_rows(offsets, b, total, entries).count;
}
)cuda";

class IndexFault : public ::testing::Test {
protected:
  void SetUp() override {
    EmulationOptions options =
        EmulationOptions::fromEnvironment(samples::deviceHeaders());
    options.threads = 2;
    backend = std::make_unique<EmulationBackend>(options);
    Plan plan;
    plan.name = "rows";
    plan.kernels = {
        {"entry_rows", backend->compile({"entry_rows", kRowsSource})}};
    plan.buffers = {{"offsets", BufferAccess::In},
                    {"counts", BufferAccess::Out}};
    plan.params = {"entries", "total"};
    PlanLaunch launch;
    launch.block[0] = 32;
    launch.args = {LaunchArg::buffer(0), LaunchArg::buffer(1),
                   LaunchArg::paramI32(0), LaunchArg::paramI32(1)};
    plan.launches = {launch};
    executor = std::make_unique<PlanExecutor>(*backend, plan);
  }
  void TearDown() override {
    executor.reset();
    for (DevicePtr pointer : allocations)
      backend->release(pointer);
  }

  /// Runs the plan over `offsets` of `total` rows; the counts it wrote.
  std::vector<int> run(const std::vector<int> &offsets, int total) {
    const int entries = static_cast<int>(offsets.size()) - 1;
    DevicePtr in = backend->allocate(offsets.size() * sizeof(int));
    DevicePtr out = backend->allocate(entries * sizeof(int));
    allocations.insert(allocations.end(), {in, out});
    backend->copyToDevice(in, offsets.data(), offsets.size() * sizeof(int),
                          nullptr);
    executor->run({in, out}, {entries, total}, nullptr);
    std::vector<int> counts(entries);
    backend->copyToHost(counts.data(), out, counts.size() * sizeof(int),
                        nullptr);
    return counts;
  }

  std::unique_ptr<EmulationBackend> backend;
  std::unique_ptr<PlanExecutor> executor;
  std::vector<DevicePtr> allocations;
};

TEST_F(IndexFault, OffsetsWithinTheContractRaiseNothing) {
  EXPECT_THAT(run({0, 3, 3, 7}, 7), ElementsAre(3, 0, 4));
  EXPECT_TRUE(backend->takeIndexFaults(nullptr).empty());
  EXPECT_NO_THROW(backend->synchronizeCheckingIndices(nullptr));
}

TEST_F(IndexFault, EachBrokenRuleRaisesTheWordOnceUntilTaken) {
  const std::vector<std::pair<std::vector<int>, int>> broken = {
      {{0, 3, 2, 7}, 7},  // decreasing
      {{1, 3, 5, 7}, 7},  // not from 0
      {{0, 3, 5, 6}, 7},  // ends before the rows
      {{0, 3, 5, 9}, 7},  // ends past them
      {{0, -2, 5, 7}, 7}, // negative
  };
  for (const auto &[offsets, total] : broken) {
    run(offsets, total);
    EXPECT_THAT(backend->takeIndexFaults(nullptr), ElementsAre("entry_rows"))
        << "offsets starting " << offsets[0] << ", " << offsets[1];
    // Taken: cleared, and a good call after raises nothing.
    EXPECT_TRUE(backend->takeIndexFaults(nullptr).empty());
    run({0, 3, 3, 7}, 7);
    EXPECT_TRUE(backend->takeIndexFaults(nullptr).empty());
  }
  // Clamped, the decreasing offsets still stay inside the rows.
  EXPECT_THAT(run({0, 3, 2, 7}, 7), ElementsAre(3, 0, 5));
  EXPECT_THAT([&] { backend->synchronizeCheckingIndices(nullptr); },
              ThrowsMessage<InvalidArgument>(AllOf(
                  HasSubstr("read offsets (cu_seqlens) that do not start at 0"),
                  HasSubstr("rows outside every entry were not written"),
                  HasSubstr("'entry_rows'"))));
  EXPECT_NO_THROW(backend->synchronizeCheckingIndices(nullptr));
}

TEST_F(IndexFault, OnlyModulesReadingOffsetsHaveAWord) {
  const std::string source =
      "extern \"C\" __global__ void nothing(int *x) { x[0] = 1; }";
  auto plain = backend->load(backend->compile({"nothing", source}), "nothing");
  EXPECT_EQ(plain->indexFault, 0u);
  auto rows = backend->load(backend->compile({"entry_rows", kRowsSource}),
                            "entry_rows");
  EXPECT_NE(rows->indexFault, 0u);
}

} // namespace
