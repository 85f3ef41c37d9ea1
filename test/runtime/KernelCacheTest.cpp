//===- KernelCacheTest.cpp - Kernel cache in memory and on disk -----------===//

#include "runtime/cache/KernelCache.h"

#include "runtime/cache/Hash.h"
#include "test/runtime/KernelCacheTestSupport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace rudnn::runtime;
using namespace rudnn::cachetest;

namespace {

/// Files in `dir` whose names end with `suffix`.
std::vector<fs::path> filesEndingWith(const fs::path &dir,
                                      const std::string &suffix) {
  std::vector<fs::path> found;
  for (const auto &entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(entry.path());
  }
  return found;
}

/// A producer that must not run (the bytes are expected from a cache level).
std::string mustNotProduce() {
  ADD_FAILURE() << "producer ran although the entry was cached";
  return "";
}

TEST(KernelCacheMemory, SecondLookupIsAMemoryHit) {
  TempDir dir;
  KernelCache cache(optionsFor(dir.cacheDir()));
  Hash128 key = keyFor(1);
  int runs = 0;
  auto produce = countingProducer(key, runs);

  auto first = cache.getOrCreate(key, produce);
  auto second = cache.getOrCreate(key, produce);

  EXPECT_EQ(runs, 1);
  EXPECT_EQ(*first, payloadFor(key));
  EXPECT_EQ(first, second);
  EXPECT_EQ(lookups(cache), (Lookups{1, 1, 0, 0}));
  EXPECT_TRUE(cache.diskEnabled());
  EXPECT_EQ(cache.directory(), dir.cacheDir());
  EXPECT_EQ(fs::path(cache.entryPath(key)),
            fs::path(dir.cacheDir()) / (key.hex() + ".rdk"));
  EXPECT_TRUE(isValidEntry(cache.entryPath(key), key, payloadFor(key)));
}

TEST(KernelCacheMemory, EmptyDirectoryMeansMemoryOnly) {
  testing::internal::CaptureStderr();
  KernelCache cache(optionsFor(""));
  Hash128 key = keyFor(2);
  int runs = 0;
  auto produce = countingProducer(key, runs);
  auto first = cache.getOrCreate(key, produce);
  auto second = cache.getOrCreate(key, produce);
  std::string err = testing::internal::GetCapturedStderr();

  EXPECT_EQ(runs, 1);
  EXPECT_EQ(*second, payloadFor(key));
  EXPECT_FALSE(cache.diskEnabled());
  EXPECT_EQ(cache.entryPath(key), "");
  EXPECT_THAT(err, ::testing::Not(::testing::HasSubstr("warning")));
}

TEST(KernelCacheMemory, ClearMemoryKeepsDiskEntries) {
  TempDir dir;
  KernelCache cache(optionsFor(dir.cacheDir()));
  Hash128 key = keyFor(3);
  cache.getOrCreate(key, [&] { return payloadFor(key); });
  cache.clearMemory();
  auto again = cache.getOrCreate(key, mustNotProduce);

  EXPECT_EQ(*again, payloadFor(key));
  EXPECT_EQ(cache.counters().misses, 1u);
  EXPECT_EQ(cache.counters().memoryHits, 0u);
  EXPECT_EQ(cache.counters().diskHits, 1u);
}

TEST(KernelCacheDisk, FreshCacheHitsOnDisk) {
  TempDir dir;
  Hash128 key = keyFor(4);
  {
    KernelCache writer(optionsFor(dir.cacheDir()));
    writer.getOrCreate(key, [&] { return payloadFor(key); });
    EXPECT_EQ(writer.counters().misses, 1u);
  }
  KernelCache reader(optionsFor(dir.cacheDir()));
  auto first = reader.getOrCreate(key, mustNotProduce);
  auto second = reader.getOrCreate(key, mustNotProduce);

  EXPECT_EQ(*first, payloadFor(key));
  EXPECT_EQ(first, second);
  EXPECT_EQ(lookups(reader), (Lookups{0, 1, 1, 0}));
  // Distinct keys get distinct files.
  Hash128 other = keyFor(5);
  reader.getOrCreate(other, [&] { return payloadFor(other); });
  EXPECT_EQ(filesEndingWith(dir.cacheDir(), ".rdk").size(), 2u);
  EXPECT_TRUE(isValidEntry(reader.entryPath(other), other, payloadFor(other)));
}

TEST(KernelCacheDisk, EmptyPayloadRoundTrips) {
  TempDir dir;
  Hash128 key = keyFor(6);
  KernelCache(optionsFor(dir.cacheDir())).getOrCreate(key, [] {
    return std::string();
  });
  KernelCache reader(optionsFor(dir.cacheDir()));
  EXPECT_EQ(*reader.getOrCreate(key, mustNotProduce), "");
  EXPECT_EQ(reader.counters().diskHits, 1u);
}

/// Writes `key`'s entry, lets `damage` spoil the file, and checks that a
/// fresh cache rejects it, produces again and rewrites a valid entry that a
/// further cache then hits.
void expectRepaired(const std::function<void(const fs::path &entry,
                                             const std::string &dir)> &damage) {
  TempDir dir;
  Hash128 key = keyFor(7);
  fs::path entry;
  {
    KernelCache cache(optionsFor(dir.cacheDir()));
    cache.getOrCreate(key, [&] { return payloadFor(key); });
    entry = cache.entryPath(key);
  }
  ASSERT_TRUE(isValidEntry(entry, key, payloadFor(key)));
  damage(entry, dir.cacheDir());
  ASSERT_FALSE(isValidEntry(entry, key, payloadFor(key)));

  {
    KernelCache cache(optionsFor(dir.cacheDir()));
    int runs = 0;
    auto value = cache.getOrCreate(key, countingProducer(key, runs));
    EXPECT_EQ(*value, payloadFor(key));
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(cache.counters().rejectedEntries, 1u);
    EXPECT_EQ(cache.counters().misses, 1u);
    EXPECT_EQ(cache.counters().diskHits, 0u);
    EXPECT_TRUE(cache.diskEnabled());
  }
  EXPECT_TRUE(isValidEntry(entry, key, payloadFor(key)));

  KernelCache cache(optionsFor(dir.cacheDir()));
  EXPECT_EQ(*cache.getOrCreate(key, mustNotProduce), payloadFor(key));
  EXPECT_EQ(cache.counters().diskHits, 1u);
  EXPECT_EQ(cache.counters().rejectedEntries, 0u);
}

TEST(KernelCacheDamage, FlippedPayloadByte) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    std::string bytes = readFile(entry);
    bytes[kHeaderSize + (bytes.size() - kHeaderSize) / 2] ^= 0x20;
    writeFile(entry, bytes);
  });
}

