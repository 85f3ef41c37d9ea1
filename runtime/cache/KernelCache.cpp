//===- KernelCache.cpp - Compiled kernels in memory and on disk -----------===//

#include "runtime/cache/KernelCache.h"

#include "runtime/support/Log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <future>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using namespace rudnn::runtime;

namespace {

constexpr char kMagic[8] = {'R', 'U', 'D', 'N', 'N', 'K', 'C', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 8 + 8 + 8 + 8;
constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;
constexpr const char *kEntrySuffix = ".rdk";
constexpr const char *kTempInfix = ".rdk.tmp.";
constexpr const char *kLockSuffix = ".lock";
// A writer renames its temporary file within moments; one this old belongs to
// a process that died mid-write.
constexpr time_t kStaleTempSeconds = 60;

std::string errorText(int error) {
  return std::generic_category().message(error);
}

void putU32(char *out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<char>(value >> (8 * i));
}

void putU64(char *out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(value >> (8 * i));
}

uint32_t getU32(const char *in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= static_cast<uint32_t>(static_cast<unsigned char>(in[i]))
             << (8 * i);
  return value;
}

uint64_t getU64(const char *in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i]))
             << (8 * i);
  return value;
}

/// Owns a POSIX file descriptor.
class FileDescriptor {
public:
  explicit FileDescriptor(int fd = -1) : fd(fd) {}
  FileDescriptor(FileDescriptor &&other) noexcept : fd(other.release()) {}
  FileDescriptor &operator=(FileDescriptor &&other) noexcept {
    if (this != &other) {
      reset();
      fd = other.release();
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() { reset(); }

  explicit operator bool() const { return fd >= 0; }
  int get() const { return fd; }
  int release() { return std::exchange(fd, -1); }
  void reset() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }

private:
  int fd;
};

/// Reads up to `size` bytes; returns how many were read, or -1 on error.
ssize_t readFully(int fd, char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

/// Writes all of `data`; false (errno set) on error.
bool writeFully(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = ENOSPC;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether `name` starts with 32 hex digits naming a key (so only our own
/// files are ever deleted, whatever else shares the directory).
bool startsWithKey(const std::string &name) {
  Hash128 ignored;
  return name.size() >= 32 &&
         Hash128::fromHex(std::string_view(name).substr(0, 32), ignored);
}

/// Errors with which open(O_NOFOLLOW) refuses a name that is not a regular
/// file: a symbolic link, a socket, a directory opened for writing.
bool isNotAFileError(int error) {
  return error == ELOOP || error == ENXIO || error == EISDIR;
}

std::string describeOpenError(int error) {
  switch (error) {
  case ELOOP:
    return "a symbolic link";
  case ENXIO:
    return "a socket or device";
  case EISDIR:
    return "a directory";
  default:
    return errorText(error);
  }
}

/// Empty for a regular file, else what the file is instead.
std::string regularFileOrWhy(mode_t mode) {
  if (S_ISREG(mode))
    return "";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  return "not a regular file";
}

std::string regularFileOrWhy(int fd) {
  struct stat status;
  if (::fstat(fd, &status) != 0)
    return "not inspectable: " + errorText(errno);
  return regularFileOrWhy(status.st_mode);
}

/// Why a cache directory with `status` is not private to this user, or
/// empty when it is.
std::string unsafeDirectoryReason(const struct stat &status) {
  if (status.st_uid != ::geteuid())
    return "owned by uid " + std::to_string(status.st_uid) +
           ", not by this user (uid " + std::to_string(::geteuid()) + ")";
  if (status.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(status.st_mode & 07777));
    return std::string("writable by ") +
           (status.st_mode & S_IWOTH ? "others" : "its group") + " (mode " +
           mode + ")";
  }
  return "";
}

struct KeyHash {
  size_t operator()(const Hash128 &key) const {
    return static_cast<size_t>(key.low ^ (key.high * 0x9e3779b97f4a7c15ull));
  }
};

const char *getenvNonEmpty(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

} // namespace

std::string rudnn::runtime::defaultCacheDirectory() {
  // Set but empty: memory only, as the README promises.
  if (const char *dir = std::getenv("RUDNN_CACHE_DIR"))
    return dir;
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (const char *xdg = getenvNonEmpty("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return (fs::path(xdg) / "rudnn").string();
  if (const char *home = getenvNonEmpty("HOME"))
    return (fs::path(home) / ".cache" / "rudnn").string();
  return "";
}

std::string rudnn::runtime::makePrivateDirectory(const std::string &path) {
  fs::path directory = fs::path(path).lexically_normal();
  if (directory.filename().empty())
    directory = directory.parent_path();
  std::error_code error;
  if (directory.has_parent_path())
    fs::create_directories(directory.parent_path(), error);
  if (!error && ::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
    error = std::error_code(errno, std::generic_category());
  struct stat status;
  if (!error && ::stat(directory.c_str(), &status) != 0)
    error = std::error_code(errno, std::generic_category());
  // An existing non-directory at the path is not always reported as an
  // error by create_directories.
  if (!error && !S_ISDIR(status.st_mode))
    error = std::make_error_code(std::errc::not_a_directory);
  if (error)
    return "cannot create it: " + error.message();
  return unsafeDirectoryReason(status);
}

uint64_t rudnn::runtime::defaultCacheMaxBytes() {
  const char *text = getenvNonEmpty("RUDNN_CACHE_MAX_BYTES");
  if (!text)
    return kDefaultMaxBytes;
  // Digits only: strtoull would accept signs, spaces and trailing junk.
  uint64_t value = 0;
  bool valid = true;
  for (const char *c = text; *c && valid; ++c) {
    if (*c < '0' || *c > '9') {
      valid = false;
      break;
    }
    uint64_t digit = static_cast<uint64_t>(*c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      valid = false;
    else
      value = value * 10 + digit;
  }
  if (valid)
    return value;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    warn("RUDNN_CACHE_MAX_BYTES='" + std::string(text) +
         "' is not a decimal byte count; using " +
         std::to_string(kDefaultMaxBytes));
  return kDefaultMaxBytes;
}

using Value = std::shared_ptr<const std::string>;

struct KernelCache::Impl {
  Impl(KernelCacheOptions options, KernelCacheCounters &counters)
      : options(std::move(options)), counters(counters),
        writable(!this->options.directory.empty()) {}

  KernelCacheOptions options;
  KernelCacheCounters &counters;
  /// Whether entries are written; a failed write turns only this off, so a
  /// read-only shared cache still serves what it holds.
  std::atomic<bool> writable;

  std::mutex mutex;
  std::unordered_map<Hash128, Value, KeyHash> entries;
  /// Keys being looked up right now, so later callers wait instead of
  /// producing the same bytes again.
  std::unordered_map<Hash128, std::shared_future<Value>, KeyHash> pending;

  std::mutex directoryMutex;
  bool directoryReady = false, directoryFailed = false;

  std::atomic<uint64_t> tempCounter{0};

  std::string pathFor(const Hash128 &key, const char *suffix) const {
    return (fs::path(options.directory) / (key.hex() + suffix)).string();
  }

  /// Stops writing entries for good, warning the first time only.
  void disableDisk(const std::string &reason) {
    if (writable.exchange(false))
      warn("kernel cache directory '" + options.directory + "' is unusable (" +
           reason + "); caching in memory only");
  }

  bool createDirectory() {
    std::string reason = makePrivateDirectory(options.directory);
    if (!reason.empty())
      disableDisk(reason);
    return reason.empty();
  }

  bool ensureDirectory() {
    std::lock_guard<std::mutex> lock(directoryMutex);
    if (!directoryReady && !directoryFailed) {
      directoryReady = createDirectory();
      directoryFailed = !directoryReady;
    }
    return directoryReady;
  }

  /// Takes the cross-process lock for `key`; an empty descriptor when that
  /// fails, and then the caller goes on without it: rename() alone still
  /// keeps every entry whole, at worst a key is produced twice.
  FileDescriptor lockKey(const Hash128 &key) {
    std::string path = pathFor(key, kLockSuffix);
    for (int attempt = 0;; ++attempt) {
      // O_NONBLOCK: a FIFO or device planted under the name must not block
      // the open; O_NOFOLLOW: a symbolic link must not redirect the create.
      FileDescriptor fd(
          ::open(path.c_str(),
                 O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0600));
      std::string damage;
      if (fd) {
        damage = regularFileOrWhy(fd.get());
      } else if (int error = errno; isNotAFileError(error)) {
        damage = describeOpenError(error);
      } else {
        log(LogLevel::Info, "kernel cache: cannot open lock " + path + ": " +
                                errorText(error) + "; continuing unlocked");
        return FileDescriptor();
      }
      if (damage.empty())
        return lockOpened(std::move(fd), path);
      ++counters.rejectedEntries;
      log(LogLevel::Info,
          "kernel cache: lock " + path + " is " + damage + "; replacing it");
      fd.reset();
      if (attempt == 0 && ::unlink(path.c_str()) == 0)
        continue;
      log(LogLevel::Info, "kernel cache: cannot replace lock " + path +
                              "; continuing unlocked");
      return FileDescriptor();
    }
  }

  /// Waits for the lock on the opened lock file `fd`.
  FileDescriptor lockOpened(FileDescriptor fd, const std::string &path) {
    while (::flock(fd.get(), LOCK_EX) != 0) {
      if (errno == EINTR)
        continue;
      log(LogLevel::Info, "kernel cache: cannot lock " + path + ": " +
                              errorText(errno) + "; continuing unlocked");
      return FileDescriptor();
    }
    return fd;
  }

  Value reject(const std::string &path, const std::string &reason) {
    ++counters.rejectedEntries;
    log(LogLevel::Info,
        "kernel cache: ignoring entry " + path + " (" + reason + ")");
    return nullptr;
  }

  /// The payload of `key`'s entry, or null when it is absent or invalid.
  Value readEntry(const Hash128 &key) {
    std::string path = pathFor(key, kEntrySuffix);
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer forever; O_NOFOLLOW: a link could point at any file.
    FileDescriptor fd(
        ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW));
    if (!fd) {
      int error = errno;
      if (isNotAFileError(error))
        return reject(path, describeOpenError(error));
      if (error != ENOENT)
        log(LogLevel::Info,
            "kernel cache: cannot read " + path + ": " + errorText(error));
      return nullptr;
    }
    struct stat status;
    if (::fstat(fd.get(), &status) != 0) {
      log(LogLevel::Info,
          "kernel cache: cannot stat " + path + ": " + errorText(errno));
      return nullptr;
    }
    if (std::string damage = regularFileOrWhy(status.st_mode); !damage.empty())
      return reject(path, damage);
    uint64_t fileSize = static_cast<uint64_t>(status.st_size);
    if (fileSize < kHeaderSize)
      return reject(path, "short file: " + std::to_string(fileSize) +
                              " bytes, less than a header");

    char header[kHeaderSize];
    ssize_t got = readFully(fd.get(), header, kHeaderSize);
    if (got != static_cast<ssize_t>(kHeaderSize))
      return reject(path, got < 0 ? "read failed: " + errorText(errno)
                                  : std::string("short read of the header"));
    if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0)
      return reject(path, "wrong magic");
    if (uint32_t version = getU32(header + 8); version != kFormatVersion)
      return reject(path, "format version " + std::to_string(version) +
                              ", expected " + std::to_string(kFormatVersion));
    Hash128 stored{getU64(header + 12), getU64(header + 20)};
    if (stored != key)
      return reject(path, "holds key " + stored.hex());
    uint64_t size = getU64(header + 28);
    if (size != fileSize - kHeaderSize)
      return reject(path, "header says " + std::to_string(size) +
                              " payload bytes, file has " +
                              std::to_string(fileSize - kHeaderSize));

    std::string payload(size, '\0');
    got = readFully(fd.get(), payload.data(), size);
    if (got != static_cast<ssize_t>(size))
      return reject(path, got < 0 ? "read failed: " + errorText(errno)
                                  : std::string("file shrank while read"));
    if (hash64(payload) != getU64(header + 36))
      return reject(path, "checksum mismatch");
    // Eviction goes by modification time, so a hit makes the entry recent.
    // A read-only shared cache cannot record that, which only costs LRU
    // accuracy.
    ::futimens(fd.get(), nullptr);
    return std::make_shared<const std::string>(std::move(payload));
  }

  /// Writes `key`'s entry atomically; false (and the disk level off) when
  /// the directory does not take it.
  bool writeEntry(const Hash128 &key, const std::string &payload) {
    char header[kHeaderSize];
    std::memcpy(header, kMagic, sizeof(kMagic));
    putU32(header + 8, kFormatVersion);
    putU64(header + 12, key.low);
    putU64(header + 20, key.high);
    putU64(header + 28, payload.size());
    putU64(header + 36, hash64(payload));

    std::string path = pathFor(key, kEntrySuffix);
    std::string tempPath;
    FileDescriptor fd;
    for (int attempt = 0;; ++attempt) {
      // Unique per process, thread and write: no two writers share a file.
      tempPath = path + ".tmp." + std::to_string(::getpid()) + "." +
                 std::to_string(
                     std::hash<std::thread::id>()(std::this_thread::get_id())) +
                 "." + std::to_string(tempCounter++);
      fd = FileDescriptor(
          ::open(tempPath.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (fd)
        break;
      int error = errno;
      // A leftover of a dead process with a recycled pid: pick another name.
      if (error == EEXIST && attempt < 8)
        continue;
      // The directory was removed behind our back: make it again, once.
      if (error == ENOENT && attempt == 0 && createDirectory())
        continue;
      disableDisk("cannot create " + tempPath + ": " + errorText(error));
      return false;
    }

    // No fsync: after a crash a torn entry fails its size or checksum check
    // and is rebuilt, which is cheaper than syncing every compile.
    if (!writeFully(fd.get(), header, kHeaderSize) ||
        !writeFully(fd.get(), payload.data(), payload.size())) {
      int error = errno;
      fd.reset();
      ::unlink(tempPath.c_str());
      disableDisk("cannot write " + tempPath + ": " + errorText(error));
      return false;
    }
    if (::close(fd.release()) != 0) {
      int error = errno;
      ::unlink(tempPath.c_str());
      disableDisk("cannot write " + tempPath + ": " + errorText(error));
      return false;
    }
    if (::rename(tempPath.c_str(), path.c_str()) != 0) {
      int error = errno;
      ::unlink(tempPath.c_str());
      // A directory holds the entry's name: only this key stays off disk.
      if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
        log(LogLevel::Info, "kernel cache: cannot replace " + path + ": " +
                                errorText(error) + "; not stored on disk");
        return false;
      }
      disableDisk("cannot rename " + tempPath + " to " + path + ": " +
                  errorText(error));
      return false;
    }
    log(LogLevel::Info, "kernel cache: wrote " + path + " (" +
                            std::to_string(kHeaderSize + payload.size()) +
                            " bytes)");
    return true;
  }

  /// Deletes least-recently-used entries until the directory's entries fit
  /// in maxBytes, sparing `kept` (the entry just written); also removes
  /// temporary files abandoned by dead writers.
  void evict(const Hash128 &kept) {
    struct Entry {
      std::string name;
      uint64_t size;
      struct timespec mtime;
    };
    std::vector<Entry> found;
    uint64_t total = 0;
    std::string keptName = kept.hex() + kEntrySuffix;
    time_t now = std::time(nullptr);

    std::error_code error;
    fs::directory_iterator it(options.directory, error), end;
    for (; !error && it != end; it.increment(error)) {
      std::string name = it->path().filename().string();
      if (!startsWithKey(name))
        continue;
      bool isEntry = name.size() == 32 + std::strlen(kEntrySuffix) &&
                     endsWith(name, kEntrySuffix);
      bool isTemp = name.compare(32, std::strlen(kTempInfix), kTempInfix) == 0;
      if (!isEntry && !isTemp)
        continue;
      std::string path = it->path().string();
      struct stat status;
      if (::lstat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode))
        continue;
      if (isTemp) {
        if (now - status.st_mtim.tv_sec > kStaleTempSeconds &&
            ::unlink(path.c_str()) == 0)
          log(LogLevel::Info, "kernel cache: removed stale " + path);
        continue;
      }
      total += static_cast<uint64_t>(status.st_size);
      found.push_back({std::move(name), static_cast<uint64_t>(status.st_size),
                       status.st_mtim});
    }
    if (error)
      log(LogLevel::Info, "kernel cache: cannot scan " + options.directory +
                              ": " + error.message());
    if (total <= options.maxBytes)
      return;

    // Oldest first; names break ties so every process agrees on the order.
    std::sort(found.begin(), found.end(), [](const Entry &a, const Entry &b) {
      if (a.mtime.tv_sec != b.mtime.tv_sec)
        return a.mtime.tv_sec < b.mtime.tv_sec;
      if (a.mtime.tv_nsec != b.mtime.tv_nsec)
        return a.mtime.tv_nsec < b.mtime.tv_nsec;
      return a.name < b.name;
    });
    for (const Entry &entry : found) {
      if (total <= options.maxBytes)
        break;
      if (entry.name == keptName)
        continue;
      std::string path = (fs::path(options.directory) / entry.name).string();
      if (::unlink(path.c_str()) == 0) {
        ++counters.evictions;
        log(LogLevel::Info, "kernel cache: evicted " + path + " (" +
                                std::to_string(entry.size) + " bytes)");
        // Its lock goes too, or lock files would pile up forever. Racing a
        // process that holds it costs at most one duplicate compile.
        std::string lockPath = (fs::path(options.directory) /
                                (entry.name.substr(0, 32) + kLockSuffix))
                                   .string();
        ::unlink(lockPath.c_str());
      } else if (errno != ENOENT) {
        continue;
      }
      // Removed by us or by another process evicting at the same time.
      total -= entry.size;
    }
  }

  Value produceValue(const Hash128 &key,
                     const std::function<std::string()> &produce) {
    ++counters.misses;
    log(LogLevel::Info, "kernel cache: miss for " + key.hex());
    return std::make_shared<const std::string>(produce());
  }

  /// Whether `check` accepts the bytes of `key`'s disk entry; if not, the
  /// entry is removed, so that it is rebuilt once instead of failing every
  /// later run.
  bool accepted(const Hash128 &key, const std::string &bytes,
                const KernelCache::Check &check) {
    if (!check)
      return true;
    try {
      check(bytes);
      return true;
    } catch (const std::exception &error) {
      ++counters.unusableEntries;
      std::string path = pathFor(key, kEntrySuffix);
      warn("kernel cache: entry " + path + " is intact but unusable (" +
           error.what() + "); removing it and building it again");
      ::unlink(path.c_str());
      return false;
    }
  }

  /// The bytes for `key` from disk, else from `produce` (then written).
  Value load(const Hash128 &key, const std::function<std::string()> &produce,
             const KernelCache::Check &check) {
    if (options.directory.empty() || !ensureDirectory())
      return produceValue(key, produce);
    // Held across check, produce and write so that processes asking for one
    // key at once produce it once.
    FileDescriptor lock = lockKey(key);
    if (Value value = readEntry(key); value && accepted(key, *value, check)) {
      ++counters.diskHits;
      log(LogLevel::Info, "kernel cache: disk hit for " + key.hex());
      return value;
    }
    Value value = produceValue(key, produce);
    if (writable && writeEntry(key, *value))
      evict(key);
    return value;
  }
};

KernelCache::KernelCache(KernelCacheOptions options)
    : impl(std::make_unique<Impl>(std::move(options), counters_)) {}

KernelCache::~KernelCache() = default;

std::shared_ptr<const std::string>
KernelCache::getOrCreate(const Hash128 &key,
                         const std::function<std::string()> &produce,
                         const Check &check) {
  std::promise<Value> promise;
  {
    std::unique_lock<std::mutex> lock(impl->mutex);
    if (auto it = impl->entries.find(key); it != impl->entries.end()) {
      ++counters_.memoryHits;
      log(LogLevel::Debug, "kernel cache: memory hit for " + key.hex());
      return it->second;
    }
    if (auto it = impl->pending.find(key); it != impl->pending.end()) {
      std::shared_future<Value> future = it->second;
      lock.unlock();
      ++counters_.waits;
      log(LogLevel::Debug, "kernel cache: waiting for " + key.hex());
      return future.get();
    }
    impl->pending.emplace(key, promise.get_future().share());
  }

  Value value;
  try {
    value = impl->load(key, produce, check);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(impl->mutex);
      impl->pending.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
  {
    // Stored before the waiters wake, so no caller finds neither.
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->entries[key] = value;
    impl->pending.erase(key);
  }
  promise.set_value(value);
  return value;
}

bool KernelCache::diskEnabled() const { return impl->writable; }

const std::string &KernelCache::directory() const {
  return impl->options.directory;
}

std::string KernelCache::entryPath(const Hash128 &key) const {
  if (impl->options.directory.empty())
    return "";
  return impl->pathFor(key, kEntrySuffix);
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(impl->mutex);
  impl->entries.clear();
}
