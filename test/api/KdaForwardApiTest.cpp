//===- KdaForwardApiTest.cpp - rudnn::kdaForward against float64 ----------===//
//
// The operator through the JIT API on fresh random inputs: outputs, final
// state and boundaries against the float64 recurrence, both memory layouts,
// every dtype, decode and chunked paths; compile counting; bad inputs. Built
// twice: on the emulation backend, and (label gpu) on a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/kda/KdaPolicy.h"
#include "test/api/ApiFixture.h"

#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct ApiCase {
  int T, K, V, chunk; // chunk 0: chosen
  DType dtype;
  bool initialState, boundaries;
  Layout layout;
  double gMin;
};

// Test names say what a case is; keep gtest from printing its bytes.
void PrintTo(const ApiCase &, std::ostream *) {}

class KdaForwardNumerics : public ApiTest,
                           public ::testing::WithParamInterface<ApiCase> {
protected:
  /// The forward of case `c` against the float64 reference; on emulation
  /// its 16-bit walk on wgmma exactly when `hopper` (the suite's target).
  void matchesFloat64(const ApiCase &c, bool hopper);
};

TEST_P(KdaForwardNumerics, MatchesFloat64Reference) {
  matchesFloat64(GetParam(), /*hopper=*/true);
}

/// The same on sm_80: 16-bit inputs take the three mma.sync kernels
/// (prepare, the walk, the output).
class KdaForwardNumericsOnSm80 : public KdaForwardNumerics {
protected:
  static void SetUpTestSuite() { openContext("sm_80"); }
};

TEST_P(KdaForwardNumericsOnSm80, MatchesFloat64Reference) {
  matchesFloat64(GetParam(), /*hopper=*/false);
}

void KdaForwardNumerics::matchesFloat64(const ApiCase &c, bool hopper) {
  // Fewer heads where the features are wide: the emulated cost is per
  // head, what these cases prove is per chunk.
  const int64_t B = 3, H = c.K >= 128 || c.V >= 128 ? 2 : 5, T = c.T, K = c.K,
                V = c.V;
  reference::KdaShape shape{B, T, H, K, V};
  const bool bf16 = c.dtype == DType::BF16;
  reference::KdaInputs in = test::randomKdaInputs(
      shape, c.gMin, c.initialState, bf16, unsigned(T * 1000 + K * 10 + V));
  if (c.dtype == DType::F16)
    roundTo(DType::F16, {&in.q, &in.k, &in.v, &in.beta});

  KdaOptions options;
  if (c.chunk)
    options.chunk = c.chunk;
  const int64_t chunk =
      c.chunk ? c.chunk
              : *mlir::rudnn::chooseKdaChunk(
                    K, V, mlir::rudnn::DefaultTarget::kSmemPerBlock,
                    dtypeSize(c.dtype));
  const int64_t N = (T + chunk - 1) / chunk;
  const double scale = 1.0 / std::sqrt(double(K));
  reference::KdaOutputs want = reference::kdaForward(shape, in, scale, chunk);

  DeviceTensor q = sequence(in.q, B, T, H, K, c.dtype, c.layout);
  DeviceTensor k = sequence(in.k, B, T, H, K, c.dtype, c.layout);
  DeviceTensor v = sequence(in.v, B, T, H, V, c.dtype, c.layout);
  DeviceTensor g = sequence(in.g, B, T, H, K, DType::F32, c.layout);
  DeviceTensor beta = sequence(in.beta, B, T, H, 1, c.dtype, c.layout, true);
  DeviceTensor output = sequence(std::vector<double>(B * T * H * V, NAN), B, T,
                                 H, V, c.dtype, c.layout);
  DeviceTensor initial;
  if (c.initialState)
    initial = dense(in.initialState, {B, H, K, V});
  DeviceTensor finalState =
      dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
  // Boundaries are in the input type.
  DeviceTensor boundaries = dense(std::vector<double>(N * B * H * K * V, NAN),
                                  {N, B, H, K, V}, c.dtype);

  KdaForwardInputs inputs{q.view, k.view, v.view, g.view, beta.view, {}};
  if (c.initialState)
    inputs.initialState = initial.view;
  KdaForwardOutputs outputs{output.view, finalState.view, {}, {}};
  if (c.boundaries)
    outputs.boundaries = boundaries.view;
  context->resetProfile();
  context->setProfiling(true);
  kdaForward(*context, inputs, outputs, options);
  context->setProfiling(false);
  if (testBackend() == BackendKind::Emulation) {
    // On sm_90 16-bit inputs walk on wgmma, the state in its accumulators,
    // and the walk forms the outputs; f32 on FMA.
    bool wgmmaWalk = false, walked = false;
    for (const KernelProfile &kernel : context->profile())
      if (kernel.kernel.find("kda_fwd_propagate_") == 0) {
        walked = true;
        wgmmaWalk = kernel.kernel.find("_wgmma") != std::string::npos;
      }
    EXPECT_EQ(walked, T > 1); // T = 1 takes the decode kernel
    EXPECT_EQ(wgmmaWalk, walked && hopper && c.dtype != DType::F32);
  }

  const double tolerance = c.dtype == DType::F32 ? 1e-4 : 1e-2;
  EXPECT_LT(test::relativeError(readSequence(output, B, T, H, V), want.output),
            tolerance);
  EXPECT_LT(
      test::relativeError(read(finalState, B * H * K * V), want.finalState),
      tolerance);
  if (c.boundaries) {
    EXPECT_LT(test::relativeError(read(boundaries, N * B * H * K * V),
                                  want.boundaries),
              tolerance);
  }
}