TEST(KernelCacheDamage, TruncatedToHalf) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    fs::resize_file(entry, fs::file_size(entry) / 2);
  });
}

TEST(KernelCacheDamage, ShorterThanAHeader) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    fs::resize_file(entry, kHeaderSize - 1);
  });
}

TEST(KernelCacheDamage, TrailingBytes) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    writeFile(entry, readFile(entry) + "x");
  });
}

TEST(KernelCacheDamage, RandomBytes) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    std::mt19937 random(12345);
    std::string bytes(3000, '\0');
    for (char &c : bytes)
      c = static_cast<char>(random() & 0xff);
    writeFile(entry, bytes);
  });
}

TEST(KernelCacheDamage, WrongFormatVersion) {
  expectRepaired([](const fs::path &entry, const std::string &) {
    std::string bytes = readFile(entry);
    bytes[kVersionOffset] = 2;
    writeFile(entry, bytes);
  });
}

TEST(KernelCacheDamage, AnotherKeysEntry) {
  expectRepaired([](const fs::path &entry, const std::string &dir) {
    // A valid entry, but of another key, under this key's name.
    Hash128 other = keyFor(8);
    KernelCache cache(optionsFor(dir));
    cache.getOrCreate(other, [&] { return payloadFor(other); });
    fs::copy_file(cache.entryPath(other), entry,
                  fs::copy_options::overwrite_existing);
    EXPECT_TRUE(isValidEntry(cache.entryPath(other), other, payloadFor(other)));
  });
}

