//===- KernelCacheFileTypeTest.cpp - Only regular files are cache files ---===//
//
// Whatever else sits under an entry's or a lock's name (a FIFO, a socket, a
// directory, a symbolic link) is a damaged entry: ignored, counted, replaced
// where it can be, never blocking and never followed.
//
//===----------------------------------------------------------------------===//

#include "test/runtime/KernelCacheTestSupport.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <ostream>
#include <string>

using namespace rudnn::runtime;
using namespace rudnn::cachetest;

namespace {

enum class Kind { Fifo, Socket, Directory, Symlink };

struct Case {
  const char *name;
  bool lock; // planted under the lock's name, else the entry's
  Kind kind;
};

void PrintTo(const Case &param, std::ostream *out) { *out << param.name; }

std::string lockPathOf(const KernelCache &cache, const Hash128 &key) {
  std::string entry = cache.entryPath(key);
  return entry.substr(0, entry.size() - 4) + ".lock";
}

/// Puts a `kind` file at `path`; a link points at `target`.
::testing::AssertionResult plant(Kind kind, const fs::path &path,
                                 const fs::path &target) {
  switch (kind) {
  case Kind::Fifo:
    if (::mkfifo(path.c_str(), 0600) != 0)
      return ::testing::AssertionFailure() << "mkfifo: " << strerror(errno);
    break;
  case Kind::Socket: {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.string().size() >= sizeof(address.sun_path))
      return ::testing::AssertionFailure() << "socket path too long";
    std::strcpy(address.sun_path, path.c_str());
    int bound =
        ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
    ::close(fd);
    if (bound != 0)
      return ::testing::AssertionFailure() << "bind: " << strerror(errno);
    break;
  }
  case Kind::Directory:
    fs::create_directory(path);
    break;
  case Kind::Symlink:
    fs::create_symlink(target, path);
    break;
  }
  return ::testing::AssertionSuccess();
}

bool isRegularFile(const fs::path &path) {
  struct stat status;
  return ::lstat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

class KernelCacheFileType : public ::testing::TestWithParam<Case> {};

TEST_P(KernelCacheFileType, IsRejectedWithoutBlockingAndReplaced) {
  const Case &param = GetParam();
  TempDir dir;
  Hash128 key = keyFor(40), other = keyFor(41);
  // A valid entry of the same key elsewhere: a link to it must not be read.
  fs::path elsewhere = dir.path() / "elsewhere";
  KernelCache outside(optionsFor(elsewhere.string()));
  outside.getOrCreate(key, [&] { return payloadFor(key); });
  fs::path target = param.lock ? elsewhere / "planted.lock"
                               : fs::path(outside.entryPath(key));
  std::string targetBefore = readFile(outside.entryPath(key));

  KernelCache probe(optionsFor(dir.cacheDir()));
  probe.getOrCreate(other, [&] { return payloadFor(other); });
  fs::path entry = probe.entryPath(key);
  fs::path planted = param.lock ? fs::path(lockPathOf(probe, key)) : entry;
  ASSERT_TRUE(plant(param.kind, planted, target));

  // In a child, so that a lookup blocking in open() fails the test instead
  // of hanging it. The status says 10 * rejected + misses, or 98 when the
  // disk level went off, 99 for wrong bytes.
  int status = exitStatusWithin(
      [&] {
        KernelCache cache(optionsFor(dir.cacheDir()));
        auto value = cache.getOrCreate(key, [&] { return payloadFor(key); });
        if (!value || *value != payloadFor(key))
          return 99;
        if (!cache.diskEnabled())
          return 98;
        return static_cast<int>(10 * cache.counters().rejectedEntries +
                                cache.counters().misses);
      },
      std::chrono::seconds(30));
  ASSERT_NE(status, -1) << "the lookup blocked";
  EXPECT_EQ(status, 11) << "expected one rejected file and one compile";

  bool replaceable = param.kind != Kind::Directory;
  EXPECT_EQ(isRegularFile(planted), replaceable) << planted;
  if (!param.lock && !replaceable)
    EXPECT_TRUE(fs::is_directory(entry));
  else
    EXPECT_TRUE(isValidEntry(entry, key, payloadFor(key)));
  // Nothing was written or created through a link.
  EXPECT_EQ(readFile(outside.entryPath(key)), targetBefore);
  EXPECT_FALSE(fs::exists(elsewhere / "planted.lock"));
  // Other keys still reach the disk.
  KernelCache after(optionsFor(dir.cacheDir()));
  Hash128 third = keyFor(42);
  after.getOrCreate(third, [&] { return payloadFor(third); });
  EXPECT_TRUE(isValidEntry(after.entryPath(third), third, payloadFor(third)));
}

INSTANTIATE_TEST_SUITE_P(
    Planted, KernelCacheFileType,
    ::testing::Values(Case{"EntryFifo", false, Kind::Fifo},
                      Case{"EntrySocket", false, Kind::Socket},
                      Case{"EntryDirectory", false, Kind::Directory},
                      Case{"EntrySymlink", false, Kind::Symlink},
                      Case{"LockFifo", true, Kind::Fifo},
                      Case{"LockSocket", true, Kind::Socket},
                      Case{"LockDirectory", true, Kind::Directory},
                      Case{"LockSymlink", true, Kind::Symlink}),
    [](const ::testing::TestParamInfo<Case> &info) { return info.param.name; });

} // namespace
