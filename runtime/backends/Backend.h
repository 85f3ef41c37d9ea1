//===- Backend.h - What a plan needs from an execution target ---*- C++ -*-===//
//
// One interface over the CUDA driver and the CPU emulation backend: compile a
// kernel source to a binary, load it, launch it, and move memory. Device
// memory is named by DevicePtr, an address on the backend's device (host
// memory for emulation).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BACKENDS_BACKEND_H
#define RUDNN_RUNTIME_BACKENDS_BACKEND_H

#include "runtime/compile/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace rudnn::runtime {

using DevicePtr = uint64_t;
/// A stream of the backend; nullptr is its default stream.
using StreamHandle = void *;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct LaunchGeometry {
  Dim3 grid, block;
  uint32_t dynamicSharedBytes = 0;
  /// All blocks resident at once, so the grid may synchronise.
  bool cooperative = false;
};

/// A TMA tensor map to encode for one launch: cuTensorMapEncodeTiled's
/// arguments (dims innermost first, the innermost contiguous; strides in
/// bytes of dims 1 and up; zeros out of bounds, no interleave).
struct TensorMapRequest {
  DevicePtr address = 0;
  uint32_t elementBytes = 2, rank = 1;
  uint64_t dims[5] = {}, strideBytes[4] = {};
  uint32_t box[5] = {};
  uint32_t swizzleBytes = 128; // 0, 32, 64 or 128
};

/// An encoded tensor map: the opaque 128 bytes a kernel takes by value.
struct alignas(64) TensorMapBytes {
  uint64_t words[16];
};

/// Throws InvalidArgument, naming the rule, unless the hardware can build
/// `request`'s tensor map: every backend checks the same rules.
void checkTensorMapRequest(const TensorMapRequest &request);

/// Kernel arguments laid out as CUDA expects: an array of pointers, one per
/// parameter, each to a copy of the value held by the pack. Scalars (at most
/// 8 bytes: pointers, integers, floats) sit in one array, so packing a
/// launch allocates nothing once the pack has grown; larger values (structs
/// passed by value) get storage of their own.
class ArgPack {
public:
  template <typename T> ArgPack &push(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel args are PODs");
    uint64_t slot = 0;
    if constexpr (sizeof(T) <= sizeof(uint64_t) &&
                  alignof(T) <= alignof(uint64_t)) {
      std::memcpy(&slot, &value, sizeof(T));
    } else {
      large.push_back({slots.size(), sizeof(T), storageFor(sizeof(T))});
      std::memcpy(large.back().storage.get(), &value, sizeof(T));
    }
    slots.push_back(slot);
    return *this;
  }
  void **pointers() {
    pointerArray.resize(slots.size());
    for (size_t i = 0; i < slots.size(); ++i)
      pointerArray[i] = &slots[i];
    for (const Large &value : large)
      pointerArray[value.index] = value.storage.get();
    return pointerArray.data();
  }
  size_t size() const { return slots.size(); }
  /// Empties the pack, keeping its memory for the next launch.
  void clear() {
    slots.clear();
    large.clear();
  }
  void reserve(size_t count) {
    slots.reserve(count);
    pointerArray.reserve(count);
  }
  ArgPack() = default;
  ArgPack(const ArgPack &other) { *this = other; }
  ArgPack &operator=(const ArgPack &other) {
    if (this == &other)
      return *this;
    slots = other.slots;
    large.clear();
    for (const Large &value : other.large) {
      large.push_back({value.index, value.bytes, storageFor(value.bytes)});
      std::memcpy(large.back().storage.get(), value.storage.get(), value.bytes);
    }
    return *this;
  }

private:
  /// Storage for a value larger than a slot, aligned as a tensor map must
  /// be (64 bytes).
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  static std::unique_ptr<Line[]> storageFor(size_t bytes) {
    return std::make_unique<Line[]>((bytes + sizeof(Line) - 1) / sizeof(Line));
  }
  /// A value larger than a slot, passed from storage of its own.
  struct Large {
    size_t index, bytes;
    std::unique_ptr<Line[]> storage;
  };
  std::vector<uint64_t> slots;
  std::vector<Large> large;
  std::vector<void *> pointerArray;
};

/// A kernel loaded on one backend, ready to launch.
class LoadedKernel {
public:
  virtual ~LoadedKernel() = default;
  virtual const std::string &entry() const = 0;

  /// Its module's index-fault word (`rudnn_index_fault`, set on the device
  /// when the kernel reads offsets breaking their contract); 0 if it has
  /// none.
  DevicePtr indexFault = 0;
};

