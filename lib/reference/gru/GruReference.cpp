//===- GruReference.cpp - A multi-layer GRU in float64 --------------------===//
//
// The forward as torch.nn.GRU computes it, and its backpropagation through
// time: the forward again keeping each step's r, z, n, W_hn h + b_hn and
// previous h, then each layer from the last walks each direction's steps
// backwards with dh = dout_t + dh_next:
//
//   dn = dh (1 − z)(1 − n²)          dz = dh (h_prev − n) z (1 − z)
//   dr = dn (W_hn h + b_hn) r (1 − r)
//   input side  a = (dr, dz, dn):     dW_ih += a ⊗ x,  db_ih += a,  dx += W_ihᵀ
//   a hidden side g = (dr, dz, r dn):   dW_hh += g ⊗ h_prev,  db_hh += g
//   dh_prev = W_hhᵀ g + z dh
//
//===----------------------------------------------------------------------===//

#include "lib/reference/gru/GruReference.h"

#include <algorithm>
#include <cmath>

using namespace rudnn::reference;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// One direction's steps, [T, B, H] each, time-major (zero past lengths).
struct Trace {
  std::vector<double> r, z, n, hiddenN, hPrev;
};

/// One direction of one layer over `input` [T, B, width] from h [B, H]:
/// writes its H columns at `column` of `out` [T, B, outWidth], records
/// `trace` and leaves its last state at hN when given.
void traceDirection(const LstmShape &s, const LstmWeights &w,
                    const std::vector<double> &input, int64_t width,
                    const std::vector<double> &lengths, bool reverse,
                    std::vector<double> &out, int64_t outWidth, int64_t column,
                    std::vector<double> h, Trace &trace, double *hN = nullptr) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize;
  for (std::vector<double> *v :
       {&trace.r, &trace.z, &trace.n, &trace.hiddenN, &trace.hPrev})
    v->assign(T * B * H, 0.0);
  std::vector<double> fromInput(3 * H), fromHidden(3 * H);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length =
        lengths.empty() ? T : static_cast<int64_t>(lengths[b]);
    for (int64_t step = 0; step < length; ++step) {
      const int64_t t = reverse ? length - 1 - step : step;
      const double *x = &input[(t * B + b) * width];
      double *hb = &h[b * H];
      for (int64_t r = 0; r < 3 * H; ++r) {
        double a = w.biasIh.empty() ? 0.0 : w.biasIh[r];
        double g = w.biasHh.empty() ? 0.0 : w.biasHh[r];
        for (int64_t k = 0; k < width; ++k)
          a += w.weightIh[r * width + k] * x[k];
        for (int64_t k = 0; k < H; ++k)
          g += w.weightHh[r * H + k] * hb[k];
        fromInput[r] = a;
        fromHidden[r] = g;
      }
      for (int64_t j = 0; j < H; ++j) {
        const int64_t at = (t * B + b) * H + j;
        const double reset = sigmoid(fromInput[j] + fromHidden[j]);
        const double update = sigmoid(fromInput[H + j] + fromHidden[H + j]);
        const double candidate =
            std::tanh(fromInput[2 * H + j] + reset * fromHidden[2 * H + j]);
        trace.r[at] = reset;
        trace.z[at] = update;
        trace.n[at] = candidate;
        trace.hiddenN[at] = fromHidden[2 * H + j];
        trace.hPrev[at] = hb[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        const int64_t at = (t * B + b) * H + j;
        hb[j] = (1 - trace.z[at]) * trace.n[at] + trace.z[at] * hb[j];
        out[(t * B + b) * outWidth + column + j] = hb[j];
      }
    }
  }
  if (hN)
    std::copy(h.begin(), h.end(), hN);
}

/// Every layer's input (the first x, time-major) and every direction's
/// trace; fills the outputs' parts when given.
void traceStack(const LstmShape &s, const GruInputs &in,
                std::vector<std::vector<double>> &inputs,
                std::vector<Trace> &traces, std::vector<double> *hN) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize, D = s.directions;
  inputs = {s.batchFirst ? swapLeading(in.x, B, T, s.inputSize) : in.x};
  traces.assign(s.layers * D, {});
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    const int64_t width = layer == 0 ? s.inputSize : D * H;
    std::vector<double> out(T * B * D * H, 0.0);
    for (int64_t d = 0; d < D; ++d) {
      const int64_t state = layer * D + d;
      traceDirection(s, in.weights[state], inputs[layer], width, in.lengths,
                     d == 1, out, D * H, d * H, stateOf(in.h0, state, B * H),
                     traces[state], hN ? &(*hN)[state * B * H] : nullptr);
    }
    inputs.push_back(std::move(out));
  }
}

} // namespace

