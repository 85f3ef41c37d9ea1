//===- lstm_bench.cpp - Stacked LSTM and GRU timings ----------------------===//
//
//   rudnn-bench-lstm [--backend auto|cuda|emulation] [--repeats N]
//                    [--warmup N] [--shapes H,B,T,L,D,bits;...]
//                    [--json FILE] [--allow-large]
//   rudnn-bench-gru  (the same options)
//
// Times rudnn::lstmForward of an LSTM (rudnn-bench-gru: rudnn::gruForward
// of a GRU) of hidden size H (input size H too), L layers of D directions
// with biases and an initial state, over T steps of B entries, in bf16
// (bits 16) or f32 (bits 32; timed twice, as PyTorch runs it by default,
// products in TF32, and exact with TF32 off, the record's `strict_f32`),
// and a training step (the forward saving what the backward takes, then
// the backward of every input): what
// bench/torch_lstm.py times torch.nn.LSTM or torch.nn.GRU (cuDNN) on,
// forward and forward + backward. `warmup` untimed
// calls, then `repeats` calls each between two CUDA events, the median
// reported. On the emulation backend shapes beyond 2^14 steps × entries ×
// hidden units are refused unless --allow-large.
//
//===----------------------------------------------------------------------===//

#include "bench/DeviceTiming.h"

#include "dialects/IR/lstm/LstmContracts.h"

#include "rudnn/gru.h"
#include "rudnn/lstm.h"

#include <cstdio>
#include <random>
#include <sstream>

using namespace rudnn;

namespace {

// The cell this binary times (RUDNN_BENCH_GRU: the GRU's).
#ifdef RUDNN_BENCH_GRU
constexpr bool kGru = true;
constexpr const char *kName = "gru";
#else
constexpr bool kGru = false;
constexpr const char *kName = "lstm";
#endif
constexpr int64_t kGates = kGru ? 3 : 4;

struct Shape {
  int64_t H, B, T, L, D, bits;
};

std::vector<Shape> parseShapes(const std::string &text) {
  return bench::parseShapeList<Shape>(
      text, "H,B,T,L,D,bits (H 1 to 4096, D 1 or 2, bits 16 or 32)",
      [](const std::string &item, Shape &s) {
        return std::sscanf(item.c_str(), "%ld,%ld,%ld,%ld,%ld,%ld", &s.H, &s.B,
                           &s.T, &s.L, &s.D, &s.bits) == 6 &&
               s.H >= 1 && s.H <= 4096 && s.B >= 1 && s.T >= 1 && s.L >= 1 &&
               (s.D == 1 || s.D == 2) && (s.bits == 16 || s.bits == 32);
      });
}

/// H 256 to 1024, batches 1 to 64, 512 steps, bf16 and f32; the LSTM's
/// one and two layers and directions, the GRU's two of each.
std::string defaultShapes() {
  std::string text;
  for (int64_t bits : {16, 32})
    for (int64_t D : {1, 2})
      for (int64_t L : {1, 2})
        for (int64_t H : {256, 512, 1024})
          for (int64_t B : {1, 8, 64})
            if (!kGru || (D == 2 && L == 2))
              text += bench::shapeItem(H, B, 512, L, D, bits);
  return text;
}

constexpr int64_t kEmulationLimit = int64_t(1) << 14;

} // namespace