std::string caseName(const ::testing::TestParamInfo<ApiCase> &info) {
  const ApiCase &c = info.param;
  return shapeName(c.T, c.K, c.V, c.chunk, c.dtype) +
         (c.initialState ? "_S0" : "") + (c.boundaries ? "_bounds" : "") +
         layoutAndDecayName(c.layout, c.gMin);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaForwardNumerics,
    ::testing::Values(
        ApiCase{1, 64, 64, 64, DType::F32, true, true, Layout::BTHD, -1},
        ApiCase{2, 16, 60, 16, DType::F32, false, true, Layout::BHTD, -20},
        ApiCase{63, 60, 100, 32, DType::BF16, true, true, Layout::BTHD, -20},
        ApiCase{64, 64, 64, 64, DType::F32, true, true, Layout::BHTD, -20},
        ApiCase{65, 100, 16, 16, DType::F32, false, false, Layout::BTHD, -1},
        ApiCase{200, 128, 128, 64, DType::BF16, true, true, Layout::BHTD, -1},
        ApiCase{130, 16, 16, 32, DType::F16, true, true, Layout::BTHD, -5},
        ApiCase{65, 128, 64, 0, DType::F32, true, false, Layout::BTHD, -20},
        ApiCase{33, 1, 1, 16, DType::F32, true, true, Layout::BHTD, -1},
        ApiCase{20, 256, 256, 32, DType::BF16, true, true, Layout::BTHD, -1},
        // The wgmma walk: a one-token tail, state rows past K in its last
        // 64-row tile, a partial block of value columns; four row tiles.
        ApiCase{129, 72, 24, 64, DType::BF16, true, true, Layout::BHTD, -20},
        ApiCase{49, 200, 40, 16, DType::F16, true, true, Layout::BTHD, -5},
        // Mild decay: tokens far apart in the chunk interact.
        ApiCase{100, 12, 20, 64, DType::F32, true, true, Layout::BHTD, -0.05},
        ApiCase{90, 48, 40, 64, DType::BF16, false, true, Layout::BTHD, -0.05}),
    caseName);

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaForwardNumericsOnSm80,
    ::testing::Values(
        ApiCase{63, 60, 100, 32, DType::BF16, true, true, Layout::BTHD, -20},
        ApiCase{130, 16, 16, 32, DType::F16, true, true, Layout::BTHD, -5}),
    caseName);

/// A small valid call whose parts a test may spoil.
struct SmallCall {
  static constexpr int64_t B = 2, T = 5, H = 3, K = 8, V = 4;
  /// Words of saved tiles per chunk and head at chunk 16, f32: e^Γlast (8),
  /// W, Kd, the pairwise matrix and U (16 × (8 + 8 + 16 + 4)), Qd and
  /// (I + A)⁻¹ (16 × (8 + 16)).
  static constexpr int64_t W = 8 + 16 * 36 + 16 * 24;
  DeviceTensor q, k, v, g, beta, output, initial, finalState, boundaries, tiles;
  KdaForwardInputs inputs;
  KdaForwardOutputs outputs;
};

