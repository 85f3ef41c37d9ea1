//===- PlanExecutor.cpp - Run a plan on a backend -------------------------===//

#include "runtime/PlanExecutor.h"
#include "runtime/Dump.h"
#include "runtime/Log.h"

#include "rudnn/errors.h"

#include <limits>

using namespace rudnn;
using namespace rudnn::runtime;

struct PlanExecutor::GraphCache {
  std::vector<DevicePtr> bindings;
  std::vector<int64_t> params;
  std::unique_ptr<CapturedGraph> graph;
};

PlanExecutor::PlanExecutor(Backend &backend, Plan plan)
    : backend(backend), plan_(std::move(plan)) {
  plan_.validate();
  dumpIfRequested(plan_.name + ".plan.json",
                  plan_.toJson(/*inlineBinaries=*/true));
  for (const PlanKernel &kernel : plan_.kernels)
    kernels.push_back(backend.load(kernel.binary, kernel.entry));
}

PlanExecutor::~PlanExecutor() {
  graph.reset();
  if (workspace)
    backend.release(workspace);
}

DevicePtr PlanExecutor::workspaceFor(uint64_t bytes) {
  if (bytes > workspaceCapacity) {
    if (workspace)
      backend.release(workspace);
    workspace = 0;
    workspaceCapacity = 0;
    workspace = backend.allocate(bytes);
    workspaceCapacity = bytes;
    // A graph captured against the old workspace is stale.
    graph.reset();
  }
  return workspace;
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

void PlanExecutor::launchAll(const std::vector<DevicePtr> &bindings,
                             const std::vector<int64_t> &params,
                             StreamHandle stream) {
  DevicePtr base = workspaceFor(plan_.workspaceBytes(params));
  for (size_t i = 0; i < plan_.launches.size(); ++i) {
    const PlanLaunch &launch = plan_.launches[i];
    if (!launch.guard.admits(params))
      continue;
    LaunchGeometry geometry;
    geometry.grid = {gridDim(launch.grid[0], params, i),
                     gridDim(launch.grid[1], params, i),
                     gridDim(launch.grid[2], params, i)};
    geometry.block = {launch.block[0], launch.block[1], launch.block[2]};
    geometry.dynamicSharedBytes = launch.dynamicSharedBytes;

    ArgPack args;
    for (const LaunchArg &arg : launch.args) {
      switch (arg.kind) {
      case LaunchArg::Kind::Buffer: {
        const PlanBuffer &buffer = plan_.buffers[arg.index];
        DevicePtr address =
            buffer.kind == BufferKind::Workspace
                ? base + static_cast<DevicePtr>(buffer.offset.evaluate(params))
                : bindings[arg.index];
        args.push(address);
        break;
      }
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
      }
    }
    backend.launch(*kernels[launch.kernel], geometry, args, stream);
  }
}

void PlanExecutor::run(const std::vector<DevicePtr> &bindings,
                       const std::vector<int64_t> &params, StreamHandle stream,
                       bool useGraph) {
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
    if (plan_.buffers[i].kind != BufferKind::Workspace && !bindings[i])
      throw InvalidArgument("buffer '" + plan_.buffers[i].name +
                            "' is bound to a null address");

  for (const PlanLaunch &launch : plan_.launches)
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

  if (!useGraph || !backend.supportsGraphs())
    return launchAll(bindings, params, stream);

  // The workspace must exist before capture: allocation is not capturable.
  workspaceFor(plan_.workspaceBytes(params));
  if (!graph || graph->bindings != bindings || graph->params != params) {
    graph.reset();
    backend.beginCapture(stream);
    try {
      launchAll(bindings, params, stream);
    } catch (...) {
      backend.endCapture(stream);
      throw;
    }
    graph = std::make_unique<GraphCache>(
        GraphCache{bindings, params, backend.endCapture(stream)});
    log(LogLevel::Debug, "captured plan '" + plan_.name + "' into a graph");
  }
  backend.replay(*graph->graph, stream);
}
