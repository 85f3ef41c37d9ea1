//===- Kernel.h - Kernel sources and compiled binaries ----------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_COMPILE_KERNEL_H
#define RUDNN_RUNTIME_COMPILE_KERNEL_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rudnn::runtime {

/// One kernel's CUDA C++ translation unit.
struct KernelSource {
  /// The `extern "C" __global__` function to launch.
  std::string entry;
  std::string source;
  /// Uses the target's architecture-specific instructions (wgmma,
  /// setmaxnreg: sm_90a), so it is compiled for "sm_90a" on sm_90.
  bool archSpecific = false;
};

/// A header handed to the compiler from memory, e.g. "rudnn/device.cuh".
struct HeaderFile {
  std::string name;
  std::string contents;
};

/// NVRTC's output for one kernel: cubin for `arch` and the PTX it came from,
/// kept so a newer device can JIT it.
struct CudaBinary {
  std::string entry;
  std::string arch; // "sm_90"
  std::string cubin;
  std::string ptx;
  std::string log; // compiler warnings, if any
  double compileMilliseconds = 0;

  /// A self-describing byte string (what the kernel cache stores).
  std::string serialize() const;
  /// The inverse of `serialize`; nullopt for anything else.
  static std::optional<CudaBinary> deserialize(std::string_view bytes);
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_COMPILE_KERNEL_H
