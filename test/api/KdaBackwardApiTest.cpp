//===- KdaBackwardApiTest.cpp - rudnn::kdaBackward against float64 --------===//
//
// The backward through the JIT API on fresh random inputs: all six gradients
// against reverse-mode differentiation of the float64 token recurrence, both
// memory layouts, with and without the optional states, odd sizes; bad
// inputs rejected before anything is written. Built for the emulation
// backend and (label gpu) a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct BackwardCase {
  int T, K, V, chunk;
  DType dtype;
  bool initialState, dFinalState;
  Layout layout;
  double gMin;
  /// What the forward saved, which the backward then does not recompute.
  enum class Saved { Nothing, Boundaries, Tiles } saved;
};
using Saved = BackwardCase::Saved;

void PrintTo(const BackwardCase &, std::ostream *) {}

std::vector<double> randomNormal(size_t n, unsigned seed, DType dtype) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (double &value : x)
    value = normal(random);
  roundTo(dtype, {&x});
  return x;
}

class KdaBackwardNumerics : public ApiTest,
                            public ::testing::WithParamInterface<BackwardCase> {
protected:
  /// The backward of case `c` against float64 reverse-mode gradients; on
  /// emulation its 16-bit reverse walk on wgmma exactly when `hopper` (the
  /// suite's target).
  void matchesFloat64(const BackwardCase &c, bool hopper);
};

TEST_P(KdaBackwardNumerics, MatchesFloat64Gradients) {
  matchesFloat64(GetParam(), /*hopper=*/true);
}

/// The same on sm_80: 16-bit inputs walk in reverse on mma.sync.
class KdaBackwardNumericsOnSm80 : public KdaBackwardNumerics {
protected:
  static void SetUpTestSuite() { openContext("sm_80"); }
};

TEST_P(KdaBackwardNumericsOnSm80, MatchesFloat64Gradients) {
  matchesFloat64(GetParam(), /*hopper=*/false);
}