TEST(KernelCacheCheck, RejectedDiskEntryIsRemovedAndProducedAgain) {
  TempDir dir;
  Hash128 key = keyFor(35);
  // Whole (right header and checksum) but not what the key promises.
  KernelCache(optionsFor(dir.cacheDir())).getOrCreate(key, [] {
    return std::string("planted");
  });
  auto check = [&](const std::string &bytes) {
    if (bytes != payloadFor(key))
      throw std::runtime_error("does not load");
  };

  testing::internal::CaptureStderr();
  KernelCache cache(optionsFor(dir.cacheDir()));
  int runs = 0;
  auto value = cache.getOrCreate(key, countingProducer(key, runs), check);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(*value, payloadFor(key));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.counters().unusableEntries, 1u);
  EXPECT_EQ(cache.counters().diskHits, 0u);
  EXPECT_THAT(err, ::testing::HasSubstr(cache.entryPath(key)));
  EXPECT_THAT(err, ::testing::HasSubstr("does not load"));
  EXPECT_TRUE(isValidEntry(cache.entryPath(key), key, payloadFor(key)));
  // The memory level is not checked again; the rebuilt entry passes.
  EXPECT_EQ(cache.getOrCreate(key, mustNotProduce, check), value);
  KernelCache fresh(optionsFor(dir.cacheDir()));
  EXPECT_EQ(*fresh.getOrCreate(key, mustNotProduce, check), payloadFor(key));
  EXPECT_EQ(fresh.counters().diskHits, 1u);
  EXPECT_EQ(fresh.counters().unusableEntries, 0u);
}

/// Whether some of `threads` callers have neither started waiting for the
/// key nor started producing it. A producer spins on this so that every
/// caller overlaps its run, whatever the scheduling; a cache that wrongly
/// lets each caller produce still ends the spin, and fails the counts.
bool someoneStillArriving(const KernelCache &cache,
                          const std::atomic<int> &runs, int threads) {
  return cache.counters().waits.load() + static_cast<uint64_t>(runs.load()) <
         static_cast<uint64_t>(threads);
}

/// Runs body(i) on `count` threads at once and joins them.
template <typename Body> void runConcurrently(int count, Body body) {
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i)
    threads.emplace_back(body, i);
  for (std::thread &thread : threads)
    thread.join();
}

// The thread tests use a memory-only cache: they are about the memory
// level, and on disk the per-key file lock would serialise the callers
// anyway (and keep a waiting producer from ever seeing them arrive).
TEST(KernelCacheConcurrency, SixteenThreadsProduceOnce) {
  KernelCache cache(optionsFor(""));
  Hash128 key = keyFor(9);
  constexpr int kThreads = 16;
  std::atomic<int> runs{0};
  std::vector<std::shared_ptr<const std::string>> results(kThreads);

  runConcurrently(kThreads, [&](int i) {
    results[i] = cache.getOrCreate(key, [&] {
      ++runs;
      while (someoneStillArriving(cache, runs, kThreads))
        std::this_thread::yield();
      return payloadFor(key);
    });
  });

  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.counters().misses, 1u);
  EXPECT_EQ(cache.counters().waits, uint64_t(kThreads - 1));
  for (const auto &result : results) {
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(*result, payloadFor(key));
  }
}

TEST(KernelCacheConcurrency, ProducerExceptionReachesEveryWaiter) {
  KernelCache cache(optionsFor(""));
  Hash128 key = keyFor(10);
  constexpr int kThreads = 16;
  std::atomic<int> runs{0};
  std::vector<std::string> errors(kThreads);

  runConcurrently(kThreads, [&](int i) {
    try {
      cache.getOrCreate(key, [&]() -> std::string {
        ++runs;
        while (someoneStillArriving(cache, runs, kThreads))
          std::this_thread::yield();
        throw std::runtime_error("producer failed");
      });
    } catch (const std::runtime_error &error) {
      errors[i] = error.what();
    }
  });

  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.counters().waits, uint64_t(kThreads - 1));
  for (const std::string &error : errors)
    EXPECT_EQ(error, "producer failed");
  // Nothing was stored: the next call produces again.
  auto value = cache.getOrCreate(key, countingProducer(key, runs));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(*value, payloadFor(key));
  EXPECT_EQ(cache.counters().misses, 2u);
  EXPECT_EQ(cache.counters().memoryHits, 0u);
}

TEST(KernelCacheConcurrency, FailedProductionLeavesNoDiskEntry) {
  TempDir dir;
  KernelCache cache(optionsFor(dir.cacheDir()));
  Hash128 key = keyFor(34);
  EXPECT_THROW(
      cache.getOrCreate(
          key, []() -> std::string { throw std::runtime_error("failed"); }),
      std::runtime_error);
  EXPECT_FALSE(fs::exists(cache.entryPath(key)));
  EXPECT_TRUE(cache.diskEnabled());

  int runs = 0;
  auto value = cache.getOrCreate(key, countingProducer(key, runs));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(*value, payloadFor(key));
  EXPECT_EQ(cache.counters().misses, 2u);
  EXPECT_TRUE(isValidEntry(cache.entryPath(key), key, payloadFor(key)));
}

