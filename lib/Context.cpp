//===- Context.cpp - The JIT context --------------------------------------===//

#include "lib/ContextImpl.h"

#include "codegen/device/DeviceLibrary.h"
#include "runtime/backends/CudaBackend.h"
#include "runtime/backends/EmulationBackend.h"
#include "runtime/plans/Dump.h"
#include "runtime/support/Log.h"

#include "rudnn/version.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

using namespace rudnn;
using namespace rudnn::runtime;

const char *rudnn::backendName(BackendKind kind) {
  switch (kind) {
  case BackendKind::Auto:
    return "auto";
  case BackendKind::Cuda:
    return "cuda";
  case BackendKind::Emulation:
    return "emulation";
  }
  return "unknown";
}

BackendKind rudnn::parseBackend(const std::string &name) {
  for (BackendKind kind :
       {BackendKind::Auto, BackendKind::Cuda, BackendKind::Emulation})
    if (name == backendName(kind))
      return kind;
  throw InvalidArgument("backend must be auto, cuda or emulation, got '" +
                        name + "'");
}

std::string rudnn::codeAffectingEnvironment() {
  // Variables that change what a kernel compiles to, so that changing one
  // never returns a stale binary from the cache.
  static const char *const kVariables[] = {"RUDNN_HOST_CXX",
                                           "RUDNN_EMULATION_SANITIZE"};
  std::string text;
  for (const char *name : kVariables)
    if (const char *value = std::getenv(name))
      text += std::string(name) + "=" + value + "\n";
  return text;
}

/// The embedded headers, with ContextOptions::deviceLibraryDirectory's (else
/// RUDNN_DEVICE_LIBRARY's) over them.
static std::vector<HeaderFile> contextHeaders(const ContextOptions &options) {
  std::optional<std::string> directory = options.deviceLibraryDirectory;
  if (!directory)
    if (const char *value = std::getenv("RUDNN_DEVICE_LIBRARY");
        value && *value)
      directory = value;
  if (!directory || directory->empty())
    return device::headerFiles();
  return HeaderLibrary::overlaid(device::headerFiles(), *directory, "rudnn/");
}

static KernelCacheOptions cacheOptions(const ContextOptions &options) {
  KernelCacheOptions cache;
  if (options.cacheDirectory)
    cache.directory = *options.cacheDirectory;
  if (options.cacheMaxBytes)
    cache.maxBytes = options.cacheMaxBytes;
  return cache;
}

/// ContextOptions::planCacheCapacity, else RUDNN_PLAN_CACHE_SIZE, else 1024.
static size_t planCacheCapacity(const ContextOptions &options) {
  if (options.planCacheCapacity)
    return options.planCacheCapacity;
  if (const char *value = std::getenv("RUDNN_PLAN_CACHE_SIZE");
      value && *value) {
    char *end = nullptr;
    errno = 0;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (errno == 0 && *end == '\0' && parsed > 0 && value[0] != '-')
      return static_cast<size_t>(parsed);
    warn(std::string("RUDNN_PLAN_CACHE_SIZE='") + value +
         "' is not a positive count; 1024 plans are kept");
  }
  return 1024;
}

Context::Impl::Impl(ContextOptions options)
    : options(std::move(options)), library(contextHeaders(this->options)),
      compiler(library.headers()), kernelCache(cacheOptions(this->options)),
      planCapacity(planCacheCapacity(this->options)) {
  functionCapacity = planCapacity;
}

Context::Impl::~Impl() {
  // Executors hold kernels of the backend: release them first.
  plans.clear();
}

/// Auto resolves to RUDNN_BACKEND if set, else the GPU when present.
static BackendKind resolveBackend(BackendKind requested) {
  if (requested != BackendKind::Auto)
    return requested;
  if (const char *value = std::getenv("RUDNN_BACKEND"); value && *value) {
    BackendKind fromEnvironment = parseBackend(value);
    if (fromEnvironment != BackendKind::Auto)
      return fromEnvironment;
  }
  return cudaAvailable() ? BackendKind::Cuda : BackendKind::Emulation;
}