void KdaBackwardNumerics::matchesFloat64(const BackwardCase &c, bool hopper) {
  const int64_t B = 2, H = 3, T = c.T, K = c.K, V = c.V;
  reference::KdaShape shape{B, T, H, K, V};
  const unsigned seed = unsigned(T * 1000 + K * 10 + V);
  reference::KdaInputs in =
      randomKdaInputs(shape, c.gMin, c.initialState, false, seed);
  roundTo(c.dtype, {&in.q, &in.k, &in.v, &in.beta});
  std::vector<double> dOutput = randomNormal(B * T * H * V, seed + 1, c.dtype);
  std::vector<double> dFinal;
  if (c.dFinalState)
    dFinal = randomNormal(B * H * K * V, seed + 2, DType::F32);
  const double scale = 1.0 / std::sqrt(double(K));
  reference::KdaGradients want =
      reference::kdaBackward(shape, in, scale, dOutput, dFinal);

  DeviceTensor q = sequence(in.q, B, T, H, K, c.dtype, c.layout);
  DeviceTensor k = sequence(in.k, B, T, H, K, c.dtype, c.layout);
  DeviceTensor v = sequence(in.v, B, T, H, V, c.dtype, c.layout);
  DeviceTensor g = sequence(in.g, B, T, H, K, DType::F32, c.layout);
  DeviceTensor beta = sequence(in.beta, B, T, H, 1, c.dtype, c.layout, true);
  DeviceTensor dO = sequence(dOutput, B, T, H, V, c.dtype, c.layout);
  auto unset = [&](int64_t width, DType dtype, bool rank3 = false) {
    return sequence(std::vector<double>(B * T * H * width, NAN), B, T, H, width,
                    dtype, c.layout, rank3);
  };
  DeviceTensor dq = unset(K, c.dtype), dk = unset(K, c.dtype),
               dv = unset(V, c.dtype), dg = unset(K, DType::F32),
               dbeta = unset(1, c.dtype, true);
  DeviceTensor initial, dFinalTensor,
      dInitial = dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
  KdaBackwardInputs inputs{
      {q.view, k.view, v.view, g.view, beta.view, {}}, dO.view, {}, {}, {}};
  KdaBackwardOutputs outputs{dq.view, dk.view,    dv.view,
                             dg.view, dbeta.view, {}};
  if (c.initialState) {
    initial = dense(in.initialState, {B, H, K, V});
    inputs.forward.initialState = initial.view;
    outputs.dInitialState = dInitial.view;
  }
  if (c.dFinalState) {
    dFinalTensor = dense(dFinal, {B, H, K, V});
    inputs.dFinalState = dFinalTensor.view;
  }
  KdaOptions options;
  options.chunk = c.chunk;
  DeviceTensor boundaries, tiles;
  if (c.saved != Saved::Nothing) {
    const KdaSavedShapes shapes =
        kdaSavedShapes(*context, inputs.forward, options);
    ASSERT_EQ(shapes.chunk, c.chunk);
    const int64_t N = shapes.boundaries[0];
    ASSERT_EQ(N, (T + c.chunk - 1) / c.chunk);
    boundaries = dense(std::vector<double>(N * B * H * K * V, NAN),
                       shapes.boundaries, c.dtype);
    DeviceTensor output = unset(V, c.dtype);
    KdaForwardOutputs forward{output.view, {}, boundaries.view, {}};
    if (c.saved == Saved::Tiles) {
      tiles = dense(std::vector<double>(N * B * H * shapes.tiles[3], NAN),
                    shapes.tiles);
      forward.tiles = inputs.tiles = tiles.view;
    }
    kdaForward(*context, inputs.forward, forward, options);
    inputs.boundaries = boundaries.view;
  }
  context->resetProfile();
  context->setProfiling(true);
  kdaBackward(*context, inputs, outputs, options);
  context->setProfiling(false);
  if (testBackend() == BackendKind::Emulation) {
    bool wgmmaWalk = false, walked = false;
    for (const KernelProfile &kernel : context->profile())
      if (kernel.kernel.find("kda_bwd_state_gradient_") == 0) {
        walked = true;
        wgmmaWalk = kernel.kernel.find("_wgmma") != std::string::npos;
      }
    EXPECT_TRUE(walked);
    EXPECT_EQ(wgmmaWalk, hopper && c.dtype != DType::F32);
  }

  // bf16 as asked of the backward; f16, with three more bits, at the
  // forward's 16-bit tolerance.
  const double tolerance = c.dtype == DType::BF16  ? 2e-2
                           : c.dtype == DType::F16 ? 1e-2
                                                   : 1e-4;
  EXPECT_LT(relativeError(readSequence(dq, B, T, H, K), want.dq), tolerance);
  EXPECT_LT(relativeError(readSequence(dk, B, T, H, K), want.dk), tolerance);
  EXPECT_LT(relativeError(readSequence(dv, B, T, H, V), want.dv), tolerance);
  EXPECT_LT(relativeError(readSequence(dg, B, T, H, K), want.dg), tolerance);
  EXPECT_LT(relativeError(readSequence(dbeta, B, T, H, 1), want.dbeta),
            tolerance);
  if (c.initialState) {
    EXPECT_LT(relativeError(read(dInitial, B * H * K * V), want.dInitialState),
              tolerance);
  }
}

