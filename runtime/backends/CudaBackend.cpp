//===- CudaBackend.cpp - Kernels on an NVIDIA GPU via the driver ----------===//

#include "runtime/backends/CudaBackend.h"
#include "runtime/backends/CudaDriver.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

using namespace rudnn;
using namespace rudnn::runtime;

/// Dynamic shared memory a kernel may use without opting in.
static constexpr uint32_t kDefaultDynamicSharedLimit = 48 * 1024;

std::string CudaDeviceInfo::arch() const {
  return "sm_" + std::to_string(computeMajor * 10 + computeMinor);
}

bool rudnn::runtime::cudaAvailable() noexcept {
  try {
    CudaDriver::get();
    return true;
  } catch (...) {
    return false;
  }
}

static CudaDeviceInfo queryDevice(const CudaDriver &d, int ordinal) {
  CUdevice device;
  d.check(d.deviceGet(&device, ordinal), "cuDeviceGet");
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  d.check(d.deviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  info.name = name;
  auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    d.check(d.deviceGetAttribute(&value, which, device),
            "cuDeviceGetAttribute");
    return value;
  };
  info.computeMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.computeMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.maxSharedPerBlockOptin =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  d.check(d.deviceTotalMem(&info.totalMemoryBytes, device), "cuDeviceTotalMem");
  return info;
}

std::vector<CudaDeviceInfo> rudnn::runtime::listCudaDevices() {
  const CudaDriver &d = CudaDriver::get();
  std::vector<CudaDeviceInfo> devices;
  for (int ordinal = 0; ordinal < d.deviceCount; ++ordinal)
    devices.push_back(queryDevice(d, ordinal));
  return devices;
}

namespace {

/// A retained primary context. Shared by the backend and everything it hands
/// out (kernels, graphs), so the context outlives the last module or graph
/// living in it whatever order they are destroyed in.
class PrimaryContext {
public:
  PrimaryContext(const CudaDriver &d, CUdevice device) : d(d), device(device) {
    d.check(d.devicePrimaryCtxRetain(&context, device),
            "cuDevicePrimaryCtxRetain");
  }
  ~PrimaryContext() {
    // At process exit the driver may already be shut down; nothing to do then.
    d.devicePrimaryCtxRelease(device);
  }
  PrimaryContext(const PrimaryContext &) = delete;
  PrimaryContext &operator=(const PrimaryContext &) = delete;

  /// Makes the context current on the calling thread for the guard's life,
  /// then restores whatever the caller had current: contexts are current per
  /// thread, callers may come from any thread and may use contexts of their
  /// own.
  class Current {
  public:
    explicit Current(const PrimaryContext &owner) : d(owner.d) {
      d.check(d.ctxPushCurrent(owner.context), "cuCtxPushCurrent");
    }
    ~Current() {
      CUcontext popped;
      d.ctxPopCurrent(&popped);
    }
    Current(const Current &) = delete;
    Current &operator=(const Current &) = delete;

  private:
    const CudaDriver &d;
  };
  /// For destructors: runs `release` with the context current (restoring
  /// the caller's afterwards), without exceptions; when the context cannot
  /// be made current, nothing is left to free.
  template <typename Release> void whileCurrent(Release release) const {
    if (d.ctxPushCurrent(context) != CUDA_SUCCESS)
      return;
    release();
    CUcontext popped;
    d.ctxPopCurrent(&popped);
  }

  const CudaDriver &d;

private:
  CUdevice device;
  CUcontext context = nullptr;
};

class CudaKernel final : public LoadedKernel {
public:
  CudaKernel(std::shared_ptr<PrimaryContext> context, CUmodule module,
             CUfunction function, std::string entryName)
      : context(std::move(context)), module(module), function(function),
        entryName(std::move(entryName)) {}
  ~CudaKernel() override {
    context->whileCurrent([&] { context->d.moduleUnload(module); });
  }
  const std::string &entry() const override { return entryName; }

  std::shared_ptr<PrimaryContext> context;
  CUmodule module;
  CUfunction function;
  std::string entryName;
  /// Raises the function's dynamic shared memory limit to at least `bytes`.
  /// Serialized, so concurrent launches never lower a limit another one set.
  void raiseSharedLimit(uint32_t bytes) const {
    std::lock_guard<std::mutex> lock(sharedMutex);
    if (bytes <= sharedLimit.load(std::memory_order_relaxed))
      return;
    context->d.check(context->d.funcSetAttribute(
                         function,
                         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                         static_cast<int>(bytes)),
                     "cuFuncSetAttribute");
    sharedLimit.store(bytes, std::memory_order_release);
  }