Backend &Context::Impl::backend() {
  std::lock_guard<std::mutex> lock(backendMutex);
  if (backend_)
    return *backend_;
  BackendKind kind = resolveBackend(options.backend);
  switch (kind) {
  case BackendKind::Cuda:
    backend_ = std::make_unique<CudaBackend>(options.deviceOrdinal, compiler);
    break;
  case BackendKind::Emulation: {
    EmulationOptions emulation =
        EmulationOptions::fromEnvironment(library.headers());
    if (options.emulationSanitize)
      emulation.sanitize = *options.emulationSanitize;
    backend_ = std::make_unique<EmulationBackend>(std::move(emulation));
    break;
  }
  case BackendKind::Auto:
    break;
  }
  backendKind_ = kind;
  log(LogLevel::Info, "backend: " + backend_->deviceDescription());
  return *backend_;
}

void Context::Impl::useBackend(std::unique_ptr<Backend> backend,
                               BackendKind kind) {
  std::lock_guard<std::mutex> lock(backendMutex);
  if (backend_)
    throw Error(Status::Internal, "the backend is already in use");
  backend_ = std::move(backend);
  backendKind_ = kind;
}

BackendKind Context::Impl::backendKind() {
  backend();
  return backendKind_;
}

std::string Context::Impl::targetArch() {
  if (backendKind() == BackendKind::Cuda)
    return static_cast<CudaBackend &>(backend()).compileArch();
  return options.arch;
}

int64_t Context::Impl::targetSmCount() {
  if (backendKind() == BackendKind::Cuda)
    return static_cast<CudaBackend &>(backend()).device().smCount;
  return 0;
}

int64_t Context::Impl::targetSmemPerBlock() {
  if (backendKind() == BackendKind::Cuda)
    return static_cast<CudaBackend &>(backend())
        .device()
        .maxSharedPerBlockOptin;
  return 0;
}

std::shared_ptr<const std::string>
Context::Impl::cachedCompile(const KernelSource &kernel,
                             const std::string &compilerIdentity,
                             const std::function<std::string()> &produce,
                             const KernelCache::Check &check) {
  Hash128 key = Hasher()
                    .add(kernel.entry)
                    .add(kernel.source)
                    .add(compilerIdentity)
                    .add(version())
                    .add(library.hashIncludedBy(kernel.source).hex())
                    .add(codeAffectingEnvironment())
                    .finish();
  // Every kernel asked for, compiled or found in the cache.
  dumpIfRequested(kernel.entry + ".cu", kernel.source);
  return kernelCache.getOrCreate(key, produce, check);
}

CompileProgress::CompileProgress(std::string function, int kernels,
                                 std::chrono::steady_clock::time_point start)
    : function(std::move(function)), kernels(kernels), start(start) {}

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

static std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", value);
  return text;
}

void CompileProgress::kernelStarting() {
  const auto now = std::chrono::steady_clock::now();
  if (done > 0 && now - last > std::chrono::seconds(1))
    start = now;
}

void CompileProgress::kernelDone(const std::string &entry, bool built) {
  ++done;
  last = std::chrono::steady_clock::now();
  const double elapsed = secondsSince(start);
  if (built && elapsed > 1.0)
    log(LogLevel::Progress, "compiled " + entry + " (" + std::to_string(done) +
                                " of " + std::to_string(kernels) + " for '" +
                                function + "', " + seconds(elapsed) + ")");
}

std::shared_ptr<const std::string>
Context::Impl::compile(const KernelSource &kernel, CompileProgress *progress) {
  Backend &target = backend();
  // A binary from disk is loaded once before it is trusted: its checksum
  // shows it whole, not that it holds the kernel (it may have been planted,
  // or damaged before it was summed). One that fails is built again.
  auto loads = [&](const std::string &binary) {
    try {
      target.load(binary, kernel.entry);
    } catch (const Unsupported &) {
      // This process cannot load any kernel (a sanitizer is missing, say);
      // the entry is not to blame, and the load proper reports it.
    }
  };
  bool built = false;
  const auto start = std::chrono::steady_clock::now();
  if (progress)
    progress->kernelStarting();
  std::shared_ptr<const std::string> binary = cachedCompile(
      kernel, target.compilerIdentity(),
      [&] {
        built = true;
        return target.compile(kernel);
      },
      loads);
  if (progress)
    progress->kernelDone(kernel.entry, built);
  else if (built && secondsSince(start) > 1.0)
    log(LogLevel::Progress,
        "compiled " + kernel.entry + " in " + seconds(secondsSince(start)));
  return binary;
}