std::string
backwardCaseName(const ::testing::TestParamInfo<BackwardCase> &info) {
  const BackwardCase &c = info.param;
  return shapeName(c.T, c.K, c.V, c.chunk, c.dtype) +
         (c.initialState ? "_S0" : "") + (c.dFinalState ? "_dST" : "") +
         layoutAndDecayName(c.layout, c.gMin) +
         (c.saved == Saved::Boundaries ? "_saved"
          : c.saved == Saved::Tiles    ? "_savedTiles"
                                       : "");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaBackwardNumerics,
    ::testing::Values(BackwardCase{37, 16, 12, 16, DType::F32, true, true,
                                   Layout::BTHD, -1, Saved::Nothing},
                      BackwardCase{70, 16, 40, 64, DType::F32, false, false,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{1, 8, 8, 16, DType::F32, true, true,
                                   Layout::BHTD, -1, Saved::Nothing},
                      BackwardCase{33, 32, 16, 32, DType::BF16, true, false,
                                   Layout::BTHD, -5, Saved::Nothing},
                      BackwardCase{63, 60, 64, 16, DType::F32, true, true,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{64, 64, 60, 32, DType::F32, false, true,
                                   Layout::BTHD, -20, Saved::Nothing},
                      BackwardCase{65, 64, 64, 64, DType::BF16, true, true,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{130, 128, 128, 64, DType::BF16, true, false,
                                   Layout::BTHD, -20, Saved::Nothing},
                      BackwardCase{130, 16, 16, 16, DType::F32, false, true,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{65, 60, 64, 16, DType::F32, true, true,
                                   Layout::BTHD, -20, Saved::Boundaries},
                      BackwardCase{130, 64, 60, 64, DType::BF16, true, true,
                                   Layout::BHTD, -1, Saved::Tiles},
                      BackwardCase{1, 16, 16, 32, DType::F32, true, false,
                                   Layout::BTHD, -1, Saved::Tiles},
                      BackwardCase{70, 12, 5, 16, DType::F32, false, true,
                                   Layout::BTHD, -20, Saved::Tiles},
                      BackwardCase{33, 32, 16, 32, DType::BF16, true, false,
                                   Layout::BHTD, -5, Saved::Boundaries},
                      // Mild decay: pairs across 16-token blocks dominate.
                      BackwardCase{100, 60, 40, 64, DType::BF16, true, true,
                                   Layout::BTHD, -0.05, Saved::Nothing},
                      BackwardCase{77, 40, 24, 32, DType::F16, false, true,
                                   Layout::BHTD, -0.05, Saved::Tiles},
                      BackwardCase{100, 12, 20, 64, DType::F32, true, true,
                                   Layout::BHTD, -0.05, Saved::Nothing},
                      // The feature extremes.
                      BackwardCase{19, 1, 1, 16, DType::F32, true, true,
                                   Layout::BTHD, -1, Saved::Nothing},
                      BackwardCase{20, 256, 256, 32, DType::BF16, true, true,
                                   Layout::BHTD, -1, Saved::Nothing},
                      // The wgmma walks at one token, and at an odd V
                      // whose rows are not 16-byte aligned.
                      BackwardCase{1, 40, 24, 16, DType::BF16, true, true,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{49, 72, 33, 16, DType::BF16, false, true,
                                   Layout::BTHD, -5, Saved::Nothing}),
    backwardCaseName);

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaBackwardNumericsOnSm80,
    ::testing::Values(BackwardCase{65, 64, 64, 64, DType::BF16, true, true,
                                   Layout::BHTD, -20, Saved::Nothing},
                      BackwardCase{49, 72, 33, 16, DType::BF16, false, true,
                                   Layout::BTHD, -5, Saved::Tiles}),
    backwardCaseName);

/// A valid call on random inputs (fixed seed) with every gradient NaN until
/// written.
struct BackwardCall {
  int64_t B, T, H, K, V;
  DeviceTensor q, k, v, g, beta, dO, dq, dk, dv, dg, dbeta, state;
  KdaBackwardInputs inputs;
  KdaBackwardOutputs outputs;
};

/// Small calls whose parts a test spoils: the fault is named and no
/// gradient is written.
class KdaBackwardContract : public ApiTest {
protected:
  static constexpr int64_t B = 1, T = 5, H = 2, K = 8, V = 4;
  BackwardCall call(int64_t T = 5, int64_t B = 1,
                    Layout layout = Layout::BTHD) {
    BackwardCall c{B,  T,  H,  K,  V,  {}, {}, {}, {}, {},
                   {}, {}, {}, {}, {}, {}, {}, {}, {}};
    reference::KdaShape shape{B, T, H, K, V};
    reference::KdaInputs in = randomKdaInputs(shape, -5, false, false, 7);
    auto put = [&](const std::vector<double> &data, int64_t width,
                   bool rank3 = false) {
      return sequence(data, B, T, H, width, DType::F32, layout, rank3);
    };
    auto unset = [&](int64_t width, bool rank3 = false) {
      return put(std::vector<double>(B * T * H * width, NAN), width, rank3);
    };
    c.q = put(in.q, K), c.k = put(in.k, K), c.v = put(in.v, V),
    c.g = put(in.g, K), c.beta = put(in.beta, 1, true),
    c.dO = put(randomNormal(B * T * H * V, 8, DType::F32), V);
    c.dq = unset(K), c.dk = unset(K), c.dv = unset(V), c.dg = unset(K),
    c.dbeta = unset(1, true);
    c.state = dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
    c.inputs = {{c.q.view, c.k.view, c.v.view, c.g.view, c.beta.view, {}},
                c.dO.view,
                {},
                {},
                {}};
    c.outputs = {c.dq.view, c.dk.view, c.dv.view, c.dg.view, c.dbeta.view, {}};
    return c;
  }
  void expectRejected(BackwardCall &c, const std::string &message) {
    try {
      kdaBackward(*context, c.inputs, c.outputs);
      FAIL() << "expected InvalidArgument: " << message;
    } catch (const InvalidArgument &error) {
      EXPECT_THAT(error.what(), HasSubstr(message));
    }
    for (const DeviceTensor *d : {&c.dq, &c.dk, &c.dg})
      for (double x : readSequence(*d, c.B, c.T, H, K))
        ASSERT_TRUE(std::isnan(x)) << "a gradient was written";
    for (double x : readSequence(c.dv, c.B, c.T, H, V))
      ASSERT_TRUE(std::isnan(x)) << "dv was written";
  }
};

TEST_F(KdaBackwardContract, SameInputsGiveBitIdenticalGradients) {
  BackwardCall first = call(70), second = call(70);
  kdaBackward(*context, first.inputs, first.outputs);
  kdaBackward(*context, second.inputs, second.outputs);
  for (auto [a, b, width] : {std::tuple{&first.dq, &second.dq, K},
                             std::tuple{&first.dk, &second.dk, K},
                             std::tuple{&first.dv, &second.dv, V},
                             std::tuple{&first.dg, &second.dg, K}}) {
    std::vector<double> x = readSequence(*a, B, 70, H, width),
                        y = readSequence(*b, B, 70, H, width);
    for (double value : x)
      ASSERT_TRUE(std::isfinite(value));
    EXPECT_EQ(x, y);
  }
  EXPECT_EQ(readSequence(first.dbeta, B, 70, H, 1),
            readSequence(second.dbeta, B, 70, H, 1));
}

/// A training step over 4096 tokens at the production shape (bf16,
/// K = V = 128, chunk 64) and the gate bounds: features 0 to 63 with g in
/// [−5, 0] (mean −2.5), 64 to 127 at g = −20 every step. The forward saves
/// its boundaries and tiles, the backward reads them; on sm_90 both walks
/// run on wgmma. Every gradient stays finite and within bf16's tolerance
/// of float64 reverse-mode differentiation.
TEST_F(KdaBackwardContract, GateBoundsOverFourThousandTokensMatchesFloat64) {
  const int64_t B = 1, T = 4096, H = 1, K = 128, V = 128, chunk = 64;
  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in = randomKdaInputs(shape, -5, true, true, 4097);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = K / 2; d < K; ++d)
      in.g[t * K + d] = -20;
  const std::vector<double> dOutput =
      randomNormal(B * T * H * V, 4098, DType::BF16);
  const std::vector<double> dFinal =
      randomNormal(B * H * K * V, 4099, DType::F32);
  const double scale = 1.0 / std::sqrt(double(K));
  reference::KdaGradients want =
      reference::kdaBackward(shape, in, scale, dOutput, dFinal);

  auto put = [&](const std::vector<double> &data, int64_t width, DType dtype,
                 bool rank3 = false) {
    return sequence(data, B, T, H, width, dtype, Layout::BTHD, rank3);
  };
  auto unset = [&](int64_t width, DType dtype, bool rank3 = false) {
    return put(std::vector<double>(B * T * H * width, NAN), width, dtype,
               rank3);
  };
  DeviceTensor q = put(in.q, K, DType::BF16), k = put(in.k, K, DType::BF16),
               v = put(in.v, V, DType::BF16), g = put(in.g, K, DType::F32),
               beta = put(in.beta, 1, DType::BF16, true),
               dO = put(dOutput, V, DType::BF16);
  DeviceTensor initial = dense(in.initialState, {B, H, K, V}),
               dFinalState = dense(dFinal, {B, H, K, V});
  DeviceTensor dq = unset(K, DType::BF16), dk = unset(K, DType::BF16),
               dv = unset(V, DType::BF16), dg = unset(K, DType::F32),
               dbeta = unset(1, DType::BF16, true),
               dInitial =
                   dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
  KdaOptions options;
  options.chunk = chunk;
  const KdaForwardInputs forward{q.view, k.view,    v.view,
                                 g.view, beta.view, initial.view};
  const KdaSavedShapes shapes = kdaSavedShapes(*context, forward, options);
  DeviceTensor boundaries =
      dense(std::vector<double>(shapes.boundaries[0] * B * H * K * V, NAN),
            shapes.boundaries, DType::BF16);
  DeviceTensor tiles =
      dense(std::vector<double>(shapes.tiles[0] * B * H * shapes.tiles[3], NAN),
            shapes.tiles);
  DeviceTensor output = unset(V, DType::BF16);
  kdaForward(*context, forward, {output.view, {}, boundaries.view, tiles.view},
             options);
  kdaBackward(*context,
              {forward, dO.view, dFinalState.view, boundaries.view, tiles.view},
              {dq.view, dk.view, dv.view, dg.view, dbeta.view, dInitial.view},
              options);

  auto matches = [&](const std::vector<double> &got,
                     const std::vector<double> &expected, const char *name) {
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](double x) {
      return std::isfinite(x);
    })) << name;
    EXPECT_LT(relativeError(got, expected), 2e-2) << name;
  };
  matches(readSequence(dq, B, T, H, K), want.dq, "dq");
  matches(readSequence(dk, B, T, H, K), want.dk, "dk");
  matches(readSequence(dv, B, T, H, V), want.dv, "dv");
  matches(readSequence(dg, B, T, H, K), want.dg, "dg");
  matches(readSequence(dbeta, B, T, H, 1), want.dbeta, "dbeta");
  matches(read(dInitial, B * H * K * V), want.dInitialState, "d_initial_state");
}

