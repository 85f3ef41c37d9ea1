//===- KernelCacheTestSupport.h - The cache tests' helpers ------*- C++ -*-===//

#ifndef RUDNN_TEST_RUNTIME_KERNELCACHETESTSUPPORT_H
#define RUDNN_TEST_RUNTIME_KERNELCACHETESTSUPPORT_H

#include "runtime/cache/Hash.h"
#include "runtime/cache/KernelCache.h"
#include "test/support/TempFolders.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
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
#include <utility>
#include <vector>

namespace rudnn::cachetest {

namespace fs = std::filesystem;
using runtime::Hash128;
using runtime::KernelCache;
using runtime::KernelCacheOptions;

// The entry layout documented in KernelCache.h, restated so that a change
// to it is a visible, deliberate change here too.
constexpr size_t kHeaderSize = 44;
constexpr size_t kVersionOffset = 8;
constexpr size_t kKeyLowOffset = 12;
constexpr size_t kKeyHighOffset = 20;
constexpr size_t kSizeOffset = 28;
constexpr size_t kChecksumOffset = 36;

/// A fresh directory under /tmp, removed with everything in it.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/rudnn-kernel-cache-test-XXXXXX";
    const char *made = ::mkdtemp(pattern);
    if (!made)
      throw std::runtime_error("mkdtemp failed");
    path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const fs::path &path() const { return path_; }
  /// The cache directory inside it (created by the cache itself).
  std::string cacheDir() const { return (path_ / "cache").string(); }

private:
  fs::path path_;
};

inline Hash128 keyFor(int i) {
  return runtime::hash128("kernel-" + std::to_string(i));
}

/// Deterministic binary bytes (zeros included) that depend on the key.
inline std::string payloadFor(const Hash128 &key, size_t size = 4096) {
  std::mt19937_64 random(key.low ^ key.high);
  std::string bytes(size, '\0');
  for (char &c : bytes)
    c = static_cast<char>(random() & 0xff);
  return bytes;
}

/// A cache's lookups so far: misses, memory hits, disk hits, rejected
/// entries.
using Lookups = std::array<uint64_t, 4>;
inline Lookups lookups(const KernelCache &cache) {
  const auto &counters = cache.counters();
  return {counters.misses, counters.memoryHits, counters.diskHits,
          counters.rejectedEntries};
}

/// A producer of `key`'s payload that counts its calls in `runs` (an int,
/// or an atomic one where threads share it).
template <typename Counter>
auto countingProducer(const Hash128 &key, Counter &runs) {
  return [key, &runs] {
    ++runs;
    return payloadFor(key);
  };
}

inline KernelCacheOptions optionsFor(const std::string &directory,
                                     uint64_t maxBytes = uint64_t(1) << 30) {
  KernelCacheOptions options;
  options.directory = directory;
  options.maxBytes = maxBytes;
  return options;
}

using rudnn::test::readFile;

inline void writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline size_t countOccurrences(const std::string &text,
                               const std::string &needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

/// Sets or unsets environment variables, restoring them when destroyed.
class EnvGuard {
public:
  void set(const char *name, const char *value) {
    save(name);
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second)
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }

private:
  void save(const char *name) {
    const char *old = std::getenv(name);
    saved.emplace_back(name,
                       old ? std::optional<std::string>(old) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
};

inline uint64_t getU64(const std::string &bytes, size_t offset) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |=
        static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i]))
        << (8 * i);
  return value;
}

/// Checks the file at `path` byte by byte against the documented format.
inline ::testing::AssertionResult isValidEntry(const fs::path &path,
                                               const Hash128 &key,
                                               const std::string &payload) {
  std::string bytes = readFile(path);
  if (bytes.size() != kHeaderSize + payload.size())
    return ::testing::AssertionFailure()
           << path << " has " << bytes.size() << " bytes, expected "
           << kHeaderSize + payload.size();
  if (std::memcmp(bytes.data(), "RUDNNKC\0", 8) != 0)
    return ::testing::AssertionFailure() << path << " has a wrong magic";
  if (bytes[kVersionOffset] != 1 || bytes[kVersionOffset + 1] != 0 ||
      bytes[kVersionOffset + 2] != 0 || bytes[kVersionOffset + 3] != 0)
    return ::testing::AssertionFailure() << path << " has a wrong version";
  if (getU64(bytes, kKeyLowOffset) != key.low ||
      getU64(bytes, kKeyHighOffset) != key.high)
    return ::testing::AssertionFailure() << path << " holds another key";
  if (getU64(bytes, kSizeOffset) != payload.size())
    return ::testing::AssertionFailure() << path << " has a wrong size";
  if (getU64(bytes, kChecksumOffset) != runtime::hash64(payload))
    return ::testing::AssertionFailure() << path << " has a wrong checksum";
  if (bytes.compare(kHeaderSize, std::string::npos, payload) != 0)
    return ::testing::AssertionFailure() << path << " has a wrong payload";
  return ::testing::AssertionSuccess();
}

/// Runs `body` in a child process and returns its exit status, or -1 when
/// it did not finish within `limit` (then it is killed): a lookup that
/// blocks fails the test instead of hanging it.
inline int exitStatusWithin(const std::function<int()> &body,
                            std::chrono::seconds limit) {
  pid_t pid = ::fork();
  if (pid < 0)
    return -2;
  if (pid == 0)
    ::_exit(body());
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -3;
}

} // namespace rudnn::cachetest

#endif // RUDNN_TEST_RUNTIME_KERNELCACHETESTSUPPORT_H