  /// The limit already set, so a launch calls cuFuncSetAttribute only when
  /// it needs more than every launch before.
  mutable std::atomic<uint32_t> sharedLimit{kDefaultDynamicSharedLimit};
  mutable std::mutex sharedMutex;
};

class CudaGraph final : public CapturedGraph {
public:
  CudaGraph(std::shared_ptr<PrimaryContext> context, CUgraph graph,
            CUgraphExec exec)
      : context(std::move(context)), graph(graph), exec(exec) {}
  ~CudaGraph() override {
    context->whileCurrent([&] {
      context->d.graphExecDestroy(exec);
      context->d.graphDestroy(graph);
    });
  }

  std::shared_ptr<PrimaryContext> context;
  CUgraph graph;
  CUgraphExec exec;
};

/// Two events, destroyed whatever happens between their records.
struct EventPair {
  explicit EventPair(const CudaDriver &d) : d(d) {
    d.check(d.eventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    CUresult result = d.eventCreate(&stop, CU_EVENT_DEFAULT);
    if (result != CUDA_SUCCESS) {
      d.eventDestroy(start);
      d.fail(result, "cuEventCreate");
    }
  }
  ~EventPair() {
    d.eventDestroy(start);
    d.eventDestroy(stop);
  }
  EventPair(const EventPair &) = delete;
  EventPair &operator=(const EventPair &) = delete;

  const CudaDriver &d;
  CUevent start = nullptr, stop = nullptr;
};

/// "sm_90" -> 90; -1 for anything else.
int archNumber(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() == 3)
    return -1;
  int value = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9')
      return -1;
    value = value * 10 + (arch[i] - '0');
  }
  return value;
}

/// `what`, then the driver's description of `result` when it has one.
std::string describe(const CudaDriver &d, CUresult result,
                     const std::string &what) {
  std::string text = d.errorString(result);
  return text.empty() ? what : what + ": " + text;
}

CUstream toStream(StreamHandle stream) { return static_cast<CUstream>(stream); }

} // namespace

struct CudaBackend::Impl {
  Impl(const CudaDriver &d, NvrtcCompiler compiler)
      : d(d), compiler(std::move(compiler)) {}

  const CudaDriver &d;
  NvrtcCompiler compiler;
  CudaDeviceInfo info;
  /// Empty when NVRTC targets nothing this device can run.
  std::string compileArch;
  std::shared_ptr<PrimaryContext> context;

  PrimaryContext::Current makeCurrent() const {
    return PrimaryContext::Current(*context);
  }
};

CudaBackend::CudaBackend(int ordinal, NvrtcCompiler compiler) {
  const CudaDriver &d = CudaDriver::get();
  if (ordinal < 0 || ordinal >= d.deviceCount)
    throw InvalidArgument("CUDA device ordinal " + std::to_string(ordinal) +
                          " out of range: " + std::to_string(d.deviceCount) +
                          " device(s) present");
  impl = std::make_unique<Impl>(d, std::move(compiler));
  impl->info = queryDevice(d, ordinal);
  CUdevice device;
  d.check(d.deviceGet(&device, ordinal), "cuDeviceGet");
  impl->context = std::make_shared<PrimaryContext>(d, device);

  // The device's own architecture if NVRTC knows it, else the newest one
  // below it: the driver JITs that PTX for the device.
  int deviceArch = archNumber(impl->info.arch());
  int best = -1;
  for (int arch : NvrtcCompiler::supportedArchitectures())
    if (arch <= deviceArch)
      best = std::max(best, arch);
  if (best >= 0)
    impl->compileArch = "sm_" + std::to_string(best);
  else
    warn("NVRTC (" + NvrtcCompiler::version() + ") targets no architecture " +
         impl->info.arch() + " can run; kernels cannot be compiled for " +
         impl->info.name);
  if (!impl->compileArch.empty() && best != deviceArch)
    log(LogLevel::Info, "compiling for " + impl->compileArch + " on " +
                            impl->info.arch() + " (PTX JIT by the driver)");
}

CudaBackend::~CudaBackend() = default;

const CudaDeviceInfo &CudaBackend::device() const { return impl->info; }

const std::string &CudaBackend::compileArch() const {
  if (impl->compileArch.empty())
    throw Unsupported("NVRTC (" + NvrtcCompiler::version() +
                      ") cannot compile for " + impl->info.arch() + " (" +
                      impl->info.name + ")");
  return impl->compileArch;
}