TEST_F(KdaBackwardContract, ChangingBatchLengthOrLayoutCompilesNothing) {
  BackwardCall first = call();
  kdaBackward(*context, first.inputs, first.outputs);
  Counters before = context->counters();
  for (auto [T, B, layout] :
       {std::tuple{1, 2, Layout::BTHD}, std::tuple{40, 3, Layout::BHTD},
        std::tuple{17, 1, Layout::BTHD}}) {
    BackwardCall next = call(T, B, layout);
    kdaBackward(*context, next.inputs, next.outputs);
  }
  Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheHits, before.planCacheHits + 3);
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(KdaBackwardContract, DOutputOfAnotherDtypeIsRejected) {
  BackwardCall c = call();
  c.inputs.dOutput.dtype = DType::BF16;
  expectRejected(c, "'d_output' must be f32, got bf16");
}

TEST_F(KdaBackwardContract, DgMustBeFloat32) {
  BackwardCall c = call();
  c.outputs.dg.dtype = DType::F16;
  expectRejected(c, "'dg' must be f32, got f16");
}

TEST_F(KdaBackwardContract, DInitialStateNeedsAnInitialState) {
  BackwardCall c = call();
  c.outputs.dInitialState = c.state.view;
  expectRejected(c,
                 "'d_initial_state' is given but there is no 'initial_state'");
}

