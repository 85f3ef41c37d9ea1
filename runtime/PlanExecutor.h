//===- PlanExecutor.h - Run a plan on a backend -----------------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_PLANEXECUTOR_H
#define RUDNN_RUNTIME_PLANEXECUTOR_H

#include "runtime/Backend.h"
#include "runtime/Plan.h"

#include <memory>
#include <vector>

namespace rudnn::runtime {

/// A plan loaded on a backend. Owns the workspace (grown on demand) and, when
/// graphs are used, the captured graph of the last bindings.
class PlanExecutor {
public:
  /// Validates the plan and loads each kernel.
  PlanExecutor(Backend &backend, Plan plan);
  ~PlanExecutor();

  const Plan &plan() const { return plan_; }

  /// Launches every kernel in order on `stream`. `bindings[i]` is the address
  /// of buffer i for arguments and results (workspace entries are ignored);
  /// `params` the values of the plan's parameters. With `useGraph` the
  /// launches are captured once per (bindings, params) and then replayed
  /// (on backends that support graphs; others launch directly).
  void run(const std::vector<DevicePtr> &bindings,
           const std::vector<int64_t> &params, StreamHandle stream,
           bool useGraph = false);

private:
  void launchAll(const std::vector<DevicePtr> &bindings,
                 const std::vector<int64_t> &params, StreamHandle stream);
  DevicePtr workspaceFor(uint64_t bytes);

  Backend &backend;
  Plan plan_;
  std::vector<std::shared_ptr<LoadedKernel>> kernels;
  DevicePtr workspace = 0;
  uint64_t workspaceCapacity = 0;
  struct GraphCache;
  std::unique_ptr<GraphCache> graph;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANEXECUTOR_H