class KdaForwardContract : public ApiTest {
protected:
  /// A bf16 forward (chunk 64) over the views q, k, v and g of `in` (β
  /// dense) against the float64 reference.
  void expectBf16ForwardMatches(const reference::KdaShape &shape,
                                const reference::KdaInputs &in,
                                const DeviceTensor &q, const DeviceTensor &k,
                                const DeviceTensor &v, const DeviceTensor &g) {
    const int64_t B = shape.batch, T = shape.length, H = shape.heads,
                  V = shape.featureV;
    DeviceTensor beta = sequence(in.beta, B, T, H, 1, DType::BF16, Layout::BTHD,
                                 /*rank3=*/true);
    DeviceTensor output = sequence(std::vector<double>(B * T * H * V, NAN), B,
                                   T, H, V, DType::BF16, Layout::BTHD);
    KdaOptions options;
    options.chunk = 64;
    kdaForward(*context, {q.view, k.view, v.view, g.view, beta.view, {}},
               {output.view, {}, {}, {}}, options);
    reference::KdaOutputs want = reference::kdaForward(
        shape, in, 1.0 / std::sqrt(double(shape.featureK)), 64);
    EXPECT_LT(
        test::relativeError(readSequence(output, B, T, H, V), want.output),
        1e-2);
  }

  SmallCall call(int64_t T = SmallCall::T, int64_t B = SmallCall::B,
                 Layout layout = Layout::BTHD) {
    const int64_t H = SmallCall::H, K = SmallCall::K, V = SmallCall::V;
    reference::KdaInputs in = test::randomKdaInputs({B, T, H, K, V}, -1, true,
                                                    false, unsigned(T + B));
    SmallCall c;
    c.q = sequence(in.q, B, T, H, K, DType::F32, layout);
    c.k = sequence(in.k, B, T, H, K, DType::F32, layout);
    c.v = sequence(in.v, B, T, H, V, DType::F32, layout);
    c.g = sequence(in.g, B, T, H, K, DType::F32, layout);
    c.beta = sequence(in.beta, B, T, H, 1, DType::F32, layout, true);
    c.output = sequence(std::vector<double>(B * T * H * V, 7.0), B, T, H, V,
                        DType::F32, layout);
    c.initial = dense(in.initialState, {B, H, K, V});
    c.finalState = dense(std::vector<double>(B * H * K * V, 7.0), {B, H, K, V});
    const int64_t N = (T + 15) / 16;
    c.boundaries =
        dense(std::vector<double>(N * B * H * K * V, 7.0), {N, B, H, K, V});
    c.tiles = dense(std::vector<double>(N * B * H * SmallCall::W, 7.0),
                    {N, B, H, SmallCall::W});
    c.inputs = {c.q.view, c.k.view,    c.v.view,
                c.g.view, c.beta.view, c.initial.view};
    c.outputs = {c.output.view, c.finalState.view, c.boundaries.view, {}};
    return c;
  }
  KdaOptions chunk16() {
    KdaOptions options;
    options.chunk = 16;
    return options;
  }
};

TEST_F(KdaForwardContract, ChangingBatchLengthOrLayoutCompilesNothing) {
  SmallCall first = call();
  kdaForward(*context, first.inputs, first.outputs, chunk16());
  Counters before = context->counters();
  for (auto [T, B, layout] :
       {std::tuple{40, 4, Layout::BHTD}, std::tuple{17, 1, Layout::BTHD}}) {
    SmallCall next = call(T, B, layout);
    kdaForward(*context, next.inputs, next.outputs, chunk16());
  }
  Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheHits, before.planCacheHits + 2);
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);

  // T = 1 runs the decode kernel: it compiles at the first call that
  // launches it, once, with no new plan.
  for (auto [B, layout] :
       {std::pair{2, Layout::BTHD}, std::pair{3, Layout::BHTD}}) {
    SmallCall decode = call(1, B, layout);
    kdaForward(*context, decode.inputs, decode.outputs, chunk16());
  }
  Counters decoded = context->counters();
  EXPECT_EQ(kernelsBuilt(decoded), kernelsBuilt(after) + 1);
  EXPECT_EQ(decoded.planCacheMisses, before.planCacheMisses);
}