TEST(KernelCacheConcurrency, ProcessesShareOneProduction) {
  TempDir dir;
  Hash128 key = keyFor(11);
  constexpr int kProcesses = 4;
  constexpr int kThreadsPerProcess = 8;
  // A payload large enough that a reader could see a torn file if writes
  // were not atomic.
  const std::string expected = payloadFor(key, 1 << 20);

  // Children block on the pipe until the parent closes it, so they start
  // their lookups together.
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  std::vector<pid_t> children;
  int forkError = 0;
  for (int p = 0; p < kProcesses && !forkError; ++p) {
    pid_t pid = ::fork();
    if (pid < 0) {
      forkError = errno;
      break;
    }
    if (pid == 0) {
      // Child: no gtest assertions here; the exit status reports the number
      // of producer runs, or 100 and up for a failure.
      ::close(start[1]);
      char byte;
      while (::read(start[0], &byte, 1) < 0 && errno == EINTR) {
      }
      KernelCache cache(optionsFor(dir.cacheDir()));
      std::atomic<int> runs{0};
      std::atomic<bool> wrongBytes{false};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreadsPerProcess; ++t)
        threads.emplace_back([&] {
          auto value = cache.getOrCreate(key, [&] {
            ++runs;
            return payloadFor(key, 1 << 20);
          });
          if (!value || *value != expected)
            wrongBytes = true;
        });
      for (std::thread &thread : threads)
        thread.join();
      if (wrongBytes)
        ::_exit(100);
      if (cache.counters().misses != static_cast<uint64_t>(runs))
        ::_exit(101);
      if (cache.counters().misses + cache.counters().diskHits != 1)
        ::_exit(102);
      ::_exit(runs);
    }
    children.push_back(pid);
  }
  // Closing releases the children (all of them, even after a failed fork,
  // so that none is left blocked).
  ::close(start[0]);
  ::close(start[1]);

  int totalRuns = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << pid << " did not exit";
    int code = WEXITSTATUS(status);
    EXPECT_LT(code, 100) << "child " << pid << " failed with " << code;
    totalRuns += code < 100 ? code : 0;
  }
  ASSERT_EQ(forkError, 0) << std::strerror(forkError);
  EXPECT_GE(totalRuns, 1);
  EXPECT_EQ(totalRuns, 1);

  std::vector<fs::path> entries = filesEndingWith(dir.cacheDir(), ".rdk");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].filename(), key.hex() + ".rdk");
  EXPECT_TRUE(isValidEntry(entries[0], key, expected));
  for (const auto &file : fs::directory_iterator(dir.cacheDir()))
    EXPECT_THAT(file.path().filename().string(),
                ::testing::Not(::testing::HasSubstr(".tmp.")));
}

TEST(KernelCacheUnwritable, ParentIsAFileDegradesToMemoryWithOneWarning) {
  TempDir dir;
  fs::path blocker = dir.path() / "file";
  writeFile(blocker, "not a directory");
  std::string cacheDir = (blocker / "cache").string();
  KernelCache cache(optionsFor(cacheDir));
  int runs = 0;

  testing::internal::CaptureStderr();
  std::vector<std::shared_ptr<const std::string>> values;
  for (int i = 12; i < 15; ++i) {
    Hash128 key = keyFor(i);
    values.push_back(cache.getOrCreate(key, countingProducer(key, runs)));
  }
  auto again = cache.getOrCreate(keyFor(12), mustNotProduce);
  std::string err = testing::internal::GetCapturedStderr();

  EXPECT_FALSE(cache.diskEnabled());
  EXPECT_EQ(runs, 3);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(*values[i], payloadFor(keyFor(12 + i)));
  EXPECT_EQ(again, values[0]);
  EXPECT_EQ(cache.counters().memoryHits, 1u);
  EXPECT_EQ(countOccurrences(err, "warning:"), 1u) << err;
  EXPECT_THAT(err, ::testing::HasSubstr(cacheDir));
  EXPECT_EQ(readFile(blocker), "not a directory");
}

