//===- kda_bench.cpp - Kimi Delta Attention timings -----------------------===//
//
//   rudnn-bench-kda [--backend auto|cuda|emulation] [--repeats N]
//                   [--warmup N] [--shapes B,T,H,K;...] [--json FILE]
//                   [--allow-large]
//
// Times rudnn::kdaForward in bf16 (g fp32) on random inputs drawn as real
// callers provide them, exactly as bench/fla_kda.py times
// flash-linear-attention: `warmup` untimed calls (the first compiles), then
// `repeats` calls each between two CUDA events, the median reported; L2 is
// not flushed between calls, in either. Also the rate in TFLOP/s, counting
// 2·B·H·T·(3KV + 2CK + CV + C(K+V)/2) flops: the state products (W·S,
// Kdᵀ·U, Qd·S), the pairwise matrices, the intra-chunk output and the
// products by (I + A)⁻¹. Then forward + backward as a training step runs
// them: the forward saving its boundaries, the backward starting from them;
// and that step once more with each launch timed, for where its time goes.
// On the emulation backend (no GPU) shapes beyond 2^16 tokens x heads are
// refused unless --allow-large: they would run for hours.
//
//===----------------------------------------------------------------------===//

#include "bench/DeviceTiming.h"
#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace rudnn;
using rudnn::bench::medianMs;
using rudnn::bench::upload;

namespace {

struct Shape {
  int64_t B, T, H, K;
};

std::vector<Shape> parseShapes(const std::string &text) {
  std::vector<Shape> shapes;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ';')) {
    Shape s{};
    if (std::sscanf(item.c_str(), "%ld,%ld,%ld,%ld", &s.B, &s.T, &s.H, &s.K) !=
        4)
      throw InvalidArgument("--shapes wants B,T,H,K;..., got '" + item + "'");
    shapes.push_back(s);
  }
  return shapes;
}

/// Tokens x heads beyond which the emulation backend needs --allow-large.
constexpr int64_t kEmulationLimit = int64_t(1) << 16;

} // namespace