std::shared_ptr<const std::string>
Context::Impl::compileForArch(const KernelSource &kernel,
                              const std::string &arch) {
  return cachedCompile(kernel, compiler.identity(arch), [&] {
    return compiler.compile(kernel, arch).serialize();
  });
}

std::shared_ptr<PlanExecutor>
Context::Impl::plan(const std::string &signature,
                    const std::function<Plan()> &build) {
  std::promise<std::shared_ptr<PlanExecutor>> promise;
  std::shared_future<std::shared_ptr<PlanExecutor>> future;
  bool builder = false;
  {
    std::lock_guard<std::mutex> lock(planMutex);
    auto [entry, inserted] = plans.insert(signature);
    if (inserted) {
      *entry = promise.get_future().share();
      builder = true;
    }
    future = *entry;
    // Plans still building are kept: their builders and waiters hold them.
    planCacheEvictions += plans.shrink(planCapacity, [](const auto &plan) {
      return plan.wait_for(std::chrono::seconds(0)) ==
             std::future_status::ready;
    });
  }
  if (!builder) {
    ++planCacheHits;
    return future.get();
  }
  ++planCacheMisses;
  try {
    promise.set_value(std::make_shared<PlanExecutor>(backend(), build(),
                                                     workspaceAllocator()));
  } catch (...) {
    // Waiters see the error; a later call may try again.
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(planMutex);
    plans.erase(signature);
  }
  return future.get();
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

static DevicePtr devicePointer(const void *pointer) {
  return reinterpret_cast<DevicePtr>(pointer);
}

Context::Context(ContextOptions options) {
  if (bool(options.allocator.allocate) != bool(options.allocator.release))
    throw InvalidArgument("options.allocator: set both allocate and release, "
                          "or neither");
  impl_ = std::make_unique<Impl>(std::move(options));
}

Context::Context(ContextOptions options,
                 std::unique_ptr<runtime::Backend> backend, BackendKind kind)
    : Context(std::move(options)) {
  if (!backend || kind == BackendKind::Auto)
    throw InvalidArgument("a context's own backend needs a backend and its "
                          "kind (Cuda or Emulation)");
  impl_->useBackend(std::move(backend), kind);
}

runtime::WorkspaceAllocator Context::Impl::workspaceAllocator() const {
  if (!options.allocator.allocate)
    return {};
  const Allocator &allocator = options.allocator;
  return {[&allocator](size_t bytes) {
            void *pointer = allocator.allocate(bytes);
            if (!pointer)
              throw DeviceError("the caller's allocator",
                                "returned null for " + std::to_string(bytes) +
                                    " bytes");
            return devicePointer(pointer);
          },
          [&allocator](DevicePtr pointer) {
            allocator.release(reinterpret_cast<void *>(pointer));
          }};
}

namespace {
/// The workspace query under way on this thread, if any.
struct WorkspaceQuery {
  const Context::Impl *context;
  uint64_t bytes = 0;
};
thread_local WorkspaceQuery *workspaceQuery = nullptr;
} // namespace

size_t Context::workspaceBytes(const std::function<void()> &calls) {
  WorkspaceQuery query{impl_.get()};
  WorkspaceQuery *outer = workspaceQuery;
  workspaceQuery = &query;
  try {
    calls();
  } catch (...) {
    workspaceQuery = outer;
    throw;
  }
  workspaceQuery = outer;
  return static_cast<size_t>(query.bytes);
}

void Context::setWorkspace(Stream stream, void *pointer, size_t bytes) {
  if (pointer && bytes == 0)
    throw InvalidArgument("setWorkspace: a workspace of 0 bytes");
  std::lock_guard<std::mutex> lock(impl_->workspaceMutex);
  if (pointer)
    impl_->givenWorkspaces[stream] = {devicePointer(pointer), bytes};
  else
    impl_->givenWorkspaces.erase(stream);
}

Context::~Context() = default;

const ContextOptions &Context::options() const { return impl_->options; }

BackendKind Context::backend() { return impl_->backendKind(); }

std::string Context::deviceDescription() {
  return impl_->backend().deviceDescription();
}

void Context::Impl::trackAllocation(void *pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(allocationMutex);
  allocations.emplace(reinterpret_cast<uintptr_t>(pointer), bytes);
}

bool Context::Impl::untrackAllocation(void *pointer) {
  std::lock_guard<std::mutex> lock(allocationMutex);
  return allocations.erase(reinterpret_cast<uintptr_t>(pointer)) == 1;
}

void Context::Impl::checkWithinAllocation(const void *pointer, size_t bytes,
                                          const char *what) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(allocationMutex);
  auto after = allocations.upper_bound(address);
  if (after == allocations.begin())
    return;
  const auto &[base, size] = *std::prev(after);
  const uintptr_t offset = address - base;
  if (offset >= size)
    return;
  if (bytes > size - offset)
    throw InvalidArgument(std::string(what) + ": " + std::to_string(bytes) +
                          " bytes at offset " + std::to_string(offset) +
                          " of an allocation of " + std::to_string(size) +
                          " bytes run past its end");
}

