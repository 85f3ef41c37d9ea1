//===- CudaToolkit.h - NVRTC, headers and ptxas found at run time -*- C++
//-*-===//
//
// rudnn links no CUDA library. NVRTC is opened with dlopen, like the driver,
// so one build runs wherever a CUDA 12 or 13 toolkit is installed: in
// $CUDA_HOME, in the toolkit rudnn was built against, in the standard folders
// (lib64, lib, targets/<arch>-linux/lib under /usr/local/cuda, …) or on the
// dynamic loader's path. The CUDA headers NVRTC needs (cuda_fp16.h,
// cuda_bf16.h) and ptxas are then taken from the toolkit that NVRTC came from.
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_COMPILE_CUDATOOLKIT_H
#define RUDNN_RUNTIME_COMPILE_CUDATOOLKIT_H

#include <nvrtc.h>

#include <string>
#include <vector>

namespace rudnn::runtime {

/// The NVRTC entry points rudnn uses, typed from <nvrtc.h>.
struct Nvrtc {
  decltype(&::nvrtcGetErrorString) getErrorString = nullptr;
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) getNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) getSupportedArchs = nullptr;
  decltype(&::nvrtcCreateProgram) createProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) destroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) compileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) getProgramLog = nullptr;
  decltype(&::nvrtcGetCUBINSize) getCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) getCUBIN = nullptr;
  decltype(&::nvrtcGetPTXSize) getPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) getPTX = nullptr;
};

struct CudaToolkit {
  Nvrtc nvrtc;
  /// The NVRTC library that was loaded, e.g.
  /// "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13".
  std::string nvrtcLibrary;
  /// The folder holding cuda_fp16.h; empty when none was found.
  std::string includeDir;
  /// The ptxas of the same toolkit; empty when none was found (NVRTC itself
  /// needs no ptxas: only checks of its output do).
  std::string ptxas;
  /// The places looked at, in order, for messages.
  std::vector<std::string> nvrtcSearched, includeSearched;

  /// The toolkit, located once (thread-safe) in the default places. Throws
  /// Unsupported naming every place searched when no NVRTC library can be
  /// loaded; every later call throws the same again.
  static const CudaToolkit &get();

  /// Locates a toolkit under `roots` (then, with `loaderPath`, on the
  /// dynamic loader's path), uncached: what `get` does with $CUDA_HOME,
  /// $CUDA_PATH, the build's toolkit, /usr/local/cuda and /opt/cuda.
  static CudaToolkit locate(const std::vector<std::string> &roots,
                            bool loaderPath);

  /// The roots `get` searches, in order: $CUDA_HOME, $CUDA_PATH, the
  /// build's toolkit, /usr/local/cuda, /opt/cuda, then each of
  /// $RUDNN_CUDA_ROOTS (':'-separated), each once.
  static std::vector<std::string> defaultRoots();
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_COMPILE_CUDATOOLKIT_H