GruOutputs rudnn::reference::gruForward(const LstmShape &s,
                                        const GruInputs &in) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize, D = s.directions;
  GruOutputs result;
  result.hN =
      in.h0.empty() ? std::vector<double>(s.layers * D * B * H, 0.0) : in.h0;
  std::vector<std::vector<double>> inputs;
  std::vector<Trace> traces;
  traceStack(s, in, inputs, traces, &result.hN);
  for (int64_t layer = 0; layer < s.layers; ++layer)
    result.hidden.insert(result.hidden.end(), inputs[layer + 1].begin(),
                         inputs[layer + 1].end());
  for (const Trace &trace : traces)
    for (int64_t row = 0; row < T * B; ++row)
      for (const std::vector<double> *value :
           {&trace.r, &trace.z, &trace.n, &trace.hiddenN})
        result.gates.insert(result.gates.end(), value->begin() + row * H,
                            value->begin() + (row + 1) * H);
  result.out =
      s.batchFirst ? swapLeading(inputs.back(), T, B, D * H) : inputs.back();
  return result;
}

GruGradients rudnn::reference::gruBackward(const LstmShape &s,
                                           const GruInputs &in,
                                           const GruOutputGradients &d) {
  const int64_t T = s.steps, B = s.batch, H = s.hiddenSize, D = s.directions,
                L = s.layers;
  std::vector<std::vector<double>> inputs;
  std::vector<Trace> traces;
  traceStack(s, in, inputs, traces, nullptr);

  GruGradients grads;
  grads.h0.assign(L * D * B * H, 0.0);
  for (const LstmWeights &w : in.weights)
    grads.weights.push_back({std::vector<double>(w.weightIh.size(), 0.0),
                             std::vector<double>(w.weightHh.size(), 0.0),
                             std::vector<double>(w.biasIh.size(), 0.0),
                             std::vector<double>(w.biasHh.size(), 0.0)});
  std::vector<double> dOut = d.out.empty()
                                 ? std::vector<double>(T * B * D * H, 0.0)
                             : s.batchFirst ? swapLeading(d.out, B, T, D * H)
                                            : d.out;
  std::vector<double> inputSide(3 * H), hiddenSide(3 * H);
  for (int64_t layer = L - 1; layer >= 0; --layer) {
    const int64_t width = layer == 0 ? s.inputSize : D * H;
    const std::vector<double> &input = inputs[layer];
    std::vector<double> dInput(T * B * width, 0.0);
    for (int64_t dir = 0; dir < D; ++dir) {
      const int64_t state = layer * D + dir;
      const LstmWeights &w = in.weights[state];
      LstmWeights &dw = grads.weights[state];
      const Trace &tr = traces[state];
      std::vector<double> dh = stateOf(d.hN, state, B * H);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t length =
            in.lengths.empty() ? T : static_cast<int64_t>(in.lengths[b]);
        for (int64_t step = length - 1; step >= 0; --step) {
          const int64_t t = dir == 1 ? length - 1 - step : step;
          std::vector<double> skip(H);
          for (int64_t j = 0; j < H; ++j) {
            const int64_t at = (t * B + b) * H + j;
            const double r = tr.r[at], z = tr.z[at], n = tr.n[at];
            const double dhT =
                dh[b * H + j] + dOut[(t * B + b) * D * H + dir * H + j];
            const double dn = dhT * (1 - z) * (1 - n * n);
            const double dz = dhT * (tr.hPrev[at] - n) * z * (1 - z);
            const double dr = dn * tr.hiddenN[at] * r * (1 - r);
            inputSide[j] = hiddenSide[j] = dr;
            inputSide[H + j] = hiddenSide[H + j] = dz;
            inputSide[2 * H + j] = dn;
            hiddenSide[2 * H + j] = dn * r;
            skip[j] = dhT * z;
          }
          const double *x = &input[(t * B + b) * width];
          double *dx = &dInput[(t * B + b) * width];
          const double *hPrev = &tr.hPrev[(t * B + b) * H];
          for (int64_t r = 0; r < 3 * H; ++r) {
            for (int64_t k = 0; k < width; ++k) {
              dw.weightIh[r * width + k] += inputSide[r] * x[k];
              dx[k] += w.weightIh[r * width + k] * inputSide[r];
            }
            for (int64_t k = 0; k < H; ++k)
              dw.weightHh[r * H + k] += hiddenSide[r] * hPrev[k];
            if (!dw.biasIh.empty())
              dw.biasIh[r] += inputSide[r];
            if (!dw.biasHh.empty())
              dw.biasHh[r] += hiddenSide[r];
          }
          for (int64_t k = 0; k < H; ++k) {
            double sum = skip[k];
            for (int64_t r = 0; r < 3 * H; ++r)
              sum += w.weightHh[r * H + k] * hiddenSide[r];
            dh[b * H + k] = sum;
          }
        }
      }
      std::copy(dh.begin(), dh.end(), grads.h0.begin() + state * B * H);
    }
    dOut = std::move(dInput);
  }
  grads.x = s.batchFirst ? swapLeading(dOut, T, B, s.inputSize) : dOut;
  return grads;
}
