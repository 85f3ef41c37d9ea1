//===- PlanBinding.h - A call's views bound to a plan's buffers -*- C++ -*-===//

#ifndef RUDNN_LIB_PLANBINDING_H
#define RUDNN_LIB_PLANBINDING_H

#include "runtime/Backend.h"
#include "runtime/Plan.h"

#include "rudnn/types.h"

#include <map>
#include <string>
#include <vector>

namespace rudnn {

/// What one call of a plan passes to its executor.
struct PlanCall {
  std::vector<runtime::DevicePtr> bindings;
  std::vector<int64_t> params;
};

/// Binds each argument or result buffer to the view of its name (0 when
/// none is given; workspace entries 0) and reads the plan's parameters from
/// those views through its sources.
PlanCall bindViews(const runtime::Plan &plan,
                   const std::map<std::string, const TensorView *> &named);

/// The same with the view of each buffer given in the plan's buffer order
/// (null for workspace and absent buffers).
PlanCall bindViews(const runtime::Plan &plan,
                   const std::vector<const TensorView *> &views);

} // namespace rudnn

#endif // RUDNN_LIB_PLANBINDING_H
