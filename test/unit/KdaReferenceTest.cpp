//===- KdaReferenceTest.cpp - The float64 KDA references checked ----------===//
//
// The reference gradient against central finite differences of the float64
// forward, for every input; and the forward against a hand-evaluated step.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/kda/KdaReference.h"
#include "lib/reference/kda/KdaChunked.h"

#include "rudnn/errors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

using namespace rudnn::reference;

namespace {

/// ⟨dO, O⟩ + ⟨dS, S_T⟩ of the forward on `in`.
double loss(const KdaShape &shape, const KdaInputs &in, double scale,
            const std::vector<double> &dO, const std::vector<double> &dS) {
  KdaOutputs out = kdaForward(shape, in, scale, 16);
  double total = 0;
  for (size_t i = 0; i < dO.size(); ++i)
    total += dO[i] * out.output[i];
  for (size_t i = 0; i < dS.size(); ++i)
    total += dS[i] * out.finalState[i];
  return total;
}

TEST(KdaReference, GradientMatchesFiniteDifferences) {
  const KdaShape shape{2, 5, 2, 3, 4};
  const int64_t rows = 2 * 5 * 2;
  std::mt19937 random(11);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);
  auto draw = [&](size_t n, double mean, double spread) {
    std::vector<double> x(n);
    for (double &e : x)
      e = mean + spread * normal(random);
    return x;
  };
  KdaInputs in;
  in.q = draw(rows * 3, 0, 1);
  in.k = draw(rows * 3, 0, 0.5);
  in.v = draw(rows * 4, 0, 1);
  in.g = draw(rows * 3, -0.5, 0.3);
  in.beta.resize(rows);
  for (double &b : in.beta)
    b = 0.1 + 0.8 * unit(random);
  in.initialState = draw(2 * 2 * 3 * 4, 0, 0.5);
  const double scale = 0.7;
  const std::vector<double> dO = draw(rows * 4, 0, 1);
  const std::vector<double> dS = draw(2 * 2 * 3 * 4, 0, 1);

  KdaGradients grad = kdaBackward(shape, in, scale, dO, dS);
  const double step = 1e-6;
  auto check = [&](std::vector<double> KdaInputs::*field,
                   const std::vector<double> &analytic, const char *name) {
    double worst = 0;
    for (size_t i = 0; i < analytic.size(); ++i) {
      KdaInputs plus = in, minus = in;
      (plus.*field)[i] += step;
      (minus.*field)[i] -= step;
      double numeric = (loss(shape, plus, scale, dO, dS) -
                        loss(shape, minus, scale, dO, dS)) /
                       (2 * step);
      worst = std::max(worst, std::abs(numeric - analytic[i]) /
                                  std::max(1.0, std::abs(numeric)));
    }
    EXPECT_LT(worst, 1e-6) << name;
  };
  check(&KdaInputs::q, grad.dq, "dq");
  check(&KdaInputs::k, grad.dk, "dk");
  check(&KdaInputs::v, grad.dv, "dv");
  check(&KdaInputs::g, grad.dg, "dg");
  check(&KdaInputs::beta, grad.dbeta, "dbeta");
  check(&KdaInputs::initialState, grad.dInitialState, "dinitial_state");
}

// The input transforms' gradients (L2 norm, sigmoid, both gate forms, the
// gate's parameters) against central differences of the transformed loss.
TEST(KdaReference, TransformGradientsMatchFiniteDifferences) {
  const KdaShape shape{1, 6, 2, 3, 2};
  const int64_t rows = 6 * 2;
  std::mt19937 random(12);
  std::normal_distribution<double> normal;
  auto draw = [&](size_t n, double mean, double spread) {
    std::vector<double> x(n);
    for (double &e : x)
      e = mean + spread * normal(random);
    return x;
  };
  KdaInputs raw{draw(rows * 3, 0, 1), draw(rows * 3, 0, 1),
                draw(rows * 2, 0, 1), draw(rows * 3, 0, 1),
                draw(rows, 0, 1),     draw(2 * 3 * 2, 0, 0.5)};
  const double scale = 0.6;
  const std::vector<double> dO = draw(rows * 2, 0, 1);
  const std::vector<double> dS = draw(2 * 3 * 2, 0, 1);
  for (double lowerBound : {0.0, -5.0}) {
    KdaInputTransforms t{true, true, draw(2, 0, 0.5), draw(2 * 3, 0, 0.5),
                         lowerBound};
    auto transformedLoss = [&](const KdaInputs &in,
                               const KdaInputTransforms &with) {
      return loss(shape, transformKdaInputs(shape, in, with), scale, dO, dS);
    };
    KdaGradients grad =
        kdaBackward(shape, transformKdaInputs(shape, raw, t), scale, dO, dS);
    const KdaParameterGradients parameters =
        transformKdaGradients(shape, raw, t, grad);
    const double step = 1e-6;
    auto central = [&](auto perturb) {
      return (perturb(step) - perturb(-step)) / (2 * step);
    };
    auto expectNear = [&](double numeric, double analytic, const char *name) {
      EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
          << name << " (lower bound " << lowerBound << ")";
    };
    for (auto [field, analytic, name] :
         {std::tuple{&KdaInputs::q, &grad.dq, "dq"},
          std::tuple{&KdaInputs::k, &grad.dk, "dk"},
          std::tuple{&KdaInputs::g, &grad.dg, "dg"},
          std::tuple{&KdaInputs::beta, &grad.dbeta, "dbeta"}})
      for (size_t i = 0; i < analytic->size(); ++i)
        expectNear(central([&, field = field](double h) {
                     KdaInputs in = raw;
                     (in.*field)[i] += h;
                     return transformedLoss(in, t);
                   }),
                   (*analytic)[i], name);
    for (auto [field, analytic, name] :
         {std::tuple{&KdaInputTransforms::aLog, &parameters.dALog, "d_a_log"},
          std::tuple{&KdaInputTransforms::dtBias, &parameters.dDtBias,
                     "d_dt_bias"}})
      for (size_t i = 0; i < analytic->size(); ++i)
        expectNear(central([&, field = field](double h) {
                     KdaInputTransforms with = t;
                     (with.*field)[i] += h;
                     return transformedLoss(raw, with);
                   }),
                   (*analytic)[i], name);
  }
}

