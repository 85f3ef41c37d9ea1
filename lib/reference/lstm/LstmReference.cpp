//===- LstmReference.cpp - A multi-layer LSTM in float64 ------------------===//
//
// The forward as torch.nn.LSTM computes it, and its backpropagation through
// time: the forward runs again keeping each step's gates and states, then
// each layer, from the last, takes its outputs' gradients (the layer
// above's input gradients) and walks each direction's steps backwards:
//
//   dh = dout_t + dh_next        dc = dc_next + dh · o · (1 − tanh² c)
//   dai = dc · g · i(1 − i)      daf = dc · c_prev · f(1 − f)
//   dag = dc · i · (1 − g²)      dao = dh · tanh c · o(1 − o)
//   dh_prev = W_hhᵀ da           dc_prev = dc · f        dx_t += W_ihᵀ da
//
// summing da ⊗ x_t, da ⊗ h_prev and da over the steps into the weights'
// and biases' gradients.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/lstm/LstmReference.h"

#include <algorithm>
#include <cmath>

using namespace rudnn::reference;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// One direction's forward over a layer's input, each step's values kept:
/// [T, B, H] each, time-major; only an entry's steps below its length are
/// written.
struct Trace {
  std::vector<double> i, f, g, o, c, hPrev, cPrev;
};

/// One direction of one layer over `input` [T, B, width] (time-major) from
/// h and c [B, H]: writes its H columns at `column` of `out`
/// [T, B, outWidth], records `trace`, and leaves its last state at hN and
/// cN ([B, H]) when given.
void traceDirection(const LstmShape &s, const LstmWeights &w,
                    const std::vector<double> &input, int64_t width,
                    const std::vector<double> &lengths, bool reverse,
                    std::vector<double> &out, int64_t outWidth, int64_t column,
                    std::vector<double> h, std::vector<double> c, Trace &trace,
                    double *hN = nullptr, double *cN = nullptr) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize;
  for (std::vector<double> *v : {&trace.i, &trace.f, &trace.g, &trace.o,
                                 &trace.c, &trace.hPrev, &trace.cPrev})
    v->assign(T * B * H, 0.0);
  std::vector<double> gates(4 * H);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length =
        lengths.empty() ? T : static_cast<int64_t>(lengths[b]);
    for (int64_t n = 0; n < length; ++n) {
      const int64_t t = reverse ? length - 1 - n : n;
      const double *x = &input[(t * B + b) * width];
      double *hb = &h[b * H], *cb = &c[b * H];
      for (int64_t r = 0; r < 4 * H; ++r) {
        double sum = (w.biasIh.empty() ? 0.0 : w.biasIh[r]) +
                     (w.biasHh.empty() ? 0.0 : w.biasHh[r]);
        for (int64_t k = 0; k < width; ++k)
          sum += w.weightIh[r * width + k] * x[k];
        for (int64_t k = 0; k < H; ++k)
          sum += w.weightHh[r * H + k] * hb[k];
        gates[r] = sum;
      }
      for (int64_t j = 0; j < H; ++j) {
        const int64_t at = (t * B + b) * H + j;
        trace.hPrev[at] = hb[j];
        trace.cPrev[at] = cb[j];
        trace.i[at] = sigmoid(gates[j]);
        trace.f[at] = sigmoid(gates[H + j]);
        trace.g[at] = std::tanh(gates[2 * H + j]);
        trace.o[at] = sigmoid(gates[3 * H + j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        const int64_t at = (t * B + b) * H + j;
        cb[j] = trace.f[at] * cb[j] + trace.i[at] * trace.g[at];
        hb[j] = trace.o[at] * std::tanh(cb[j]);
        trace.c[at] = cb[j];
        out[(t * B + b) * outWidth + column + j] = hb[j];
      }
    }
  }
  if (hN)
    std::copy(h.begin(), h.end(), hN);
  if (cN)
    std::copy(c.begin(), c.end(), cN);
}

} // namespace

std::vector<double> rudnn::reference::swapLeading(const std::vector<double> &x,
                                                  int64_t first, int64_t second,
                                                  int64_t width) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < first; ++i)
    for (int64_t j = 0; j < second; ++j)
      for (int64_t k = 0; k < width; ++k)
        y[(j * first + i) * width + k] = x[(i * second + j) * width + k];
  return y;
}

std::vector<double> rudnn::reference::stateOf(const std::vector<double> &states,
                                              int64_t state, int64_t size) {
  if (states.empty())
    return std::vector<double>(size, 0.0);
  return std::vector<double>(states.begin() + state * size,
                             states.begin() + (state + 1) * size);
}

LstmOutputs rudnn::reference::lstmForward(const LstmShape &s,
                                          const LstmInputs &in) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize, D = s.directions,
                states = s.layers * D;
  LstmOutputs result;
  result.hN = in.h0.empty() ? std::vector<double>(states * B * H, 0.0) : in.h0;
  result.cN = in.c0.empty() ? std::vector<double>(states * B * H, 0.0) : in.c0;
  std::vector<double> input =
      s.batchFirst ? swapLeading(in.x, B, T, s.inputSize) : in.x;
  int64_t width = s.inputSize;
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    std::vector<double> out(T * B * D * H, 0.0);
    for (int64_t d = 0; d < D; ++d) {
      const int64_t state = layer * D + d;
      Trace trace;
      traceDirection(s, in.weights[state], input, width, in.lengths, d == 1,
                     out, D * H, d * H, stateOf(result.hN, state, B * H),
                     stateOf(result.cN, state, B * H), trace,
                     &result.hN[state * B * H], &result.cN[state * B * H]);
      result.cells.insert(result.cells.end(), trace.c.begin(), trace.c.end());
      for (int64_t row = 0; row < T * B; ++row)
        for (const std::vector<double> *gate :
             {&trace.i, &trace.f, &trace.g, &trace.o})
          result.gates.insert(result.gates.end(), gate->begin() + row * H,
                              gate->begin() + (row + 1) * H);
    }
    result.hidden.insert(result.hidden.end(), out.begin(), out.end());
    input = std::move(out);
    width = D * H;
  }
  result.out = s.batchFirst ? swapLeading(input, T, B, D * H) : input;
  return result;
}

