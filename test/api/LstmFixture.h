//===- LstmFixture.h - LSTM problems for the API tests ----------*- C++ -*-===//
//
// A stacked LSTM's (or GRU's) inputs drawn fresh (weights as torch.nn.LSTM
// and torch.nn.GRU initialise them), as float64 for the reference and as
// tensors for the API, shared by the forward's and the backward's tests.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TEST_API_LSTMFIXTURE_H
#define RUDNN_TEST_API_LSTMFIXTURE_H

#include "lib/reference/lstm/LstmReference.h"
#include "test/api/ApiFixture.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace rudnn::test {

struct LstmCase {
  DType dtype;
  int T, B, I, H, L;
  bool bidirectional = false, batchFirst = false, biases = true, initial = true,
       lengths = false;
  int units = 0;
  std::optional<bool> weightsOnChip = {}, perStep = {};
  bool gru = false; // 3 gate rows a unit, no cell state
  // f32 products in TF32 (the API's default); the cases ask for exact
  // fp32 unless they say so.
  bool tf32 = false;
};

/// A problem's float64 inputs (rounded to its dtype) and their tensors.
struct LstmProblem {
  reference::LstmShape shape;
  reference::LstmInputs in;
  std::vector<DeviceTensor> tensors; // keeps the weights alive
  LstmInputs inputs;
};

class LstmFixture : public ApiTest {
protected:
  LstmProblem problem(const LstmCase &c, unsigned seed) {
    std::mt19937 random(seed);
    LstmProblem p;
    reference::LstmShape &s = p.shape;
    s.steps = c.T;
    s.batch = c.B;
    s.inputSize = c.I;
    s.hiddenSize = c.H;
    s.layers = c.L;
    s.directions = c.bidirectional ? 2 : 1;
    s.batchFirst = c.batchFirst;
    const int64_t D = s.directions, states = c.L * D, G = c.gru ? 3 : 4;
    // torch.nn.LSTM's initialisation: uniform in ±1/√H.
    const double bound = 1.0 / std::sqrt(double(c.H));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    auto draw = [&](int64_t count) {
      std::vector<double> values(count);
      for (double &x : values)
        x = uniform(random);
      roundTo(c.dtype, {&values});
      return values;
    };
    auto place = [&](const std::vector<double> &values,
                     std::vector<int64_t> shape) {
      p.tensors.push_back(dense(values, std::move(shape), c.dtype));
      return p.tensors.back().view;
    };
    p.in.x = normalValues(int64_t(c.T) * c.B * c.I, random);
    roundTo(c.dtype, {&p.in.x});
    p.inputs.x = c.batchFirst ? place(p.in.x, {c.B, c.T, c.I})
                              : place(p.in.x, {c.T, c.B, c.I});
    if (c.initial) {
      p.in.h0 = normalValues(states * c.B * c.H, random);
      for (double &x : p.in.h0)
        x *= 0.5;
      roundTo(c.dtype, {&p.in.h0});
      p.inputs.h0 = place(p.in.h0, {states, c.B, c.H});
      if (!c.gru) {
        p.in.c0 = normalValues(states * c.B * c.H, random);
        roundTo(c.dtype, {&p.in.c0});
        p.inputs.c0 = place(p.in.c0, {states, c.B, c.H});
      }
    }
    for (int64_t layer = 0; layer < c.L; ++layer)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t in = layer ? D * c.H : c.I;
        const std::string suffix =
            "_l" + std::to_string(layer) + (d ? "_reverse" : "");
        reference::LstmWeights w;
        w.weightIh = draw(G * c.H * in);
        w.weightHh = draw(G * c.H * c.H);
        p.inputs.weights["weight_ih" + suffix] =
            place(w.weightIh, {G * c.H, in});
        p.inputs.weights["weight_hh" + suffix] =
            place(w.weightHh, {G * c.H, c.H});
        if (c.biases) {
          w.biasIh = draw(G * c.H);
          w.biasHh = draw(G * c.H);
          p.inputs.weights["bias_ih" + suffix] = place(w.biasIh, {G * c.H});
          p.inputs.weights["bias_hh" + suffix] = place(w.biasHh, {G * c.H});
        }
        p.in.weights.push_back(std::move(w));
      }
    if (c.lengths) {
      // Unsorted, one of them a single step and one all T.
      std::uniform_int_distribution<int> length(1, c.T);
      for (int b = 0; b < c.B; ++b)
        p.in.lengths.push_back(b == 0 ? 1 : b == 1 ? c.T : length(random));
      std::shuffle(p.in.lengths.begin(), p.in.lengths.end(), random);
      p.tensors.push_back(upload(bytesOf<int32_t>(p.in.lengths), DType::I32));
      p.tensors.back().view.shape = {c.B};
      p.tensors.back().view.strides = {1};
      p.inputs.lengths = p.tensors.back().view;
    }
    return p;
  }

  /// Runs `call` profiled; on emulation (a GPU's arch decides there)
  /// checks that it ran input projections, each on wgmma exactly when
  /// `wgmma`.
  template <typename Call> void expectProjections(Call call, bool wgmma) {
    context->resetProfile();
    context->setProfiling(true);
    call();
    context->setProfiling(false);
    if (testBackend() != BackendKind::Emulation)
      return;
    int projections = 0;
    for (const KernelProfile &kernel : context->profile())
      if (kernel.kernel.find("_projection_") != std::string::npos) {
        ++projections;
        EXPECT_EQ(kernel.kernel.find("_wgmma") != std::string::npos, wgmma)
            << kernel.kernel;
      }
    EXPECT_GT(projections, 0);
  }

  LstmOptions options(const LstmCase &c) {
    LstmOptions o;
    o.numLayers = c.L;
    o.bidirectional = c.bidirectional;
    o.batchFirst = c.batchFirst;
    o.units = c.units;
    o.weightsOnChip = c.weightsOnChip;
    o.perStep = c.perStep;
    o.allowTf32 = c.tf32;
    return o;
  }
};

} // namespace rudnn::test

#endif // RUDNN_TEST_API_LSTMFIXTURE_H
