//===- CudaDriver.cpp - The CUDA driver API, resolved at run time ---------===//

#include "runtime/backends/CudaDriver.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <dlfcn.h>

#include <optional>

using namespace rudnn;
using namespace rudnn::runtime;

/// The ABI the entry points are typed for; newer drivers keep serving it.
static constexpr int kRequestedVersion = 12000;

/// "13.0" for 13000.
static std::string versionString(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

namespace {

/// What the one initialization produced: a driver, or why there is none.
struct DriverState {
  std::optional<CudaDriver> driver;
  std::string failure;
};

/// Opens libcuda.so.1 and resolves its entry points through cuGetProcAddress.
class Loader {
public:
  ~Loader() {
    // Keep the library only when it is in use; a driver is never unloaded
    // because contexts and modules may outlive any owner we could name.
    if (handle && !keep)
      dlclose(handle);
  }

  CudaDriver load() {
    handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      throw DeviceUnavailable(std::string("no CUDA driver: "
                                          "dlopen(libcuda.so.1) failed: ") +
                              (reason ? reason : "unknown reason"));
    }
    getProcAddress2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
        dlsym(handle, "cuGetProcAddress_v2"));
    if (!getProcAddress2)
      getProcAddress1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(
          dlsym(handle, "cuGetProcAddress"));
    if (!getProcAddress2 && !getProcAddress1)
      throw DeviceUnavailable(
          "CUDA driver too old: libcuda.so.1 has no cuGetProcAddress (rudnn "
          "needs a driver for CUDA 12.0 or newer)");

    CudaDriver d;
    // The error functions first, so later failures can be described.
    resolveOptional(d, d.getErrorName, "cuGetErrorName");
    resolveOptional(d, d.getErrorString, "cuGetErrorString");
    resolve(d, d.init, "cuInit");
    resolve(d, d.driverGetVersion, "cuDriverGetVersion");

    if (CUresult result = d.init(0); result != CUDA_SUCCESS)
      throw DeviceUnavailable(std::string(result == CUDA_ERROR_NO_DEVICE
                                              ? "no CUDA device"
                                              : "CUDA driver unusable") +
                              ": cuInit failed: " + describe(d, result));
    if (CUresult result = d.driverGetVersion(&d.version);
        result != CUDA_SUCCESS)
      throw DeviceUnavailable("CUDA driver unusable: cuDriverGetVersion "
                              "failed: " +
                              describe(d, result));
    if (d.version < kRequestedVersion)
      throw DeviceUnavailable("CUDA driver too old: it supports CUDA " +
                              versionString(d.version) +
                              ", rudnn needs 12.0 or newer");

    resolve(d, d.deviceGetCount, "cuDeviceGetCount");
    resolve(d, d.deviceGet, "cuDeviceGet");
    resolve(d, d.deviceGetName, "cuDeviceGetName");
    resolve(d, d.deviceGetAttribute, "cuDeviceGetAttribute");
    resolve(d, d.deviceTotalMem, "cuDeviceTotalMem");
    resolve(d, d.devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(d, d.devicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
    resolve(d, d.ctxSetCurrent, "cuCtxSetCurrent");
    resolve(d, d.ctxPushCurrent, "cuCtxPushCurrent");
    resolve(d, d.ctxPopCurrent, "cuCtxPopCurrent");
    resolve(d, d.moduleLoadDataEx, "cuModuleLoadDataEx");
    resolve(d, d.moduleUnload, "cuModuleUnload");
    resolve(d, d.moduleGetFunction, "cuModuleGetFunction");
    resolve(d, d.moduleGetGlobal, "cuModuleGetGlobal");
    resolve(d, d.funcSetAttribute, "cuFuncSetAttribute");
    resolve(d, d.launchKernel, "cuLaunchKernel");
    resolveOptional(d, d.launchCooperativeKernel, "cuLaunchCooperativeKernel");
    resolveOptional(d, d.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    resolve(d, d.memAlloc, "cuMemAlloc");
    resolve(d, d.memFree, "cuMemFree");
    resolve(d, d.memcpyHtoDAsync, "cuMemcpyHtoDAsync");
    resolve(d, d.memcpyDtoHAsync, "cuMemcpyDtoHAsync");
    resolve(d, d.memcpyDtoDAsync, "cuMemcpyDtoDAsync");
    resolve(d, d.memsetD8Async, "cuMemsetD8Async");
    resolve(d, d.streamCreate, "cuStreamCreate");
    resolve(d, d.streamDestroy, "cuStreamDestroy");
    resolve(d, d.streamSynchronize, "cuStreamSynchronize");
    resolve(d, d.streamBeginCapture, "cuStreamBeginCapture");
    resolve(d, d.streamEndCapture, "cuStreamEndCapture");
    resolve(d, d.graphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    resolve(d, d.graphLaunch, "cuGraphLaunch");
    resolve(d, d.graphExecDestroy, "cuGraphExecDestroy");
    resolve(d, d.graphDestroy, "cuGraphDestroy");
    resolve(d, d.graphExecUpdate, "cuGraphExecUpdate");
    resolve(d, d.eventCreate, "cuEventCreate");
    resolve(d, d.eventRecord, "cuEventRecord");
    resolve(d, d.eventSynchronize, "cuEventSynchronize");
    resolve(d, d.eventElapsedTime, "cuEventElapsedTime");
    resolve(d, d.eventDestroy, "cuEventDestroy");

    if (CUresult result = d.deviceGetCount(&d.deviceCount);
        result != CUDA_SUCCESS)
      throw DeviceUnavailable("CUDA driver unusable: cuDeviceGetCount "
                              "failed: " +
                              describe(d, result));
    if (d.deviceCount <= 0)
      throw DeviceUnavailable("no CUDA device: the driver (CUDA " +
                              versionString(d.version) +
                              ") reports no devices");
    keep = true;
    return d;
  }

private:
  static std::string describe(const CudaDriver &d, CUresult result) {
    std::string text = d.errorName(result);
    if (std::string detail = d.errorString(result); !detail.empty())
      text += " (" + detail + ")";
    return text;
  }

  /// The address of `symbol`, or null with `reason` saying why.
  void *lookup(const CudaDriver &d, const char *symbol, std::string &reason) {
    void *address = nullptr;
    CUresult result;
    if (getProcAddress2) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      result = getProcAddress2(symbol, &address, kRequestedVersion,
                               CU_GET_PROC_ADDRESS_DEFAULT, &status);
      if (result == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS) {
        reason = status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                     ? "not available for CUDA 12.0"
                     : "symbol not found";
        return nullptr;
      }
    } else {
      result = getProcAddress1(symbol, &address, kRequestedVersion,
                               CU_GET_PROC_ADDRESS_DEFAULT);
    }
    if (result != CUDA_SUCCESS) {
      // A stub library answers every lookup with CUDA_ERROR_STUB_LIBRARY.
      reason = describe(d, result);
      return nullptr;
    }
    if (!address)
      reason = "no address returned";
    return address;
  }

  template <typename Fn>
  void resolveOptional(const CudaDriver &d, Fn &fn, const char *symbol) {
    std::string ignored;
    fn = reinterpret_cast<Fn>(lookup(d, symbol, ignored));
  }

  template <typename Fn>
  void resolve(const CudaDriver &d, Fn &fn, const char *symbol) {
    std::string reason;
    void *address = lookup(d, symbol, reason);
    if (!address)
      throw DeviceUnavailable(std::string("CUDA driver unusable: "
                                          "cuGetProcAddress(") +
                              symbol + ") failed: " + reason);
    fn = reinterpret_cast<Fn>(address);
  }

  void *handle = nullptr;
  bool keep = false;
  PFN_cuGetProcAddress_v12000 getProcAddress2 = nullptr;
  PFN_cuGetProcAddress_v11030 getProcAddress1 = nullptr;
};

} // namespace

const CudaDriver &CudaDriver::get() {
  // A function-local static: initialized exactly once even under concurrent
  // first calls, and the lambda never throws, so a failure is remembered
  // rather than retried.
  static const DriverState state = []() noexcept {
    DriverState result;
    try {
      Loader loader;
      result.driver = loader.load();
      log(LogLevel::Info,
          "CUDA driver for CUDA " + versionString(result.driver->version) +
              ", " + std::to_string(result.driver->deviceCount) + " device(s)");
    } catch (const std::exception &error) {
      result.driver.reset();
      result.failure = error.what();
      log(LogLevel::Info, result.failure);
    }
    return result;
  }();
  if (!state.driver)
    throw DeviceUnavailable(state.failure);
  return *state.driver;
}

void CudaDriver::fail(CUresult result, const char *call) const {
  throw DeviceError(call, errorName(result), errorString(result));
}

std::string CudaDriver::errorName(CUresult result) const {
  const char *name = nullptr;
  if (getErrorName && getErrorName(result, &name) == CUDA_SUCCESS && name)
    return name;
  // The toolkit's stub library cannot name even its own error.
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return "CUDA_ERROR_STUB_LIBRARY";
  return "CUresult " + std::to_string(static_cast<int>(result));
}

std::string CudaDriver::errorString(CUresult result) const {
  const char *text = nullptr;
  if (getErrorString && getErrorString(result, &text) == CUDA_SUCCESS && text)
    return text;
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return "libcuda.so.1 is the CUDA toolkit's stub library, not a driver";
  return "";
}
