//===- EmulationBackend.h - CUDA kernels run on the CPU ---------*- C++ -*-===//
//
// The kernel's CUDA C++ source, with the emulation prelude, is compiled by
// the host C++ compiler into a shared object, loaded with dlopen and run by a
// CPU SIMT executor: blocks spread over OS threads, every CUDA thread of a
// block a fiber. It runs the text NVRTC compiles; no operator has a separate
// CPU implementation. Device memory is host memory.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BACKENDS_EMULATIONBACKEND_H
#define RUDNN_RUNTIME_BACKENDS_EMULATIONBACKEND_H

#include "runtime/backends/Backend.h"
#include "runtime/emulation/SimtExecutor.h"

#include <memory>
#include <string>
#include <vector>

namespace rudnn::runtime {

struct EmulationOptions {
  /// Headers kernels may include besides the prelude (the device library,
  /// as "rudnn/device.cuh", ...).
  std::vector<HeaderFile> headers;
  /// RUDNN_HOST_CXX, else the C++ compiler rudnn was built with.
  std::string hostCompiler;
  /// Compile kernels with AddressSanitizer and UndefinedBehaviorSanitizer
  /// (RUDNN_EMULATION_SANITIZE=1 turns it on).
  bool sanitize = false;
  /// OS threads running blocks; 0: the hardware concurrency.
  unsigned threads = 0;
  /// Check mode (RUDNN_EMULATION_CHECK=1, or =SCHEDULE to set `schedule`
  /// too): every memory access of a kernel is observed, and shared-memory
  /// races, collectives met at different call sites, spin-waits that cannot
  /// finish and global accesses outside their allocation trap; approximate
  /// math and tensor-core sums deviate as far as the hardware may. Memory
  /// from `allocate` then lies between guard regions (allocateGuarded): a
  /// load, store or atomic of a launch that falls in one, or straddles an
  /// allocation's ends, fails the launch naming the kernel, block, thread,
  /// address and nearest allocation. Not caught: an access landing in
  /// another live allocation (or in another buffer carved from the same
  /// one, as a plan's workspace buffers are) or beyond the guard regions
  /// (64 MiB or the allocation's size, whichever is larger, on each side).
  /// A memcpy of variable length, a library call the instrumentation does
  /// not see, is caught only on reaching a guard page: the process then
  /// ends after the same report. Slower; excludes `sanitize`.
  bool check = false;
  /// Seconds a CUDA thread may run without reaching a barrier, warp
  /// operation or poll before the process ends with a report
  /// (RUDNN_EMULATION_WATCHDOG; 0: never).
  double watchdogSeconds = 300;
  /// The order blocks and a block's threads run in
  /// (RUDNN_EMULATION_SCHEDULE: forward, reverse or random:SEED).
  Schedule schedule;
  /// Where the compiled prelude (a precompiled header; check mode's hooks)
  /// is kept for other backends and processes: RUDNN_EMULATION_PRELUDE_DIR,
  /// else "emulation" under the kernel cache's folder (RUDNN_CACHE_DIR,
  /// ...); empty: in this backend's temporary folder, not precompiled.
  std::string preludeDirectory;

  /// The defaults above, read from the environment, with `headers`.
  static EmulationOptions fromEnvironment(std::vector<HeaderFile> headers = {});
};

class EmulationBackend final : public Backend {
public:
  explicit EmulationBackend(
      EmulationOptions options = EmulationOptions::fromEnvironment());
  ~EmulationBackend() override;

  const EmulationOptions &options() const;

  std::string name() const override { return "emulation"; }
  std::string deviceDescription() const override;
  std::string compilerIdentity() const override;
  /// Throws CompileError with the compiler's output on failure.
  std::string compile(const KernelSource &kernel) const override;
  std::shared_ptr<LoadedKernel> load(const std::string &binary,
                                     const std::string &entry) override;
  /// Runs the whole grid before returning (streams are ordered already).
  /// Throws DeviceError naming the kernel and block on a deadlock, trap or,
  /// in check mode, race or out-of-bounds access.
  void launch(const LoadedKernel &kernel, const LaunchGeometry &geometry,
              ArgPack &args, StreamHandle stream) override;
  /// What the emulated TMA instructions read (rudnn_emu_tensor_map).
  TensorMapBytes encodeTensorMap(const TensorMapRequest &request) override;

  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr pointer) override;
  void copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                    StreamHandle stream) override;
  void copyToHost(void *dst, DevicePtr src, size_t bytes,
                  StreamHandle stream) override;
  void copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                    StreamHandle stream) override;
  void fillZero(DevicePtr dst, size_t bytes, StreamHandle stream) override;

  StreamHandle createStream() override;
  void destroyStream(StreamHandle stream) override;
  void synchronize(StreamHandle stream) override;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BACKENDS_EMULATIONBACKEND_H
