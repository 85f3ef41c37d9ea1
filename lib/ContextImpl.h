//===- ContextImpl.h - What operators use of a Context ---------*- C++ -*-===//

#ifndef RUDNN_LIB_CONTEXTIMPL_H
#define RUDNN_LIB_CONTEXTIMPL_H

#include "runtime/backends/Backend.h"
#include "runtime/cache/Hash.h"
#include "runtime/cache/KernelCache.h"
#include "runtime/compile/HeaderLibrary.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/plans/PlanExecutor.h"

#include "rudnn/context.h"
#include "rudnn/program.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace rudnn {

/// The kernels of one function compiling on a cold cache: silent for the
/// first second, then a Progress line a kernel it had to compile, e.g.
/// "compiled kda_fwd_prepare_… (2 of 5 for 'main', 1.4 s)". Kernels
/// compiled at a later call (deferred ones) start a new count of seconds.
class CompileProgress {
public:
  CompileProgress(std::string function, int kernels,
                  std::chrono::steady_clock::time_point start =
                      std::chrono::steady_clock::now());
  /// Before a kernel compiles or is looked up.
  void kernelStarting();
  /// After kernel `entry`, compiled now (`built`) or found in the cache.
  void kernelDone(const std::string &entry, bool built);

private:
  std::string function;
  int kernels, done = 0;
  std::chrono::steady_clock::time_point start, last;
};

/// Values by key, the least recently used first to go: `find` makes an
/// entry the most recent, `shrink` drops the oldest entries it may.
template <typename Value> class LruCache {
public:
  Value *find(const std::string &key) {
    auto it = entries.find(key);
    if (it == entries.end())
      return nullptr;
    recency.splice(recency.begin(), recency, it->second.recent);
    return &it->second.value;
  }
  /// The entry for `key` and whether it is new (then default-constructed).
  std::pair<Value *, bool> insert(const std::string &key) {
    auto [it, inserted] = entries.try_emplace(key);
    if (inserted)
      it->second.recent = recency.insert(recency.begin(), key);
    else
      recency.splice(recency.begin(), recency, it->second.recent);
    return {&it->second.value, inserted};
  }
  void erase(const std::string &key) {
    auto it = entries.find(key);
    if (it == entries.end())
      return;
    recency.erase(it->second.recent);
    entries.erase(it);
  }
  /// Drops the least recently used entries that `droppable` allows until
  /// at most `capacity` remain; returns how many went.
  template <typename Droppable>
  size_t shrink(size_t capacity, Droppable droppable) {
    size_t dropped = 0;
    for (auto it = recency.end();
         entries.size() > capacity && it != recency.begin();) {
      --it;
      auto entry = entries.find(*it);
      if (!droppable(entry->second.value))
        continue;
      it = recency.erase(it);
      entries.erase(entry);
      ++dropped;
    }
    return dropped;
  }
  size_t size() const { return entries.size(); }
  void clear() {
    entries.clear();
    recency.clear();
  }

private:
  struct Entry {
    Value value;
    std::list<std::string>::iterator recent;
  };
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> recency; // most recent first
};

struct Context::Impl {
  explicit Impl(ContextOptions options);
  ~Impl();

  /// The backend, opened on first use. Throws DeviceUnavailable or
  /// Unsupported when the requested one cannot be had.
  runtime::Backend &backend();
  BackendKind backendKind();
  /// The architecture operators are specialized for: the GPU's (the one
  /// its kernels compile for) on the CUDA backend, else the options' arch.
  std::string targetArch();
  /// The device's SMs and opt-in shared memory a block on the CUDA backend
  /// (a cooperative grid must fit them), 0 for the target's defaults.
  int64_t targetSmCount();
  int64_t targetSmemPerBlock();
  /// Sets the backend before first use (Context's embedder-backend
  /// constructor).
  void useBackend(std::unique_ptr<runtime::Backend> backend, BackendKind kind);