std::string CudaBackend::deviceDescription() const {
  const CudaDeviceInfo &info = impl->info;
  long gib = std::lround(static_cast<double>(info.totalMemoryBytes) /
                         (1024.0 * 1024.0 * 1024.0));
  return info.name + " (" + info.arch() + ", " + std::to_string(info.smCount) +
         " SMs, " + std::to_string(gib) + " GiB)";
}

std::string CudaBackend::compilerIdentity() const {
  return impl->compiler.identity(compileArch());
}

std::string CudaBackend::compile(const KernelSource &kernel) const {
  return impl->compiler.compile(kernel, compileArch()).serialize();
}

std::shared_ptr<LoadedKernel> CudaBackend::load(const std::string &bytes,
                                                const std::string &entry) {
  std::optional<CudaBinary> binary = CudaBinary::deserialize(bytes);
  if (!binary)
    throw InvalidArgument("not a CUDA kernel binary (" +
                          std::to_string(bytes.size()) + " bytes) for '" +
                          entry + "'");
  const std::string deviceArch = impl->info.arch();
  // An arch-specific cubin (sm_90a) runs on exactly its device (sm_90).
  const bool useCubin =
      (binary->arch == deviceArch || binary->arch == deviceArch + "a") &&
      !binary->cubin.empty();
  if (!useCubin) {
    int binaryArch = archNumber(binary->arch);
    if (binaryArch > archNumber(deviceArch))
      throw InvalidArgument("kernel '" + entry + "' was compiled for " +
                            binary->arch + ", newer than the device (" +
                            deviceArch + ")");
    if (binary->ptx.empty())
      throw InvalidArgument("kernel '" + entry + "' has no " + deviceArch +
                            " cubin and no PTX to JIT");
  }

  const CudaDriver &d = impl->d;
  auto current = impl->makeCurrent();
  // The JIT's error log says why PTX did not load; the driver's error code
  // alone does not.
  std::string errorLog(8192, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      errorLog.data(),
      reinterpret_cast<void *>(static_cast<uintptr_t>(errorLog.size()))};
  const void *image = useCubin ? static_cast<const void *>(binary->cubin.data())
                               : static_cast<const void *>(binary->ptx.c_str());
  CUmodule module = nullptr;
  if (CUresult result = d.moduleLoadDataEx(&module, image, 2, options, values);
      result != CUDA_SUCCESS) {
    errorLog.resize(std::strlen(errorLog.c_str()));
    std::string detail =
        describe(d, result,
                 "kernel '" + entry + "' from " + (useCubin ? "cubin" : "PTX") +
                     " for " + binary->arch);
    if (!errorLog.empty())
      detail += "; " + errorLog;
    throw DeviceError("cuModuleLoadDataEx", d.errorName(result), detail);
  }
  CUfunction function = nullptr;
  if (CUresult result = d.moduleGetFunction(&function, module, entry.c_str());
      result != CUDA_SUCCESS) {
    d.moduleUnload(module);
    throw DeviceError("cuModuleGetFunction", d.errorName(result),
                      describe(d, result, "entry '" + entry + "'"));
  }
  log(LogLevel::Debug, "loaded " + entry + " from " +
                           (useCubin ? "cubin" : "PTX") + " for " +
                           binary->arch);
  auto kernel =
      std::make_shared<CudaKernel>(impl->context, module, function, entry);
  // Modules that read no packed offsets have no index-fault word.
  CUdeviceptr word = 0;
  size_t wordBytes = 0;
  if (d.moduleGetGlobal(&word, &wordBytes, module, "rudnn_index_fault") ==
          CUDA_SUCCESS &&
      wordBytes == sizeof(uint32_t))
    kernel->indexFault = static_cast<DevicePtr>(word);
  return kernel;
}

