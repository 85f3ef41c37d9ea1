//===- call_bench.cpp - The host's cost of one operator call --------------===//
//
//   rudnn-bench-call [--repetitions N]
//
// One rudnn.kda call through the Program API on a plan-cache hit, timed
// from the call to the last launch handed to the backend: argument checks
// against the declaration and the contract, the plan lookup, binding and
// parameter reading, and the launches' argument packing. The backend only
// records launches, so no kernel runs and no device time is counted.
//
//===----------------------------------------------------------------------===//

#include "bench/Timing.h"
#include "runtime/backends/Backend.h"

#include "rudnn/rudnn.hpp"

#include <cstdlib>
#include <cstring>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// A backend that keeps host memory and counts launches.
class RecordingBackend final : public Backend {
public:
  struct Kernel final : LoadedKernel {
    explicit Kernel(std::string name) : name(std::move(name)) {}
    const std::string &entry() const override { return name; }
    std::string name;
  };
  std::string name() const override { return "recording"; }
  std::string deviceDescription() const override {
    return "recording backend (no kernel runs)";
  }
  std::string compilerIdentity() const override { return "recording"; }
  std::string compile(const KernelSource &kernel) const override {
    return kernel.entry;
  }
  std::shared_ptr<LoadedKernel> load(const std::string &,
                                     const std::string &entry) override {
    return std::make_shared<Kernel>(entry);
  }
  void launch(const LoadedKernel &, const LaunchGeometry &, ArgPack &,
              StreamHandle) override {
    ++launches;
  }
  DevicePtr allocate(size_t bytes) override {
    return reinterpret_cast<DevicePtr>(std::calloc(bytes ? bytes : 1, 1));
  }
  void release(DevicePtr pointer) override {
    std::free(reinterpret_cast<void *>(pointer));
  }
  void copyToDevice(DevicePtr dst, const void *src, size_t bytes,
                    StreamHandle) override {
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  }
  void copyToHost(void *dst, DevicePtr src, size_t bytes,
                  StreamHandle) override {
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  }
  void copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                    StreamHandle) override {
    std::memcpy(reinterpret_cast<void *>(dst),
                reinterpret_cast<const void *>(src), bytes);
  }
  void fillZero(DevicePtr dst, size_t bytes, StreamHandle) override {
    std::memset(reinterpret_cast<void *>(dst), 0, bytes);
  }
  StreamHandle createStream() override { return new char; }
  void destroyStream(StreamHandle stream) override {
    delete static_cast<char *>(stream);
  }
  void synchronize(StreamHandle) override {}

  uint64_t launches = 0;
};

const char *const kModule = R"mlir(
func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                %v: tensor<?x?x?x128xbf16>, %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xbf16>, %s0: tensor<?x?x128x128xf32>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
         tensor<?x?x128x128xf32>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o, %s : tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>
}
)mlir";

} // namespace

int main(int argc, char **argv) {
  int repetitions = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--repetitions" && i + 1 < argc) {
      repetitions = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: rudnn-bench-call [--repetitions N]\n");
      return 2;
    }
  }
  try {
    ContextOptions options;
    options.cacheDirectory = "";
    auto recorder = std::make_unique<RecordingBackend>();
    RecordingBackend &backend = *recorder;
    Context context(options, std::move(recorder), BackendKind::Emulation);

    Function main = Module::parse(context, kModule).function("main");
    const int64_t B = 2, T = 4096, H = 16, K = 128;
    auto tensor = [&](DType dtype, std::vector<int64_t> shape) {
      int64_t count = 1;
      for (int64_t dim : shape)
        count *= dim;
      return TensorView::contiguous(context.allocate(count * dtypeSize(dtype)),
                                    dtype, std::move(shape));
    };
    const std::vector<TensorView> arguments = {
        tensor(DType::BF16, {B, T, H, K}), tensor(DType::BF16, {B, T, H, K}),
        tensor(DType::BF16, {B, T, H, K}), tensor(DType::F32, {B, T, H, K}),
        tensor(DType::BF16, {B, T, H}),    tensor(DType::F32, {B, H, K, K})};
    const std::vector<TensorView> results = {tensor(DType::BF16, {B, T, H, K}),
                                             tensor(DType::F32, {B, H, K, K})};
    main.call(arguments, results); // compiles and builds the plan
    const uint64_t perCall = backend.launches;
    bench::Measurement m =
        bench::measure("call_plan_cache_hit", "us", repetitions, 0.2,
                       [&] { main.call(arguments, results); });
    bench::print(m);
    std::printf(
        "%llu launches per call; compiles: %llu\n",
        static_cast<unsigned long long>(perCall),
        static_cast<unsigned long long>(context.counters().kernelsCompiled));
    for (const TensorView &view : arguments)
      context.release(view.data);
    for (const TensorView &view : results)
      context.release(view.data);
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "rudnn-bench-call: %s\n", error.what());
    return 1;
  }
}
