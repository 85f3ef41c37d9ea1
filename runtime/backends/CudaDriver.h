//===- CudaDriver.h - The CUDA driver API, resolved at run time -*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen on first use and every entry point is
// taken from cuGetProcAddress for the CUDA 12.0 ABI, so rudnn never links the
// driver and runs (without a GPU) where there is none. Internal to the
// runtime: only code that talks to the driver includes this.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BACKENDS_CUDADRIVER_H
#define RUDNN_RUNTIME_BACKENDS_CUDADRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace rudnn::runtime {

/// The driver entry points rudnn uses. Members drop the "cu" prefix because
/// <cuda.h> redefines many of the API names as macros (cuMemAlloc ->
/// cuMemAlloc_v2); the types are the versions cuGetProcAddress returns for
/// CUDA 12.0.
struct CudaDriver {
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDriverGetVersion_v2020 driverGetVersion = nullptr;
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuGetErrorString_v6000 getErrorString = nullptr;

  PFN_cuDeviceGetCount_v2000 deviceGetCount = nullptr;
  PFN_cuDeviceGet_v2000 deviceGet = nullptr;
  PFN_cuDeviceGetName_v2000 deviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 deviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 deviceTotalMem = nullptr;

  PFN_cuDevicePrimaryCtxRetain_v7000 devicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 devicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctxSetCurrent = nullptr;
  PFN_cuCtxPushCurrent_v4000 ctxPushCurrent = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctxPopCurrent = nullptr;

  PFN_cuModuleLoadDataEx_v2010 moduleLoadDataEx = nullptr;
  PFN_cuModuleUnload_v2000 moduleUnload = nullptr;
  PFN_cuModuleGetFunction_v2000 moduleGetFunction = nullptr;
  PFN_cuModuleGetGlobal_v3020 moduleGetGlobal = nullptr;
  PFN_cuFuncSetAttribute_v9000 funcSetAttribute = nullptr;
  PFN_cuLaunchKernel_v4000 launchKernel = nullptr;
  PFN_cuLaunchCooperativeKernel_v9000 launchCooperativeKernel = nullptr;

  /// Absent (null) before CUDA 12.0's drivers.
  PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncodeTiled = nullptr;

  PFN_cuMemAlloc_v3020 memAlloc = nullptr;
  PFN_cuMemFree_v3020 memFree = nullptr;
  PFN_cuMemcpyHtoDAsync_v3020 memcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync_v3020 memcpyDtoHAsync = nullptr;
  PFN_cuMemcpyDtoDAsync_v3020 memcpyDtoDAsync = nullptr;
  PFN_cuMemsetD8Async_v3020 memsetD8Async = nullptr;

  PFN_cuStreamCreate_v2000 streamCreate = nullptr;
  PFN_cuStreamDestroy_v4000 streamDestroy = nullptr;
  PFN_cuStreamSynchronize_v2000 streamSynchronize = nullptr;
  PFN_cuStreamBeginCapture_v10010 streamBeginCapture = nullptr;
  PFN_cuStreamEndCapture_v10000 streamEndCapture = nullptr;

  PFN_cuGraphInstantiateWithFlags_v11040 graphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch_v10000 graphLaunch = nullptr;
  PFN_cuGraphExecDestroy_v10000 graphExecDestroy = nullptr;
  PFN_cuGraphDestroy_v10000 graphDestroy = nullptr;
  PFN_cuGraphExecUpdate_v12000 graphExecUpdate = nullptr;

  PFN_cuEventCreate_v2000 eventCreate = nullptr;
  PFN_cuEventRecord_v2000 eventRecord = nullptr;
  PFN_cuEventSynchronize_v2000 eventSynchronize = nullptr;
  PFN_cuEventElapsedTime_v2000 eventElapsedTime = nullptr;
  PFN_cuEventDestroy_v4000 eventDestroy = nullptr;

  /// cuDriverGetVersion, e.g. 13000.
  int version = 0;
  /// Visible devices; at least one once `get` has returned.
  int deviceCount = 0;

  /// The driver, loaded and initialized once (thread-safe). Throws
  /// DeviceUnavailable, with the reason, when there is no usable driver or no
  /// device; every later call throws the same reason again.
  static const CudaDriver &get();

  /// Throws DeviceError naming `call` unless `result` is CUDA_SUCCESS.
  void check(CUresult result, const char *call) const {
    if (result != CUDA_SUCCESS)
      fail(result, call);
  }
  [[noreturn]] void fail(CUresult result, const char *call) const;

  /// "CUDA_ERROR_OUT_OF_MEMORY", or "CUresult 2" if the driver cannot say.
  std::string errorName(CUresult result) const;
  /// The driver's description of `result`, or "" if it has none.
  std::string errorString(CUresult result) const;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BACKENDS_CUDADRIVER_H
