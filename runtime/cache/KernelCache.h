//===- KernelCache.h - Compiled kernels in memory and on disk ---*- C++ -*-===//
//
// Maps a key (a hash of everything that changes a binary) to the binary's
// bytes. Memory level: thread-safe, and concurrent requests for one key run
// the producer once. Disk level: one file per key under the cache directory,
// written to a temporary file and renamed into place, with a header (magic,
// format version, key, payload size, checksum) so torn, truncated, foreign or
// stale files are detected, ignored and rewritten. Only regular files are
// opened, never through a symbolic link and never waiting on a FIFO: any
// other kind of file under an entry's or a lock's name is damage too, and is
// replaced where it can be. The directory is created private (0700); one
// that others could write into (group- or world-writable, or owned by
// another user) is refused, since whoever plants an entry chooses the code
// this process loads. A refused or unwritable directory degrades to
// memory-only with one warning; the directory's total size is bounded,
// evicting least-recently-used entries.
//
// Entry file `<directory>/<key hex>.rdk`, all integers little-endian:
//   bytes  0..8   magic "RUDNNKC\0"
//   bytes  8..12  format version (uint32)
//   bytes 12..28  key: low, then high (uint64 each)
//   bytes 28..36  payload size (uint64)
//   bytes 36..44  XXH3-64 of the payload (uint64)
//   bytes 44..    payload
// Processes sharing a directory serialise work on one key with flock() on
// `<key hex>.lock`, so a key is produced once across them.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_CACHE_KERNELCACHE_H
#define RUDNN_RUNTIME_CACHE_KERNELCACHE_H

#include "runtime/cache/Hash.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace rudnn::runtime {

/// RUDNN_CACHE_DIR (set and empty: "", memory only), else
/// $XDG_CACHE_HOME/rudnn, else ~/.cache/rudnn.
std::string defaultCacheDirectory();
/// Makes the directory `path` (mode 0700) if missing and accepts it only
/// if nobody but this user can write into it: anyone who could plant a file
/// there could have this process load code of their choosing. Returns why
/// not, or empty.
std::string makePrivateDirectory(const std::string &path);
/// RUDNN_CACHE_MAX_BYTES, else 1 GiB.
uint64_t defaultCacheMaxBytes();

struct KernelCacheOptions {
  /// Empty: memory only.
  std::string directory = defaultCacheDirectory();
  uint64_t maxBytes = defaultCacheMaxBytes();
};

struct KernelCacheCounters {
  std::atomic<uint64_t> memoryHits{0};
  std::atomic<uint64_t> diskHits{0};
  /// Times the producer ran (compiles).
  std::atomic<uint64_t> misses{0};
  /// Disk entries or lock files found damaged, foreign or not regular
  /// files, and replaced where possible.
  std::atomic<uint64_t> rejectedEntries{0};
  /// Disk entries intact but refused by the caller's check (they did not
  /// load), removed and produced again.
  std::atomic<uint64_t> unusableEntries{0};
  std::atomic<uint64_t> evictions{0};
  /// Callers that found another caller of this object already looking up
  /// the same key and waited for its outcome (they count nowhere else).
  std::atomic<uint64_t> waits{0};
};

class KernelCache {
public:
  explicit KernelCache(KernelCacheOptions options = {});
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// Throws when bytes read from disk are whole but unusable (say, a binary
  /// that does not load): a checksum proves integrity, not provenance.
  using Check = std::function<void(const std::string &bytes)>;

  /// The bytes for `key`: from memory, else from disk once `check` accepts
  /// them (an entry it rejects is removed), else from `produce` (stored at
  /// both levels). Exceptions of `produce` reach every caller waiting on the
  /// key, and nothing is stored.
  std::shared_ptr<const std::string>
  getOrCreate(const Hash128 &key, const std::function<std::string()> &produce,
              const Check &check = {});

  /// Whether entries are written to disk (false after the directory proved
  /// unwritable or was refused, or when none was given).
  bool diskEnabled() const;
  const std::string &directory() const;
  /// The file holding `key`'s entry (whether or not it exists); empty when
  /// there is no directory.
  std::string entryPath(const Hash128 &key) const;
  /// Drops the memory level (disk entries stay).
  void clearMemory();

  const KernelCacheCounters &counters() const { return counters_; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  KernelCacheCounters counters_;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_CACHE_KERNELCACHE_H
