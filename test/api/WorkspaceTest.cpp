//===- WorkspaceTest.cpp - Workspace sizes, given workspace, allocators ---===//
//
// On the emulation backend: a KDA forward (whose plan carves its chunk
// boundaries from the workspace) asked for its workspace without running,
// run on memory the caller gives its stream, and run with the caller's
// allocator supplying every byte the context takes.
//
//===----------------------------------------------------------------------===//

#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace rudnn;
using ::testing::HasSubstr;

namespace {

/// The caller's allocator: host memory (what emulation uses), counted.
struct CountingAllocator {
  std::map<void *, size_t> live;
  std::vector<size_t> sizes; // every allocation, in order

  Allocator allocator() {
    return {[this](size_t bytes) {
              void *pointer =
                  std::aligned_alloc(256, (bytes + 255) / 256 * 256);
              live[pointer] = bytes;
              sizes.push_back(bytes);
              return pointer;
            },
            [this](void *pointer) {
              ASSERT_EQ(live.erase(pointer), 1u) << "a pointer not ours";
              std::free(pointer);
            }};
  }
};

/// One KDA forward call's tensors (B = 2, T = 40, H = 3, K = 8, V = 4).
struct KdaCall {
  static constexpr int64_t B = 2, T = 40, H = 3, K = 8, V = 4;
  KdaCall(Context &context)
      : in(test::randomKdaInputs({B, T, H, K, V}, -1, true, false, 7)),
        q(upload(context, in.q, {B, T, H, K})),
        k(upload(context, in.k, {B, T, H, K})),
        v(upload(context, in.v, {B, T, H, V})),
        g(upload(context, in.g, {B, T, H, K})),
        beta(upload(context, in.beta, {B, T, H})),
        o(upload(context, std::vector<double>(B * T * H * V, 0),
                 {B, T, H, V})) {}

  static std::pair<std::shared_ptr<DeviceBuffer>, TensorView>
  upload(Context &context, const std::vector<double> &values,
         std::vector<int64_t> shape) {
    std::vector<float> data(values.begin(), values.end());
    auto buffer = std::make_shared<DeviceBuffer>(context, data.size() * 4);
    context.copyToDevice(buffer->data(), data.data(), data.size() * 4);
    return {buffer, TensorView::contiguous(buffer->data(), DType::F32,
                                           std::move(shape))};
  }

  void run(Context &context) {
    kdaForward(context,
               {q.second, k.second, v.second, g.second, beta.second, {}},
               {o.second, {}, {}, {}});
  }

  std::vector<float> output(Context &context) {
    std::vector<float> data(B * T * H * V);
    context.copyToHost(data.data(), o.first->data(), data.size() * 4);
    context.synchronize();
    return data;
  }

  reference::KdaInputs in;
  std::pair<std::shared_ptr<DeviceBuffer>, TensorView> q, k, v, g, beta, o;
};

ContextOptions emulation() {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  return options;
}

TEST(Workspace, QueryRunsNothingAndGivenWorkspaceServesTheCall) {
  Context context(emulation());
  KdaCall call(context);
  const size_t bytes = context.workspaceBytes([&] { call.run(context); });
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(call.output(context), std::vector<float>(call.o.second.numel(), 0))
      << "the query launched something";

  // Too small: refused before anything runs.
  DeviceBuffer small(context, bytes - 1);
  context.setWorkspace(nullptr, small.data(), bytes - 1);
  try {
    call.run(context);
    FAIL() << "a workspace one byte short was taken";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(),
                HasSubstr("needs " + std::to_string(bytes) + " bytes"));
  }
  EXPECT_EQ(call.output(context), std::vector<float>(call.o.second.numel(), 0));

  // Exactly the size asked: the same result as the context's own workspace.
  DeviceBuffer exact(context, bytes);
  context.setWorkspace(nullptr, exact.data(), bytes);
  call.run(context);
  const std::vector<float> given = call.output(context);
  context.setWorkspace(nullptr, nullptr, 0);
  call.run(context);
  EXPECT_EQ(call.output(context), given);
  EXPECT_NE(given, std::vector<float>(given.size(), 0));
}

TEST(Workspace, CallersAllocatorSuppliesEveryByte) {
  CountingAllocator counting;
  ContextOptions options = emulation();
  options.allocator = counting.allocator();
  {
    Context context(options);
    KdaCall call(context);
    const size_t buffers = counting.sizes.size(); // the call's six tensors
    EXPECT_EQ(buffers, 6u);
    const size_t bytes = context.workspaceBytes([&] { call.run(context); });
    EXPECT_EQ(counting.sizes.size(), buffers) << "the query allocated";
    call.run(context);
    // The plan's workspace came from the caller, sized as the query said.
    ASSERT_EQ(counting.sizes.size(), buffers + 1);
    EXPECT_EQ(counting.sizes.back(), bytes);
    std::vector<float> output = call.output(context);
    reference::KdaInputs zeroState = call.in; // the call passes no state
    zeroState.initialState.clear();
    const reference::KdaOutputs expected = reference::kdaForward(
        {KdaCall::B, KdaCall::T, KdaCall::H, KdaCall::K, KdaCall::V}, zeroState,
        1 / std::sqrt(double(KdaCall::K)), 16);
    EXPECT_LT(
        test::relativeError(std::vector<double>(output.begin(), output.end()),
                            expected.output),
        1e-5);
  }
  EXPECT_TRUE(counting.live.empty()) << "the context kept memory";

  ContextOptions half = emulation();
  half.allocator.allocate = [](size_t) { return nullptr; };
  EXPECT_THROW(Context{half}, InvalidArgument);
}

} // namespace
