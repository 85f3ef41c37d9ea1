//===- PlanExecutor.h - Run a plan on a backend -----------------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_PLANS_PLANEXECUTOR_H
#define RUDNN_RUNTIME_PLANS_PLANEXECUTOR_H

#include "runtime/backends/Backend.h"
#include "runtime/plans/Plan.h"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rudnn::runtime {

/// The device time of one launch, when a run measures its launches.
struct LaunchTiming {
  std::string kernel; // the entry point
  float milliseconds;
};

/// Where a plan's workspace comes from: memory the caller gives the call
/// (GivenWorkspace), else the executor's own per stream, through the
/// allocator's functions when set, else the backend's.
struct WorkspaceAllocator {
  std::function<DevicePtr(size_t)> allocate;
  std::function<void(DevicePtr)> release;
};
struct GivenWorkspace {
  DevicePtr pointer = 0;
  uint64_t bytes = 0;
};

/// A plan loaded on a backend. Owns one workspace per stream (grown on
/// demand) and, when graphs are used, per stream the graph captured for the
/// last bindings. Calls may come from several threads: they are serialized,
/// and work on different streams never shares a workspace.
class PlanExecutor {
public:
  /// Validates the plan and loads each kernel (deferred ones: at the first
  /// call that launches them).
  PlanExecutor(Backend &backend, Plan plan, WorkspaceAllocator allocator = {});
  ~PlanExecutor();

  const Plan &plan() const { return plan_; }

  /// Launches every kernel in order on `stream`. `bindings[i]` is the address
  /// of buffer i for arguments and results (workspace entries are ignored);
  /// `params` the values of the plan's parameters. With `useGraph` the
  /// launches are captured once per (bindings, params) and then replayed
  /// (on backends that support graphs; others launch directly). With
  /// `timings`, each launch is timed on its own and appended there (launched
  /// directly, waiting for the device: for measurement only).
  /// With `given` memory, the call's workspace is carved from it (a call
  /// needing more throws InvalidArgument before launching anything).
  void run(const std::vector<DevicePtr> &bindings,
           const std::vector<int64_t> &params, StreamHandle stream,
           bool useGraph = false, std::vector<LaunchTiming> *timings = nullptr,
           GivenWorkspace given = {});

  /// Bytes of workspace a call with `params` needs (0: none).
  uint64_t workspaceBytes(const std::vector<int64_t> &params) const;

private:
  struct StreamState;
  /// `map` encoded for its buffer's `address` (a bound tensor's, or a
  /// workspace buffer's place in this call's workspace) and the call's
  /// dims and strides (zeros for an empty tensor).
  TensorMapBytes tensorMapFor(const PlanTensorMap &map, DevicePtr address,
                              const std::vector<int64_t> &params) const;
  void gridsFor(const std::vector<int64_t> &params,
                std::vector<std::array<uint32_t, 3>> &grids) const;
  void launchAll(StreamState &state, const std::vector<DevicePtr> &bindings,
                 const std::vector<int64_t> &params, StreamHandle stream,
                 GivenWorkspace given,
                 std::vector<LaunchTiming> *timings = nullptr);
  DevicePtr workspaceFor(StreamState &state, uint64_t bytes,
                         StreamHandle stream, GivenWorkspace given);
  /// Frees the stream's own workspace, if any.
  void releaseOwnWorkspace(StreamState &state);
  /// Builds and loads the deferred kernels that `params` launch.
  void loadAdmitted(const std::vector<int64_t> &params);
  /// Keeps `kernel` among those whose index-fault words each run notes.
  void noteFaultWord(const std::shared_ptr<LoadedKernel> &kernel);

  Backend &backend;
  Plan plan_;
  WorkspaceAllocator allocator;
  std::vector<std::shared_ptr<LoadedKernel>> kernels;
  /// The loaded kernels with an index-fault word (Backend::noteLaunches).
  std::vector<std::shared_ptr<LoadedKernel>> kernelsWithFaultWords;
  std::mutex mutex;
  std::map<StreamHandle, std::unique_ptr<StreamState>> streams;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANS_PLANEXECUTOR_H