TEST_F(KdaBackwardContract, DFinalStateOfTheWrongShapeIsRejected) {
  BackwardCall c = call();
  TensorView wrong = c.state.view;
  wrong.shape = {B, H, V, K};
  wrong.strides = {H * K * V, K * V, K, 1};
  c.inputs.dFinalState = wrong;
  expectRejected(c, "'d_final_state' must have shape [1, 2, 8, 4], got "
                    "[1, 2, 4, 8]");
}

TEST_F(KdaBackwardContract, GradientsOfTheWrongShapeAreRejected) {
  BackwardCall c = call();
  c.outputs.dbeta.shape = {B, T - 1, H};
  expectRejected(c, "'dbeta' must have shape [1, 5, 2], got [1, 4, 2]");
  BackwardCall d = call();
  d.outputs.dk.shape = {B, T, H, K - 1};
  expectRejected(d, "'dk' must have shape [1, 5, 2, 8], got [1, 5, 2, 7]");
}

TEST_F(KdaBackwardContract, BoundariesOfTheWrongChunkCountAreRejected) {
  BackwardCall c = call(40);
  DeviceTensor two =
      dense(std::vector<double>(2 * B * H * K * V, 0.0), {2, B, H, K, V});
  c.inputs.boundaries = two.view;
  KdaOptions chunk16;
  chunk16.chunk = 16;
  try {
    kdaBackward(*context, c.inputs, c.outputs, chunk16);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(),
                HasSubstr("'boundaries' must have shape [3, 1, 2, 8, 4], got "
                          "[2, 1, 2, 8, 4]"));
  }
  for (double x : readSequence(c.dq, B, 40, H, K))
    ASSERT_TRUE(std::isnan(x)) << "dq was written";
}

