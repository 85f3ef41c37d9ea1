//===- PlanExecutor.h - Run a plan on a backend -----------------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_PLANEXECUTOR_H
#define RUDNN_RUNTIME_PLANEXECUTOR_H

#include "runtime/Backend.h"
#include "runtime/Plan.h"

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

/// A plan loaded on a backend. Owns one workspace per stream (grown on
/// demand) and, when graphs are used, per stream the graph captured for the
/// last bindings. Calls may come from several threads: they are serialized,
/// and work on different streams never shares a workspace.
class PlanExecutor {
public:
  /// Validates the plan and loads each kernel (deferred ones: at the first
  /// call that launches them).
  PlanExecutor(Backend &backend, Plan plan);
  ~PlanExecutor();

  const Plan &plan() const { return plan_; }

  /// Launches every kernel in order on `stream`. `bindings[i]` is the address
  /// of buffer i for arguments and results (workspace entries are ignored);
  /// `params` the values of the plan's parameters. With `useGraph` the
  /// launches are captured once per (bindings, params) and then replayed
  /// (on backends that support graphs; others launch directly). With
  /// `timings`, each launch is timed on its own and appended there (launched
  /// directly, waiting for the device: for measurement only).
  void run(const std::vector<DevicePtr> &bindings,
           const std::vector<int64_t> &params, StreamHandle stream,
           bool useGraph = false, std::vector<LaunchTiming> *timings = nullptr);

private:
  struct StreamState;
  /// `map` encoded for the bound address and the call's dims and strides
  /// (zeros for an empty tensor).
  TensorMapBytes tensorMapFor(const PlanTensorMap &map,
                              const std::vector<DevicePtr> &bindings,
                              const std::vector<int64_t> &params) const;
  void launchAll(StreamState &state, const std::vector<DevicePtr> &bindings,
                 const std::vector<int64_t> &params, StreamHandle stream,
                 std::vector<LaunchTiming> *timings = nullptr);
  DevicePtr workspaceFor(StreamState &state, uint64_t bytes,
                         StreamHandle stream);
  /// Builds and loads the deferred kernels that `params` launch.
  void loadAdmitted(const std::vector<int64_t> &params);

  Backend &backend;
  Plan plan_;
  std::vector<std::shared_ptr<LoadedKernel>> kernels;
  std::mutex mutex;
  std::map<StreamHandle, std::unique_ptr<StreamState>> streams;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANEXECUTOR_H
