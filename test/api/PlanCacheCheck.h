//===- PlanCacheCheck.h - One plan, many sizes, through a Context -*- C++
//-*-===//

#ifndef RUDNN_TEST_API_PLANCACHECHECK_H
#define RUDNN_TEST_API_PLANCACHECHECK_H

#include "lib/ContextImpl.h"
#include "test/support/SampleKernels.h"

#include "rudnn/rudnn.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rudnn::test {

/// y = a·x + y over parameter N, as a one-launch plan.
inline runtime::Plan axpyPlan(Context &context, float a) {
  using namespace runtime;
  Plan plan;
  plan.name = "axpy";
  plan.params = {"N"};
  plan.kernels = {
      {samples::kAxpyEntry,
       *context.impl().compile({samples::kAxpyEntry, samples::kAxpySource})}};
  plan.buffers = {{"x", BufferAccess::In, SizeExpr::of(0), SizeExpr::of(0)},
                  {"y", BufferAccess::Out, SizeExpr::of(0), SizeExpr::of(0)}};
  PlanLaunch launch;
  launch.grid[0] = {1, {0}, 256};
  launch.block[0] = 256;
  launch.args = {LaunchArg::paramI32(0), LaunchArg::f32(a),
                 LaunchArg::buffer(0), LaunchArg::buffer(1)};
  plan.launches = {launch};
  return plan;
}

/// Runs the axpy plan at three sizes (the last through a graph where the
/// backend has them) and checks results and counters: one compile, one
/// plan built, two plan-cache hits.
inline void checkPlanCache(Context &context) {
  for (int64_t n : {1000, 1 << 18, 77}) {
    std::vector<float> x(n), y(n), expected(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = 0.5f * static_cast<float>(i % 97);
      y[i] = 1.0f - static_cast<float>(i % 13);
      expected[i] = 3.0f * x[i] + y[i];
    }
    DeviceBuffer dx(context, n * sizeof(float)), dy(context, n * sizeof(float));
    context.copyToDevice(dx.data(), x.data(), n * sizeof(float));
    context.copyToDevice(dy.data(), y.data(), n * sizeof(float));
    auto executor = context.impl().plan(
        "axpy:f32:a=3", [&] { return axpyPlan(context, 3.0f); });
    executor->run({reinterpret_cast<runtime::DevicePtr>(dx.data()),
                   reinterpret_cast<runtime::DevicePtr>(dy.data())},
                  {n}, nullptr, /*useGraph=*/n == 77);
    context.copyToHost(y.data(), dy.data(), n * sizeof(float));
    context.synchronize();
    EXPECT_EQ(y, expected) << "n = " << n;
  }
  Counters counters = context.counters();
  EXPECT_EQ(counters.kernelsCompiled, 1u);
  EXPECT_EQ(counters.planCacheMisses, 1u);
  EXPECT_EQ(counters.planCacheHits, 2u);
}

} // namespace rudnn::test

#endif // RUDNN_TEST_API_PLANCACHECHECK_H