/// A captured sequence of launches, replayable on a stream.
class CapturedGraph {
public:
  virtual ~CapturedGraph() = default;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// "cuda" or "emulation".
  virtual std::string name() const = 0;
  /// A one-line description of the device, e.g. "NVIDIA H200 (sm_90, 132 SMs)".
  virtual std::string deviceDescription() const = 0;

  /// Everything besides the source that changes what `compile` produces:
  /// compiler and version, options, architecture. Part of the cache key.
  virtual std::string compilerIdentity() const = 0;
  /// Compiles a kernel; the bytes are what `load` takes and the cache keeps.
  virtual std::string compile(const KernelSource &kernel) const = 0;
  virtual std::shared_ptr<LoadedKernel> load(const std::string &binary,
                                             const std::string &entry) = 0;
  virtual void launch(const LoadedKernel &kernel,
                      const LaunchGeometry &geometry, ArgPack &args,
                      StreamHandle stream) = 0;

  virtual DevicePtr allocate(size_t bytes) = 0;
  virtual void release(DevicePtr pointer) = 0;
  /// `release` for destructors and clean-up paths: never throws; a failure
  /// (a sticky device error after a fault, say) is logged as a warning, so
  /// the first error is the one reported.
  void releaseQuietly(DevicePtr pointer) noexcept;
  virtual void copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                            StreamHandle stream) = 0;
  virtual void copyToHost(void *dst, DevicePtr src, size_t bytes,
                          StreamHandle stream) = 0;
  virtual void copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                            StreamHandle stream) = 0;
  virtual void fillZero(DevicePtr dst, size_t bytes, StreamHandle stream) = 0;

  virtual StreamHandle createStream() = 0;
  /// A stream to capture graphs on when the caller's is the default stream
  /// (which cannot be captured). The CUDA backend makes it non-blocking, so
  /// other threads' use of the default stream cannot break a capture.
  virtual StreamHandle createCaptureStream() { return createStream(); }
  virtual void destroyStream(StreamHandle stream) = 0;
  /// `destroyStream` that never throws (logs), for destructors.
  void destroyStreamQuietly(StreamHandle stream) noexcept;
  virtual void synchronize(StreamHandle stream) = 0;

  /// Notes that `kernels` were launched (or replayed) on `stream`, for
  /// takeIndexFaults; kernels without an index-fault word are passed over.
  void noteLaunches(const std::vector<std::shared_ptr<LoadedKernel>> &kernels,
                    StreamHandle stream);
  /// Once `stream` is synchronized: the entries of the kernels noted on it
  /// since the last call whose index-fault word is set, each word cleared
  /// (work on the stream then waited for again).
  std::vector<std::string> takeIndexFaults(StreamHandle stream);
  /// synchronize, then InvalidArgument naming the kernels takeIndexFaults
  /// finds: a call since the last check read offsets breaking their
  /// contract, and left rows outside every entry unwritten.
  void synchronizeCheckingIndices(StreamHandle stream);

  /// Graph capture; backends without it return false and the plan executor
  /// launches directly.
  virtual bool supportsGraphs() const { return false; }
  virtual void beginCapture(StreamHandle stream);
  virtual std::unique_ptr<CapturedGraph> endCapture(StreamHandle stream);
  /// `endCapture` where `previous` was captured from the same launches
  /// with other arguments (new bindings or sizes): backends that can update
  /// its executable in place, cheaper than building one, do and return it.
  virtual std::unique_ptr<CapturedGraph>
  endCaptureReusing(StreamHandle stream,
                    std::unique_ptr<CapturedGraph> previous);
  virtual void replay(CapturedGraph &graph, StreamHandle stream);

  /// Encodes a TMA tensor map for a kernel argument. Throws InvalidArgument
  /// when the request breaks the hardware's rules (address or strides not
  /// multiples of 16 bytes, a box too large), Unsupported by default.
  virtual TensorMapBytes encodeTensorMap(const TensorMapRequest &request);

  /// Milliseconds the device spends on `work` (enqueued on `stream`). The
  /// default waits for the stream around it and reads the host clock.
  virtual float timeMilliseconds(StreamHandle stream,
                                 const std::function<void()> &work);

private:
  std::mutex launchedMutex;
  /// Per stream, the kernels with an index-fault word launched on it since
  /// its last takeIndexFaults, by word (unloaded ones are skipped).
  std::map<StreamHandle, std::map<DevicePtr, std::weak_ptr<LoadedKernel>>>
      launchedWithFaultWords;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BACKENDS_BACKEND_H