  /// The backend's binary for `kernel`, through the kernel cache; a disk
  /// entry that the backend cannot load is built again. Reports to
  /// `progress`, or alone when a compile takes over a second.
  std::shared_ptr<const std::string>
  compile(const runtime::KernelSource &kernel,
          CompileProgress *progress = nullptr);
  /// A CudaBinary for `arch` compiled with NVRTC, through the kernel cache;
  /// needs no device (ahead-of-time compilation).
  std::shared_ptr<const std::string>
  compileForArch(const runtime::KernelSource &kernel, const std::string &arch);

  /// The ready plan for an operator-call `signature`; `build` makes it on a
  /// miss (once, however many threads ask at the same time).
  std::shared_ptr<runtime::PlanExecutor>
  plan(const std::string &signature,
       const std::function<runtime::Plan()> &build);

  /// Runs `executor` on `stream`, timing its launches while profiling.
  void run(runtime::PlanExecutor &executor,
           const std::vector<runtime::DevicePtr> &bindings,
           const std::vector<int64_t> &params, runtime::StreamHandle stream);

  /// The functions the operator entry points call, by signature, the
  /// least recently used dropped past planCapacity.
  std::mutex functionMutex;
  LruCache<std::optional<Function>> functions;
  size_t functionCapacity = 0; // guarded by functionMutex
  /// Drops the least recently used functions beyond functionCapacity
  /// (functionMutex held).
  void shrinkFunctions();
  std::atomic<uint64_t> functionCacheHits{0}, functionCacheMisses{0},
      functionCacheEvictions{0};

  std::atomic<bool> profiling{false};
  mutable std::mutex profileMutex;
  std::vector<KernelProfile> kernelProfiles; // in first-launch order

  const ContextOptions options;
  /// The device library kernels compile against (the embedded headers, or
  /// a folder's over them); each kernel's cache key hashes the part of it
  /// the kernel includes.
  const runtime::HeaderLibrary library;
  runtime::NvrtcCompiler compiler;
  runtime::KernelCache kernelCache;
  std::atomic<uint64_t> planCacheHits{0}, planCacheMisses{0},
      planCacheEvictions{0};
  /// What the plan and function caches keep (ContextOptions).
  const size_t planCapacity;

  /// The caller's allocator for plans' workspaces (empty: the backend's).
  runtime::WorkspaceAllocator workspaceAllocator() const;
  /// Frees memory Context::allocate took, where it came from.
  void releaseMemory(runtime::DevicePtr pointer);

  /// Workspaces callers gave their streams (Context::setWorkspace).
  std::mutex workspaceMutex;
  std::unordered_map<runtime::StreamHandle, runtime::GivenWorkspace>
      givenWorkspaces;

  /// Records a pointer `allocate` returned.
  void trackAllocation(void *pointer, size_t bytes);
  /// Forgets a live allocation's base pointer; false for anything else
  /// (foreign, interior, already released), which must not reach the
  /// backend: its allocators abort on such pointers.
  bool untrackAllocation(void *pointer);
  /// Throws InvalidArgument when [pointer, pointer + bytes) starts inside
  /// a live allocation of this context and runs past its end. Memory the
  /// context did not allocate is the caller's to size.
  void checkWithinAllocation(const void *pointer, size_t bytes,
                             const char *what);

private:
  std::shared_ptr<const std::string>
  cachedCompile(const runtime::KernelSource &kernel,
                const std::string &compilerIdentity,
                const std::function<std::string()> &produce,
                const runtime::KernelCache::Check &check = {});

  std::mutex backendMutex;
  std::unique_ptr<runtime::Backend> backend_;
  BackendKind backendKind_ = BackendKind::Auto;

  std::mutex allocationMutex;
  std::map<uintptr_t, size_t> allocations; // base address -> bytes

  std::mutex planMutex;
  LruCache<std::shared_future<std::shared_ptr<runtime::PlanExecutor>>> plans;
};

/// Environment variables that change generated code, as "NAME=value" lines.
std::string codeAffectingEnvironment();

} // namespace rudnn

#endif // RUDNN_LIB_CONTEXTIMPL_H
