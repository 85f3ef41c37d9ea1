//===- norm_bench.cpp - LayerNorm and RMSNorm timings ---------------------===//
//
//   rudnn-bench-norm [--backend auto|cuda|emulation] [--repeats N]
//                    [--warmup N] [--shapes rows,C,bits,op,pass;...]
//                    [--json FILE] [--allow-large]
//
// Times rudnn::layerNorm / rmsNorm (op "layer" or "rms", with gamma, and
// beta for LayerNorm; the forward also returns mean and rstd) and their
// backward (pass "fwd" or "bwd", dgamma and dbeta too) over rows × C in
// bf16 (bits 16) or f32 (bits 32): what bench/torch_norm.py times
// torch.nn.functional.layer_norm and rms_norm on, beside a copy of the
// same bytes. Reports the median and the bandwidth the bytes a pass must
// move make of it. On the emulation backend shapes beyond 2^16 elements
// are refused unless --allow-large.
//
//===----------------------------------------------------------------------===//

#include "bench/DeviceTiming.h"

#include "rudnn/norm.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

using namespace rudnn;

namespace {

struct Shape {
  int64_t rows, C, bits;
  bool layer, backward;
};

std::vector<Shape> parseShapes(const std::string &text) {
  return bench::parseShapeList<Shape>(
      text,
      "rows,C,bits,op,pass (bits 16 or 32, op layer or rms, pass fwd "
      "or bwd)",
      [](const std::string &item, Shape &s) {
        char op[8] = {}, pass[8] = {};
        if (std::sscanf(item.c_str(), "%ld,%ld,%ld,%7[a-z],%7[a-z]", &s.rows,
                        &s.C, &s.bits, op, pass) != 5 ||
            s.rows < 1 || s.C < 1 || s.C > (int64_t(1) << 24) ||
            (s.bits != 16 && s.bits != 32) ||
            (std::strcmp(op, "layer") && std::strcmp(op, "rms")) ||
            (std::strcmp(pass, "fwd") && std::strcmp(pass, "bwd")))
          return false;
        s.layer = !std::strcmp(op, "layer");
        s.backward = !std::strcmp(pass, "bwd");
        return true;
      });
}

/// The grid: rows 4096 to 65536 by C 1024 to 16384, both ops, both passes,
/// bf16 and f32.
std::string defaultShapes() {
  std::string text;
  for (const char *pass : {"fwd", "bwd"})
    for (const char *op : {"layer", "rms"})
      for (int64_t bits : {16, 32})
        for (int64_t rows : {4096, 16384, 65536})
          for (int64_t C : {1024, 4096, 8192, 16384})
            text += bench::shapeItem(rows, C, bits, std::string(op),
                                     std::string(pass));
  return text;
}

constexpr int64_t kEmulationLimit = int64_t(1) << 16;

} // namespace

int main(int argc, char **argv) {
  return bench::benchMain(
      argc, argv, "rudnn-bench-norm", defaultShapes(),
      "rows,C,bits,op,pass;... (bits 16: bf16, 32: f32; op layer or rms; "
      "pass fwd or bwd)",
      [](Context &context, const bench::BenchOptions &options) {
        const std::vector<Shape> shapes = parseShapes(options.shapes);
        for (const Shape &s : shapes)
          bench::refuseLargeOnEmulation(
              context, options, s.rows * s.C, kEmulationLimit,
              std::to_string(s.rows) + "," + std::to_string(s.C));
        bench::printTableHeader(context, "%-28s %10s %10s\n",
                                "rows,C,bits,op,pass", "ms", "GB/s");
        nlohmann::json results = nlohmann::json::array();
        for (const Shape &s : shapes) {
          const DType dtype = s.bits == 16 ? DType::BF16 : DType::F32;
          const int64_t rows = s.rows, C = s.C, bytes = s.bits / 8;
          std::mt19937 random(11);
          auto rowsOf = [&](DeviceBuffer &buffer) {
            return TensorView::contiguous(buffer.data(), dtype, {rows, C});
          };
          auto featuresOf = [&](DeviceBuffer &buffer) {
            return TensorView::contiguous(buffer.data(), dtype, {C});
          };
          auto statsOf = [&](DeviceBuffer &buffer) {
            return TensorView::contiguous(buffer.data(), DType::F32, {rows});
          };
          DeviceBuffer x = bench::upload(context,
                                         test::normalValues(rows * C, random),
                                         dtype),
                       gamma = bench::upload(
                           context, test::normalValues(C, random), dtype),
                       beta = bench::upload(
                           context, test::normalValues(C, random), dtype),
                       dy = bench::upload(context,
                                          test::normalValues(rows * C, random),
                                          dtype),
                       y(context, rows * C * bytes), mean(context, rows * 4),
                       rstd(context, rows * 4), dgamma(context, C * bytes),
                       dbeta(context, C * bytes);
          const NormInputs in{rowsOf(x),
                              {},
                              featuresOf(gamma),
                              s.layer ? std::optional(featuresOf(beta))
                                      : std::nullopt};
          auto forward = [&] {
            if (s.layer)
              layerNorm(context, in,
                        {rowsOf(y), statsOf(mean), statsOf(rstd), {}});
            else
              rmsNorm(context, in, {rowsOf(y), statsOf(rstd), {}});
          };
          forward(); // the statistics the backward reads
          auto backward = [&] {
            const NormBackwardInputs grads{
                rowsOf(dy), rowsOf(x),
                s.layer ? std::optional(statsOf(mean)) : std::nullopt,
                statsOf(rstd), featuresOf(gamma)};
            if (s.layer)
              layerNormBackward(
                  context, grads,
                  {rowsOf(y), featuresOf(dgamma), featuresOf(dbeta)});
            else
              rmsNormBackward(context, grads,
                              {rowsOf(y), featuresOf(dgamma), {}});
          };
          const double ms = s.backward
                                ? bench::medianMs(context, options.warmup,
                                                  options.repeats, backward)
                                : bench::medianMs(context, options.warmup,
                                                  options.repeats, forward);
          // What a pass must move: x read and y written forward; dy and x read
          // and dx written backward.
          const double moved = double(rows * C * bytes) * (s.backward ? 3 : 2);
          const double bandwidth = moved / (ms * 1e-3) / 1e9;
          char label[80];
          std::snprintf(label, sizeof(label), "%ld,%ld,%ld,%s,%s", s.rows, s.C,
                        s.bits, s.layer ? "layer" : "rms",
                        s.backward ? "bwd" : "fwd");
          std::printf("%-28s %10.4f %10.1f\n", label, ms, bandwidth);
          std::fflush(stdout);
          results.push_back({{"rows", s.rows},
                             {"C", s.C},
                             {"bits", s.bits},
                             {"op", s.layer ? "layer" : "rms"},
                             {"pass", s.backward ? "bwd" : "fwd"},
                             {"ms", ms},
                             {"bytes", moved},
                             {"gbps", bandwidth}});
          bench::writeResults(context, options, "norm", results);
        }
        return 0;
      });
}
