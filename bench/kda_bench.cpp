//===- kda_bench.cpp - Kimi Delta Attention timings -----------------------===//
//
//   rudnn-bench-kda [--backend auto|cuda|emulation] [--repeats N]
//                   [--shapes B,T,H,K;...] [--json FILE]
//
// Times rudnn::kdaForward in bf16 (g fp32) on random inputs drawn as real
// callers provide them, after a warm-up call that compiles. Reports the
// median wall time of `repeats` synchronized calls and the rate in TFLOP/s,
// counting 2·B·H·T·(3KV + 2CK + CV + C(K+V)/2) flops: the state products
// (W·S, Kdᵀ·U, Qd·S), the pairwise matrices, the intra-chunk output and the
// products by (I + A)⁻¹. Then forward + backward as a training step runs
// them: the forward saving its boundaries, the backward starting from them;
// and that step once more with each launch timed, for where its time goes.
//
//===----------------------------------------------------------------------===//

#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace rudnn;

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

/// Device memory holding `count` elements of `dtype` drawn from `values`.
DeviceBuffer upload(Context &context, const std::vector<double> &values,
                    DType dtype) {
  DeviceBuffer buffer(context, values.size() * dtypeSize(dtype));
  std::vector<unsigned char> bytes(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    float x = static_cast<float>(values[i]);
    if (dtype == DType::BF16) {
      uint16_t bits = test::toBf16(x);
      std::memcpy(&bytes[2 * i], &bits, 2);
    } else {
      std::memcpy(&bytes[4 * i], &x, 4);
    }
  }
  context.copyToDevice(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

/// The median wall time of `repeats` synchronized runs of `call`, after a
/// warm-up run that compiles.
template <typename Call>
double medianMs(Context &context, int repeats, Call call) {
  call();
  context.synchronize();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    call();
    context.synchronize();
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::string backend = "auto", json,
              shapesText = "4,4096,64,128;2,16384,16,128;1,8192,96,128;"
                           "8,1024,8,64";
  int repeats = 20;
  const char *usage =
      "usage: rudnn-bench-kda [--backend auto|cuda|emulation] [--repeats N]\n"
      "                       [--shapes B,T,H,K;...] [--json FILE]\n";
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "rudnn-bench-kda: %s wants a value\n%s", argv[i],
                   usage);
      return 2;
    }
    if (flag == "--backend")
      backend = argv[i + 1];
    else if (flag == "--repeats")
      repeats = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--shapes")
      shapesText = argv[i + 1];
    else if (flag == "--json")
      json = argv[i + 1];
    else {
      std::fprintf(stderr, "rudnn-bench-kda: unknown option %s\n%s", argv[i],
                   usage);
      return 2;
    }
  }
  try {
    ContextOptions options;
    options.backend = parseBackend(backend);
    Context context(options);
    std::printf("device: %s\n", context.deviceDescription().c_str());
    std::printf("%-22s %10s %10s %14s\n", "B,T,H,K=V", "fwd ms", "TFLOP/s",
                "fwd+bwd ms");
    std::fflush(stdout);
    std::ostringstream records;
    for (const Shape &s : parseShapes(shapesText)) {
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
                                std::nullopt};
      KdaOptions kdaOptions;
      kdaOptions.chunk = C;
      const double ms = medianMs(context, repeats, [&] {
        kdaForward(context, inputs, outputs, kdaOptions);
      });

      // Forward (saving boundaries) + backward from them.
      const int64_t N = (s.T + C - 1) / C;
      DeviceBuffer bounds(context, N * s.B * s.H * K * V * 4),
          dO = upload(context, in.v, DType::BF16),
          dq(context, s.B * s.T * s.H * K * 2),
          dk(context, s.B * s.T * s.H * K * 2),
          dv(context, s.B * s.T * s.H * V * 2),
          dg(context, s.B * s.T * s.H * K * 4),
          dbeta(context, s.B * s.T * s.H * 2),
          ds0(context, s.B * s.H * K * V * 4);
      KdaForwardOutputs saving = outputs;
      saving.boundaries = view(bounds, DType::F32, {N, s.B, s.H, K, V});
      KdaBackwardInputs backwardInputs{
          inputs, view(dO, DType::BF16, {s.B, s.T, s.H, V}), std::nullopt,
          saving.boundaries};
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
      const double stepMs = medianMs(context, repeats, step);
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
      std::fflush(stdout);
      records << (records.tellp() > 0 ? ",\n" : "") << "  {\"B\": " << s.B
              << ", \"T\": " << s.T << ", \"H\": " << s.H << ", \"K\": " << K
              << ", \"V\": " << V << ", \"ms\": " << ms
              << ", \"tflops\": " << tflops << ", \"fwd_bwd_ms\": " << stepMs
              << ", \"step_kernels_ms\": {";
      for (size_t i = 0; i < kernels.size(); ++i) {
        std::printf("    %-48s %3lu x %10.3f ms\n", kernels[i].kernel.c_str(),
                    (unsigned long)kernels[i].launches,
                    kernels[i].milliseconds);
        records << (i ? ", " : "") << "\"" << kernels[i].kernel
                << "\": " << kernels[i].milliseconds;
      }
      records << "}}";
      // Rewritten after every shape: a run cut short keeps what it measured.
      if (!json.empty())
        std::ofstream(json) << "{\"op\": \"kda_forward\", \"dtype\": "
                               "\"bf16\", \"results\": [\n"
                            << records.str() << "\n]}\n";
    }
    return 0;
  } catch (const std::exception &error) {
    std::fprintf(stderr, "rudnn-bench-kda: %s\n", error.what());
    return 1;
  }
}
