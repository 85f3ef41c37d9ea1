//===- LstmReferenceTest.cpp - The float64 LSTM checked -------------------===//
//
// The LSTM reference against what PyTorch's semantics imply: one cell step
// written out by hand; the reverse direction is the forward one on the
// reversed sequence; a stack of layers is its layers run one after the
// other; batch-first is the time-major transposed; and a packed entry of
// length ℓ is that entry alone over ℓ steps, zero after. The backward
// against central differences of the forward.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/lstm/LstmReference.h"
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

/// Random weights (scaled by H^-0.5, as torch initialises them) for every
/// layer and direction of `s`, biases where `biases`.
std::vector<LstmWeights> randomWeights(const LstmShape &s, bool biases,
                                       std::mt19937 &random) {
  const double scale = 1.0 / std::sqrt(double(s.hiddenSize));
  const int64_t H = s.hiddenSize;
  std::vector<LstmWeights> weights;
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const int64_t in = layer == 0 ? s.inputSize : s.directions * H;
      LstmWeights w{
          normalValues(4 * H * in, random), normalValues(4 * H * H, random),
          biases ? normalValues(4 * H, random) : std::vector<double>{},
          biases ? normalValues(4 * H, random) : std::vector<double>{}};
      for (auto *v : {&w.weightIh, &w.weightHh, &w.biasIh, &w.biasHh})
        for (double &x : *v)
          x *= scale;
      weights.push_back(std::move(w));
    }
  return weights;
}

/// Random inputs of `s` drawn in turn: x, h0 and c0 where `states`, then
/// the weights (biases where `biases`).
LstmInputs randomInputs(const LstmShape &s, bool biases, bool states,
                        std::mt19937 &random) {
  const int64_t stateCount = s.layers * s.directions * s.batch * s.hiddenSize;
  LstmInputs in;
  in.x = normalValues(s.steps * s.batch * s.inputSize, random);
  if (states) {
    in.h0 = normalValues(stateCount, random);
    in.c0 = normalValues(stateCount, random);
  }
  in.weights = randomWeights(s, biases, random);
  return in;
}

void expectNear(const std::vector<double> &got,
                const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-12) << i;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(LstmReference, OneStepByHand) {
  // I = 1, H = 1: gates i, f, g, o from w_ih x + w_hh h0 + b_ih + b_hh.
  LstmShape s;
  LstmInputs in;
  in.x = {0.7};
  in.h0 = {-0.3};
  in.c0 = {0.5};
  in.weights = {{{0.1, -0.2, 0.3, 0.4},
                 {0.5, 0.6, -0.7, 0.8},
                 {0.01, 0.02, 0.03, 0.04},
                 {-0.01, 0.05, 0.0, 0.1}}};
  auto gate = [&](int r) {
    return in.weights[0].weightIh[r] * 0.7 + in.weights[0].weightHh[r] * -0.3 +
           in.weights[0].biasIh[r] + in.weights[0].biasHh[r];
  };
  const double c =
      sigmoid(gate(1)) * 0.5 + sigmoid(gate(0)) * std::tanh(gate(2));
  const double h = sigmoid(gate(3)) * std::tanh(c);
  const LstmOutputs out = lstmForward(s, in);
  EXPECT_NEAR(out.cN[0], c, 1e-15);
  EXPECT_NEAR(out.hN[0], h, 1e-15);
  EXPECT_NEAR(out.out[0], h, 1e-15);
}

TEST(LstmReference, ReverseIsForwardOnTheReversedSequence) {
  std::mt19937 random(3);
  LstmShape both{5, 2, 3, 4, 1, 2, false};
  const LstmInputs in = randomInputs(both, true, false, random);
  const LstmOutputs full = lstmForward(both, in);
  // The reverse weights, forward, over x reversed in time.
  LstmShape one = both;
  one.directions = 1;
  LstmInputs reversed;
  reversed.weights = {in.weights[1]};
  for (int64_t t = 4; t >= 0; --t)
    reversed.x.insert(reversed.x.end(), in.x.begin() + t * 6,
                      in.x.begin() + (t + 1) * 6);
  const LstmOutputs alone = lstmForward(one, reversed);
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 4; ++j)
        ASSERT_NEAR(full.out[(t * 2 + b) * 8 + 4 + j],
                    alone.out[((4 - t) * 2 + b) * 4 + j], 1e-12);
  expectNear({full.hN.begin() + 8, full.hN.end()}, alone.hN);
  expectNear({full.cN.begin() + 8, full.cN.end()}, alone.cN);
}

TEST(LstmReference, StackedLayersAreTheirLayersInTurn) {
  std::mt19937 random(5);
  LstmShape s{6, 3, 5, 4, 2, 2, false};
  const LstmInputs in = randomInputs(s, true, true, random);
  const LstmOutputs stacked = lstmForward(s, in);
  LstmShape first = s;
  first.layers = 1;
  LstmInputs layer0{in.x,
                    {in.h0.begin(), in.h0.begin() + 24},
                    {in.c0.begin(), in.c0.begin() + 24},
                    {},
                    {in.weights[0], in.weights[1]}};
  const LstmOutputs out0 = lstmForward(first, layer0);
  LstmShape second = first;
  second.inputSize = 8;
  LstmInputs layer1{out0.out,
                    {in.h0.begin() + 24, in.h0.end()},
                    {in.c0.begin() + 24, in.c0.end()},
                    {},
                    {in.weights[2], in.weights[3]}};
  const LstmOutputs out1 = lstmForward(second, layer1);
  expectNear(stacked.out, out1.out);
  std::vector<double> h = out0.hN, c = out0.cN;
  h.insert(h.end(), out1.hN.begin(), out1.hN.end());
  c.insert(c.end(), out1.cN.begin(), out1.cN.end());
  expectNear(stacked.hN, h);
  expectNear(stacked.cN, c);
}

