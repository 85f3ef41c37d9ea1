//===- PlanExecutor.cpp - Run a plan on a backend -------------------------===//

#include "runtime/plans/PlanExecutor.h"
#include "runtime/plans/Dump.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <limits>

using namespace rudnn;
using namespace rudnn::runtime;

/// What one stream's calls reuse: the workspace, and the graph captured
/// for the last bindings and parameters (on a private stream when the
/// caller's is the default stream, which cannot be captured).
struct PlanExecutor::StreamState {
  DevicePtr workspace = 0; // the executor's own
  uint64_t capacity = 0;
  DevicePtr graphWorkspace = 0;
  StreamHandle captureStream = nullptr;
  std::vector<DevicePtr> graphBindings;
  std::vector<int64_t> graphParams;
  std::unique_ptr<CapturedGraph> graph;
  // Reused by every call on the stream, so a call allocates nothing.
  std::vector<uint64_t> offsets;
  ArgPack args;
  std::vector<std::array<uint32_t, 3>> grids;
};

PlanExecutor::PlanExecutor(Backend &backend, Plan plan,
                           WorkspaceAllocator allocator)
    : backend(backend), plan_(std::move(plan)),
      allocator(std::move(allocator)) {
  plan_.validate();
  dumpIfRequested(plan_.name + ".plan.json",
                  plan_.toJson(/*inlineBinaries=*/true));
  for (const PlanKernel &kernel : plan_.kernels) {
    kernels.push_back(kernel.binary.empty() && kernel.deferred
                          ? nullptr
                          : backend.load(kernel.binary, kernel.entry));
    noteFaultWord(kernels.back());
  }
}

void PlanExecutor::noteFaultWord(const std::shared_ptr<LoadedKernel> &kernel) {
  if (kernel && kernel->indexFault)
    kernelsWithFaultWords.push_back(kernel);
}

void PlanExecutor::loadAdmitted(const std::vector<int64_t> &params) {
  for (const PlanLaunch &launch : plan_.launches)
    if (!kernels[launch.kernel] && launch.guard.admits(params)) {
      const PlanKernel &kernel = plan_.kernels[launch.kernel];
      kernels[launch.kernel] = backend.load(kernel.build(), kernel.entry);
      noteFaultWord(kernels[launch.kernel]);
    }
}

// Never throws: after a device fault every release fails, and the fault is
// what the caller must see.
PlanExecutor::~PlanExecutor() {
  for (auto &[stream, state] : streams) {
    state->graph.reset();
    if (state->workspace && !allocator.release)
      backend.releaseQuietly(state->workspace);
    else if (state->workspace)
      try {
        allocator.release(state->workspace);
      } catch (const std::exception &error) {
        warn(std::string("releasing a workspace failed during clean-up: ") +
             error.what());
      } catch (...) {
      }
    if (state->captureStream)
      backend.destroyStreamQuietly(state->captureStream);
  }
}

void PlanExecutor::releaseOwnWorkspace(StreamState &state) {
  const DevicePtr workspace = state.workspace;
  state.workspace = 0;
  state.capacity = 0;
  if (!workspace)
    return;
  if (allocator.release)
    allocator.release(workspace);
  else
    backend.release(workspace);
}

DevicePtr PlanExecutor::workspaceFor(StreamState &state, uint64_t bytes,
                                     StreamHandle stream,
                                     GivenWorkspace given) {
  if (given.pointer) {
    if (bytes > given.bytes)
      throw InvalidArgument("the call needs " + std::to_string(bytes) +
                            " bytes of workspace, the given workspace holds " +
                            std::to_string(given.bytes));
    return given.pointer;
  }
  if (bytes > state.capacity) {
    // Work already queued on this stream may still use the old buffer.
    backend.synchronize(stream);
    releaseOwnWorkspace(state);
    state.workspace = allocator.allocate ? allocator.allocate(bytes)
                                         : backend.allocate(bytes);
    state.capacity = bytes;
  }
  return state.workspace;
}

uint64_t
PlanExecutor::workspaceBytes(const std::vector<int64_t> &params) const {
  std::vector<uint64_t> offsets;
  return plan_.workspaceLayout(params, offsets);
}

/// A grid dimension must be a positive 32-bit count.
static uint32_t gridDim(const SizeExpr &expr,
                        const std::vector<int64_t> &params, size_t launch) {
  int64_t value = expr.evaluate(params);
  if (value <= 0 || value > std::numeric_limits<int32_t>::max())
    throw InvalidArgument("launch #" + std::to_string(launch) +
                          " has grid dimension " + std::to_string(value));
  return static_cast<uint32_t>(value);
}