TEST_F(KdaForwardContract, SavedShapesComeFromTheFunctionASavingForwardRuns) {
  // The chunk rudnn-specialize chooses (64 for small K and V), then the
  // options'; N counts the chunks of T = 130, W the words of each.
  SmallCall c = call(130);
  KdaSavedShapes chosen = kdaSavedShapes(*context, c.inputs);
  EXPECT_EQ(chosen.chunk, 64);
  EXPECT_EQ(chosen.boundaries,
            (std::vector<int64_t>{3, SmallCall::B, SmallCall::H, SmallCall::K,
                                  SmallCall::V}));
  // At chunk 64: e^Γlast (8), then 64 rows of W, Kd, the pairwise matrix
  // and U (8 + 8 + 64 + 4), of Qd and (I + A)⁻¹ (8 + 64).
  EXPECT_EQ(chosen.tiles, (std::vector<int64_t>{3, SmallCall::B, SmallCall::H,
                                                8 + 64 * 84 + 64 * 72}));
  KdaSavedShapes small = kdaSavedShapes(*context, c.inputs, chunk16());
  EXPECT_EQ(small.chunk, 16);
  EXPECT_EQ(small.tiles, (std::vector<int64_t>{9, SmallCall::B, SmallCall::H,
                                               SmallCall::W}));
  // What a forward saving them then takes.
  DeviceTensor boundaries = dense(
      std::vector<double>(
          9 * SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V, 0.0),
      small.boundaries);
  DeviceTensor tiles = dense(
      std::vector<double>(9 * SmallCall::B * SmallCall::H * SmallCall::W, 0.0),
      small.tiles);
  c.outputs.boundaries = boundaries.view;
  c.outputs.tiles = tiles.view;
  EXPECT_NO_THROW(kdaForward(*context, c.inputs, c.outputs, chunk16()));
  // Inputs no call takes are refused the same way.
  KdaForwardInputs wide = c.inputs;
  for (TensorView *view : {&wide.q, &wide.k, &wide.g})
    view->shape[3] = 300;
  EXPECT_THROW(kdaSavedShapes(*context, wide), InvalidArgument);
  KdaForwardInputs integers = c.inputs;
  integers.q.dtype = integers.k.dtype = integers.v.dtype = DType::I32;
  EXPECT_THROW(kdaSavedShapes(*context, integers), InvalidArgument);
  KdaOptions chunk24;
  chunk24.chunk = 24;
  EXPECT_THROW(kdaSavedShapes(*context, c.inputs, chunk24), InvalidArgument);
}

TEST_F(KdaForwardContract, SavingTilesChangesNoOtherResult) {
  SmallCall plain = call(40), saving = call(40);
  kdaForward(*context, plain.inputs, plain.outputs, chunk16());
  const int64_t N = 3;
  DeviceTensor boundaries = dense(
      std::vector<double>(
          N * SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V, 7.0),
      {N, SmallCall::B, SmallCall::H, SmallCall::K, SmallCall::V});
  DeviceTensor tiles = dense(
      std::vector<double>(N * SmallCall::B * SmallCall::H * SmallCall::W, NAN),
      {N, SmallCall::B, SmallCall::H, SmallCall::W});
  saving.outputs.boundaries = boundaries.view;
  saving.outputs.tiles = tiles.view;
  kdaForward(*context, saving.inputs, saving.outputs, chunk16());
  const size_t outputs = SmallCall::B * 40 * SmallCall::H * SmallCall::V;
  EXPECT_EQ(read(saving.output, outputs), read(plain.output, outputs));
  const size_t states =
      SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V;
  EXPECT_EQ(read(saving.finalState, states), read(plain.finalState, states));
}

TEST_F(KdaForwardContract, FinalStateMayOverwriteTheInitialState) {
  SmallCall separate = call(), inPlace = call();
  kdaForward(*context, separate.inputs, separate.outputs, chunk16());
  inPlace.outputs.finalState = inPlace.initial.view;
  kdaForward(*context, inPlace.inputs, inPlace.outputs, chunk16());
  const size_t states =
      SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V;
  EXPECT_EQ(read(inPlace.initial, states), read(separate.finalState, states));
}

