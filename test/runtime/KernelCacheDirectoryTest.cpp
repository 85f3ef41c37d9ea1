//===- KernelCacheDirectoryTest.cpp - Only a private cache directory ------===//
//
// Whoever can write the cache directory chooses the code this process
// loads, so the directory is made private and one that others could write
// into is refused: one warning, then memory only.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/KernelCacheTestSupport.h"

#include <gmock/gmock.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ostream>
#include <string>

using namespace rudnn::runtime;
using namespace rudnn::cachetest;
using ::testing::HasSubstr;

namespace {

/// Lets a cache use `directory`, which holds a valid entry for keyFor(50)
/// planted beforehand; checks that the entry is not read, nothing is
/// written, and one warning names the directory and `reason`.
void expectRefused(const TempDir &dir, const fs::path &directory,
                   const std::string &reason) {
  Hash128 key = keyFor(50), other = keyFor(51);
  KernelCache cache(optionsFor(directory.string()));
  int runs = 0;
  auto produce = [&](const Hash128 &k) {
    return [&runs, k] {
      ++runs;
      return payloadFor(k);
    };
  };
  testing::internal::CaptureStderr();
  auto value = cache.getOrCreate(key, produce(key));
  cache.getOrCreate(other, produce(other));
  std::string err = testing::internal::GetCapturedStderr();

  EXPECT_EQ(*value, payloadFor(key));
  EXPECT_EQ(runs, 2) << "the planted entry was used";
  EXPECT_EQ(cache.counters().diskHits, 0u);
  EXPECT_FALSE(cache.diskEnabled());
  EXPECT_EQ(countOccurrences(err, "warning:"), 1u) << err;
  EXPECT_THAT(err, HasSubstr(directory.string()));
  EXPECT_THAT(err, HasSubstr(reason));
  if (directory.string().rfind(dir.path().string(), 0) == 0) {
    EXPECT_FALSE(fs::exists(cache.entryPath(other)));
  }
}

/// A cache directory inside `dir` holding a valid entry for keyFor(50).
fs::path directoryWithEntry(const TempDir &dir) {
  Hash128 key = keyFor(50);
  KernelCache writer(optionsFor((dir.path() / "writer").string()));
  writer.getOrCreate(key, [&] { return payloadFor(key); });
  fs::path directory = dir.path() / "shared";
  fs::create_directory(directory);
  fs::copy_file(writer.entryPath(key), directory / (key.hex() + ".rdk"));
  return directory;
}

struct ModeCase {
  mode_t mode;
  const char *reason;
};

void PrintTo(const ModeCase &param, std::ostream *out) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(param.mode));
  *out << text;
}

class KernelCacheDirectoryMode : public ::testing::TestWithParam<ModeCase> {};

TEST_P(KernelCacheDirectoryMode, WritableByOthersIsRefused) {
  TempDir dir;
  fs::path directory = directoryWithEntry(dir);
  ASSERT_EQ(::chmod(directory.c_str(), GetParam().mode), 0);
  expectRefused(dir, directory, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, KernelCacheDirectoryMode,
    ::testing::Values(ModeCase{0777, "writable by others (mode 0777)"},
                      // Sticky, like /tmp: others still create files in it.
                      ModeCase{01777, "writable by others (mode 1777)"},
                      ModeCase{0770, "writable by its group (mode 0770)"},
                      ModeCase{0702, "writable by others (mode 0702)"}));

TEST(KernelCacheDirectory, OwnedByAnotherUserIsRefused) {
  TempDir dir;
  if (::geteuid() == 0) {
    // Root can give a private directory away to test the owner check alone.
    fs::path directory = directoryWithEntry(dir);
    ASSERT_EQ(::chmod(directory.c_str(), 0700), 0);
    ASSERT_EQ(::chown(directory.c_str(), 65534, 65534), 0);
    expectRefused(dir, directory, "owned by uid 65534");
    return;
  }
  // Otherwise the root directory: owned by root and writable by nobody else.
  struct stat status;
  if (::stat("/", &status) != 0 || status.st_uid == ::geteuid() ||
      (status.st_mode & (S_IWGRP | S_IWOTH)))
    GTEST_SKIP() << "no directory owned by another user to test with";
  expectRefused(dir, "/", "owned by uid " + std::to_string(status.st_uid));
}

TEST(KernelCacheDirectory, IsCreatedPrivate) {
  TempDir dir;
  fs::path directory = dir.path() / "missing" / "parents" / "rudnn";
  KernelCache cache(optionsFor(directory.string()));
  Hash128 key = keyFor(52);
  cache.getOrCreate(key, [&] { return payloadFor(key); });

  struct stat status;
  ASSERT_EQ(::stat(directory.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  EXPECT_TRUE(cache.diskEnabled());
  EXPECT_TRUE(isValidEntry(cache.entryPath(key), key, payloadFor(key)));
  // A trailing separator names the same directory.
  KernelCache again(optionsFor(directory.string() + "/"));
  EXPECT_EQ(*again.getOrCreate(key, [] { return std::string("rebuilt"); }),
            payloadFor(key));
  EXPECT_EQ(again.counters().diskHits, 1u);
}

TEST(KernelCacheDirectory, PrivateExistingDirectoryIsUsed) {
  TempDir dir;
  fs::path directory = directoryWithEntry(dir);
  // Readable by all is fine: only writing lets someone plant code.
  ASSERT_EQ(::chmod(directory.c_str(), 0755), 0);
  KernelCache cache(optionsFor(directory.string()));
  Hash128 key = keyFor(50);
  EXPECT_EQ(*cache.getOrCreate(key, [] { return std::string("rebuilt"); }),
            payloadFor(key));
  EXPECT_EQ(cache.counters().diskHits, 1u);
  EXPECT_TRUE(cache.diskEnabled());
}

} // namespace
