//===- PreludeCacheTest.cpp - The prelude compiled once, shared -----------===//
//
// Backends share the compiled prelude (the precompiled header, check mode's
// hooks object) through a folder; kernels compiled against it run as they
// do without it, and a broken or missing entry only costs time.
//
//===----------------------------------------------------------------------===//

#include "runtime/backends/EmulationBackend.h"
#include "runtime/backends/EmulationPrelude.h"
#include "test/support/DeviceHeaders.h"
#include "test/support/SampleKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

namespace {

class PreludeCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    folder = fs::path(::testing::TempDir()) /
             ("rudnn-prelude-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder);
  }
  void TearDown() override { fs::remove_all(folder); }

  EmulationOptions options(bool check, const fs::path &shared) const {
    EmulationOptions result =
        EmulationOptions::fromEnvironment(samples::deviceHeaders());
    result.check = check;
    result.sanitize = false;
    result.threads = 2;
    result.preludeDirectory = shared.string();
    return result;
  }

  /// The one entry under `folder` (fails the test when there is not one).
  fs::path onlyEntry() const {
    std::vector<fs::path> entries;
    for (const fs::directory_entry &item : fs::directory_iterator(folder))
      entries.push_back(item.path());
    EXPECT_EQ(entries.size(), 1u);
    return entries.empty() ? fs::path() : entries.front();
  }

  static bool compilerIsClang(EmulationBackend &backend) {
    return backend.deviceDescription().find("clang") != std::string::npos;
  }

  fs::path folder;
};

/// Runs axpy on an odd size through `backend`; the mismatches.
int axpyMismatches(EmulationBackend &backend) {
  const int n = 1001;
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> x(n), y(n), expected(n);
  for (int i = 0; i < n; ++i) {
    x[i] = uniform(random), y[i] = uniform(random);
    expected[i] = __builtin_cpu_supports("fma") ? std::fma(-1.5f, x[i], y[i])
                                                : -1.5f * x[i] + y[i];
  }
  auto kernel =
      backend.load(backend.compile({samples::kAxpyEntry, samples::kAxpySource}),
                   samples::kAxpyEntry);
  DevicePtr dx = backend.allocate(n * sizeof(float));
  DevicePtr dy = backend.allocate(n * sizeof(float));
  backend.copyToDevice(dx, x.data(), n * sizeof(float), nullptr);
  backend.copyToDevice(dy, y.data(), n * sizeof(float), nullptr);
  ArgPack args;
  args.push(n).push(-1.5f).push(dx).push(dy);
  backend.launch(*kernel, {{(n + 127) / 128}, {128}, 0, false}, args, nullptr);
  std::vector<float> out(n);
  backend.copyToHost(out.data(), dy, n * sizeof(float), nullptr);
  backend.release(dx), backend.release(dy);
  int mismatches = 0;
  for (int i = 0; i < n; ++i)
    mismatches += out[i] != expected[i];
  return mismatches;
}

TEST_F(PreludeCacheTest, CompiledOnceAndReusedByLaterBackends) {
  fs::path entry;
  fs::file_time_type header, hooks;
  {
    EmulationBackend first(options(true, folder));
    EXPECT_EQ(axpyMismatches(first), 0);
    entry = onlyEntry();
    hooks = fs::last_write_time(entry / "rudnn_emu_check_hooks.o");
    // GCC takes the precompiled prelude (it is checked when made).
    if (!compilerIsClang(first)) {
      ASSERT_TRUE(fs::exists(entry / "rudnn_emulation.h.gch"));
      header = fs::last_write_time(entry / "rudnn_emulation.h.gch");
    }
  }
  EmulationBackend second(options(true, folder));
  EXPECT_EQ(axpyMismatches(second), 0);
  EXPECT_EQ(onlyEntry(), entry);
  EXPECT_EQ(fs::last_write_time(entry / "rudnn_emu_check_hooks.o"), hooks);
  if (!compilerIsClang(second)) {
    EXPECT_EQ(fs::last_write_time(entry / "rudnn_emulation.h.gch"), header);
  }
  // Outside check mode the flags differ: an entry of its own, no hooks.
  EmulationBackend unchecked(options(false, folder));
  EXPECT_EQ(axpyMismatches(unchecked), 0);
  size_t entries = 0;
  for (const fs::directory_entry &item : fs::directory_iterator(folder)) {
    entries += 1;
    EXPECT_EQ(fs::exists(item.path() / "rudnn_emu_check_hooks.o"),
              item.path() == entry);
  }
  EXPECT_EQ(entries, 2u);
}

TEST_F(PreludeCacheTest, ABrokenPrecompiledHeaderIsMadeAgain) {
  {
    EmulationBackend first(options(false, folder));
    first.compilerIdentity();
  }
  fs::path header = onlyEntry() / "rudnn_emulation.h.gch";
  std::ofstream(header, std::ios::trunc) << "not a precompiled header";
  EmulationBackend second(options(false, folder));
  EXPECT_EQ(axpyMismatches(second), 0);
  if (!compilerIsClang(second)) {
    char magic[5] = {};
    std::ifstream(header, std::ios::binary).read(magic, 4);
    EXPECT_STREQ(magic, "gpch");
  }
}

TEST_F(PreludeCacheTest, WithoutASharedFolderCheckModeStillLinksItsHooks) {
  EmulationBackend backend(options(true, ""));
  EXPECT_EQ(axpyMismatches(backend), 0);
  EXPECT_FALSE(fs::exists(folder));
}

TEST_F(PreludeCacheTest, OnlyTheMostRecentlyUsedEntriesAreKept) {
  fs::create_directories(folder);
  const auto now = fs::file_time_type::clock::now();
  for (int age = 1; age <= kKeptPreludeEntries + 2; ++age) {
    fs::path stale = folder / ("stale-" + std::to_string(age));
    fs::create_directories(stale);
    fs::last_write_time(stale, now - std::chrono::hours(age));
  }
  EmulationBackend backend(options(false, folder));
  backend.compilerIdentity();
  std::vector<std::string> kept;
  for (const fs::directory_entry &item : fs::directory_iterator(folder))
    kept.push_back(item.path().filename().string());
  std::sort(kept.begin(), kept.end());
  ASSERT_EQ(kept.size(), size_t(kKeptPreludeEntries) + 1);
  for (int age = 1; age <= kKeptPreludeEntries; ++age)
    EXPECT_NE(
        std::find(kept.begin(), kept.end(), "stale-" + std::to_string(age)),
        kept.end())
        << age;
}

} // namespace
