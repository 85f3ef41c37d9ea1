//===- kda_bench.cpp - Kimi Delta Attention timings -----------------------===//
//
//   rudnn-bench-kda [--backend auto|cuda|emulation] [--repeats N]
//                   [--warmup N] [--shapes SHAPE;...] [--json FILE]
//                   [--allow-large]
//
// SHAPE: B,T,H,K (a batch), varlen:L1+L2+...,H,K (packed sequences of
// those lengths, as chunk_kda takes cu_seqlens) or gva:B,T,Q,H,K (q and k
// with Q heads shared by H / Q value heads); V = K.
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
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace rudnn;
using rudnn::bench::medianMs;
using rudnn::bench::upload;

namespace {

/// One benchmarked call: a batch "B,T,H,K"; packed sequences
/// "varlen:L1+L2+...,H,K" (B = 1, T their total); grouped value heads
/// "gva:B,T,Q,H,K" (q and k with Q heads). V = K.
struct Shape {
  std::string label;
  int64_t B = 0, T = 0, Q = 0, H = 0, K = 0;
  std::vector<int64_t> lengths; // packed sequences
};

bool readShape(const std::string &item, Shape &s) {
  s.label = item;
  if (item.rfind("varlen:", 0) == 0) {
    const std::string rest = item.substr(7);
    const size_t comma = rest.find(',');
    if (comma == std::string::npos ||
        std::sscanf(rest.c_str() + comma, ",%ld,%ld", &s.H, &s.K) != 2)
      return false;
    std::stringstream lengths(rest.substr(0, comma));
    std::string length;
    while (std::getline(lengths, length, '+'))
      s.lengths.push_back(std::stol(length));
    s.B = 1;
    for (int64_t length : s.lengths)
      s.T += length;
    s.Q = s.H;
  } else if (item.rfind("gva:", 0) == 0) {
    if (std::sscanf(item.c_str() + 4, "%ld,%ld,%ld,%ld,%ld", &s.B, &s.T, &s.Q,
                    &s.H, &s.K) != 5 ||
        s.Q < 1 || s.H % s.Q != 0)
      return false;
  } else {
    if (std::sscanf(item.c_str(), "%ld,%ld,%ld,%ld", &s.B, &s.T, &s.H, &s.K) !=
        4)
      return false;
    s.Q = s.H;
  }
  return true;
}

std::vector<Shape> parseShapes(const std::string &text) {
  return bench::parseShapeList<Shape>(
      text, "B,T,H,K, varlen:L1+L2+...,H,K or gva:B,T,Q,H,K", readShape);
}

/// The default cases: batches, 8 packed sequences of mixed lengths
/// totalling 32k tokens, and grouped value heads.
constexpr const char *kDefaultShapes =
    "4,4096,64,128;2,16384,16,128;1,8192,96,128;8,1024,8,64;"
    "varlen:1000+7191+513+9216+2047+4096+3073+5632,32,128;"
    "gva:2,8192,16,32,128";

/// Tokens x heads beyond which the emulation backend needs --allow-large.
constexpr int64_t kEmulationLimit = int64_t(1) << 16;

} // namespace