TEST_F(KdaForwardContract, FinalStateOverTheInitialStateMatchesFloat64) {
  // Decode (recurrent kernel), one chunk and three chunks (propagate).
  for (int64_t T : {1, 5, 40}) {
    const int64_t B = SmallCall::B, H = SmallCall::H, K = SmallCall::K,
                  V = SmallCall::V;
    reference::KdaShape shape{B, T, H, K, V};
    // call()'s inputs: same shape, decay and seed.
    reference::KdaInputs in =
        test::randomKdaInputs(shape, -1, true, false, unsigned(T + B));
    reference::KdaOutputs want =
        reference::kdaForward(shape, in, 1.0 / std::sqrt(double(K)), 16);
    SmallCall c = call(T);
    c.outputs.finalState = c.initial.view;
    kdaForward(*context, c.inputs, c.outputs, chunk16());
    EXPECT_LT(
        test::relativeError(read(c.initial, B * H * K * V), want.finalState),
        1e-4)
        << "T = " << T;
    EXPECT_LT(
        test::relativeError(readSequence(c.output, B, T, H, V), want.output),
        1e-4)
        << "T = " << T;
  }
}

/// The production shape's features over a long sequence, bf16: features
/// 0 to 63 at the production gate range (log-decays uniform in [−5, 0],
/// mean −2.5), 64 to 127 at g = −20 every step (decay factors down to
/// e^−1280 within a chunk). Everything stays finite and within bf16's
/// tolerance of the float64 reference; on sm_90 the walk on wgmma forms
/// the outputs.
TEST_F(KdaForwardContract, GateBoundsOverFourThousandTokensMatchFloat64) {
  const int64_t B = 1, T = 4096, H = 1, K = 128, V = 128, chunk = 64;
  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in = test::randomKdaInputs(shape, -5, true, true, 4096);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = K / 2; d < K; ++d)
      in.g[t * K + d] = -20;
  reference::KdaOutputs want =
      reference::kdaForward(shape, in, 1.0 / std::sqrt(double(K)), chunk);
  DeviceTensor q = sequence(in.q, B, T, H, K, DType::BF16, Layout::BTHD);
  DeviceTensor k = sequence(in.k, B, T, H, K, DType::BF16, Layout::BTHD);
  DeviceTensor v = sequence(in.v, B, T, H, V, DType::BF16, Layout::BTHD);
  DeviceTensor g = sequence(in.g, B, T, H, K, DType::F32, Layout::BTHD);
  DeviceTensor beta =
      sequence(in.beta, B, T, H, 1, DType::BF16, Layout::BTHD, true);
  DeviceTensor output = sequence(std::vector<double>(B * T * H * V, NAN), B, T,
                                 H, V, DType::BF16, Layout::BTHD);
  DeviceTensor initial = dense(in.initialState, {B, H, K, V});
  DeviceTensor finalState =
      dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
  KdaOptions options;
  options.chunk = chunk;
  kdaForward(*context,
             {q.view, k.view, v.view, g.view, beta.view, initial.view},
             {output.view, finalState.view, {}, {}}, options);
  const std::vector<double> got = readSequence(output, B, T, H, V);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(),
                          [](double x) { return std::isfinite(x); }));
  EXPECT_LT(test::relativeError(got, want.output), 1e-2);
  EXPECT_LT(
      test::relativeError(read(finalState, B * H * K * V), want.finalState),
      1e-2);
}

TEST_F(KdaForwardContract, FinalStatePartlyOverTheInitialStateIsRejected) {
  // Both states inside one buffer, the final one element past the initial.
  SmallCall c = call();
  const size_t states =
      SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V;
  std::vector<double> before = read(c.initial, states);
  before.push_back(7.0);
  DeviceTensor both = dense(before, {int64_t(states) + 1});
  c.inputs.initialState->data = both.view.data;
  c.outputs.finalState->data = static_cast<float *>(both.view.data) + 1;
  try {
    kdaForward(*context, c.inputs, c.outputs, chunk16());
    FAIL() << "a partly overlapping final state was accepted";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(),
                HasSubstr("'final_state' overlaps 'initial_state'"));
    EXPECT_THAT(error.what(), HasSubstr("exactly the same view"));
  }
  EXPECT_EQ(read(both, states + 1), before);
}