TEST(KernelCacheUnwritable, UncreatableFilesDegradeToMemoryWithOneWarning) {
  // /proc/self is a directory in which nobody, root included, may create
  // files: the directory exists but no entry can be written.
  std::string cacheDir = "/proc/self";
  if (!fs::is_directory(cacheDir))
    GTEST_SKIP() << "no /proc";
  KernelCache cache(optionsFor(cacheDir));
  int runs = 0;

  testing::internal::CaptureStderr();
  for (int i = 15; i < 18; ++i) {
    Hash128 key = keyFor(i);
    EXPECT_EQ(*cache.getOrCreate(key, countingProducer(key, runs)),
              payloadFor(key));
  }
  std::string err = testing::internal::GetCapturedStderr();

  EXPECT_FALSE(cache.diskEnabled());
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(countOccurrences(err, "warning:"), 1u) << err;
  EXPECT_THAT(err, ::testing::HasSubstr(cacheDir));
  EXPECT_FALSE(fs::exists(cache.entryPath(keyFor(15))));
}

TEST(KernelCacheEviction, LeastRecentlyUsedGoFirst) {
  TempDir dir;
  constexpr size_t kPayload = 1024;
  // Room for three entries of a 1 KiB payload, not four.
  constexpr uint64_t kMaxBytes = 3584;
  auto produceFor = [&](const Hash128 &key) {
    return [key] { return payloadFor(key, kPayload); };
  };
  Hash128 keys[6];
  for (int i = 0; i < 6; ++i)
    keys[i] = keyFor(20 + i);
  // Distinct, increasing modification times far in the past, so that the
  // order is explicit and anything touched now is newer.
  auto base = fs::file_time_type::clock::now() - std::chrono::hours(10);
  auto age = [&](int i) {
    fs::last_write_time(fs::path(dir.cacheDir()) / (keys[i].hex() + ".rdk"),
                        base + std::chrono::minutes(i));
  };

  {
    KernelCache cache(optionsFor(dir.cacheDir(), kMaxBytes));
    for (int i = 0; i < 3; ++i) {
      cache.getOrCreate(keys[i], produceFor(keys[i]));
      age(i);
    }
    EXPECT_EQ(cache.counters().evictions, 0u);
  }
  uint64_t entrySize =
      fs::file_size(fs::path(dir.cacheDir()) / (keys[0].hex() + ".rdk"));
  ASSERT_GT(entrySize, kPayload);
  ASSERT_LE(3 * entrySize, kMaxBytes);
  ASSERT_GT(4 * entrySize, kMaxBytes);

  KernelCache cache(optionsFor(dir.cacheDir(), kMaxBytes));
  // A disk hit on the oldest entry makes it the most recently used.
  EXPECT_EQ(*cache.getOrCreate(keys[0], mustNotProduce),
            payloadFor(keys[0], kPayload));
  EXPECT_EQ(cache.counters().diskHits, 1u);
  EXPECT_GT(fs::last_write_time(cache.entryPath(keys[0])),
            base + std::chrono::minutes(5));

  for (int i = 3; i < 6; ++i) {
    cache.getOrCreate(keys[i], produceFor(keys[i]));
    age(i);
  }

  EXPECT_EQ(cache.counters().evictions, 3u);
  for (int i : {1, 2, 3})
    EXPECT_FALSE(fs::exists(cache.entryPath(keys[i]))) << "entry " << i;
  for (int i : {0, 4, 5})
    EXPECT_TRUE(isValidEntry(cache.entryPath(keys[i]), keys[i],
                             payloadFor(keys[i], kPayload)))
        << "entry " << i;
  uint64_t total = 0;
  for (const fs::path &entry : filesEndingWith(dir.cacheDir(), ".rdk"))
    total += fs::file_size(entry);
  EXPECT_LE(total, kMaxBytes);
  EXPECT_EQ(total, 3 * entrySize);
}

TEST(KernelCacheEviction, KeepsTheEntryJustWrittenAndForeignFiles) {
  TempDir dir;
  fs::create_directories(dir.cacheDir());
  fs::path notes = fs::path(dir.cacheDir()) / "notes.rdk";
  writeFile(notes, std::string(4096, 'n'));
  fs::last_write_time(notes, fs::file_time_type::clock::now() -
                                 std::chrono::hours(100));
  // Bound smaller than any entry: each write evicts everything else of
  // ours, but never itself.
  KernelCache cache(optionsFor(dir.cacheDir(), 1));
  Hash128 first = keyFor(30), second = keyFor(31);
  cache.getOrCreate(first, [&] { return payloadFor(first); });
  EXPECT_TRUE(isValidEntry(cache.entryPath(first), first, payloadFor(first)));
  EXPECT_EQ(cache.counters().evictions, 0u);

  cache.getOrCreate(second, [&] { return payloadFor(second); });
  EXPECT_FALSE(fs::exists(cache.entryPath(first)));
  EXPECT_TRUE(
      isValidEntry(cache.entryPath(second), second, payloadFor(second)));
  EXPECT_EQ(cache.counters().evictions, 1u);
  EXPECT_EQ(readFile(notes), std::string(4096, 'n'));
}

