//===- KdaInputTransformsApiTest.cpp - KDA's in-kernel input transforms ---===//
//
// rudnn::kdaForward and kdaBackward with inputs as models produce them:
// q and k L2-normalised inside, beta from logits, the gate from raw
// projections (softplus and bounded forms, with and without dt_bias), each
// alone and together; against the float64 recurrence on the transformed
// inputs, with every gradient (a_log's and dt_bias's too) taken through
// the transforms. Bad combinations refused. Built for the emulation
// backend and (label gpu) a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include <gmock/gmock.h>

#include <cmath>
#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct TransformCase {
  const char *name;
  bool qkL2Norm, betaLogits, gate, bias;
  float lowerBound;
  DType dtype;
};

void PrintTo(const TransformCase &, std::ostream *) {}

class KdaInputTransformsNumerics
    : public ApiTest,
      public ::testing::WithParamInterface<TransformCase> {};
class KdaInputTransforms : public ApiTest {};

TEST_P(KdaInputTransformsNumerics, ForwardAndGradientsMatchFloat64) {
  const TransformCase c = GetParam();
  const int64_t B = 2, T = 37, H = 2, K = 16, V = 16;
  const reference::KdaShape shape{B, T, H, K, V};
  std::mt19937 random(77);
  reference::KdaInputs raw = randomKdaInputs(shape, -1.0, true, false, 78);
  // Raw projections: q and k unnormalised, beta logits, the gate's raw
  // values around 0.
  raw.q = normalValues(raw.q.size(), random);
  raw.k = normalValues(raw.k.size(), random);
  if (c.betaLogits)
    raw.beta = normalValues(raw.beta.size(), random);
  if (c.gate)
    raw.g = normalValues(raw.g.size(), random);
  roundTo(c.dtype, {&raw.q, &raw.k, &raw.v, &raw.beta});
  reference::KdaInputTransforms t;
  t.qkL2Norm = c.qkL2Norm;
  t.betaLogits = c.betaLogits;
  t.lowerBound = c.lowerBound;
  if (c.gate) {
    t.aLog = normalValues(H, random);
    for (double &a : t.aLog)
      a *= 0.5;
    if (c.bias)
      t.dtBias = normalValues(H * K, random);
  }
  const double scale = 1.0 / std::sqrt(double(K));
  const reference::KdaInputs in = reference::transformKdaInputs(shape, raw, t);
  reference::KdaOutputs want = reference::kdaForward(shape, in, scale, 64);
  std::vector<double> dOutput = normalValues(B * T * H * V, random);
  roundTo(c.dtype, {&dOutput});
  reference::KdaGradients wantGrad =
      reference::kdaBackward(shape, in, scale, dOutput, {});
  // d_a_log sums B·T·K terms dg · ∂g/∂a_log of both signs: its rounding
  // errors scale with the terms (√Σ term², its sensitivity), not with the
  // sum. For the softplus gate ∂g/∂a_log = g.
  std::vector<double> aLogSensitivity;
  if (c.gate && c.lowerBound == 0) {
    aLogSensitivity.assign(H, 0.0);
    for (size_t e = 0; e < in.g.size(); ++e) {
      const double term = wantGrad.dg[e] * in.g[e];
      aLogSensitivity[e / K % H] += term * term;
    }
    for (double &x : aLogSensitivity)
      x = std::sqrt(x);
  }
  const reference::KdaParameterGradients wantParameters =
      reference::transformKdaGradients(shape, raw, t, wantGrad);

  auto rows = [&](const std::vector<double> &x, int64_t width, DType dtype,
                  bool rank3 = false) {
    return sequence(x, B, T, H, width, dtype, Layout::BTHD, rank3);
  };
  DeviceTensor q = rows(raw.q, K, c.dtype), k = rows(raw.k, K, c.dtype),
               v = rows(raw.v, V, c.dtype), g = rows(raw.g, K, DType::F32),
               beta = rows(raw.beta, 1, c.dtype, true),
               initial = dense(raw.initialState, {B, H, K, V});
  DeviceTensor aLog, dtBias;
  KdaForwardInputs inputs{q.view, k.view,    v.view,
                          g.view, beta.view, initial.view};
  if (c.gate) {
    aLog = dense(t.aLog, {H});
    inputs.aLog = aLog.view;
  }
  if (c.bias) {
    dtBias = dense(t.dtBias, {H, K});
    inputs.dtBias = dtBias.view;
  }
  KdaOptions options;
  options.qkL2Norm = c.qkL2Norm;
  options.betaLogits = c.betaLogits;
  if (c.lowerBound < 0)
    options.gateLowerBound = c.lowerBound;
  auto unset = [&](int64_t width, DType dtype, bool rank3 = false) {
    return rows(std::vector<double>(B * T * H * width, NAN), width, dtype,
                rank3);
  };
  DeviceTensor output = unset(V, c.dtype);
  kdaForward(*context, inputs, {output.view, {}, {}, {}}, options);
  const double tolerance = c.dtype == DType::F32 ? 1e-4 : 2e-2;
  EXPECT_LT(relativeError(readSequence(output, B, T, H, V), want.output),
            tolerance);

  DeviceTensor dO = rows(dOutput, V, c.dtype);
  DeviceTensor dq = unset(K, c.dtype), dk = unset(K, c.dtype),
               dv = unset(V, c.dtype), dg = unset(K, DType::F32),
               dbeta = unset(1, c.dtype, true),
               dS0 =
                   dense(std::vector<double>(B * H * K * V, NAN), {B, H, K, V}),
               dALog = dense(std::vector<double>(H, NAN), {H}),
               dDtBias = dense(std::vector<double>(H * K, NAN), {H, K});
  KdaBackwardOutputs outputs{dq.view, dk.view,    dv.view,
                             dg.view, dbeta.view, dS0.view};
  if (c.gate)
    outputs.dALog = dALog.view;
  if (c.bias)
    outputs.dDtBias = dDtBias.view;
  kdaBackward(*context, {inputs, dO.view, {}, {}, {}}, outputs, options);
  EXPECT_LT(relativeError(readSequence(dq, B, T, H, K), wantGrad.dq),
            tolerance);
  EXPECT_LT(relativeError(readSequence(dk, B, T, H, K), wantGrad.dk),
            tolerance);
  EXPECT_LT(relativeError(readSequence(dv, B, T, H, V), wantGrad.dv),
            tolerance);
  EXPECT_LT(relativeError(readSequence(dg, B, T, H, K), wantGrad.dg),
            tolerance);
  EXPECT_LT(relativeError(readSequence(dbeta, B, T, H, 1), wantGrad.dbeta),
            tolerance);
  EXPECT_LT(relativeError(read(dS0, B * H * K * V), wantGrad.dInitialState),
            tolerance);
  if (c.gate) {
    EXPECT_LT(reference::compare(read(dALog, H), wantParameters.dALog,
                                 aLogSensitivity)
                  .error,
              tolerance);
  }
  if (c.bias) {
    EXPECT_LT(relativeError(read(dDtBias, H * K), wantParameters.dDtBias),
              tolerance);
  }
}