TensorMapBytes CudaBackend::encodeTensorMap(const TensorMapRequest &request) {
  checkTensorMapRequest(request);
  const CudaDriver &d = impl->d;
  if (!d.tensorMapEncodeTiled)
    throw Unsupported("the driver has no cuTensorMapEncodeTiled (CUDA 12.0+ "
                      "drivers do)");
  CUtensorMapDataType type;
  switch (request.elementBytes) {
  case 1:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  case 2:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT16;
    break;
  case 4:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    break;
  default:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT64;
  }
  const CUtensorMapSwizzle swizzle =
      request.swizzleBytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
      : request.swizzleBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
      : request.swizzleBytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                   : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5];
  for (uint32_t i = 0; i < request.rank; ++i) {
    dims[i] = request.dims[i];
    box[i] = request.box[i];
    if (i > 0)
      strides[i - 1] = request.strideBytes[i - 1];
  }
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes));
  CUtensorMap map;
  // Values, not floats: out-of-bounds elements read as zeros.
  d.check(d.tensorMapEncodeTiled(
              &map, type, request.rank,
              reinterpret_cast<void *>(static_cast<uintptr_t>(request.address)),
              dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
              swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
  TensorMapBytes bytes;
  std::memcpy(&bytes, &map, sizeof bytes);
  return bytes;
}

void CudaBackend::launch(const LoadedKernel &kernel,
                         const LaunchGeometry &geometry, ArgPack &args,
                         StreamHandle stream) {
  auto *cudaKernel = dynamic_cast<const CudaKernel *>(&kernel);
  if (!cudaKernel)
    throw InvalidArgument("kernel '" + kernel.entry() +
                          "' was not loaded by the cuda backend");
  const CudaDriver &d = impl->d;
  auto current = impl->makeCurrent();
  uint32_t shared = geometry.dynamicSharedBytes;
  if (shared > kDefaultDynamicSharedLimit) {
    if (shared > static_cast<uint32_t>(impl->info.maxSharedPerBlockOptin))
      throw InvalidArgument(
          "kernel '" + kernel.entry() + "' asks for " + std::to_string(shared) +
          " bytes of dynamic shared memory; " + impl->info.name +
          " allows at most " +
          std::to_string(impl->info.maxSharedPerBlockOptin) + " per block");
    if (shared > cudaKernel->sharedLimit.load(std::memory_order_acquire))
      cudaKernel->raiseSharedLimit(shared);
  }
  if (geometry.cooperative && !d.launchCooperativeKernel)
    throw DeviceError("cuLaunchCooperativeKernel", "CUDA_ERROR_NOT_FOUND",
                      "the driver has no cooperative launch for " +
                          kernel.entry());
  // A cooperative launch fails (too large) unless every block fits at once.
  CUresult result =
      geometry.cooperative
          ? d.launchCooperativeKernel(
                cudaKernel->function, geometry.grid.x, geometry.grid.y,
                geometry.grid.z, geometry.block.x, geometry.block.y,
                geometry.block.z, shared, toStream(stream), args.pointers())
          : d.launchKernel(cudaKernel->function, geometry.grid.x,
                           geometry.grid.y, geometry.grid.z, geometry.block.x,
                           geometry.block.y, geometry.block.z, shared,
                           toStream(stream), args.pointers(), nullptr);
  if (result != CUDA_SUCCESS)
    throw DeviceError(
        geometry.cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
        d.errorName(result),
        describe(d, result,
                 kernel.entry() + " grid (" + std::to_string(geometry.grid.x) +
                     ", " + std::to_string(geometry.grid.y) + ", " +
                     std::to_string(geometry.grid.z) + ") block (" +
                     std::to_string(geometry.block.x) + ", " +
                     std::to_string(geometry.block.y) + ", " +
                     std::to_string(geometry.block.z) + ") shared " +
                     std::to_string(shared)));
}

DevicePtr CudaBackend::allocate(size_t bytes) {
  // cuMemAlloc rejects zero bytes; an empty buffer needs no memory.
  if (bytes == 0)
    return 0;
  const CudaDriver &d = impl->d;
  auto current = impl->makeCurrent();
  CUdeviceptr pointer = 0;
  if (CUresult result = d.memAlloc(&pointer, bytes); result != CUDA_SUCCESS)
    throw DeviceError("cuMemAlloc", d.errorName(result),
                      std::to_string(bytes) +
                          " bytes: " + d.errorString(result));
  return static_cast<DevicePtr>(pointer);
}

void CudaBackend::release(DevicePtr pointer) {
  if (pointer == 0)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.memFree(static_cast<CUdeviceptr>(pointer)),
                "cuMemFree");
}

void CudaBackend::copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                               StreamHandle stream) {
  if (bytes == 0)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.memcpyHtoDAsync(static_cast<CUdeviceptr>(dst), src,
                                        bytes, toStream(stream)),
                "cuMemcpyHtoDAsync");
}

void CudaBackend::copyToHost(void *dst, DevicePtr src, size_t bytes,
                             StreamHandle stream) {
  if (bytes == 0)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.memcpyDtoHAsync(dst, static_cast<CUdeviceptr>(src),
                                        bytes, toStream(stream)),
                "cuMemcpyDtoHAsync");
}