TEST_F(KdaBackwardContract, SavedTensorsWithoutAChunkFitTheChosenOne) {
  // Neither call names a chunk: the forward saves at the one
  // rudnn-specialize chooses (64: two chunks of T = 70), and the backward
  // reading them runs at it too, matching the backward that recomputes.
  BackwardCall saving = call(70), recomputing = call(70);
  const KdaSavedShapes shapes = kdaSavedShapes(*context, saving.inputs.forward);
  ASSERT_EQ(shapes.chunk, 64);
  ASSERT_EQ(shapes.boundaries[0], 2);
  DeviceTensor output = dense(std::vector<double>(B * 70 * H * V, 0.0),
                              {B, 70, H, V}),
               boundaries = dense(std::vector<double>(2 * B * H * K * V, NAN),
                                  shapes.boundaries),
               tiles =
                   dense(std::vector<double>(2 * B * H * shapes.tiles[3], NAN),
                         shapes.tiles);
  kdaForward(*context, saving.inputs.forward,
             {output.view, std::nullopt, boundaries.view, tiles.view});
  saving.inputs.boundaries = boundaries.view;
  saving.inputs.tiles = tiles.view;
  kdaBackward(*context, saving.inputs, saving.outputs);
  kdaBackward(*context, recomputing.inputs, recomputing.outputs);
  for (auto [a, b, width] : {std::tuple{&saving.dq, &recomputing.dq, K},
                             std::tuple{&saving.dk, &recomputing.dk, K},
                             std::tuple{&saving.dv, &recomputing.dv, V},
                             std::tuple{&saving.dg, &recomputing.dg, K}}) {
    std::vector<double> x = readSequence(*a, B, 70, H, width),
                        y = readSequence(*b, B, 70, H, width);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(x[i], y[i], 1e-5 * (1 + std::abs(y[i]))) << i;
  }
}

