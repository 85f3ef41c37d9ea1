//===- rudnn/context.h - The JIT context ------------------------*- C++ -*-===//
//
// A Context owns a backend (a CUDA device, or the CPU emulation backend), the
// kernel cache and the plan cache. Operator entry points take one; repeated
// calls with the same signature reuse a ready plan and compile nothing.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CONTEXT_H
#define RUDNN_CONTEXT_H

#include "rudnn/errors.h"
#include "rudnn/types.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rudnn {

namespace runtime {
class Backend;
} // namespace runtime

enum class BackendKind { Auto, Cuda, Emulation };

/// "auto", "cuda", "emulation".
const char *backendName(BackendKind kind);
/// Parses backendName's output; throws InvalidArgument otherwise.
BackendKind parseBackend(const std::string &name);

/// The caller's device memory allocator (host memory for emulation): all
/// the memory a context takes (Context::allocate, DeviceBuffer, plans'
/// workspaces) comes from it and goes back to it. Both set, or neither
/// (the backend's allocator).
struct Allocator {
  std::function<void *(size_t bytes)> allocate;
  std::function<void(void *pointer)> release;
};

struct ContextOptions {
  /// Auto: RUDNN_BACKEND if set, else the GPU when one is present, else
  /// emulation.
  BackendKind backend = BackendKind::Auto;
  int deviceOrdinal = 0;
  /// Kernel cache directory; nullopt: RUDNN_CACHE_DIR, else
  /// $XDG_CACHE_HOME/rudnn, else ~/.cache/rudnn. Empty: memory only.
  std::optional<std::string> cacheDirectory;
  /// 0: RUDNN_CACHE_MAX_BYTES, else 1 GiB.
  uint64_t cacheMaxBytes = 0;
  /// Emulation check mode: kernels compiled with AddressSanitizer and
  /// UndefinedBehaviorSanitizer; nullopt: RUDNN_EMULATION_SANITIZE=1.
  std::optional<bool> emulationSanitize;
  /// Architecture kernels are compiled for when no device decides it
  /// (ahead-of-time compilation); a device's own arch wins.
  std::string arch = "sm_90";
  Allocator allocator;
  /// Ready plans (and operator calls' functions) kept, the least recently
  /// used dropped past it: each distinct attribute value (an eps, a scale)
  /// makes a plan of its own. 0: RUDNN_PLAN_CACHE_SIZE, else 1024.
  size_t planCacheCapacity = 0;
  /// A folder laid out as codegen/device whose headers replace the embedded
  /// device library's (`<folder>/norm/rows.cuh` for "rudnn/norm/rows.cuh"):
  /// to work on the device library without rebuilding. Only the kernels
  /// that include a changed header compile again. nullopt:
  /// RUDNN_DEVICE_LIBRARY if set.
  std::optional<std::string> deviceLibraryDirectory;
};

/// What the context has done so far.
struct Counters {
  uint64_t kernelsCompiled = 0;
  uint64_t kernelCacheMemoryHits = 0;
  uint64_t kernelCacheDiskHits = 0;
  uint64_t planCacheHits = 0;
  uint64_t planCacheMisses = 0;
  /// Plans and operator functions dropped as least recently used.
  uint64_t planCacheEvictions = 0;
  /// Operator calls' functions (callOperator, the typed entry points, the
  /// Python drop-ins), one per signature: found, built, and dropped as least
  /// recently used beyond setFunctionCacheCapacity; and how many are kept.
  uint64_t functionCacheHits = 0;
  uint64_t functionCacheMisses = 0;
  uint64_t functionCacheEvictions = 0;
  uint64_t functionsCached = 0;
};

/// Device time of one kernel, summed over the launches made while the
/// context was profiling.
struct KernelProfile {
  std::string kernel; // the entry point, e.g. "kda_fwd_prepare_bf16_..."
  uint64_t launches = 0;
  double milliseconds = 0;
};

class Context {
public:
  /// Opens the backend lazily: constructing a context never needs a GPU.
  explicit Context(ContextOptions options = {});
  /// A context on a backend of the embedder's own (runtime/backends/Backend.h:
  /// one that records launches to measure the host's cost of a call, another
  /// device's), reported and compiled for as `kind`.
  Context(ContextOptions options, std::unique_ptr<runtime::Backend> backend,
          BackendKind kind);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const ContextOptions &options() const;
  /// The backend in use (Cuda or Emulation), opening it if needed. Throws
  /// DeviceUnavailable when the requested backend cannot be had.
  BackendKind backend();
  /// E.g. "NVIDIA H200 (sm_90, 132 SMs, 141 GiB)".
  std::string deviceDescription();

