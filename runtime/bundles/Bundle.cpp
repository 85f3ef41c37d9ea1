//===- Bundle.cpp - Compiled functions, run without a compiler ------------===//

#include "rudnn/bundle.h"

#include "runtime/backends/CudaBackend.h"
#include "runtime/backends/EmulationBackend.h"
#include "runtime/bundles/BundleFile.h"
#include "runtime/plans/PlanBinding.h"
#include "runtime/plans/PlanExecutor.h"
#include "runtime/support/InputFile.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

struct Bundle::Impl {
  BundleFile file;
  std::vector<std::string> targets;
  std::string target;
  std::unique_ptr<Backend> backend;
  bool emulated = false; // memory on the host: values are checked too
  std::unique_ptr<PlanExecutor> executor; // before `backend` goes
  std::vector<int> bufferSources;

  ~Impl() { executor.reset(); }
};

namespace {

std::unique_ptr<Backend> openBackend(const BundleOptions &options,
                                     bool &emulated) {
  std::string kind = options.backend;
  if (kind == "auto")
    if (const char *given = std::getenv("RUDNN_BACKEND"); given && *given)
      kind = given;
  if (kind == "auto")
    kind = cudaAvailable() ? "cuda" : "emulation";
  emulated = kind == "emulation";
  if (kind == "cuda")
    return std::make_unique<CudaBackend>(options.deviceOrdinal,
                                         NvrtcCompiler());
  if (kind == "emulation")
    return std::make_unique<EmulationBackend>(
        EmulationOptions::fromEnvironment());
  throw InvalidArgument("backend '" + options.backend +
                        "': expected auto, cuda or emulation");
}

/// "sm_90" -> 90; "sm_90a" -> 90; anything else -> -1.
int archNumber(const std::string &target) {
  if (target.rfind("sm_", 0) != 0)
    return -1;
  char *end = nullptr;
  const long number = std::strtol(target.c_str() + 3, &end, 10);
  return end != target.c_str() + 3 && (*end == 0 || std::string(end) == "a")
             ? static_cast<int>(number)
             : -1;
}

/// The target a backend runs: emulation's own; on a GPU its architecture,
/// else the newest below it (whose PTX the driver compiles).
std::string chooseTarget(const std::vector<std::string> &targets, bool emulated,
                         Backend &backend, const std::string &path) {
  std::string list;
  for (const std::string &target : targets)
    list += (list.empty() ? "" : ", ") + target;
  if (emulated) {
    for (const std::string &target : targets)
      if (target == "emulation")
        return target;
    throw Unsupported("bundle '" + path + "' holds " + list +
                      ", not emulation");
  }
  const std::string arch = static_cast<CudaBackend &>(backend).compileArch();
  const int device = archNumber(arch);
  std::string best;
  for (const std::string &target : targets)
    if (target == arch)
      return target;
    else if (int number = archNumber(target);
             number >= 0 && number <= device &&
             (best.empty() || number > archNumber(best)))
      best = target;
  if (best.empty())
    throw Unsupported("bundle '" + path + "' holds " + list +
                      ": none runs on " + arch);
  return best;
}

} // namespace

Bundle Bundle::load(const std::string &path, const BundleOptions &options) {
  auto impl = std::make_shared<Impl>();
  impl->file = BundleFile::read(readInputFile(path, "bundle"), path);
  for (const auto &entry : impl->file.plans)
    impl->targets.push_back(entry.first);
  bool emulated = false;
  impl->backend = openBackend(options, emulated);
  impl->emulated = emulated;
  impl->target = chooseTarget(impl->targets, emulated, *impl->backend, path);
  Plan plan = std::move(impl->file.plans.at(impl->target));
  impl->file.plans.clear();
  impl->bufferSources = impl->file.checks.bufferSources(plan);
  // A kernel binary is code (opening an emulated one runs its constructors):
  // it is loaded at the first call that launches it, once that call's checks
  // have passed.
  for (PlanKernel &kernel : plan.kernels) {
    kernel.deferred = [binary = std::move(kernel.binary)] { return binary; };
    kernel.binary.clear();
  }
  impl->executor =
      std::make_unique<PlanExecutor>(*impl->backend, std::move(plan));
  return Bundle(std::move(impl));
}

const std::string &Bundle::function() const { return impl->file.function; }

const std::vector<TensorInfo> &Bundle::arguments() const {
  return impl->file.checks.arguments;
}

const std::vector<TensorInfo> &Bundle::results() const {
  return impl->file.checks.results;
}

const std::vector<std::string> &Bundle::targets() const {
  return impl->targets;
}

const std::string &Bundle::target() const { return impl->target; }

std::vector<std::vector<int64_t>>
Bundle::resultShapes(const std::vector<TensorView> &arguments) const {
  return impl->file.checks.resultShapes(impl->executor->plan(), arguments);
}

void Bundle::call(const std::vector<TensorView> &arguments,
                  const std::vector<TensorView> &results, Stream stream) {
  const FunctionChecks &checks = impl->file.checks;
  checks.checkCall(arguments, results, impl->emulated);
  const Plan &plan = impl->executor->plan();
  PlanCall bound =
      bindViews(plan, FunctionChecks::bufferViews(impl->bufferSources,
                                                  arguments, results));
  checks.checkParamLetters(plan, bound.params, arguments, results);
  // A launch a step (a recurrence's): recorded into a graph, then replayed.
  impl->executor->run(bound.bindings, bound.params, stream,
                      /*useGraph=*/plan.repeatsLaunches());
}

void *Bundle::allocate(size_t bytes) {
  if (bytes == 0)
    throw InvalidArgument("allocate: size must be positive");
  return reinterpret_cast<void *>(impl->backend->allocate(bytes));
}

void Bundle::release(void *pointer) {
  if (pointer)
    impl->backend->release(reinterpret_cast<DevicePtr>(pointer));
}

void Bundle::copyToDevice(void *dst, const void *src, size_t bytes,
                          Stream stream) {
  impl->backend->copyToDevice(reinterpret_cast<DevicePtr>(dst), src, bytes,
                              stream);
}

void Bundle::copyToHost(void *dst, const void *src, size_t bytes,
                        Stream stream) {
  impl->backend->copyToHost(dst, reinterpret_cast<DevicePtr>(src), bytes,
                            stream);
}

void Bundle::synchronize(Stream stream) {
  impl->backend->synchronizeCheckingIndices(stream);
}