TEST_F(KdaForwardContract, ProfilingTimesEachKernelOfTheCalls) {
  SmallCall plain = call(), profiled = call(), decode = call(1);
  kdaForward(*context, plain.inputs, plain.outputs, chunk16());
  EXPECT_TRUE(context->profile().empty()); // off by default

  context->setProfiling(true);
  kdaForward(*context, profiled.inputs, profiled.outputs, chunk16());
  kdaForward(*context, profiled.inputs, profiled.outputs, chunk16());
  kdaForward(*context, decode.inputs, decode.outputs, chunk16());
  std::vector<KernelProfile> profile = context->profile();
  std::map<std::string, uint64_t> launches;
  for (const KernelProfile &kernel : profile) {
    launches[kernel.kernel] = kernel.launches;
    EXPECT_GE(kernel.milliseconds, 0);
  }
  // Contiguous f32 rows of 8 and 4 elements are 16-byte aligned: the
  // kernels copying them are compiled for that (_a16).
  const std::string spec = "_f32_f32_f32_k8_v4_c16";
  EXPECT_EQ(launches, (std::map<std::string, uint64_t>{
                          {"kda_fwd_prepare" + spec + "_a16", 2},
                          {"kda_fwd_propagate" + spec, 2},
                          {"kda_fwd_output" + spec + "_a16", 2},
                          {"kda_fwd_recurrent" + spec, 1}}));
  EXPECT_TRUE(
      std::is_sorted(profile.begin(), profile.end(),
                     [](const KernelProfile &a, const KernelProfile &b) {
                       return a.milliseconds > b.milliseconds;
                     }));
  // Timed launches compute what untimed ones do.
  const size_t outputs =
      SmallCall::B * SmallCall::T * SmallCall::H * SmallCall::V;
  EXPECT_EQ(read(profiled.output, outputs), read(plain.output, outputs));

  context->resetProfile();
  EXPECT_TRUE(context->profile().empty());
  context->setProfiling(false);
  kdaForward(*context, plain.inputs, plain.outputs, chunk16());
  EXPECT_TRUE(context->profile().empty());
}

TEST_F(KdaForwardContract, NaNInTheGapsOfStridedViewsNeverLeaks) {
  // bf16 (the tensor-core path), K = V = 20 inside rows of 32 elements whose
  // last 12 hold NaN; a 37-token tail chunk.
  const int64_t B = 1, T = 37, H = 2, K = 20, V = 20, row = 32;
  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in =
      test::randomKdaInputs(shape, -1, false, /*bf16=*/true, 99);
  auto padded = [&](const std::vector<double> &data, int64_t width,
                    DType dtype) {
    std::vector<double> wide(B * T * H * row, NAN);
    for (int64_t r = 0; r < B * T * H; ++r)
      for (int64_t d = 0; d < width; ++d)
        wide[r * row + d] = data[r * width + d];
    DeviceTensor tensor = sequence(wide, B, T, H, row, dtype, Layout::BTHD);
    tensor.view.shape.back() = width;
    return tensor;
  };
  DeviceTensor q = padded(in.q, K, DType::BF16),
               k = padded(in.k, K, DType::BF16),
               v = padded(in.v, V, DType::BF16),
               g = padded(in.g, K, DType::F32);
  expectBf16ForwardMatches(shape, in, q, k, v, g);
}

TEST_F(KdaForwardContract, DimsOfOneMayHaveAnyStride) {
  // bf16, K = V = 64 in 16-byte aligned rows: on sm_90a `prepare` takes q,
  // k and v by TMA. B = H = 1, so their strides are never stepped and a
  // view may give them any value (odd ones here, which no tensor map
  // takes): the call runs as with the natural strides.
  const int64_t B = 1, T = 70, H = 1, K = 64, V = 64;
  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in =
      test::randomKdaInputs(shape, -1, false, /*bf16=*/true, 7);
  DeviceTensor q = sequence(in.q, B, T, H, K, DType::BF16, Layout::BTHD),
               k = sequence(in.k, B, T, H, K, DType::BF16, Layout::BTHD),
               v = sequence(in.v, B, T, H, V, DType::BF16, Layout::BTHD),
               g = sequence(in.g, B, T, H, K, DType::F32, Layout::BTHD);
  for (DeviceTensor *tensor : {&q, &k, &v, &g}) {
    tensor->view.strides[0] = 12345; // batch
    tensor->view.strides[2] = 3;     // head
  }
  expectBf16ForwardMatches(shape, in, q, k, v, g);
}