static std::string pointerText(const void *pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", pointer);
  return text;
}

void *Context::allocate(size_t bytes) {
  if (bytes == 0)
    throw InvalidArgument("allocate: size must be positive");
  const runtime::WorkspaceAllocator allocator = impl_->workspaceAllocator();
  void *pointer = reinterpret_cast<void *>(
      allocator.allocate ? allocator.allocate(bytes)
                         : impl_->backend().allocate(bytes));
  try {
    impl_->trackAllocation(pointer, bytes);
  } catch (...) {
    impl_->releaseMemory(devicePointer(pointer));
    throw;
  }
  return pointer;
}

void Context::release(void *pointer) {
  if (!pointer)
    return;
  // Forgotten before the backend frees it, so that of two threads releasing
  // one pointer only one reaches the backend.
  if (!impl_->untrackAllocation(pointer))
    throw InvalidArgument("release: pointer " + pointerText(pointer) +
                          " is not a live allocation of this context");
  impl_->releaseMemory(devicePointer(pointer));
}

void Context::Impl::releaseMemory(DevicePtr pointer) {
  if (options.allocator.release)
    options.allocator.release(reinterpret_cast<void *>(pointer));
  else
    backend().release(pointer);
}

void Context::releaseQuietly(void *pointer) noexcept {
  if (!pointer)
    return;
  try {
    if (!impl_->untrackAllocation(pointer)) {
      warn("release: pointer " + pointerText(pointer) +
           " is not a live allocation of this context; ignored");
      return;
    }
    impl_->releaseMemory(devicePointer(pointer));
  } catch (const std::exception &error) {
    try {
      warn(std::string("release: ") + error.what());
    } catch (...) { // out of memory for the warning's text
    }
  } catch (...) {
  }
}

void Context::copyToDevice(void *dst, const void *src, size_t bytes,
                           Stream stream) {
  if (!dst || !src)
    throw InvalidArgument("copyToDevice: null pointer");
  impl_->checkWithinAllocation(dst, bytes, "copyToDevice");
  impl_->backend().copyToDevice(devicePointer(dst), src, bytes, stream);
}

void Context::copyToHost(void *dst, const void *src, size_t bytes,
                         Stream stream) {
  if (!dst || !src)
    throw InvalidArgument("copyToHost: null pointer");
  impl_->checkWithinAllocation(src, bytes, "copyToHost");
  impl_->backend().copyToHost(dst, devicePointer(src), bytes, stream);
}

void Context::synchronize(Stream stream) {
  impl_->backend().synchronizeCheckingIndices(stream);
}

float Context::timeMilliseconds(const std::function<void()> &work,
                                Stream stream) {
  return impl_->backend().timeMilliseconds(stream, work);
}

/// The kernel entry names a dump file and the symbol to look up: a C
/// identifier keeps it from naming a path.
static void requireIdentifier(const std::string &text, const char *name) {
  // ASCII ranges, not <cctype>, whose answer depends on the locale.
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const size_t length = text.size();
  bool valid = length >= 1 && length <= 255 && letter(text[0]);
  for (size_t i = 1; valid && i < length; ++i)
    valid = letter(text[i]) || digit(text[i]);
  if (!valid)
    throw InvalidArgument(
        std::string(name) +
        " must be a C identifier (ASCII letters, digits and '_', not "
        "starting with a digit, 1 to 255 characters), got '" +
        text.substr(0, 64) + (length > 64 ? "...'" : "'"));
}

