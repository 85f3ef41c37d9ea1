//===- PlanBinding.h - A call's views bound to a plan's buffers -*- C++ -*-===//

#ifndef RUDNN_RUNTIME_PLANS_PLANBINDING_H
#define RUDNN_RUNTIME_PLANS_PLANBINDING_H

#include "runtime/backends/Backend.h"
#include "runtime/plans/Plan.h"

#include "rudnn/types.h"

#include <string>
#include <vector>

namespace rudnn {

/// What one call of a plan passes to its executor.
struct PlanCall {
  std::vector<runtime::DevicePtr> bindings;
  std::vector<int64_t> params;
};

/// Binds each buffer to its view, given in the plan's buffer order (null for
/// workspace and absent buffers), and reads the plan's parameters from those
/// views through its sources.
PlanCall bindViews(const runtime::Plan &plan,
                   const std::vector<const TensorView *> &views);

} // namespace rudnn

#endif // RUDNN_RUNTIME_PLANS_PLANBINDING_H