/// The grid of every launch the call runs (none for one its guard skips),
/// checked against the limits of every device before the first launch: a
/// later launch refused by the driver would leave the earlier ones' writes.
void PlanExecutor::gridsFor(const std::vector<int64_t> &params,
                            std::vector<std::array<uint32_t, 3>> &grids) const {
  constexpr uint32_t kMaxGridYZ = 65535;
  grids.assign(plan_.launches.size(), {0, 0, 0});
  for (size_t i = 0; i < plan_.launches.size(); ++i) {
    const PlanLaunch &launch = plan_.launches[i];
    if (!launch.guard.admits(params))
      continue;
    for (int d = 0; d < 3; ++d) {
      grids[i][d] = gridDim(launch.grid[d], params, i);
      if (d > 0 && grids[i][d] > kMaxGridYZ)
        throw Unsupported("launch #" + std::to_string(i) + " of kernel '" +
                          plan_.kernels.at(launch.kernel).entry +
                          "' needs grid dimension " + "xyz"[d] + " = " +
                          std::to_string(grids[i][d]) +
                          ", past the 65535 a device allows (a smaller "
                          "call, e.g. fewer batch entries or heads, fits)");
    }
  }
}

TensorMapBytes
PlanExecutor::tensorMapFor(const PlanTensorMap &map, DevicePtr address,
                           const std::vector<int64_t> &params) const {
  TensorMapRequest request;
  request.address = address;
  request.elementBytes = map.elementBytes;
  request.rank = static_cast<uint32_t>(map.dims.size());
  request.swizzleBytes = map.swizzleBytes;
  for (uint32_t i = 0; i < request.rank; ++i) {
    const int64_t dim = map.dims[i].evaluate(params);
    // An empty tensor has no map (and a kernel no tile of it to load).
    if (dim <= 0)
      return TensorMapBytes{};
    request.dims[i] = static_cast<uint64_t>(dim);
    request.box[i] = map.box[i];
    if (i > 0) {
      const int64_t stride = map.strides[i - 1].evaluate(params);
      uint64_t bytes =
          stride > 0 ? static_cast<uint64_t>(stride) * map.elementBytes : 0;
      // A dim of one element is never stepped: a view may give it any
      // stride (rudnn.align ignores it), the map takes the next multiple of
      // 16 bytes.
      if (dim == 1)
        bytes = (bytes + 15) / 16 * 16;
      request.strideBytes[i - 1] = bytes;
    }
  }
  try {
    return backend.encodeTensorMap(request);
  } catch (const InvalidArgument &error) {
    throw InvalidArgument("buffer '" + plan_.buffers[map.buffer].name +
                          "': " + error.what());
  }
}

void PlanExecutor::launchAll(StreamState &state,
                             const std::vector<DevicePtr> &bindings,
                             const std::vector<int64_t> &params,
                             StreamHandle stream, GivenWorkspace given,
                             std::vector<LaunchTiming> *timings) {
  gridsFor(params, state.grids);
  std::vector<uint64_t> &offsets = state.offsets;
  DevicePtr base = workspaceFor(state, plan_.workspaceLayout(params, offsets),
                                stream, given);
  // Kernels' own counters start from zero at every call.
  for (size_t i = 0; i < plan_.buffers.size(); ++i) {
    const PlanBuffer &buffer = plan_.buffers[i];
    if (!buffer.zeroed || !buffer.guard.admits(params))
      continue;
    const int64_t bytes = buffer.bytes.evaluate(params);
    if (bytes > 0)
      backend.fillZero(base + static_cast<DevicePtr>(offsets[i]),
                       static_cast<size_t>(bytes), stream);
  }
  for (size_t i = 0; i < plan_.launches.size(); ++i) {
    const PlanLaunch &launch = plan_.launches[i];
    if (!launch.guard.admits(params))
      continue;
    LaunchGeometry geometry;
    geometry.grid = {state.grids[i][0], state.grids[i][1], state.grids[i][2]};
    geometry.block = {launch.block[0], launch.block[1], launch.block[2]};
    geometry.dynamicSharedBytes = launch.dynamicSharedBytes;
    geometry.cooperative = launch.cooperative;

    ArgPack &args = state.args;
    args.clear();
    args.reserve(launch.args.size() + 1); // and a repeat's iteration
    // A bound tensor's address, or a workspace buffer's in this call's
    // workspace.
    auto addressOf = [&](uint32_t index) {
      return plan_.buffers[index].access == BufferAccess::Workspace
                 ? base + static_cast<DevicePtr>(offsets[index])
                 : bindings[index];
    };
    for (const LaunchArg &arg : launch.args) {
      switch (arg.kind) {
      case LaunchArg::Kind::Buffer:
        args.push(addressOf(arg.index));
        break;
      case LaunchArg::Kind::ParamI32: // range checked in run()
        args.push(static_cast<int32_t>(params[arg.index]));
        break;
      case LaunchArg::Kind::ParamI64:
        args.push(params[arg.index]);
        break;
      case LaunchArg::Kind::ConstI32:
        args.push(static_cast<int32_t>(arg.intValue));
        break;
      case LaunchArg::Kind::ConstI64:
        args.push(arg.intValue);
        break;
      case LaunchArg::Kind::ConstF32:
        args.push(arg.floatValue);
        break;
      case LaunchArg::Kind::TensorMap:
        args.push(tensorMapFor(plan_.tensorMaps[arg.index],
                               addressOf(plan_.tensorMaps[arg.index].buffer),
                               params));
        break;
      }
    }
    const LoadedKernel &kernel = *kernels[launch.kernel];
    const int64_t times = launch.repeat < 0 ? 1 : params[launch.repeat];
    for (int64_t iteration = 0; iteration < times; ++iteration) {
      ArgPack *pack = &args;
      ArgPack repeated;
      if (launch.repeat >= 0) { // the same arguments, then the iteration
        repeated = args;
        repeated.push(static_cast<int32_t>(iteration));
        pack = &repeated;
      }
      if (!timings) {
        backend.launch(kernel, geometry, *pack, stream);
        continue;
      }
      const float milliseconds = backend.timeMilliseconds(
          stream, [&] { backend.launch(kernel, geometry, *pack, stream); });
      timings->push_back({kernel.entry(), milliseconds});
    }
  }
}