std::string Context::compileKernel(const std::string &entry,
                                   const std::string &source,
                                   const std::string &arch) {
  requireIdentifier(entry, "entry");
  return *impl_->compileForArch({entry, source}, arch);
}

Counters Context::counters() const {
  const KernelCacheCounters &cache = impl_->kernelCache.counters();
  Counters counters;
  counters.kernelsCompiled = cache.misses;
  counters.kernelCacheMemoryHits = cache.memoryHits;
  counters.kernelCacheDiskHits = cache.diskHits;
  counters.planCacheHits = impl_->planCacheHits;
  counters.planCacheMisses = impl_->planCacheMisses;
  counters.planCacheEvictions = impl_->planCacheEvictions;
  counters.functionCacheHits = impl_->functionCacheHits;
  counters.functionCacheMisses = impl_->functionCacheMisses;
  counters.functionCacheEvictions = impl_->functionCacheEvictions;
  std::lock_guard<std::mutex> lock(impl_->functionMutex);
  counters.functionsCached = impl_->functions.size();
  return counters;
}

size_t Context::setFunctionCacheCapacity(size_t capacity) {
  if (capacity == 0)
    throw InvalidArgument("the function cache's capacity must be at least 1");
  std::lock_guard<std::mutex> lock(impl_->functionMutex);
  const size_t previous = impl_->functionCapacity;
  impl_->functionCapacity = capacity;
  impl_->shrinkFunctions();
  return previous;
}

void Context::setProfiling(bool enabled) { impl_->profiling = enabled; }

std::vector<KernelProfile> Context::profile() const {
  std::vector<KernelProfile> profiles;
  {
    std::lock_guard<std::mutex> lock(impl_->profileMutex);
    profiles = impl_->kernelProfiles;
  }
  std::stable_sort(profiles.begin(), profiles.end(),
                   [](const KernelProfile &a, const KernelProfile &b) {
                     return a.milliseconds > b.milliseconds;
                   });
  return profiles;
}

void Context::resetProfile() {
  std::lock_guard<std::mutex> lock(impl_->profileMutex);
  impl_->kernelProfiles.clear();
}

void Context::Impl::run(runtime::PlanExecutor &executor,
                        const std::vector<runtime::DevicePtr> &bindings,
                        const std::vector<int64_t> &params,
                        runtime::StreamHandle stream) {
  if (workspaceQuery && workspaceQuery->context == this) {
    workspaceQuery->bytes =
        std::max(workspaceQuery->bytes, executor.workspaceBytes(params));
    return;
  }
  runtime::GivenWorkspace given;
  {
    std::lock_guard<std::mutex> lock(workspaceMutex);
    if (auto it = givenWorkspaces.find(stream); it != givenWorkspaces.end())
      given = it->second;
  }
  if (!profiling) {
    // A launch a step (a recurrence's): recorded once into a graph, then
    // replayed (updated for new bindings and sizes) where the backend can.
    return executor.run(bindings, params, stream,
                        /*useGraph=*/executor.plan().repeatsLaunches(), nullptr,
                        given);
  }
  std::vector<runtime::LaunchTiming> timings;
  // Launches that ran before one failed still count.
  auto record = [&] {
    std::lock_guard<std::mutex> lock(profileMutex);
    for (const runtime::LaunchTiming &timing : timings) {
      auto known = std::find_if(
          kernelProfiles.begin(), kernelProfiles.end(),
          [&](const KernelProfile &p) { return p.kernel == timing.kernel; });
      if (known == kernelProfiles.end())
        known = kernelProfiles.insert(kernelProfiles.end(), {timing.kernel});
      ++known->launches;
      known->milliseconds += timing.milliseconds;
    }
  };
  try {
    executor.run(bindings, params, stream, /*useGraph=*/false, &timings, given);
  } catch (...) {
    record();
    throw;
  }
  record();
}