int main(int argc, char **argv) {
  bench::BenchOptions options;
  if (int code = bench::parseBenchOptions(
          argc, argv, "rudnn-bench-kda",
          "4,4096,64,128;2,16384,16,128;1,8192,96,128;8,1024,8,64",
          "B,T,H,K;... (V = K)", options);
      code >= 0)
    return code;
  try {
    ContextOptions contextOptions;
    contextOptions.backend = parseBackend(options.backend);
    Context context(contextOptions);
    const std::vector<Shape> shapes = parseShapes(options.shapes);
    for (const Shape &s : shapes)
      bench::refuseLargeOnEmulation(
          context, options, s.B * s.T * s.H, kEmulationLimit,
          std::to_string(s.B) + "," + std::to_string(s.T) + "," +
              std::to_string(s.H) + "," + std::to_string(s.K));
    std::printf("device: %s\n", context.deviceDescription().c_str());
    std::printf("%-22s %10s %10s %14s\n", "B,T,H,K=V", "fwd ms", "TFLOP/s",
                "fwd+bwd ms");
    std::fflush(stdout);
    nlohmann::json results = nlohmann::json::array();
    for (const Shape &s : shapes) {
      const int64_t K = s.K, V = s.K, C = 64;
      reference::KdaShape shape{s.B, s.T, s.H, K, V};
      reference::KdaInputs in = test::randomKdaInputs(shape, -1, true, true, 7);
      DeviceBuffer q = upload(context, in.q, DType::BF16),
                   k = upload(context, in.k, DType::BF16),
                   v = upload(context, in.v, DType::BF16),
                   g = upload(context, in.g, DType::F32),
                   beta = upload(context, in.beta, DType::BF16),
                   s0 = upload(context, in.initialState, DType::F32);
      DeviceBuffer out(context, s.B * s.T * s.H * V * 2),
          sT(context, s.B * s.H * K * V * 4);
      auto view = [](const DeviceBuffer &b, DType t, std::vector<int64_t> d) {
        return TensorView::contiguous(b.data(), t, d);
      };
      KdaForwardInputs inputs{view(q, DType::BF16, {s.B, s.T, s.H, K}),
                              view(k, DType::BF16, {s.B, s.T, s.H, K}),
                              view(v, DType::BF16, {s.B, s.T, s.H, V}),
                              view(g, DType::F32, {s.B, s.T, s.H, K}),
                              view(beta, DType::BF16, {s.B, s.T, s.H}),
                              view(s0, DType::F32, {s.B, s.H, K, V})};
      KdaForwardOutputs outputs{view(out, DType::BF16, {s.B, s.T, s.H, V}),
                                view(sT, DType::F32, {s.B, s.H, K, V}),
                                std::nullopt, std::nullopt};
      KdaOptions kdaOptions;
      kdaOptions.chunk = C;
      const double ms = medianMs(context, options.warmup, options.repeats, [&] {
        kdaForward(context, inputs, outputs, kdaOptions);
      });

      // Forward (saving boundaries and tiles) + backward from them.
      const KdaSavedShapes saved =
          kdaSavedShapes(s.B, s.T, s.H, K, V, DType::BF16, kdaOptions);
      const int64_t N = saved.tiles[0];
      DeviceBuffer bounds(context, N * s.B * s.H * K * V * 2),
          tiles(context, N * s.B * s.H * saved.tiles[3] * 4),
          dO = upload(context, in.v, DType::BF16),
          dq(context, s.B * s.T * s.H * K * 2),
          dk(context, s.B * s.T * s.H * K * 2),
          dv(context, s.B * s.T * s.H * V * 2),
          dg(context, s.B * s.T * s.H * K * 4),
          dbeta(context, s.B * s.T * s.H * 2),
          ds0(context, s.B * s.H * K * V * 4);
      KdaForwardOutputs saving = outputs;
      saving.boundaries = view(bounds, DType::BF16, saved.boundaries);
      saving.tiles = view(tiles, DType::F32, saved.tiles);
      KdaBackwardInputs backwardInputs{
          inputs, view(dO, DType::BF16, {s.B, s.T, s.H, V}), std::nullopt,
          saving.boundaries, saving.tiles};
      KdaBackwardOutputs gradients{view(dq, DType::BF16, {s.B, s.T, s.H, K}),
                                   view(dk, DType::BF16, {s.B, s.T, s.H, K}),
                                   view(dv, DType::BF16, {s.B, s.T, s.H, V}),
                                   view(dg, DType::F32, {s.B, s.T, s.H, K}),
                                   view(dbeta, DType::BF16, {s.B, s.T, s.H}),
                                   view(ds0, DType::F32, {s.B, s.H, K, V})};
      auto step = [&] {
        kdaForward(context, inputs, saving, kdaOptions);
        kdaBackward(context, backwardInputs, gradients, kdaOptions);
      };
      const double stepMs =
          medianMs(context, options.warmup, options.repeats, step);
      // Where one step's time goes, each launch timed on its own.
      context.resetProfile();
      context.setProfiling(true);
      step();
      context.setProfiling(false);
      const std::vector<KernelProfile> kernels = context.profile();

      const double flops =
          2.0 * s.B * s.H * s.T *
          (3.0 * K * V + 2.0 * C * K + C * V + C * (K + V) / 2.0);
      const double tflops = flops / (ms * 1e-3) / 1e12;
      char label[64];
      std::snprintf(label, sizeof(label), "%ld,%ld,%ld,%ld", s.B, s.T, s.H,
                    s.K);
      std::printf("%-22s %10.3f %10.2f %14.3f\n", label, ms, tflops, stepMs);
      nlohmann::json record = {
          {"B", s.B}, {"T", s.T}, {"H", s.H},         {"K", K},
          {"V", V},   {"ms", ms}, {"tflops", tflops}, {"fwd_bwd_ms", stepMs}};
      nlohmann::json perKernel = nlohmann::json::object();
      for (const KernelProfile &kernel : kernels) {
        std::printf("    %-48s %3lu x %10.3f ms\n", kernel.kernel.c_str(),
                    (unsigned long)kernel.launches, kernel.milliseconds);
        perKernel[kernel.kernel] = kernel.milliseconds;
      }
      std::fflush(stdout);
      record["step_kernels_ms"] = perKernel;
      results.push_back(record);
      bench::writeResults(context, options, "kda_forward", results);
    }
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "rudnn-bench-kda: %s\n", error.what());
    return 1;
  }
}