int main(int argc, char **argv) {
  return bench::benchMain(
      argc, argv, kGru ? "rudnn-bench-gru" : "rudnn-bench-lstm",
      defaultShapes(),
      "H,B,T,L,D,bits;... (I = H, biases and h0/c0; bits 16: bf16, 32: "
      "f32)",
      [](Context &context, const bench::BenchOptions &options) {
        const std::vector<Shape> shapes = parseShapes(options.shapes);
        for (const Shape &s : shapes)
          bench::refuseLargeOnEmulation(
              context, options, s.T * s.B * s.H, kEmulationLimit,
              std::to_string(s.H) + "," + std::to_string(s.B) + "," +
                  std::to_string(s.T));
        bench::printTableHeader(context, "%-24s %10s %10s\n", "H,B,T,L,D,bits",
                                "ms", "train ms");
        nlohmann::json results = nlohmann::json::array();
        for (const Shape &s : shapes) {
          const DType dtype = s.bits == 16 ? DType::BF16 : DType::F32;
          const int64_t H = s.H, B = s.B, T = s.T, D = s.D, states = s.L * D;
          std::mt19937 random(7);
          const double bound = 1.0 / std::sqrt(double(H));
          std::uniform_real_distribution<double> uniform(-bound, bound);
          auto weights = [&](int64_t count) {
            std::vector<double> values(count);
            for (double &x : values)
              x = uniform(random);
            return bench::upload(context, values, dtype);
          };
          std::vector<DeviceBuffer> buffers;
          LstmInputs inputs;
          buffers.push_back(bench::upload(
              context, test::normalValues(T * B * H, random), dtype));
          inputs.x =
              TensorView::contiguous(buffers.back().data(), dtype, {T, B, H});
          std::vector<TensorView *> initial = {&inputs.h0.emplace()};
          if (!kGru)
            initial.push_back(&inputs.c0.emplace());
          for (TensorView *state : initial) {
            buffers.push_back(bench::upload(
                context, test::normalValues(states * B * H, random), dtype));
            *state = TensorView::contiguous(buffers.back().data(), dtype,
                                            {states, B, H});
          }
          for (int64_t layer = 0; layer < s.L; ++layer)
            for (int64_t d = 0; d < D; ++d) {
              const int64_t in = layer ? D * H : H;
              const std::vector<int64_t> shapes[] = {{kGates * H, in},
                                                     {kGates * H, H},
                                                     {kGates * H},
                                                     {kGates * H}};
              for (int which = 0; which < 4; ++which) {
                int64_t count = 1;
                for (int64_t n : shapes[which])
                  count *= n;
                buffers.push_back(weights(count));
                inputs.weights[lstmWeightName(which, layer, d)] =
                    TensorView::contiguous(buffers.back().data(), dtype,
                                           shapes[which]);
              }
            }
          const size_t bytes = s.bits / 8;
          DeviceBuffer out(context, T * B * D * H * bytes),
              hN(context, states * B * H * bytes),
              cN(context, states * B * H * bytes);
          const LstmOutputs outputs{
              TensorView::contiguous(out.data(), dtype, {T, B, D * H}),
              TensorView::contiguous(hN.data(), dtype, {states, B, H}),
              TensorView::contiguous(cN.data(), dtype, {states, B, H}),
              {}};
          LstmOptions lstm;
          lstm.numLayers = s.L;
          lstm.bidirectional = D == 2;
          const GruInputs gruInputs{inputs.x, inputs.h0, inputs.weights, {}};
          auto call = [&] {
            if (kGru)
              gruForward(context, gruInputs, {outputs.out, outputs.hN, {}},
                         lstm);
            else
              lstmForward(context, inputs, outputs, lstm);
          };

          // The training step: what the forward saves, the gradients of
          // every input.
          DeviceBuffer hidden(context, s.L * T * B * D * H * bytes),
              cells(context, states * T * B * H * 4),
              gates(context, states * T * B * 4 * H * 4),
              dX(context, T * B * H * bytes);
          const DeviceBuffer dOut = bench::upload(
              context, test::normalValues(T * B * D * H, random), dtype);
          const LstmSaved saved{
              TensorView::contiguous(hidden.data(), dtype, {s.L, T, B, D * H}),
              TensorView::contiguous(cells.data(), DType::F32,
                                     {states, T, B, H}),
              TensorView::contiguous(gates.data(), DType::F32,
                                     {states, T, B, 4 * H})};
          LstmOutputs training = outputs;
          training.saved = saved;
          LstmGradients grads{
              TensorView::contiguous(dX.data(), dtype, {T, B, H}), {}, {}, {}};
          std::vector<DeviceBuffer> gradientBuffers;
          gradientBuffers.reserve(inputs.weights.size());
          for (const auto &[name, weight] : inputs.weights) {
            int64_t count = 1;
            for (int64_t n : weight.shape)
              count *= n;
            gradientBuffers.emplace_back(context, count * bytes);
            grads.dWeights["d_" + name] = TensorView::contiguous(
                gradientBuffers.back().data(), dtype, weight.shape);
          }
          const LstmResultGradients dy{
              TensorView::contiguous(dOut.data(), dtype, {T, B, D * H}),
              {},
              {}};
          // The GRU saves hidden and its four values a unit in `gates`.
          const GruSaved gruSaved{saved.hidden, *saved.gates};
          auto step = [&] {
            if (kGru) {
              gruForward(context, gruInputs,
                         {outputs.out, outputs.hN, gruSaved}, lstm);
              gruBackward(context, gruInputs, gruSaved, {dy.dOut, {}},
                          {grads.dX, {}, grads.dWeights}, lstm);
            } else {
              lstmForward(context, inputs, training, lstm);
              lstmBackward(context, inputs, saved, dy, grads, lstm);
            }
          };
          // f32 as PyTorch runs it by default (TF32 products), then exact
          // (TF32 off), as bench/torch_lstm.py times cuDNN.
          char label[80];
          std::snprintf(label, sizeof(label), "%ld,%ld,%ld,%ld,%ld,%ld", s.H,
                        s.B, s.T, s.L, s.D, s.bits);
          nlohmann::json record = {{"H", s.H}, {"B", s.B}, {"T", s.T},
                                   {"L", s.L}, {"D", s.D}, {"bits", s.bits}};
          for (bool tf32 : s.bits == 32 ? std::vector<bool>{true, false}
                                        : std::vector<bool>{false}) {
            lstm.allowTf32 = tf32;
            const double ms =
                bench::medianMs(context, options.warmup, options.repeats, call);
            const double trainMs =
                bench::medianMs(context, options.warmup, options.repeats, step);
            const char *mode = s.bits == 16 ? "" : tf32 ? " tf32" : " f32";
            std::printf("%-24s %10.4f %10.4f\n",
                        (std::string(label) + mode).c_str(), ms, trainMs);
            std::fflush(stdout);
            if (tf32 || s.bits == 16) {
              record["ms"] = ms;
              record["train_ms"] = trainMs;
              record["tf32"] = tf32;
            } else {
              record["strict_f32"] = {{"ms", ms}, {"train_ms", trainMs}};
            }
          }
          results.push_back(record);
          bench::writeResults(context, options, kName, results);
        }
        return 0;
      });
}