TEST(KdaReference, OneStepByHand) {
  // K = V = 1: S = e^g·S0 + k·β(v − e^g·S0·k); o = scale·S·q.
  KdaInputs in{{2.0}, {0.5}, {3.0}, {-0.25}, {0.4}, {1.5}};
  KdaOutputs out = kdaForward({1, 1, 1, 1, 1}, in, 0.5, 16);
  const double decayed = std::exp(-0.25) * 1.5;
  const double state = decayed + 0.5 * 0.4 * (3.0 - decayed * 0.5);
  EXPECT_DOUBLE_EQ(out.finalState[0], state);
  EXPECT_DOUBLE_EQ(out.output[0], 0.5 * state * 2.0);
  EXPECT_DOUBLE_EQ(out.boundaries[0], 1.5);
}

} // namespace

namespace {

/// The chunked backward (what the kernels implement) against the token
/// recurrence's gradient, over tails, chunk sizes and steep decays.
TEST(KdaReference, ChunkedBackwardMatchesTokenBackward) {
  struct Case {
    int64_t T, K, V, chunk;
    double gMin;
  };
  for (const Case &c :
       {Case{1, 3, 2, 16, -1}, Case{17, 4, 3, 16, -1}, Case{40, 5, 6, 16, -20},
        Case{33, 3, 5, 32, -3}, Case{64, 2, 2, 64, -0.5}}) {
    const KdaShape shape{2, c.T, 2, c.K, c.V};
    const int64_t rows = 2 * c.T * 2;
    std::mt19937 random(unsigned(c.T * 7 + c.K));
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> unit(0, 1);
    auto draw = [&](size_t n) {
      std::vector<double> x(n);
      for (double &e : x)
        e = normal(random);
      return x;
    };
    KdaInputs in;
    in.q = draw(rows * c.K);
    in.k = draw(rows * c.K);
    for (int64_t r = 0; r < rows; ++r) { // L2-normalised keys
      double norm = 0;
      for (int64_t d = 0; d < c.K; ++d)
        norm += in.k[r * c.K + d] * in.k[r * c.K + d];
      for (int64_t d = 0; d < c.K; ++d)
        in.k[r * c.K + d] /= std::sqrt(norm);
    }
    in.v = draw(rows * c.V);
    in.g.resize(rows * c.K);
    for (double &g : in.g)
      g = c.gMin * unit(random);
    in.beta.resize(rows);
    for (double &b : in.beta)
      b = 0.05 + 0.9 * unit(random);
    in.initialState = draw(2 * 2 * c.K * c.V);
    const std::vector<double> dO = draw(rows * c.V);
    const std::vector<double> dS = draw(2 * 2 * c.K * c.V);

    KdaGradients want = kdaBackward(shape, in, 0.6, dO, dS);
    KdaGradients got = kdaBackwardChunked(shape, in, 0.6, dO, dS, c.chunk);
    auto close = [](const std::vector<double> &a,
                    const std::vector<double> &b) {
      double worst = 0;
      for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst,
                         std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
      return worst;
    };
    EXPECT_LT(close(got.dq, want.dq), 1e-10) << "dq T=" << c.T;
    EXPECT_LT(close(got.dk, want.dk), 1e-10) << "dk T=" << c.T;
    EXPECT_LT(close(got.dv, want.dv), 1e-10) << "dv T=" << c.T;
    EXPECT_LT(close(got.dg, want.dg), 1e-10) << "dg T=" << c.T;
    EXPECT_LT(close(got.dbeta, want.dbeta), 1e-10) << "dbeta T=" << c.T;
    EXPECT_LT(close(got.dInitialState, want.dInitialState), 1e-10)
        << "dS0 T=" << c.T;
  }
}

} // namespace

// Offsets outside the contract are refused, not indexed: the tools' checks
// run the reference on whatever the caller passed.
TEST(KdaVarlenReference, RefusesOffsetsOutsideTheContract) {
  KdaShape shape;
  shape.length = 6;
  shape.featureK = shape.featureV = 2;
  KdaInputs in;
  in.q.assign(12, 0.1);
  in.k.assign(12, 0.1);
  in.v.assign(12, 0.1);
  in.g.assign(12, -0.1);
  in.beta.assign(6, 0.5);
  for (const std::vector<double> &offsets : std::vector<std::vector<double>>{
           {0, 3, 7}, {0, 4, 2, 6}, {0, -1, 6}, {1, 3, 6}, {0, 3, 5}})
    EXPECT_THROW(kdaVarlenForward(shape, in, offsets, 0.5, 0),
                 rudnn::InvalidArgument);
  EXPECT_NO_THROW(kdaVarlenForward(shape, in, {0, 0, 6}, 0.5, 0));
}