void PlanExecutor::run(const std::vector<DevicePtr> &bindings,
                       const std::vector<int64_t> &params, StreamHandle stream,
                       bool useGraph, std::vector<LaunchTiming> *timings,
                       GivenWorkspace given) {
  if (bindings.size() != plan_.buffers.size())
    throw InvalidArgument("plan '" + plan_.name + "' has " +
                          std::to_string(plan_.buffers.size()) +
                          " buffers, got " + std::to_string(bindings.size()) +
                          " bindings");
  if (params.size() != plan_.params.size())
    throw InvalidArgument("plan '" + plan_.name + "' has " +
                          std::to_string(plan_.params.size()) +
                          " parameters, got " + std::to_string(params.size()));
  for (size_t i = 0; i < bindings.size(); ++i)
    if (plan_.buffers[i].access != BufferAccess::Workspace && !bindings[i])
      throw InvalidArgument("buffer '" + plan_.buffers[i].name +
                            "' is bound to a null address");

  for (const PlanLaunch &launch : plan_.launches) {
    if (launch.repeat >= 0 &&
        (params[launch.repeat] < 0 ||
         params[launch.repeat] > std::numeric_limits<int32_t>::max()))
      throw InvalidArgument("parameter '" + plan_.params[launch.repeat] +
                            "' = " + std::to_string(params[launch.repeat]) +
                            " cannot count a launch's repeats");
    for (const LaunchArg &arg : launch.args) {
      if (arg.kind != LaunchArg::Kind::ParamI32)
        continue;
      int64_t value = params[arg.index];
      if (value < std::numeric_limits<int32_t>::min() ||
          value > std::numeric_limits<int32_t>::max())
        throw InvalidArgument("parameter '" + plan_.params[arg.index] +
                              "' = " + std::to_string(value) +
                              " does not fit the kernel's 32-bit argument");
    }
  }

  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<StreamState> &slot = streams[stream];
  if (!slot)
    slot = std::make_unique<StreamState>();
  StreamState &state = *slot;
  // Before any capture: compiling and loading are not stream work.
  loadAdmitted(params);
  // Whichever way the kernels run, synchronizing reads their fault words.
  if (!kernelsWithFaultWords.empty())
    backend.noteLaunches(kernelsWithFaultWords, stream);
  if (timings || !useGraph || !backend.supportsGraphs())
    return launchAll(state, bindings, params, stream, given, timings);

  // The workspace must exist before capture: allocation is not capturable.
  const DevicePtr workspace = workspaceFor(
      state, plan_.workspaceLayout(params, state.offsets), stream, given);
  if (!state.graph || state.graphBindings != bindings ||
      state.graphParams != params || state.graphWorkspace != workspace) {
    if (!state.captureStream)
      state.captureStream = backend.createCaptureStream();
    // Captured launches do not run, so capturing elsewhere reorders nothing;
    // the replay below is on the caller's stream (which may itself be
    // capturing, or be the default stream, which cannot be).
    StreamHandle capture = state.captureStream;
    backend.beginCapture(capture);
    try {
      launchAll(state, bindings, params, capture, given);
    } catch (...) {
      // End the capture, but report what failed inside it.
      state.graph.reset();
      try {
        backend.endCapture(capture);
      } catch (...) {
      }
      throw;
    }
    // The last graph's executable, updated where the backend can.
    state.graph = backend.endCaptureReusing(capture, std::move(state.graph));
    state.graphBindings = bindings;
    state.graphParams = params;
    state.graphWorkspace = workspace;
    log(LogLevel::Debug, "captured plan '" + plan_.name + "' into a graph");
  }
  backend.replay(*state.graph, stream);
}