TEST(LstmReference, BatchFirstIsTimeMajorTransposed) {
  std::mt19937 random(7);
  LstmShape s{4, 3, 2, 5, 2, 2, false};
  const LstmInputs in = randomInputs(s, false, false, random);
  const LstmOutputs timeMajor = lstmForward(s, in);
  LstmShape first = s;
  first.batchFirst = true;
  LstmInputs transposed = in;
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t k = 0; k < 2; ++k)
        transposed.x[(b * 4 + t) * 2 + k] = in.x[(t * 3 + b) * 2 + k];
  const LstmOutputs batchFirst = lstmForward(first, transposed);
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t j = 0; j < 10; ++j)
        ASSERT_EQ(batchFirst.out[(b * 4 + t) * 10 + j],
                  timeMajor.out[(t * 3 + b) * 10 + j]);
  EXPECT_EQ(batchFirst.hN, timeMajor.hN);
  EXPECT_EQ(batchFirst.cN, timeMajor.cN);
}

TEST(LstmReference, PackedEntriesRunTheirOwnStepsAlone) {
  std::mt19937 random(9);
  const int64_t T = 7, B = 3, I = 3, H = 4, L = 2, D = 2;
  LstmShape s{T, B, I, H, L, D, false};
  LstmInputs in = randomInputs(s, true, true, random);
  in.lengths = {3, 7, 1}; // unsorted, one of a single step
  const LstmOutputs packed = lstmForward(s, in);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length = static_cast<int64_t>(in.lengths[b]);
    LstmShape alone{length, 1, I, H, L, D, false};
    LstmInputs entry;
    entry.weights = in.weights;
    for (int64_t t = 0; t < length; ++t)
      entry.x.insert(entry.x.end(), in.x.begin() + (t * B + b) * I,
                     in.x.begin() + (t * B + b + 1) * I);
    for (int64_t state = 0; state < L * D; ++state) {
      entry.h0.insert(entry.h0.end(), in.h0.begin() + (state * B + b) * H,
                      in.h0.begin() + (state * B + b + 1) * H);
      entry.c0.insert(entry.c0.end(), in.c0.begin() + (state * B + b) * H,
                      in.c0.begin() + (state * B + b + 1) * H);
    }
    const LstmOutputs want = lstmForward(alone, entry);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < D * H; ++j)
        ASSERT_NEAR(packed.out[(t * B + b) * D * H + j],
                    t < length ? want.out[t * D * H + j] : 0.0, 1e-12)
            << "b " << b << " t " << t;
    for (int64_t state = 0; state < L * D; ++state)
      for (int64_t j = 0; j < H; ++j) {
        ASSERT_NEAR(packed.hN[(state * B + b) * H + j], want.hN[state * H + j],
                    1e-12);
        ASSERT_NEAR(packed.cN[(state * B + b) * H + j], want.cN[state * H + j],
                    1e-12);
      }
  }
}

/// Σ a · b.
double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

// The backward against central differences of the forward, element by
// element of every input, on a tiny case with everything: two
// bidirectional layers, packed lengths with an empty and a full entry,
// initial states, biases, batch-first (and, without biases or initial
// states, the gradients the forward still defines).
TEST(LstmReference, BackwardMatchesFiniteDifferences) {
  for (bool everything : {true, false}) {
    SCOPED_TRACE(everything ? "biases, states, lengths" : "bare");
    LstmShape s{3, 3, 3, 2, 2, 2, everything};
    std::mt19937 random(9);
    LstmInputs in = randomInputs(s, everything, everything, random);
    if (everything)
      in.lengths = {3, 0, 2};
    const int64_t states = s.layers * s.directions * s.batch * s.hiddenSize;
    const LstmOutputGradients dy{
        normalValues(s.steps * s.batch * s.directions * s.hiddenSize, random),
        normalValues(states, random), normalValues(states, random)};
    auto loss = [&](const LstmInputs &x) {
      const LstmOutputs y = lstmForward(s, x);
      return dot(y.out, dy.out) + dot(y.hN, dy.hN) + dot(y.cN, dy.cN);
    };
    const LstmGradients grads = lstmBackward(s, in, dy);
    // Each input, its gradient, and where the perturbed copy keeps it.
    LstmInputs moved = in;
    if (!everything) // zero states, given explicitly to be perturbed
      moved.h0.assign(states, 0.0), moved.c0.assign(states, 0.0);
    std::vector<rudnn::test::GradientCheck> checks = {
        {"x", &moved.x, &grads.x},
        {"h0", &moved.h0, &grads.h0},
        {"c0", &moved.c0, &grads.c0}};
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