  /// Device memory of the backend (host memory for emulation).
  void *allocate(size_t bytes);
  /// Frees a pointer `allocate` returned (null: nothing). Anything else (a
  /// foreign, interior or already released pointer) is an InvalidArgument
  /// and reaches no backend.
  void release(void *pointer);
  /// `release` for destructors: never throws; a failure (every release fails
  /// after a device fault, or a pointer that is not a live allocation) is
  /// logged as a warning instead.
  void releaseQuietly(void *pointer) noexcept;
  /// Copies `bytes` between host memory and device memory. A device pointer
  /// inside an allocation of this context must leave the copy inside it
  /// (InvalidArgument before anything is copied); other device memory is
  /// the caller's to size.
  void copyToDevice(void *dst, const void *src, size_t bytes,
                    Stream stream = nullptr);
  void copyToHost(void *dst, const void *src, size_t bytes,
                  Stream stream = nullptr);
  /// Waits for `stream`'s work. Throws InvalidArgument if a call on it since
  /// it was last synchronized read device-held offsets (cu_seqlens) that do
  /// not start at 0, never decrease and end at the packed rows: its kernels
  /// clamp them, touching nothing outside the tensors, but rows outside
  /// every entry are left unwritten. (Offsets on the host are checked
  /// before the call runs.)
  void synchronize(Stream stream = nullptr);

  /// Milliseconds `stream` spends on the work `work` enqueues: CUDA events
  /// recorded before and after it on the GPU (as torch.cuda.Event timings
  /// are taken), the host clock around a synchronized run on emulation.
  /// Waits for the stream.
  float timeMilliseconds(const std::function<void()> &work,
                         Stream stream = nullptr);

  /// Compiles one CUDA C++ kernel for `arch` ("sm_90") through the kernel
  /// cache, without needing a device, and returns its binary (cubin and
  /// PTX, serialized). It may include the device library ("rudnn/core.cuh",
  /// "rudnn/attention.cuh", …). `entry`, its `extern "C" __global__`
  /// function, must be a C identifier of at most 255 characters (it also
  /// names dump files): InvalidArgument otherwise.
  std::string compileKernel(const std::string &entry, const std::string &source,
                            const std::string &arch);

  Counters counters() const;
  /// Keeps at most `capacity` (≥ 1; InvalidArgument otherwise) operator
  /// functions, dropping the least recently used beyond it, now and from
  /// then on; returns the previous bound (ContextOptions::planCacheCapacity
  /// at first).
  size_t setFunctionCacheCapacity(size_t capacity);

  /// The most workspace any operator call `calls` makes would take, in
  /// bytes, without running them: each call is checked and planned
  /// (compiling what it needs) but launches nothing and writes nothing.
  size_t workspaceBytes(const std::function<void()> &calls);
  /// From now on, calls on `stream` carve their workspace from
  /// [pointer, pointer + bytes): device memory the caller keeps alive and
  /// leaves alone while they run. A call needing more throws
  /// InvalidArgument before launching anything. nullptr: the context's own
  /// workspace again.
  void setWorkspace(Stream stream, void *pointer, size_t bytes);

  /// While on, every kernel launch of an operator call is timed on its own
  /// (and waits for the device: for measurement, not production; not on a
  /// stream being captured into a CUDA graph, and work other threads put on
  /// the same stream counts toward the launch it lands beside). Off by
  /// default.
  void setProfiling(bool enabled);
  /// The kernels launched while profiling, most total time first.
  std::vector<KernelProfile> profile() const;
  void resetProfile();

  struct Impl;
  /// rudnn's operator implementations reach the caches through this.
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

/// Device memory owned by a context, released on destruction.
class DeviceBuffer {
public:
  DeviceBuffer(Context &context, size_t bytes)
      : context(&context), pointer(context.allocate(bytes)), bytes(bytes) {}
  ~DeviceBuffer() {
    if (pointer)
      context->releaseQuietly(pointer);
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : context(other.context), pointer(other.pointer), bytes(other.bytes) {
    other.pointer = nullptr;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(DeviceBuffer &&) = delete;

  void *data() const { return pointer; }
  size_t size() const { return bytes; }

private:
  Context *context;
  void *pointer;
  size_t bytes;
};

} // namespace rudnn

#endif // RUDNN_CONTEXT_H