std::string
transformCaseName(const ::testing::TestParamInfo<TransformCase> &info) {
  return std::string(info.param.name) + "_" + dtypeName(info.param.dtype);
}

INSTANTIATE_TEST_SUITE_P(
    AloneAndTogether, KdaInputTransformsNumerics,
    ::testing::Values(
        TransformCase{"qk_l2norm", true, false, false, false, 0, DType::F32},
        TransformCase{"beta_logits", false, true, false, false, 0, DType::F32},
        TransformCase{"gate", false, false, true, false, 0, DType::F32},
        TransformCase{"bounded_gate_bias", false, false, true, true, -5,
                      DType::F32},
        TransformCase{"all", true, true, true, true, 0, DType::F32},
        TransformCase{"all", true, true, true, true, 0, DType::BF16}),
    transformCaseName);

TEST_F(KdaInputTransforms, BadCombinationsAreRefused) {
  const int64_t B = 1, T = 4, H = 2, K = 16, V = 16;
  DeviceTensor q = sequence(std::vector<double>(B * T * H * K, 0.5), B, T, H, K,
                            DType::F32, Layout::BTHD);
  DeviceTensor beta = sequence(std::vector<double>(B * T * H, 0.5), B, T, H, 1,
                               DType::F32, Layout::BTHD, true);
  DeviceTensor bias = dense(std::vector<double>(H * K, 0.0), {H, K});
  DeviceTensor aLog = dense(std::vector<double>(H, 0.0), {H});
  DeviceTensor output = sequence(std::vector<double>(B * T * H * V, NAN), B, T,
                                 H, V, DType::F32, Layout::BTHD);
  KdaForwardInputs inputs{q.view, q.view, q.view, q.view, beta.view, {}};
  auto rejects = [&](const KdaForwardInputs &in, const KdaOptions &options,
                     const char *message) {
    EXPECT_THAT(
        [&] {
          kdaForward(*context, in, {output.view, {}, {}, {}}, options);
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  KdaForwardInputs biasAlone = inputs;
  biasAlone.dtBias = bias.view;
  rejects(biasAlone, {}, "'dt_bias' comes with 'a_log'");
  KdaOptions bounded;
  bounded.gateLowerBound = -5.f;
  rejects(inputs, bounded, "'gate_lower_bound' needs 'a_log'");
  KdaForwardInputs gated = inputs;
  gated.aLog = aLog.view;
  KdaOptions positive;
  positive.gateLowerBound = 1.f;
  rejects(gated, positive, "'gate_lower_bound' must be negative");
  DeviceTensor wrongLog = dense(std::vector<double>(3, 0.0), {3});
  KdaForwardInputs wrong = inputs;
  wrong.aLog = wrongLog.view;
  rejects(wrong, {}, "'a_log'");
  EXPECT_TRUE(std::isnan(read(output, 1)[0]));
}

} // namespace
