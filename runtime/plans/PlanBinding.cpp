//===- PlanBinding.cpp - A call's views bound to a plan's buffers ---------===//

#include "runtime/plans/PlanBinding.h"

using namespace rudnn;
using namespace rudnn::runtime;

PlanCall rudnn::bindViews(const Plan &plan,
                          const std::vector<const TensorView *> &views) {
  PlanCall call;
  std::vector<BufferShape> shapes;
  call.bindings.reserve(views.size());
  shapes.reserve(views.size());
  for (const TensorView *view : views) {
    call.bindings.push_back(view ? reinterpret_cast<DevicePtr>(view->data) : 0);
    shapes.push_back(view ? BufferShape{&view->shape, &view->strides}
                          : BufferShape{});
  }
  call.params = plan.paramValues(shapes);
  return call;
}