TEST_F(KdaForwardContract, ConcurrentCallsSharingAPlanDoNotInterfere) {
  // Same signature, different data and lengths, from two threads at once.
  SmallCall a = call(40, 2), b = call(7, 2), aAlone = call(40, 2),
            bAlone = call(7, 2);
  kdaForward(*context, aAlone.inputs, aAlone.outputs, chunk16());
  kdaForward(*context, bAlone.inputs, bAlone.outputs, chunk16());
  for (int round = 0; round < 5; ++round) {
    std::thread other(
        [&] { kdaForward(*context, b.inputs, b.outputs, chunk16()); });
    kdaForward(*context, a.inputs, a.outputs, chunk16());
    other.join();
    EXPECT_EQ(read(a.output, 2 * 40 * 3 * 4),
              read(aAlone.output, 2 * 40 * 3 * 4));
    EXPECT_EQ(read(b.output, 2 * 7 * 3 * 4),
              read(bAlone.output, 2 * 7 * 3 * 4));
  }
}

/// Each spoiled call throws InvalidArgument naming `needle`, and leaves the
/// outputs as they were.
struct BadCall {
  const char *what, *needle;
  void (*spoil)(SmallCall &, KdaOptions &);
};

void PrintTo(const BadCall &call, std::ostream *os) { *os << call.what; }

class KdaForwardBadInput : public KdaForwardContract,
                           public ::testing::WithParamInterface<BadCall> {};

