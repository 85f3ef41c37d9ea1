//===- NvrtcCompiler.h - CUDA C++ to cubin + PTX with NVRTC -----*- C++ -*-===//
//
// Compiles one kernel for one architecture. Headers come from memory (the
// embedded device library); the only path read is the CUDA include directory
// (for cuda_fp16.h / cuda_bf16.h) of the toolkit NVRTC was loaded from
// (CudaToolkit). Needs no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_COMPILE_NVRTCCOMPILER_H
#define RUDNN_RUNTIME_COMPILE_NVRTCCOMPILER_H

#include "runtime/compile/Kernel.h"

#include <string>
#include <vector>

namespace rudnn::runtime {

/// The include folder of the CUDA toolkit NVRTC came from. Throws
/// Unsupported, naming the folders searched, when none has cuda_fp16.h.
const std::string &cudaIncludeDir();

class NvrtcCompiler {
public:
  explicit NvrtcCompiler(std::vector<HeaderFile> headers = {});

  /// Compiles `kernel` for `arch` ("sm_80", "sm_90", ...). Throws
  /// CompileError with NVRTC's log and the path of a dump of the source,
  /// Unsupported for an architecture NVRTC does not know.
  CudaBinary compile(const KernelSource &kernel, const std::string &arch) const;

  /// The options passed to NVRTC for `arch` (part of the cache key).
  std::vector<std::string> options(const std::string &arch) const;

  /// Everything besides the source that changes what `compile(…, arch)`
  /// produces: NVRTC's version, the options and the architecture. The CUDA
  /// backend and ahead-of-time compiles share it, so their cache keys agree.
  std::string identity(const std::string &arch) const;

  /// "nvrtc 13.0".
  static std::string version();

  /// Architectures this NVRTC can target, e.g. {75, 80, 86, 89, 90, ...}.
  static std::vector<int> supportedArchitectures();

  const std::vector<HeaderFile> &headers() const { return headers_; }

private:
  std::vector<HeaderFile> headers_;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_COMPILE_NVRTCCOMPILER_H
