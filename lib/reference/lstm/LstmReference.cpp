//===- LstmReference.cpp - A multi-layer LSTM in float64 ------------------===//

#include "lib/reference/lstm/LstmReference.h"

#include <algorithm>
#include <cmath>

using namespace rudnn::reference;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// One direction of one layer over `input` [T, B, width] (time-major):
/// writes its H columns at `column` of `out` [T, B, outWidth] and leaves
/// its last state in h and c [B, H].
void runDirection(const LstmShape &s, const LstmWeights &w,
                  const std::vector<double> &input, int64_t width,
                  const std::vector<double> &lengths, bool reverse,
                  std::vector<double> &out, int64_t outWidth, int64_t column,
                  std::vector<double> &h, std::vector<double> &c) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize;
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
        const double i = sigmoid(gates[j]), f = sigmoid(gates[H + j]),
                     g = std::tanh(gates[2 * H + j]),
                     o = sigmoid(gates[3 * H + j]);
        cb[j] = f * cb[j] + i * g;
        hb[j] = o * std::tanh(cb[j]);
      }
      for (int64_t j = 0; j < H; ++j)
        out[(t * B + b) * outWidth + column + j] = hb[j];
    }
  }
}

/// [B, T, width] <-> [T, B, width].
std::vector<double> swapLeading(const std::vector<double> &x, int64_t first,
                                int64_t second, int64_t width) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < first; ++i)
    for (int64_t j = 0; j < second; ++j)
      for (int64_t k = 0; k < width; ++k)
        y[(j * first + i) * width + k] = x[(i * second + j) * width + k];
  return y;
}

} // namespace

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
      std::vector<double> h(result.hN.begin() + state * B * H,
                            result.hN.begin() + (state + 1) * B * H),
          c(result.cN.begin() + state * B * H,
            result.cN.begin() + (state + 1) * B * H);
      runDirection(s, in.weights[state], input, width, in.lengths, d == 1, out,
                   D * H, d * H, h, c);
      std::copy(h.begin(), h.end(), result.hN.begin() + state * B * H);
      std::copy(c.begin(), c.end(), result.cN.begin() + state * B * H);
    }
    input = std::move(out);
    width = D * H;
  }
  result.out = s.batchFirst ? swapLeading(input, T, B, D * H) : input;
  return result;
}
