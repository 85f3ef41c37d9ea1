//===- TempRoot.cpp - One private temporary folder per process ------------===//

#include "runtime/support/TempRoot.h"
#include "runtime/support/Log.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

using namespace rudnn::runtime;
namespace fs = std::filesystem;

namespace {

constexpr const char *kPrefix = "rudnn-";
constexpr size_t kSuffixLength = 6; // mkdtemp's XXXXXX

/// The pid in a root's name `rudnn-<pid>-XXXXXX`, or 0 for any other name.
pid_t pidOfRootName(const std::string &name) {
  std::string prefix = kPrefix;
  if (name.compare(0, prefix.size(), prefix) != 0)
    return 0;
  size_t dash = name.find('-', prefix.size());
  if (dash == std::string::npos || dash == prefix.size() ||
      dash - prefix.size() > 9 || name.size() != dash + 1 + kSuffixLength)
    return 0;
  long pid = 0;
  for (size_t i = prefix.size(); i < dash; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])))
      return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  for (size_t i = dash + 1; i < name.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(name[i])))
      return 0;
  return static_cast<pid_t>(pid);
}

/// mkdtemp on `pattern` (ending in XXXXXX); the folder made.
std::string makeDirectory(const fs::path &pattern) {
  std::string text = pattern.string();
  std::vector<char> name(text.begin(), text.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw std::system_error(errno, std::generic_category(),
                            "cannot create temporary folder " + text);
  return name.data();
}

/// The root of the process that made it; removed when the process exits
/// normally (a forked child that never made its own leaves it alone).
struct Root {
  std::mutex mutex;
  pid_t owner = 0;
  std::string path;

  ~Root() {
    if (owner == ::getpid() && !path.empty()) {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  }
};

Root &root() {
  static Root instance;
  return instance;
}

} // namespace

std::string rudnn::runtime::processTempRoot() {
  Root &state = root();
  std::lock_guard<std::mutex> lock(state.mutex);
  pid_t self = ::getpid();
  if (state.owner == self)
    return state.path;
  fs::path parent = fs::temp_directory_path();
  removeDeadProcessRoots(parent.string());
  state.path =
      makeDirectory(parent / (kPrefix + std::to_string(self) + "-XXXXXX"));
  state.owner = self;
  return state.path;
}

std::string rudnn::runtime::makeTempDirectory(const std::string &prefix) {
  return makeDirectory(fs::path(processTempRoot()) / (prefix + "-XXXXXX"));
}

int rudnn::runtime::removeDeadProcessRoots(const std::string &parent) {
  int removed = 0;
  std::error_code error;
  for (fs::directory_iterator it(parent, error), end; !error && it != end;
       it.increment(error)) {
    pid_t pid = pidOfRootName(it->path().filename().string());
    if (pid <= 0 || pid == ::getpid())
      continue;
    // Only this user's real directories (no link is followed), and only
    // when the process is certainly gone: EPERM means it exists.
    struct stat status;
    if (::lstat(it->path().c_str(), &status) != 0 || !S_ISDIR(status.st_mode) ||
        status.st_uid != ::geteuid())
      continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH)
      continue;
    std::error_code ignored;
    if (fs::remove_all(it->path(), ignored) !=
        static_cast<std::uintmax_t>(-1)) {
      ++removed;
      log(LogLevel::Info, "removed " + it->path().string() +
                              ", left by process " + std::to_string(pid) +
                              " that no longer exists");
    }
  }
  return removed;
}
