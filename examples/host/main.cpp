//===- main.cpp - A host program linking an installed rudnn ---------------===//
//
// Runs Kimi Delta Attention through the operator API and an RMSNorm written
// in rudnn IR through the Program API, and checks each against a direct
// float64 computation. `rudnn-host-example [auto|cuda|emulation]`.
//
//===----------------------------------------------------------------------===//

#include "rudnn/rudnn.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

std::mt19937 generator(2026);

std::vector<float> draw(size_t count, float low, float high) {
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(count);
  for (float &value : values)
    value = uniform(generator);
  return values;
}

/// A host vector copied to the context's memory, with its view.
struct Tensor {
  rudnn::DeviceBuffer buffer;
  rudnn::TensorView view;
  Tensor(rudnn::Context &context, const std::vector<float> &values,
         std::vector<int64_t> shape)
      : buffer(context, values.size() * sizeof(float)),
        view(rudnn::TensorView::contiguous(buffer.data(), rudnn::DType::F32,
                                           std::move(shape))) {
    context.copyToDevice(buffer.data(), values.data(), buffer.size());
  }
  std::vector<float> read(rudnn::Context &context) const {
    std::vector<float> values(buffer.size() / sizeof(float));
    context.copyToHost(values.data(), buffer.data(), buffer.size());
    return values;
  }
};

double maxError(const std::vector<float> &got,
                const std::vector<double> &expected) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - expected[i]));
  return worst;
}

/// KDA, token by token: S = diag(exp(g)) S; S += k (beta (v - kᵀS))ᵀ;
/// o = scale · qᵀS, from a zero state.
double checkKda(rudnn::Context &context) {
  const int64_t T = 37, H = 2, K = 16, V = 16;
  std::vector<float> q = draw(T * H * K, -1, 1), k = draw(T * H * K, -1, 1),
                     v = draw(T * H * V, -1, 1), g = draw(T * H * K, -0.5, 0),
                     beta = draw(T * H, 0, 1);
  for (int64_t row = 0; row < T * H; ++row) { // unit-norm keys
    double norm = 0;
    for (int64_t i = 0; i < K; ++i)
      norm += k[row * K + i] * k[row * K + i];
    for (int64_t i = 0; i < K; ++i)
      k[row * K + i] /= std::sqrt(norm);
  }
  Tensor tq(context, q, {1, T, H, K}), tk(context, k, {1, T, H, K}),
      tv(context, v, {1, T, H, V}), tg(context, g, {1, T, H, K}),
      tbeta(context, beta, {1, T, H}),
      output(context, std::vector<float>(T * H * V), {1, T, H, V});
  rudnn::kdaForward(context, {tq.view, tk.view, tv.view, tg.view, tbeta.view},
                    {output.view});

  const double scale = 1 / std::sqrt(double(K));
  std::vector<double> expected(T * H * V);
  for (int64_t h = 0; h < H; ++h) {
    std::vector<double> state(K * V, 0.0);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t row = t * H + h;
      for (int64_t j = 0; j < V; ++j) {
        double predicted = 0;
        for (int64_t i = 0; i < K; ++i) {
          state[i * V + j] *= std::exp(g[row * K + i]);
          predicted += state[i * V + j] * k[row * K + i];
        }
        const double update = beta[row] * (v[row * V + j] - predicted);
        double out = 0;
        for (int64_t i = 0; i < K; ++i) {
          state[i * V + j] += k[row * K + i] * update;
          out += state[i * V + j] * q[row * K + i];
        }
        expected[row * V + j] = scale * out;
      }
    }
  }
  return maxError(output.read(context), expected);
}

/// RMSNorm over rows of 64 features, compiled from rudnn IR.
double checkRmsNorm(rudnn::Context &context) {
  const char *program = R"(
    func.func @main(%x: tensor<?x64xf32> {rudnn.name = "x"},
                    %gamma: tensor<64xf32> {rudnn.name = "gamma"})
        -> (tensor<?x64xf32> {rudnn.name = "y"}) {
      %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06
          : (tensor<?x64xf32>, tensor<64xf32>)
          -> (tensor<?x64xf32>, tensor<?xf32>, tensor<?x64xf32>)
      return %y : tensor<?x64xf32>
    })";
  rudnn::Function main =
      rudnn::Module::parse(context, program).function("main");
  const int64_t rows = 19, C = 64;
  std::vector<float> x = draw(rows * C, -3, 3), gamma = draw(C, 0.5, 1.5);
  Tensor tx(context, x, {rows, C}), tgamma(context, gamma, {C}),
      y(context, std::vector<float>(rows * C), {rows, C});
  main.call({tx.view, tgamma.view}, {y.view});

  std::vector<double> expected(rows * C);
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (int64_t c = 0; c < C; ++c)
      squares += double(x[r * C + c]) * x[r * C + c];
    const double rstd = 1 / std::sqrt(squares / C + 1e-6);
    for (int64_t c = 0; c < C; ++c)
      expected[r * C + c] = x[r * C + c] * rstd * gamma[c];
  }
  return maxError(y.read(context), expected);
}

} // namespace

int main(int argc, char **argv) {
  try {
    rudnn::ContextOptions options;
    if (argc > 1)
      options.backend = rudnn::parseBackend(argv[1]);
    rudnn::Context context(options);
    std::printf("rudnn %s on %s\n", rudnn::version(),
                context.deviceDescription().c_str());
    const double kda = checkKda(context), norm = checkRmsNorm(context);
    std::printf("kda max error %.3g, rms_norm max error %.3g\n", kda, norm);
    return kda < 1e-4 && norm < 1e-5 ? 0 : 1;
  } catch (const rudnn::Error &error) {
    std::fprintf(stderr, "rudnn: %s\n", error.what());
    return 2;
  }
}
