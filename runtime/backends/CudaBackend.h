//===- CudaBackend.h - Kernels on an NVIDIA GPU via the driver --*- C++ -*-===//
//
// The driver library (libcuda.so.1) is opened with dlopen and its entry
// points resolved through cuGetProcAddress; it is never linked. Without a
// driver or a device every call here throws DeviceUnavailable, and the rest
// of rudnn keeps working.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BACKENDS_CUDABACKEND_H
#define RUDNN_RUNTIME_BACKENDS_CUDABACKEND_H

#include "runtime/backends/Backend.h"
#include "runtime/compile/NvrtcCompiler.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rudnn::runtime {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  int smCount = 0;
  int warpSize = 32;
  /// Opt-in maximum dynamic shared memory per block, bytes.
  int maxSharedPerBlockOptin = 0;
  size_t totalMemoryBytes = 0;

  /// "sm_90" for compute capability 9.0.
  std::string arch() const;
};

/// Whether a driver and at least one device are present (never throws).
bool cudaAvailable() noexcept;

/// Every visible device. Throws DeviceUnavailable without driver or device.
std::vector<CudaDeviceInfo> listCudaDevices();

class CudaBackend final : public Backend {
public:
  /// Opens device `ordinal` (its primary context). Throws DeviceUnavailable
  /// or InvalidArgument (no such ordinal).
  CudaBackend(int ordinal, NvrtcCompiler compiler);
  ~CudaBackend() override;

  const CudaDeviceInfo &device() const;
  /// The architecture kernels are compiled for: the device's, or the newest
  /// NVRTC knows when the device is newer (the driver then JITs the PTX).
  const std::string &compileArch() const;

  std::string name() const override { return "cuda"; }
  std::string deviceDescription() const override;
  std::string compilerIdentity() const override;
  std::string compile(const KernelSource &kernel) const override;
  std::shared_ptr<LoadedKernel> load(const std::string &binary,
                                     const std::string &entry) override;
  void launch(const LoadedKernel &kernel, const LaunchGeometry &geometry,
              ArgPack &args, StreamHandle stream) override;
  /// cuTensorMapEncodeTiled.
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
  StreamHandle createCaptureStream() override;
  void destroyStream(StreamHandle stream) override;
  void synchronize(StreamHandle stream) override;

  bool supportsGraphs() const override { return true; }
  void beginCapture(StreamHandle stream) override;
  std::unique_ptr<CapturedGraph> endCapture(StreamHandle stream) override;
  std::unique_ptr<CapturedGraph>
  endCaptureReusing(StreamHandle stream,
                    std::unique_ptr<CapturedGraph> previous) override;
  void replay(CapturedGraph &graph, StreamHandle stream) override;

  /// Measured with CUDA events.
  float timeMilliseconds(StreamHandle stream,
                         const std::function<void()> &work) override;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BACKENDS_CUDABACKEND_H