TEST(KernelCacheEviction, RemovesOnlyStaleTemporaryFiles) {
  TempDir dir;
  fs::create_directories(dir.cacheDir());
  Hash128 key = keyFor(32);
  fs::path stale =
      fs::path(dir.cacheDir()) / (key.hex() + ".rdk.tmp.99999.1.2");
  fs::path fresh =
      fs::path(dir.cacheDir()) / (key.hex() + ".rdk.tmp.99999.1.3");
  writeFile(stale, "partial");
  writeFile(fresh, "partial");
  fs::last_write_time(stale,
                      fs::file_time_type::clock::now() - std::chrono::hours(1));

  KernelCache cache(optionsFor(dir.cacheDir()));
  Hash128 other = keyFor(33);
  cache.getOrCreate(other, [&] { return payloadFor(other); });

  EXPECT_FALSE(fs::exists(stale));
  // Possibly a live writer's: left alone.
  EXPECT_TRUE(fs::exists(fresh));
}

TEST(KernelCacheDefaults, DirectoryFollowsEnvironmentInOrder) {
  EnvGuard env;
  env.set("RUDNN_CACHE_DIR", "/tmp/rudnn-explicit");
  env.set("XDG_CACHE_HOME", "/tmp/xdg-cache");
  env.set("HOME", "/tmp/some-home");
  EXPECT_EQ(defaultCacheDirectory(), "/tmp/rudnn-explicit");
  EXPECT_EQ(KernelCacheOptions().directory, "/tmp/rudnn-explicit");

  // Set and empty: memory only, not the next default.
  env.set("RUDNN_CACHE_DIR", "");
  EXPECT_EQ(defaultCacheDirectory(), "");
  EXPECT_EQ(KernelCacheOptions().directory, "");

  env.set("RUDNN_CACHE_DIR", nullptr);
  EXPECT_EQ(defaultCacheDirectory(), "/tmp/xdg-cache/rudnn");

  // The XDG spec treats an empty or relative value as unset.
  env.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(defaultCacheDirectory(), "/tmp/some-home/.cache/rudnn");
  env.set("XDG_CACHE_HOME", "relative/cache");
  EXPECT_EQ(defaultCacheDirectory(), "/tmp/some-home/.cache/rudnn");

  env.set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(defaultCacheDirectory(), "/tmp/some-home/.cache/rudnn");
}

TEST(KernelCacheDefaults, MaxBytesParsesDecimalAndFallsBack) {
  constexpr uint64_t kDefault = uint64_t(1) << 30;
  EnvGuard env;
  env.set("RUDNN_CACHE_MAX_BYTES", nullptr);
  EXPECT_EQ(defaultCacheMaxBytes(), kDefault);
  env.set("RUDNN_CACHE_MAX_BYTES", "12345");
  EXPECT_EQ(defaultCacheMaxBytes(), 12345u);
  EXPECT_EQ(KernelCacheOptions().maxBytes, 12345u);
  env.set("RUDNN_CACHE_MAX_BYTES", "18446744073709551615");
  EXPECT_EQ(defaultCacheMaxBytes(), UINT64_MAX);

  testing::internal::CaptureStderr();
  for (const char *bad :
       {"abc", "12abc", "-5", " 7", "1e9", "0x10", "18446744073709551616"}) {
    env.set("RUDNN_CACHE_MAX_BYTES", bad);
    EXPECT_EQ(defaultCacheMaxBytes(), kDefault) << "for '" << bad << "'";
  }
  std::string err = testing::internal::GetCapturedStderr();
  // Warned once per process, not once per call.
  EXPECT_LE(countOccurrences(err, "warning:"), 1u) << err;
  if (!err.empty()) {
    EXPECT_THAT(err, ::testing::HasSubstr("RUDNN_CACHE_MAX_BYTES"));
  }
}

} // namespace