int main(int argc, char **argv) {
  return bench::benchMain(
      argc, argv, "rudnn-bench-kda", kDefaultShapes,
      "B,T,H,K;varlen:L1+L2+...,H,K;gva:B,T,Q,H,K;... (V = K)",
      [](Context &context, const bench::BenchOptions &options) {
        const std::vector<Shape> shapes = parseShapes(options.shapes);
        for (const Shape &s : shapes)
          bench::refuseLargeOnEmulation(context, options, s.B * s.T * s.H,
                                        kEmulationLimit, s.label);
        bench::printTableHeader(context, "%-40s %10s %10s %14s\n",
                                "shape (V = K)", "fwd ms", "TFLOP/s",
                                "fwd+bwd ms");
        nlohmann::json results = nlohmann::json::array();
        for (const Shape &s : shapes) {
          const int64_t K = s.K, V = s.K, C = 64;
          const bool packed = !s.lengths.empty();
          // States: one a batch entry, or one a packed sequence.
          const int64_t states =
              packed ? static_cast<int64_t>(s.lengths.size()) : s.B;
          reference::KdaShape shape{s.B, s.T, s.H, K, V};
          reference::KdaInputs in =
              test::randomKdaInputs(shape, -1, false, true, 7);
          reference::KdaInputs keys =
              test::randomKdaInputs({s.B, s.T, s.Q, K, V}, -1, false, true, 8);
          std::mt19937 random(9);
          std::vector<double> initial =
              test::normalValues(states * s.H * K * V, random);
          DeviceBuffer q = upload(context, keys.q, DType::BF16),
                       k = upload(context, keys.k, DType::BF16),
                       v = upload(context, in.v, DType::BF16),
                       g = upload(context, in.g, DType::F32),
                       beta = upload(context, in.beta, DType::BF16),
                       s0 = upload(context, initial, DType::F32);
          std::vector<double> offsets = {0};
          for (int64_t length : s.lengths)
            offsets.push_back(offsets.back() + length);
          DeviceBuffer cu = upload(context, offsets, DType::I32);
          DeviceBuffer out(context, s.B * s.T * s.H * V * 2),
              sT(context, states * s.H * K * V * 4);
          auto view = [](const DeviceBuffer &b, DType t,
                         std::vector<int64_t> d) {
            return TensorView::contiguous(b.data(), t, d);
          };
          KdaForwardInputs inputs{view(q, DType::BF16, {s.B, s.T, s.Q, K}),
                                  view(k, DType::BF16, {s.B, s.T, s.Q, K}),
                                  view(v, DType::BF16, {s.B, s.T, s.H, V}),
                                  view(g, DType::F32, {s.B, s.T, s.H, K}),
                                  view(beta, DType::BF16, {s.B, s.T, s.H}),
                                  view(s0, DType::F32, {states, s.H, K, V})};
          if (packed)
            inputs.cuSeqlens =
                view(cu, DType::I32, {static_cast<int64_t>(offsets.size())});
          KdaForwardOutputs outputs{view(out, DType::BF16, {s.B, s.T, s.H, V}),
                                    view(sT, DType::F32, {states, s.H, K, V}),
                                    std::nullopt, std::nullopt};
          KdaOptions kdaOptions;
          kdaOptions.chunk = C;
          const double ms =
              medianMs(context, options.warmup, options.repeats, [&] {
                kdaForward(context, inputs, outputs, kdaOptions);
              });

          // Forward + backward: a batch's forward saves its boundaries and
          // tiles and the backward starts from them; packed and grouped calls
          // compute them again in the backward.
          const KdaSavedShapes saved =
              kdaSavedShapes(context, inputs, kdaOptions);
          const bool saving = !packed && s.Q == s.H;
          const int64_t N = saving ? saved.tiles[0] : 0;
          DeviceBuffer bounds(context,
                              std::max<int64_t>(1, N * s.B * s.H * K * V * 2)),
              tiles(context,
                    std::max<int64_t>(1, N * s.B * s.H * saved.tiles[3] * 4)),
              dO = upload(context, in.v, DType::BF16),
              dq(context, s.B * s.T * s.Q * K * 2),
              dk(context, s.B * s.T * s.Q * K * 2),
              dv(context, s.B * s.T * s.H * V * 2),
              dg(context, s.B * s.T * s.H * K * 4),
              dbeta(context, s.B * s.T * s.H * 2),
              ds0(context, states * s.H * K * V * 4);
          KdaForwardOutputs forwardOutputs = outputs;
          KdaBackwardInputs backwardInputs{
              inputs, view(dO, DType::BF16, {s.B, s.T, s.H, V}), std::nullopt,
              std::nullopt, std::nullopt};
          if (saving) {
            forwardOutputs.boundaries =
                view(bounds, DType::BF16, saved.boundaries);
            forwardOutputs.tiles = view(tiles, DType::F32, saved.tiles);
            backwardInputs.boundaries = forwardOutputs.boundaries;
            backwardInputs.tiles = forwardOutputs.tiles;
          }
          KdaBackwardOutputs gradients{
              view(dq, DType::BF16, {s.B, s.T, s.Q, K}),
              view(dk, DType::BF16, {s.B, s.T, s.Q, K}),
              view(dv, DType::BF16, {s.B, s.T, s.H, V}),
              view(dg, DType::F32, {s.B, s.T, s.H, K}),
              view(dbeta, DType::BF16, {s.B, s.T, s.H}),
              view(ds0, DType::F32, {states, s.H, K, V})};
          auto step = [&] {
            kdaForward(context, inputs, forwardOutputs, kdaOptions);
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
          std::printf("%-40s %10.3f %10.2f %14.3f\n", s.label.c_str(), ms,
                      tflops, stepMs);
          nlohmann::json record = {{"case", s.label},  {"B", s.B},
                                   {"T", s.T},         {"Q", s.Q},
                                   {"H", s.H},         {"K", K},
                                   {"V", V},           {"ms", ms},
                                   {"tflops", tflops}, {"fwd_bwd_ms", stepMs}};
          if (packed)
            record["lengths"] = s.lengths;
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
      });
}
