//===- KdaBackwardApiTest.cpp - rudnn::kdaBackward against float64 --------===//
//
// The backward through the JIT API on fresh random inputs: all six gradients
// against reverse-mode differentiation of the float64 token recurrence, both
// memory layouts, with and without the optional states, odd sizes; bad
// inputs rejected before anything is written. Built for the emulation
// backend and (label gpu) a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "test/api/KdaApiFixture.h"

#include <gmock/gmock.h>

#include <cmath>
#include <random>

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
};

void PrintTo(const BackwardCase &, std::ostream *) {}

std::vector<double> randomNormal(size_t n, unsigned seed, bool bf16) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n);
  for (double &value : x) {
    const float f = static_cast<float>(normal(random));
    value = bf16 ? fromBf16(toBf16(f)) : f;
  }
  return x;
}

class KdaBackwardNumerics : public KdaApiTest,
                            public ::testing::WithParamInterface<BackwardCase> {
};

TEST_P(KdaBackwardNumerics, MatchesFloat64Gradients) {
  const BackwardCase c = GetParam();
  const int64_t B = 2, H = 3, T = c.T, K = c.K, V = c.V;
  const bool bf16 = c.dtype == DType::BF16;
  reference::KdaShape shape{B, T, H, K, V};
  const unsigned seed = unsigned(T * 1000 + K * 10 + V);
  reference::KdaInputs in =
      randomKdaInputs(shape, c.gMin, c.initialState, bf16, seed);
  std::vector<double> dOutput = randomNormal(B * T * H * V, seed + 1, bf16);
  std::vector<double> dFinal;
  if (c.dFinalState)
    dFinal = randomNormal(B * H * K * V, seed + 2, false);
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
      {q.view, k.view, v.view, g.view, beta.view, {}}, dO.view, {}};
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
  kdaBackward(*context, inputs, outputs, options);

  const double tolerance = bf16 ? 2e-2 : 1e-4;
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
  return "T" + std::to_string(c.T) + "_K" + std::to_string(c.K) + "_V" +
         std::to_string(c.V) + "_C" + std::to_string(c.chunk) + "_" +
         dtypeName(c.dtype) + (c.initialState ? "_S0" : "") +
         (c.dFinalState ? "_dST" : "") +
         (c.layout == Layout::BHTD ? "_BHTD" : "_BTHD") +
         (c.gMin <= -20 ? "_steep" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, KdaBackwardNumerics,
    ::testing::Values(
        BackwardCase{37, 16, 12, 16, DType::F32, true, true, Layout::BTHD, -1},
        BackwardCase{70, 16, 40, 64, DType::F32, false, false, Layout::BHTD,
                     -20},
        BackwardCase{1, 8, 8, 16, DType::F32, true, true, Layout::BHTD, -1},
        BackwardCase{33, 32, 16, 32, DType::BF16, true, false, Layout::BTHD,
                     -5}),
    backwardCaseName);

/// One valid call whose parts a test spoils: the fault is named and no
/// gradient is written.
class KdaBackwardContract : public KdaApiTest {
protected:
  static constexpr int64_t B = 1, T = 5, H = 2, K = 8, V = 4;
  void SetUp() override {
    KdaApiTest::SetUp();
    if (IsSkipped())
      return;
    auto tensor = [&](int64_t width, DType dtype, bool rank3 = false) {
      return sequence(std::vector<double>(B * T * H * width, 0.25), B, T, H,
                      width, dtype, Layout::BTHD, rank3);
    };
    q = tensor(K, DType::F32), k = tensor(K, DType::F32),
    v = tensor(V, DType::F32), g = tensor(K, DType::F32),
    beta = tensor(1, DType::F32, true), dO = tensor(V, DType::F32);
    auto unset = [&](int64_t width, bool rank3 = false) {
      return sequence(std::vector<double>(B * T * H * width, NAN), B, T, H,
                      width, DType::F32, Layout::BTHD, rank3);
    };
    dq = unset(K), dk = unset(K), dv = unset(V), dg = unset(K),
    dbeta = unset(1, true);
    state = dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V});
    inputs = {{q.view, k.view, v.view, g.view, beta.view, {}}, dO.view, {}};
    outputs = {dq.view, dk.view, dv.view, dg.view, dbeta.view, {}};
  }
  void expectRejected(const std::string &message) {
    try {
      kdaBackward(*context, inputs, outputs);
      FAIL() << "expected InvalidArgument: " << message;
    } catch (const InvalidArgument &error) {
      EXPECT_THAT(error.what(), HasSubstr(message));
    }
    for (double x : readSequence(dq, B, T, H, K))
      ASSERT_TRUE(std::isnan(x)) << "dq was written";
  }
  DeviceTensor q, k, v, g, beta, dO, dq, dk, dv, dg, dbeta, state;
  KdaBackwardInputs inputs;
  KdaBackwardOutputs outputs;
};

TEST_F(KdaBackwardContract, ValidCallWritesEveryGradient) {
  kdaBackward(*context, inputs, outputs);
  for (double x : readSequence(dq, B, T, H, K))
    EXPECT_TRUE(std::isfinite(x));
  for (double x : readSequence(dbeta, B, T, H, 1))
    EXPECT_TRUE(std::isfinite(x));
}

TEST_F(KdaBackwardContract, DOutputOfAnotherDtypeIsRejected) {
  inputs.dOutput.dtype = DType::BF16;
  expectRejected("'d_output' must be f32, got bf16");
}

TEST_F(KdaBackwardContract, DgMustBeFloat32) {
  outputs.dg.dtype = DType::F16;
  expectRejected("'dg' must be f32, got f16");
}

TEST_F(KdaBackwardContract, DInitialStateNeedsAnInitialState) {
  outputs.dInitialState = state.view;
  expectRejected("'d_initial_state' is given but there is no 'initial_state'");
}

TEST_F(KdaBackwardContract, DFinalStateOfTheWrongShapeIsRejected) {
  TensorView wrong = state.view;
  wrong.shape = {B, H, V, K};
  wrong.strides = {H * K * V, K * V, K, 1};
  inputs.dFinalState = wrong;
  expectRejected("'d_final_state' must have shape [1, 2, 8, 4], got "
                 "[1, 2, 4, 8]");
}

TEST_F(KdaBackwardContract, DbetaOfTheWrongLengthIsRejected) {
  outputs.dbeta.shape = {B, T - 1, H};
  expectRejected("'dbeta' must have shape [1, 5, 2], got [1, 4, 2]");
}

} // namespace
