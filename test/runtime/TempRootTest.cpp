//===- TempRootTest.cpp - One private temporary folder per process --------===//

#include "runtime/support/TempRoot.h"

#include "test/runtime/KernelCacheTestSupport.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

using namespace rudnn::runtime;
using rudnn::cachetest::EnvGuard;
using rudnn::cachetest::TempDir;
namespace fs = std::filesystem;

namespace {

/// Forks a child that makes its temporary root and a folder in it, sends
/// the root's path back, then ends with `end`; returns the path and the pid.
std::pair<std::string, pid_t> rootOfChild(void (*end)()) {
  int channel[2];
  if (::pipe(channel) != 0)
    return {"", -1};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(channel[0]);
    std::string root = processTempRoot();
    makeTempDirectory("emulation");
    ssize_t ignored = ::write(channel[1], root.data(), root.size());
    (void)ignored;
    ::close(channel[1]);
    end();
    ::_exit(0);
  }
  ::close(channel[1]);
  std::string root;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof(buffer))) > 0;)
    root.append(buffer, static_cast<size_t>(n));
  ::close(channel[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {root, pid};
}

TEST(TempRoot, NamedForTheProcessAndPrivate) {
  std::string root = processTempRoot();
  EXPECT_EQ(root, processTempRoot());
  fs::path path(root);
  EXPECT_EQ(path.parent_path(), fs::temp_directory_path());
  std::string prefix = "rudnn-" + std::to_string(::getpid()) + "-";
  EXPECT_EQ(path.filename().string().rfind(prefix, 0), 0u) << root;
  struct stat status;
  ASSERT_EQ(::stat(root.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  fs::path folder = makeTempDirectory("emulation");
  EXPECT_EQ(folder.parent_path(), path);
  EXPECT_TRUE(fs::is_directory(folder));
  fs::remove_all(folder);
}

TEST(TempRoot, RemovedAtNormalExit) {
  TempDir parent;
  EnvGuard env;
  env.set("TMPDIR", parent.path().c_str());
  auto [root, pid] = rootOfChild([] { std::exit(0); });
  ASSERT_FALSE(root.empty());
  EXPECT_EQ(fs::path(root).parent_path(), parent.path());
  EXPECT_FALSE(fs::exists(root));
}

TEST(TempRoot, RootsOfDeadProcessesAreRemovedOthersKept) {
  TempDir parent;
  EnvGuard env;
  env.set("TMPDIR", parent.path().c_str());
  // Killed: it removes nothing.
  auto [dead, pid] = rootOfChild([] { ::raise(SIGKILL); });
  ASSERT_FALSE(dead.empty());
  ASSERT_TRUE(fs::is_directory(dead)) << "the killed child left no root";
  EXPECT_EQ(fs::path(dead).filename().string().rfind(
                "rudnn-" + std::to_string(pid) + "-", 0),
            0u);

  // A live process's root (this one's), and names that are not roots.
  fs::path live =
      parent.path() / ("rudnn-" + std::to_string(::getpid()) + "-AbC123");
  fs::path deadPid = fs::path(dead).filename();
  std::string deadName = deadPid.string();
  std::string deadPrefix = deadName.substr(0, deadName.size() - 6);
  fs::path notARoot[] = {parent.path() / (deadPrefix + "abc"),
                         parent.path() / (deadPrefix + "abcdefg"),
                         parent.path() / ("rudnn-x" + deadName.substr(6)),
                         parent.path() / (deadPrefix + "file00")};
  fs::create_directory(live);
  for (int i = 0; i < 3; ++i)
    fs::create_directory(notARoot[i]);
  rudnn::cachetest::writeFile(notARoot[3], "a file, not a folder");
  fs::path link = parent.path() / (deadPrefix + "link00");
  fs::path linked = parent.path() / "linked";
  fs::create_directory(linked);
  fs::create_directory_symlink(linked, link);
  fs::path foreign = parent.path() / (deadPrefix + "other0");
  bool canGiveAway = ::geteuid() == 0 && fs::create_directory(foreign) &&
                     ::chown(foreign.c_str(), 65534, 65534) == 0;

  EXPECT_EQ(removeDeadProcessRoots(parent.path().string()), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::is_directory(live));
  for (const fs::path &path : notARoot)
    EXPECT_TRUE(fs::exists(path)) << path;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_directory(linked));
  if (canGiveAway) {
    EXPECT_TRUE(fs::is_directory(foreign)) << "another user's root removed";
  }

  // A process making its root clears the dead ones first.
  auto [leftover, killed] = rootOfChild([] { ::raise(SIGKILL); });
  ASSERT_TRUE(fs::is_directory(leftover));
  auto [fresh, exited] = rootOfChild([] { std::exit(0); });
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_TRUE(fs::is_directory(live));
}

} // namespace
