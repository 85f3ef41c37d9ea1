//===- attention_bench.cpp - Tiled attention timings ----------------------===//
//
//   rudnn-bench-attention [--backend auto|cuda|emulation] [--repeats N]
//                         [--warmup N] [--shapes B,T,H,D,causal;...]
//                         [--json FILE] [--allow-large]
//
// Times rudnn::attentionForward, and a training step's forward then
// attentionBackward, in bf16 on random inputs exactly as
// bench/sdpa_attention.py times PyTorch's scaled_dot_product_attention and
// its autograd backward: `warmup` untimed calls (the first compiles), then
// `repeats` calls each between two CUDA events, the median reported; L2 is
// not flushed. Rates in TFLOP/s count 4·B·H·T²·D for the forward and 2.5
// times that for the backward (halved when causal), as FlashAttention's
// benchmarks do. Self-attention: S = T, G = H, E = D. On the emulation
// backend (no GPU) shapes beyond 2^14 tokens x heads are refused unless
// --allow-large.
//
//===----------------------------------------------------------------------===//

#include "bench/DeviceTiming.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

using namespace rudnn;

namespace {

struct Shape {
  int64_t B, T, H, D;
  bool causal;
};

std::vector<Shape> parseShapes(const std::string &text) {
  return bench::parseShapeList<Shape>(
      text, "B,T,H,D,causal(0|1)", [](const std::string &item, Shape &s) {
        int causal = -1;
        if (std::sscanf(item.c_str(), "%ld,%ld,%ld,%ld,%d", &s.B, &s.T, &s.H,
                        &s.D, &causal) != 5 ||
            (causal != 0 && causal != 1))
          return false;
        s.causal = causal;
        return true;
      });
}

/// FlashAttention's benchmark shapes: 16k tokens a batch at a hidden size
/// of 2048, sequences of 512 to 16k, causal and not, D = 128.
std::string defaultShapes() {
  std::string text;
  for (int causal : {0, 1})
    for (int64_t T = 512; T <= 16384; T *= 2)
      text += bench::shapeItem(16384 / T, T, 16, 128, causal);
  return text;
}

/// Tokens x heads beyond which the emulation backend needs --allow-large.
constexpr int64_t kEmulationLimit = int64_t(1) << 14;

} // namespace

int main(int argc, char **argv) {
  return bench::benchMain(
      argc, argv, "rudnn-bench-attention", defaultShapes(),
      "B,T,H,D,causal;... (S = T, G = H, E = D)",
      [](Context &context, const bench::BenchOptions &options) {
        const std::vector<Shape> shapes = parseShapes(options.shapes);
        for (const Shape &s : shapes)
          bench::refuseLargeOnEmulation(
              context, options, s.B * s.T * s.H, kEmulationLimit,
              std::to_string(s.B) + "," + std::to_string(s.T) + "," +
                  std::to_string(s.H) + "," + std::to_string(s.D));
        bench::printTableHeader(context, "%-24s %10s %10s %12s %10s\n",
                                "B,T,H,D,causal", "fwd ms", "TFLOP/s",
                                "fwd+bwd ms", "TFLOP/s");
        nlohmann::json results = nlohmann::json::array();
        for (const Shape &s : shapes) {
          std::mt19937 random(7);
          const int64_t elements = s.B * s.T * s.H * s.D;
          DeviceBuffer q = bench::upload(context,
                                         test::normalValues(elements, random),
                                         DType::BF16),
                       k = bench::upload(context,
                                         test::normalValues(elements, random),
                                         DType::BF16),
                       v = bench::upload(context,
                                         test::normalValues(elements, random),
                                         DType::BF16),
                       dOutput = bench::upload(
                           context, test::normalValues(elements, random),
                           DType::BF16),
                       o(context, elements * 2),
                       lse(context, s.B * s.H * s.T * 4),
                       dq(context, elements * 2), dk(context, elements * 2),
                       dv(context, elements * 2);
          auto sequenceOf = [&](const DeviceBuffer &buffer) {
            return TensorView::contiguous(buffer.data(), DType::BF16,
                                          {s.B, s.T, s.H, s.D});
          };
          const AttentionInputs inputs{
              sequenceOf(q), sequenceOf(k), sequenceOf(v), {}, {}, {}};
          const AttentionOutputs outputs{
              sequenceOf(o),
              TensorView::contiguous(lse.data(), DType::F32, {s.B, s.H, s.T})};
          const AttentionBackwardInputs backward{
              inputs, outputs.o, *outputs.lse, sequenceOf(dOutput)};
          const AttentionGradients gradients{sequenceOf(dq), sequenceOf(dk),
                                             sequenceOf(dv)};
          AttentionOptions attention;
          attention.causal = s.causal;
          const double ms =
              bench::medianMs(context, options.warmup, options.repeats, [&] {
                attentionForward(context, inputs, outputs, attention);
              });
          // A training step: the forward, then the gradients from its o and
          // lse.
          const double stepMs =
              bench::medianMs(context, options.warmup, options.repeats, [&] {
                attentionForward(context, inputs, outputs, attention);
                attentionBackward(context, backward, gradients, attention);
              });
          const double flops =
              4.0 * s.B * s.H * s.T * s.T * s.D / (s.causal ? 2.0 : 1.0);
          const double tflops = flops / (ms * 1e-3) / 1e12,
                       stepTflops = 3.5 * flops / (stepMs * 1e-3) / 1e12;
          char label[64];
          std::snprintf(label, sizeof(label), "%ld,%ld,%ld,%ld,%d", s.B, s.T,
                        s.H, s.D, s.causal ? 1 : 0);
          std::printf("%-24s %10.3f %10.2f %12.3f %10.2f\n", label, ms, tflops,
                      stepMs, stepTflops);
          std::fflush(stdout);
          results.push_back({{"B", s.B},
                             {"T", s.T},
                             {"H", s.H},
                             {"D", s.D},
                             {"causal", s.causal},
                             {"ms", ms},
                             {"tflops", tflops},
                             {"fwd_bwd_ms", stepMs},
                             {"fwd_bwd_tflops", stepTflops}});
          bench::writeResults(context, options, "attention", results);
        }
        return 0;
      });
}