TEST_F(KdaBackwardContract, TilesComeWithTheBoundaries) {
  BackwardCall c = call();
  c.inputs.tiles = c.state.view;
  expectRejected(c, "saved 'tiles' come with the forward's 'boundaries'");
}

TEST_F(KdaBackwardContract, TilesOfAnotherWidthAreRejected) {
  BackwardCall c = call();
  KdaOptions chunk16;
  chunk16.chunk = 16;
  const KdaSavedShapes saved =
      kdaSavedShapes(*context, c.inputs.forward, chunk16);
  DeviceTensor boundaries =
      dense(std::vector<double>(B * H * K * V, 0.0), saved.boundaries);
  std::vector<int64_t> wide = saved.tiles;
  wide[3] += 4;
  DeviceTensor tiles = dense(std::vector<double>(B * H * wide[3], 0.0), wide);
  c.inputs.boundaries = boundaries.view;
  c.inputs.tiles = tiles.view;
  try {
    kdaBackward(*context, c.inputs, c.outputs, chunk16);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(), HasSubstr("'tiles' dim 3 (W) must be " +
                                        std::to_string(saved.tiles[3]) +
                                        " at K = 8, V = 4, "
                                        "chunk 16 and 'f32' inputs, got " +
                                        std::to_string(wide[3])));
  }
  for (double x : readSequence(c.dq, B, T, H, K))
    ASSERT_TRUE(std::isnan(x)) << "dq was written";
}

TEST_F(KdaBackwardContract, StridesPastInt64AreRejected) {
  BackwardCall c = call();
  c.inputs.dOutput.strides[2] = INT64_MAX / 3; // H = 2 (B = 1 would not)
  expectRejected(c, "'d_output' has an extent in bytes that overflows int64");
  BackwardCall d = call();
  d.outputs.dbeta.strides[1] = int64_t(1) << 62;
  expectRejected(d, "'dbeta' has a largest element offset");
}

TEST_F(KdaBackwardContract, GradientsOverlappingThemselvesAreRejected) {
  BackwardCall c = call();
  c.outputs.dg.strides[2] = 0;
  expectRejected(c, "'dg' overlaps itself");
}

TEST_F(KdaBackwardContract, GradientsOverlappingEachOtherAreRejected) {
  BackwardCall c = call();
  c.outputs.dk = c.outputs.dq;
  expectRejected(c, "'dk' overlaps 'dq'");
  BackwardCall d = call();
  d.outputs.dbeta.data = d.outputs.dv.data;
  expectRejected(d, "'dbeta' overlaps 'dv'");
}

TEST_F(KdaBackwardContract, GradientsOverlappingInputsAreRejected) {
  BackwardCall c = call();
  c.outputs.dq.data = c.inputs.forward.q.data;
  expectRejected(c, "'dq' overlaps 'q'");
  BackwardCall d = call();
  d.outputs.dv.data = d.inputs.dOutput.data;
  expectRejected(d, "'dv' overlaps 'd_output'");
  // No in-place pair in the backward: not even the states.
  BackwardCall e = call();
  DeviceTensor initial =
      dense(std::vector<double>(B * H * K * V, 0.5), {B, H, K, V});
  e.inputs.forward.initialState = initial.view;
  e.outputs.dInitialState = initial.view;
  expectRejected(e, "'d_initial_state' overlaps 'initial_state'");
  BackwardCall f = call();
  f.inputs.forward.initialState = initial.view;
  f.inputs.dFinalState = f.state.view;
  f.outputs.dInitialState = f.state.view;
  expectRejected(f, "'d_initial_state' overlaps 'd_final_state'");
  EXPECT_EQ(read(initial, B * H * K * V),
            std::vector<double>(B * H * K * V, 0.5));
}

TEST_F(KdaBackwardContract, BadForwardInputsAreRejectedAsInTheForward) {
  BackwardCall c = call();
  c.inputs.forward.g.data = nullptr;
  expectRejected(c, "'g' has no data pointer");
}

} // namespace
