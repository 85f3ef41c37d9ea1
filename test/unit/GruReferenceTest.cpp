//===- GruReferenceTest.cpp - The float64 GRU checked ---------------------===//
//
// The GRU reference against torch.nn.GRU's semantics: one step written out
// by hand (b_hn inside the reset product), the reverse direction as the
// forward one on the reversed sequence, and the backward against central
// differences of the forward on a case with everything (two bidirectional
// layers, packed lengths with an empty and a full entry, h0, biases, batch
// first) and a bare one.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/gru/GruReference.h"
#include "test/support/FiniteDifferences.h"
#include "test/support/KdaProblem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>

using namespace rudnn::reference;
using rudnn::test::normalValues;

namespace {

/// Random inputs of `s`: x, h0 where `states`, and the weights (3H rows,
/// scaled by H^-0.5 as torch initialises them; biases where `biases`).
GruInputs randomInputs(const LstmShape &s, bool biases, bool states,
                       std::mt19937 &random) {
  const int64_t H = s.hiddenSize;
  GruInputs in;
  in.x = normalValues(s.steps * s.batch * s.inputSize, random);
  if (states)
    in.h0 = normalValues(s.layers * s.directions * s.batch * H, random);
  const double scale = 1.0 / std::sqrt(double(H));
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const int64_t width = layer == 0 ? s.inputSize : s.directions * H;
      LstmWeights w{
          normalValues(3 * H * width, random), normalValues(3 * H * H, random),
          biases ? normalValues(3 * H, random) : std::vector<double>{},
          biases ? normalValues(3 * H, random) : std::vector<double>{}};
      for (auto *v : {&w.weightIh, &w.weightHh, &w.biasIh, &w.biasHh})
        for (double &x : *v)
          x *= scale;
      in.weights.push_back(std::move(w));
    }
  return in;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

TEST(GruReference, OneStepByHand) {
  // I = 1, H = 1: rows r, z, n.
  LstmShape s;
  GruInputs in;
  in.x = {0.7};
  in.h0 = {-0.3};
  in.weights = {{{0.1, -0.2, 0.3},
                 {0.5, 0.6, -0.7},
                 {0.01, 0.02, 0.03},
                 {-0.01, 0.05, 0.2}}};
  const LstmWeights &w = in.weights[0];
  auto both = [&](int r) {
    return w.weightIh[r] * 0.7 + w.biasIh[r] + w.weightHh[r] * -0.3 +
           w.biasHh[r];
  };
  const double reset = sigmoid(both(0)), update = sigmoid(both(1));
  const double candidate =
      std::tanh(w.weightIh[2] * 0.7 + w.biasIh[2] +
                reset * (w.weightHh[2] * -0.3 + w.biasHh[2]));
  const double h = (1 - update) * candidate + update * -0.3;
  const GruOutputs out = gruForward(s, in);
  EXPECT_NEAR(out.hN[0], h, 1e-15);
  EXPECT_NEAR(out.out[0], h, 1e-15);
  EXPECT_NEAR(out.gates[0], reset, 1e-15);
  EXPECT_NEAR(out.gates[3], w.weightHh[2] * -0.3 + w.biasHh[2], 1e-15);
}

TEST(GruReference, ReverseIsForwardOnTheReversedSequence) {
  std::mt19937 random(3);
  LstmShape both{5, 2, 3, 4, 1, 2, false};
  const GruInputs in = randomInputs(both, true, false, random);
  const GruOutputs two = gruForward(both, in);
  // The reverse direction alone over the reversed steps.
  LstmShape one = both;
  one.directions = 1;
  GruInputs reversed{{}, {}, {}, {in.weights[1]}};
  for (int64_t t = both.steps - 1; t >= 0; --t)
    reversed.x.insert(reversed.x.end(), in.x.begin() + t * 2 * 3,
                      in.x.begin() + (t + 1) * 2 * 3);
  const GruOutputs alone = gruForward(one, reversed);
  for (int64_t t = 0; t < both.steps; ++t)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_NEAR(two.out[(t * 2 + b) * 8 + 4 + j],
                    alone.out[((both.steps - 1 - t) * 2 + b) * 4 + j], 1e-14);
}

TEST(GruReference, BackwardMatchesFiniteDifferences) {
  for (bool everything : {true, false}) {
    SCOPED_TRACE(everything ? "biases, h0, lengths" : "bare");
    LstmShape s{3, 3, 3, 2, 2, 2, everything};
    std::mt19937 random(19);
    GruInputs in = randomInputs(s, everything, everything, random);
    if (everything)
      in.lengths = {3, 0, 2};
    const int64_t states = s.layers * s.directions * s.batch * s.hiddenSize;
    const GruOutputGradients dy{
        normalValues(s.steps * s.batch * s.directions * s.hiddenSize, random),
        normalValues(states, random)};
    auto loss = [&](const GruInputs &x) {
      const GruOutputs y = gruForward(s, x);
      return dot(y.out, dy.out) + dot(y.hN, dy.hN);
    };
    const GruGradients grads = gruBackward(s, in, dy);
    GruInputs moved = in;
    if (!everything) // a zero h0, given explicitly to be perturbed
      moved.h0.assign(states, 0.0);
    std::vector<rudnn::test::GradientCheck> checks = {
        {"x", &moved.x, &grads.x}, {"h0", &moved.h0, &grads.h0}};
    for (size_t k = 0; k < moved.weights.size(); ++k) {
      const std::string at = std::to_string(k);
      checks.push_back({"weight_ih " + at, &moved.weights[k].weightIh,
                        &grads.weights[k].weightIh});
      checks.push_back({"weight_hh " + at, &moved.weights[k].weightHh,
                        &grads.weights[k].weightHh});
      checks.push_back({"bias_ih " + at, &moved.weights[k].biasIh,
                        &grads.weights[k].biasIh});
      checks.push_back({"bias_hh " + at, &moved.weights[k].biasHh,
                        &grads.weights[k].biasHh});
    }
    rudnn::test::expectCentralDifferences(checks, [&] { return loss(moved); });
  }
}

} // namespace