void CudaBackend::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                               StreamHandle stream) {
  if (bytes == 0)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.memcpyDtoDAsync(static_cast<CUdeviceptr>(dst),
                                        static_cast<CUdeviceptr>(src), bytes,
                                        toStream(stream)),
                "cuMemcpyDtoDAsync");
}

void CudaBackend::fillZero(DevicePtr dst, size_t bytes, StreamHandle stream) {
  if (bytes == 0)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.memsetD8Async(static_cast<CUdeviceptr>(dst), 0, bytes,
                                      toStream(stream)),
                "cuMemsetD8Async");
}

StreamHandle CudaBackend::createStream() {
  auto current = impl->makeCurrent();
  CUstream stream = nullptr;
  // A blocking stream: work on the default stream stays ordered with it.
  impl->d.check(impl->d.streamCreate(&stream, CU_STREAM_DEFAULT),
                "cuStreamCreate");
  return stream;
}

StreamHandle CudaBackend::createCaptureStream() {
  auto current = impl->makeCurrent();
  CUstream stream = nullptr;
  // Non-blocking: the default stream's implicit synchronization with
  // blocking streams would invalidate a capture in progress.
  impl->d.check(impl->d.streamCreate(&stream, CU_STREAM_NON_BLOCKING),
                "cuStreamCreate");
  return stream;
}

void CudaBackend::destroyStream(StreamHandle stream) {
  if (!stream)
    return;
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.streamDestroy(toStream(stream)), "cuStreamDestroy");
}

void CudaBackend::synchronize(StreamHandle stream) {
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.streamSynchronize(toStream(stream)),
                "cuStreamSynchronize");
}

void CudaBackend::beginCapture(StreamHandle stream) {
  if (!stream)
    throw InvalidArgument("graph capture needs a stream from createStream(); "
                          "the default stream cannot be captured");
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.streamBeginCapture(toStream(stream),
                                           CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture");
}

std::unique_ptr<CapturedGraph> CudaBackend::endCapture(StreamHandle stream) {
  return endCaptureReusing(stream, nullptr);
}

std::unique_ptr<CapturedGraph>
CudaBackend::endCaptureReusing(StreamHandle stream,
                               std::unique_ptr<CapturedGraph> previous) {
  if (!stream)
    throw InvalidArgument("graph capture needs a stream from createStream(); "
                          "the default stream cannot be captured");
  const CudaDriver &d = impl->d;
  auto current = impl->makeCurrent();
  CUgraph graph = nullptr;
  d.check(d.streamEndCapture(toStream(stream), &graph), "cuStreamEndCapture");
  // The same launches with other arguments: the executable takes the new
  // graph's in place. Where the driver refuses, build a new one.
  if (auto *reused = dynamic_cast<CudaGraph *>(previous.get())) {
    CUgraphExecUpdateResultInfo info{};
    if (d.graphExecUpdate(reused->exec, graph, &info) == CUDA_SUCCESS) {
      d.graphDestroy(reused->graph);
      reused->graph = graph;
      return previous;
    }
  }
  previous.reset();
  CUgraphExec exec = nullptr;
  if (CUresult result = d.graphInstantiateWithFlags(&exec, graph, 0);
      result != CUDA_SUCCESS) {
    d.graphDestroy(graph);
    d.fail(result, "cuGraphInstantiateWithFlags");
  }
  return std::make_unique<CudaGraph>(impl->context, graph, exec);
}

void CudaBackend::replay(CapturedGraph &graph, StreamHandle stream) {
  auto *cudaGraph = dynamic_cast<CudaGraph *>(&graph);
  if (!cudaGraph)
    throw InvalidArgument("graph was not captured by the cuda backend");
  auto current = impl->makeCurrent();
  impl->d.check(impl->d.graphLaunch(cudaGraph->exec, toStream(stream)),
                "cuGraphLaunch");
}

float CudaBackend::timeMilliseconds(StreamHandle stream,
                                    const std::function<void()> &work) {
  const CudaDriver &d = impl->d;
  auto current = impl->makeCurrent();
  EventPair events(d);
  d.check(d.eventRecord(events.start, toStream(stream)), "cuEventRecord");
  work(); // leaves the contexts current as it found them
  d.check(d.eventRecord(events.stop, toStream(stream)), "cuEventRecord");
  d.check(d.eventSynchronize(events.stop), "cuEventSynchronize");
  float milliseconds = 0;
  d.check(d.eventElapsedTime(&milliseconds, events.start, events.stop),
          "cuEventElapsedTime");
  return milliseconds;
}