TEST_P(KdaForwardBadInput, IsRejectedBeforeAnythingIsWritten) {
  SmallCall c = call();
  KdaOptions options = chunk16();
  GetParam().spoil(c, options);
  try {
    kdaForward(*context, c.inputs, c.outputs, options);
    FAIL() << GetParam().what << " was accepted";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(), HasSubstr(GetParam().needle));
  }
  const size_t outputs =
      SmallCall::B * SmallCall::T * SmallCall::H * SmallCall::V;
  const size_t states =
      SmallCall::B * SmallCall::H * SmallCall::K * SmallCall::V;
  EXPECT_EQ(read(c.output, outputs), std::vector<double>(outputs, 7.0));
  EXPECT_EQ(read(c.finalState, states), std::vector<double>(states, 7.0));
  EXPECT_EQ(read(c.boundaries, states), std::vector<double>(states, 7.0));
  const size_t tiles = SmallCall::B * SmallCall::H * SmallCall::W;
  EXPECT_EQ(read(c.tiles, tiles), std::vector<double>(tiles, 7.0));
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, KdaForwardBadInput,
    ::testing::Values(
        BadCall{"q of rank 3", "'q' must have rank 4",
                [](SmallCall &c, KdaOptions &) {
                  c.inputs.q.shape.pop_back();
                  c.inputs.q.strides.pop_back();
                }},
        BadCall{"k of another length", "'k' must have shape [2, 5, 3, 8]",
                [](SmallCall &c, KdaOptions &) { c.inputs.k.shape[1] = 4; }},
        BadCall{"v of another batch", "'v' must have shape [2, 5, 3, 4]",
                [](SmallCall &c, KdaOptions &) { c.inputs.v.shape[0] = 1; }},
        BadCall{"beta with a feature dim", "'beta' must have rank 3",
                [](SmallCall &c, KdaOptions &) {
                  c.inputs.beta.shape.push_back(1);
                  c.inputs.beta.strides.push_back(1);
                }},
        BadCall{
            "k in another dtype", "'k' must be f32, got bf16",
            [](SmallCall &c, KdaOptions &) { c.inputs.k.dtype = DType::BF16; }},
        BadCall{
            "integer g", "'g' must be f32, f16 or bf16, got i32",
            [](SmallCall &c, KdaOptions &) { c.inputs.g.dtype = DType::I32; }},
        BadCall{"output in another dtype", "'output' must be f32, got f16",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.output.dtype = DType::F16;
                }},
        BadCall{"half initial state", "'initial_state' must be f32",
                [](SmallCall &c, KdaOptions &) {
                  c.inputs.initialState->dtype = DType::F16;
                }},
        BadCall{"boundaries in another type than q",
                "'boundaries' must be f32, got bf16",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.boundaries->dtype = DType::BF16;
                }},
        BadCall{"boundaries of another chunk count",
                "'boundaries' must have shape [1, 2, 3, 8, 4]",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.boundaries->shape[0] = 2;
                }},
        BadCall{"tiles without the boundaries",
                "'tiles' are saved with the 'boundaries'",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.tiles = c.tiles.view;
                  c.outputs.boundaries.reset();
                }},
        BadCall{"tiles of another width",
                "'tiles' dim 3 (W) must be 968 at K = 8, V = 4, chunk 16 and "
                "'f32' inputs, got 967",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.tiles = TensorView::contiguous(
                      c.tiles.view.data, DType::F32, {1, 2, 3, 967});
                }},
        BadCall{"tiles for another chunk",
                "'tiles' dim 3 (W) must be 2952 at K = 8, V = 4, chunk 32",
                [](SmallCall &c, KdaOptions &o) {
                  c.outputs.tiles = c.tiles.view;
                  o.chunk = 32;
                }},
        BadCall{"tiles in bf16", "'tiles' must be f32, got bf16",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.tiles = c.tiles.view;
                  c.outputs.tiles->dtype = DType::BF16;
                }},
        BadCall{"tiles over the boundaries", "'tiles' overlaps 'boundaries'",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.tiles = c.tiles.view;
                  c.outputs.tiles->data = c.outputs.boundaries->data;
                }},
        BadCall{"strided feature dim",
                "'q' must be contiguous in its innermost dim",
                [](SmallCall &c, KdaOptions &) { c.inputs.q.strides[3] = 2; }},
        BadCall{"null v", "'v' has no data pointer",
                [](SmallCall &c, KdaOptions &) { c.inputs.v.data = nullptr; }},
        BadCall{"chunk 48", "'chunk' must be 16, 32 or 64, got 48",
                [](SmallCall &, KdaOptions &o) { o.chunk = 48; }},
        BadCall{"negative scale", "'scale' must be positive",
                [](SmallCall &, KdaOptions &o) { o.scale = -1.f; }},
        BadCall{"K over 256", "feature dim K is 300",
                [](SmallCall &c, KdaOptions &) { c.inputs.q.shape[3] = 300; }},
        BadCall{"non-dense final state", "'final_state' must be dense",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.finalState->strides[0] += 1;
                }},
        // Offsets past int64: the kernels' pointer arithmetic would wrap.
        BadCall{"q batch stride of INT64_MAX over 3",
                "'q' has an extent in bytes that overflows int64",
                [](SmallCall &c, KdaOptions &) {
                  c.inputs.q.strides[0] = INT64_MAX / 3;
                }},
        BadCall{"k time stride of 2 to the 62",
                "'k' has a largest element offset",
                [](SmallCall &c, KdaOptions &) {
                  c.inputs.k.strides[1] = int64_t(1) << 62;
                }},
        BadCall{
            "negative beta stride", "'beta' has a negative stride",
            [](SmallCall &c, KdaOptions &) { c.inputs.beta.strides[1] = -1; }},
        BadCall{"output with a zero time stride", "'output' overlaps itself",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.output.strides[1] = 0;
                }},
        BadCall{"output heads overlapping its features",
                "'output' overlaps itself",
                [](SmallCall &c,
                   KdaOptions &) { c.outputs.output.strides[2] = 2; }},
        BadCall{"final state over the output",
                "'final_state' overlaps 'output'",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.finalState->data = c.outputs.output.data;
                }},
        BadCall{"output over q", "'output' overlaps 'q'",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.output.data = c.inputs.q.data;
                }},
        BadCall{"boundaries over the initial state",
                "'boundaries' overlaps 'initial_state'",
                [](SmallCall &c, KdaOptions &) {
                  c.outputs.boundaries->data = c.inputs.initialState->data;
                }}),
    [](const ::testing::TestParamInfo<BadCall> &info) {
      std::string name = info.param.what;
      for (char &ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return name;
    });

} // namespace