LstmGradients rudnn::reference::lstmBackward(const LstmShape &s,
                                             const LstmInputs &in,
                                             const LstmOutputGradients &d) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize, D = s.directions,
                L = s.layers, states = L * D;
  // The forward again, each layer's input and each direction's trace kept.
  std::vector<std::vector<double>> inputs = {
      s.batchFirst ? swapLeading(in.x, B, T, s.inputSize) : in.x};
  std::vector<Trace> traces(states);
  for (int64_t layer = 0; layer < L; ++layer) {
    const int64_t width = layer == 0 ? s.inputSize : D * H;
    std::vector<double> out(T * B * D * H, 0.0);
    for (int64_t dir = 0; dir < D; ++dir) {
      const int64_t state = layer * D + dir;
      traceDirection(s, in.weights[state], inputs[layer], width, in.lengths,
                     dir == 1, out, D * H, dir * H,
                     stateOf(in.h0, state, B * H), stateOf(in.c0, state, B * H),
                     traces[state]);
    }
    inputs.push_back(std::move(out));
  }

  LstmGradients grads;
  grads.h0.assign(states * B * H, 0.0);
  grads.c0.assign(states * B * H, 0.0);
  for (const LstmWeights &w : in.weights)
    grads.weights.push_back({std::vector<double>(w.weightIh.size(), 0.0),
                             std::vector<double>(w.weightHh.size(), 0.0),
                             std::vector<double>(w.biasIh.size(), 0.0),
                             std::vector<double>(w.biasHh.size(), 0.0)});
  // The top layer's output gradients, time-major.
  std::vector<double> dOut = d.out.empty()
                                 ? std::vector<double>(T * B * D * H, 0.0)
                             : s.batchFirst ? swapLeading(d.out, B, T, D * H)
                                            : d.out;
  std::vector<double> da(4 * H);
  for (int64_t layer = L - 1; layer >= 0; --layer) {
    const int64_t width = layer == 0 ? s.inputSize : D * H;
    const std::vector<double> &input = inputs[layer];
    std::vector<double> dInput(T * B * width, 0.0);
    for (int64_t dir = 0; dir < D; ++dir) {
      const int64_t state = layer * D + dir;
      const LstmWeights &w = in.weights[state];
      LstmWeights &dw = grads.weights[state];
      const Trace &tr = traces[state];
      std::vector<double> dh = stateOf(d.hN, state, B * H),
                          dc = stateOf(d.cN, state, B * H);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t length =
            in.lengths.empty() ? T : static_cast<int64_t>(in.lengths[b]);
        for (int64_t n = length - 1; n >= 0; --n) {
          const int64_t t = dir == 1 ? length - 1 - n : n;
          for (int64_t j = 0; j < H; ++j) {
            const int64_t at = (t * B + b) * H + j;
            const double i = tr.i[at], f = tr.f[at], g = tr.g[at], o = tr.o[at],
                         tanhC = std::tanh(tr.c[at]);
            const double dhT =
                dh[b * H + j] + dOut[(t * B + b) * D * H + dir * H + j];
            const double dcT = dc[b * H + j] + dhT * o * (1 - tanhC * tanhC);
            da[j] = dcT * g * i * (1 - i);
            da[H + j] = dcT * tr.cPrev[at] * f * (1 - f);
            da[2 * H + j] = dcT * i * (1 - g * g);
            da[3 * H + j] = dhT * tanhC * o * (1 - o);
            dc[b * H + j] = dcT * f;
          }
          const double *x = &input[(t * B + b) * width];
          double *dx = &dInput[(t * B + b) * width];
          for (int64_t r = 0; r < 4 * H; ++r) {
            for (int64_t k = 0; k < width; ++k) {
              dw.weightIh[r * width + k] += da[r] * x[k];
              dx[k] += w.weightIh[r * width + k] * da[r];
            }
            for (int64_t k = 0; k < H; ++k)
              dw.weightHh[r * H + k] += da[r] * tr.hPrev[(t * B + b) * H + k];
            if (!dw.biasIh.empty())
              dw.biasIh[r] += da[r];
            if (!dw.biasHh.empty())
              dw.biasHh[r] += da[r];
          }
          for (int64_t k = 0; k < H; ++k) {
            double sum = 0;
            for (int64_t r = 0; r < 4 * H; ++r)
              sum += w.weightHh[r * H + k] * da[r];
            dh[b * H + k] = sum;
          }
        }
      }
      std::copy(dh.begin(), dh.end(), grads.h0.begin() + state * B * H);
      std::copy(dc.begin(), dc.end(), grads.c0.begin() + state * B * H);
    }
    dOut = std::move(dInput);
  }
  grads.x = s.batchFirst ? swapLeading(dOut, T, B, s.inputSize) : dOut;
  return grads;
}
