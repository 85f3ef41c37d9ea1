//===- NormApiTest.cpp - Moments, LayerNorm, RMSNorm through the API ------===//
//
// Every form of row (a warp, a block, split) against the float64
// definitions: widths from 1 to 65536 with tails, rows far from zero and
// constant rows, f32 and bf16, the fused residual over strided [M, N, C]
// views, unaligned rows, compile counting and bad calls.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include "lib/reference/Compare.h"
#include "lib/reference/norm/NormReference.h"

#include <gmock/gmock.h>

#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

enum class Norm { Layer, Rms };

struct NormCase {
  DType dtype;
  int64_t M, N, C; // M = 0: x is [N, C]
  bool residual = false, gamma = true, beta = true;
  /// Elements between rows beyond C (0: dense); odd pads leave rows off
  /// 16 bytes.
  int64_t pad = 0;
  double offset = 0.5, scale = 1.0; // x = offset + scale · randn
};

class NormTest : public ApiTest {
protected:
  int64_t rows(const NormCase &c) { return (c.M ? c.M : 1) * c.N; }
  std::vector<int64_t> shape(const NormCase &c) {
    return c.M ? std::vector<int64_t>{c.M, c.N, c.C}
               : std::vector<int64_t>{c.N, c.C};
  }
  std::vector<int64_t> statShape(const NormCase &c) {
    return c.M ? std::vector<int64_t>{c.M, c.N} : std::vector<int64_t>{c.N};
  }

  /// Rows of `data` placed C + pad apart (x's or residual's layout).
  DeviceTensor rowsOf(const NormCase &c, const std::vector<double> &data) {
    const int64_t stride = c.C + c.pad;
    std::vector<double> padded(rows(c) * stride, 0.0);
    for (int64_t r = 0; r < rows(c); ++r)
      std::copy(data.begin() + r * c.C, data.begin() + (r + 1) * c.C,
                padded.begin() + r * stride);
    DeviceTensor t = dense(padded, {rows(c) * stride}, c.dtype);
    t.view.shape = shape(c);
    t.view.strides = c.M ? std::vector<int64_t>{c.N * stride, stride, 1}
                         : std::vector<int64_t>{stride, 1};
    return t;
  }

  std::vector<double> readRows(const NormCase &c, const DeviceTensor &t) {
    const int64_t stride = c.C + c.pad;
    std::vector<double> raw = read(t, rows(c) * stride), values;
    for (int64_t r = 0; r < rows(c); ++r)
      values.insert(values.end(), raw.begin() + r * stride,
                    raw.begin() + r * stride + c.C);
    return values;
  }

  std::vector<double> draw(size_t n, double offset, double scale,
                           std::mt19937 &random, DType dtype) {
    std::normal_distribution<double> normal;
    std::vector<double> v(n);
    for (double &x : v)
      x = offset + scale * normal(random);
    roundTo(dtype, {&v});
    return v;
  }

  struct Result {
    reference::NormOutputs want;
    std::vector<double> y, mean, second, h;
  };

  /// Runs `c` and returns what came back beside the reference's.
  Result run(Norm norm, const NormCase &c, unsigned seed, float eps = 1e-5f) {
    std::mt19937 random(seed);
    reference::NormInputs in;
    in.x = draw(rows(c) * c.C, c.offset, c.scale, random, c.dtype);
    if (c.residual)
      in.residual = draw(rows(c) * c.C, 0.0, 1.0, random, c.dtype);
    if (c.gamma)
      in.gamma = draw(c.C, 1.0, 0.5, random, c.dtype);
    if (c.beta && norm == Norm::Layer)
      in.beta = draw(c.C, 0.0, 0.5, random, c.dtype);
    DeviceTensor x = rowsOf(c, in.x),
                 y = rowsOf(c, std::vector<double>(rows(c) * c.C, 0.0)),
                 h = rowsOf(c, std::vector<double>(rows(c) * c.C, 0.0));
    std::optional<DeviceTensor> residual, gamma, beta;
    NormInputs inputs{x.view, {}, {}, {}};
    if (c.residual) {
      residual = rowsOf(c, in.residual);
      inputs.residual = residual->view;
    }
    if (!in.gamma.empty()) {
      gamma = dense(in.gamma, {c.C}, c.dtype);
      inputs.gamma = gamma->view;
    }
    if (!in.beta.empty()) {
      beta = dense(in.beta, {c.C}, c.dtype);
      inputs.beta = beta->view;
    }
    DeviceTensor mean = dense(std::vector<double>(rows(c)), statShape(c)),
                 second = dense(std::vector<double>(rows(c)), statShape(c));
    Result r;
    if (norm == Norm::Layer) {
      layerNorm(*context, inputs,
                {y.view, mean.view, second.view,
                 c.residual ? std::optional(h.view) : std::nullopt},
                eps);
      r.want = reference::layerNorm(in, c.C, eps);
      r.mean = read(mean, rows(c));
    } else {
      rmsNorm(*context, inputs,
              {y.view, second.view,
               c.residual ? std::optional(h.view) : std::nullopt},
              eps);
      r.want = reference::rmsNorm(in, c.C, eps);
    }
    r.y = readRows(c, y);
    r.second = read(second, rows(c));
    if (c.residual)
      r.h = readRows(c, h);
    return r;
  }

  void expectMatches(Norm norm, const NormCase &c, unsigned seed) {
    const double tolerance = c.dtype == DType::F32 ? 1e-5 : 1e-2;
    Result r = run(norm, c, seed);
    EXPECT_LE(reference::relativeError(r.y, r.want.y), tolerance)
        << "y, C = " << c.C;
    EXPECT_LE(reference::relativeError(r.second, r.want.rstd), 1e-5)
        << "rstd, C = " << c.C;
    if (norm == Norm::Layer) {
      EXPECT_LE(reference::relativeError(r.mean, r.want.mean), 1e-5)
          << "mean, C = " << c.C;
    }
    if (c.residual) {
      EXPECT_LE(reference::relativeError(r.h, r.want.h), tolerance)
          << "h, C = " << c.C;
    }
  }

  struct Gradients {
    reference::NormGradients want, got;
  };

  /// The backward of `c` at fresh dy and x, from the float64 forward's
  /// statistics (as f32, as a forward saves them).
  Gradients runBackward(Norm norm, const NormCase &c, unsigned seed) {
    std::mt19937 random(seed);
    reference::NormInputs in;
    in.x = draw(rows(c) * c.C, c.offset, c.scale, random, c.dtype);
    if (c.gamma)
      in.gamma = draw(c.C, 1.0, 0.5, random, c.dtype);
    std::vector<double> dy = draw(rows(c) * c.C, 0.0, 1.0, random, c.dtype);
    reference::NormOutputs forward = norm == Norm::Layer
                                         ? reference::layerNorm(in, c.C, 1e-5)
                                         : reference::rmsNorm(in, c.C, 1e-5);
    roundTo(DType::F32, {&forward.mean, &forward.rstd});
    DeviceTensor dyT = rowsOf(c, dy), x = rowsOf(c, in.x),
                 dx = rowsOf(c, std::vector<double>(rows(c) * c.C, 0.0)),
                 rstd = dense(forward.rstd, statShape(c)),
                 dgamma = dense(std::vector<double>(c.C), {c.C}, c.dtype),
                 dbeta = dense(std::vector<double>(c.C), {c.C}, c.dtype);
    std::optional<DeviceTensor> mean, gamma;
    NormBackwardInputs inputs{dyT.view, x.view, {}, rstd.view, {}};
    if (norm == Norm::Layer) {
      mean = dense(forward.mean, statShape(c));
      inputs.mean = mean->view;
    }
    if (c.gamma) {
      gamma = dense(in.gamma, {c.C}, c.dtype);
      inputs.gamma = gamma->view;
    }
    Gradients g;
    if (norm == Norm::Layer) {
      layerNormBackward(*context, inputs, {dx.view, dgamma.view, dbeta.view});
      g.got.dbeta = read(dbeta, c.C);
    } else {
      rmsNormBackward(*context, inputs, {dx.view, dgamma.view, {}});
    }
    g.got.dx = readRows(c, dx);
    g.got.dgamma = read(dgamma, c.C);
    g.want = reference::normBackward(
        dy, in.x, norm == Norm::Layer ? forward.mean : std::vector<double>(),
        forward.rstd, in.gamma, c.C);
    return g;
  }

  void expectGradients(Norm norm, const NormCase &c, unsigned seed) {
    const double tolerance = c.dtype == DType::F32 ? 1e-5 : 1e-2;
    Gradients g = runBackward(norm, c, seed);
    EXPECT_LE(reference::relativeError(g.got.dx, g.want.dx), tolerance)
        << "dx, C = " << c.C;
    EXPECT_LE(reference::relativeError(g.got.dgamma, g.want.dgamma), tolerance)
        << "dgamma, C = " << c.C;
    if (norm == Norm::Layer) {
      EXPECT_LE(reference::relativeError(g.got.dbeta, g.want.dbeta), tolerance)
          << "dbeta, C = " << c.C;
    }
  }

  /// Moments of `c`'s x.
  std::pair<std::vector<double>, std::vector<double>>
  runMoments(const NormCase &c, unsigned seed, reference::NormOutputs &want) {
    std::mt19937 random(seed);
    reference::NormInputs in;
    in.x = draw(rows(c) * c.C, c.offset, c.scale, random, c.dtype);
    DeviceTensor x = rowsOf(c, in.x),
                 mean = dense(std::vector<double>(rows(c)), statShape(c)),
                 var = dense(std::vector<double>(rows(c)), statShape(c));
    moments(*context, x.view, {mean.view, var.view});
    want = reference::layerNorm(in, c.C, 0.0);
    return {read(mean, rows(c)), read(var, rows(c))};
  }
};

// The sweeps over widths and dtypes: numerics, which the sanitizer build
// leaves to the release build.
class NormNumerics : public NormTest {};

// A warp a row up to 1024, a block a row up to 32768, split beyond; C = 1
// to 3 with their empty vectors, 127 and 4097 with odd tails.
TEST_F(NormNumerics, LayerNormAcrossWidths) {
  for (int64_t C : {1, 2, 3, 127, 1000, 4097, 65536})
    expectMatches(Norm::Layer, {DType::F32, 0, C > 4096 ? 3 : 9, C}, 1);
}

TEST_F(NormNumerics, RmsNormAcrossWidths) {
  for (int64_t C : {1, 3, 127, 1000, 4097, 65536})
    expectMatches(Norm::Rms, {DType::F32, 0, C > 4096 ? 2 : 7, C}, 2);
}

TEST_F(NormTest, ResidualOverOuterRowsAndPaddedStrides) {
  NormCase c{DType::F32, 2, 5, 1000, true};
  c.pad = 24; // 16-byte rows, not dense
  expectMatches(Norm::Layer, c, 3);
  expectMatches(Norm::Rms, c, 4);
  c.C = 40000; // split rows under a residual
  c.N = 1;
  expectMatches(Norm::Layer, c, 5);
}

TEST_F(NormTest, RowsOffSixteenBytesTakeScalarAccesses) {
  NormCase c{DType::F32, 0, 6, 1000, true};
  c.pad = 1;
  expectMatches(Norm::Layer, c, 6);
  c.dtype = DType::BF16;
  c.pad = 3;
  c.C = 4096;
  expectMatches(Norm::Rms, c, 7);
}

TEST_F(NormNumerics, Bf16WithinItsTolerance) {
  for (int64_t C : {127, 4096, 65536}) {
    NormCase c{DType::BF16, 0, C > 4096 ? 2 : 6, C, true};
    expectMatches(Norm::Layer, c, 8);
    expectMatches(Norm::Rms, c, 9);
  }
}

TEST_F(NormTest, WithoutGammaOrBeta) {
  NormCase c{DType::F32, 0, 4, 300, false, false, false};
  expectMatches(Norm::Layer, c, 10);
  expectMatches(Norm::Rms, c, 11);
}

// x = 1e4 + 0.01 · randn: E[x²] − E[x]² in f32 gives nothing useful; the
// one pass around each row's first element keeps the variance to 1e-3.
TEST_F(NormNumerics, MomentsOfDataFarFromZero) {
  for (int64_t C : {777, 4097, 65536}) {
    NormCase c{DType::F32, 0, 3, C};
    c.offset = 1e4;
    c.scale = 0.01;
    reference::NormOutputs want;
    auto [mean, var] = runMoments(c, 12, want);
    EXPECT_LE(reference::relativeError(var, want.var), 1e-3) << "C = " << C;
    EXPECT_LE(reference::relativeError(mean, want.mean), 1e-7) << "C = " << C;
  }
}

TEST_F(NormTest, MomentsOverOuterRows) {
  NormCase c{DType::BF16, 3, 4, 777};
  reference::NormOutputs want;
  auto [mean, var] = runMoments(c, 13, want);
  EXPECT_LE(reference::relativeError(var, want.var), 1e-5);
  EXPECT_LE(reference::relativeError(mean, want.mean), 1e-5);
}

// A constant row has variance 0 and a finite rstd, 1 / sqrt(eps): y = beta.
TEST_F(NormNumerics, ConstantRows) {
  for (int64_t C : {5, 40000}) {
    NormCase c{DType::F32, 0, 3, C};
    c.scale = 0.0;
    c.offset = 3.25;
    Result r = run(Norm::Layer, c, 14);
    for (double rstd : r.second)
      EXPECT_FLOAT_EQ(rstd, 1.0 / std::sqrt(double(1e-5f))) << "C = " << C;
    EXPECT_LE(reference::relativeError(r.y, r.want.y), 1e-6) << "C = " << C;
    reference::NormOutputs want;
    auto [mean, var] = runMoments(c, 14, want);
    for (size_t i = 0; i < var.size(); ++i) {
      EXPECT_EQ(var[i], 0.0);
      EXPECT_EQ(mean[i], 3.25);
    }
  }
}

TEST_F(NormTest, ChangingRowsOrEpsCompilesNothing) {
  auto call = [&](int64_t M, int64_t N, float eps) {
    NormCase c{DType::F32, M, N, 300, true};
    run(Norm::Layer, c, unsigned(M * 10 + N), eps);
  };
  call(2, 3, 1e-5f);
  const Counters before = context->counters();
  call(1, 17, 1e-5f);
  call(4, 1, 1e-3f);
  EXPECT_EQ(kernelsBuilt(context->counters()), kernelsBuilt(before));
}

// A warp a row up to 512 (the backward holds three values an element), a
// block a row up to 16384, split beyond.
TEST_F(NormNumerics, LayerNormGradientsAcrossWidths) {
  for (int64_t C : {1, 3, 127, 1000, 4097, 65536})
    expectGradients(Norm::Layer, {DType::F32, 0, C > 4096 ? 3 : 9, C}, 20);
}

TEST_F(NormNumerics, RmsNormGradientsOverOuterRowsAndPaddedStrides) {
  for (int64_t C : {5, 1000, 40000}) {
    NormCase c{DType::F32, 2, 3, C};
    c.pad = 8;
    expectGradients(Norm::Rms, c, 21);
  }
  NormCase bare{DType::F32, 0, 4, 300, false, false};
  expectGradients(Norm::Rms, bare, 22);
  expectGradients(Norm::Layer, bare, 23);
}

TEST_F(NormNumerics, Bf16GradientsWithinTheirTolerance) {
  for (int64_t C : {200, 4096, 40000}) {
    NormCase c{DType::BF16, 0, C > 4096 ? 2 : 5, C};
    expectGradients(Norm::Layer, c, 24);
    expectGradients(Norm::Rms, c, 25);
  }
}

// More rows than walking blocks, so every block sums several: the column
// sums come out the same, bit for bit, call after call.
TEST_F(NormTest, ColumnGradientsAreDeterministic) {
  const NormCase c{DType::F32, 0, 1200, 96};
  const Gradients first = runBackward(Norm::Layer, c, 26);
  EXPECT_LE(reference::relativeError(first.got.dgamma, first.want.dgamma),
            1e-5);
  for (int run = 0; run < 2; ++run) {
    const Gradients again = runBackward(Norm::Layer, c, 26);
    EXPECT_EQ(again.got.dgamma, first.got.dgamma);
    EXPECT_EQ(again.got.dbeta, first.got.dbeta);
    EXPECT_EQ(again.got.dx, first.got.dx);
  }
}

TEST_F(NormTest, BadCallsWriteNothing) {
  const std::vector<double> sentinel(4 * 8, 7.0);
  DeviceTensor x = dense(std::vector<double>(4 * 8, 1.0), {4, 8}),
               y = dense(sentinel, {4, 8}), h = dense(sentinel, {4, 8}),
               gamma = dense(std::vector<double>(8, 1.0), {8}),
               wrongGamma = dense(std::vector<double>(9, 1.0), {9}),
               stats = dense(std::vector<double>(4, 7.0), {4}),
               halfStats = dense(std::vector<double>(4, 7.0), {4}, DType::BF16),
               flat = dense(std::vector<double>(8, 1.0), {8});
  auto expectRejected = [&](const std::function<void()> &call,
                            const std::string &message) {
    EXPECT_THAT(call,
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
    EXPECT_EQ(read(y, sentinel.size()), sentinel);
  };
  expectRejected(
      [&] {
        layerNorm(*context, {flat.view, {}, {}, {}}, {y.view, {}, {}, {}});
      },
      "'x' must be [N, C] or [M, N, C]");
  expectRejected(
      [&] {
        layerNorm(*context, {x.view, {}, wrongGamma.view, {}},
                  {y.view, {}, {}, {}});
      },
      "gamma");
  expectRejected(
      [&] {
        layerNorm(*context, {x.view, {}, gamma.view, {}},
                  {y.view, halfStats.view, {}, {}});
      },
      "mean");
  expectRejected(
      [&] {
        layerNorm(*context, {x.view, {}, {}, {}},
                  {y.view, {}, {}, std::optional(h.view)});
      },
      "needs a 'residual'");
  expectRejected(
      [&] {
        layerNorm(*context, {x.view, {}, {}, {}}, {y.view, {}, {}, {}}, -1.0f);
      },
      "'eps'");
  expectRejected(
      [&] {
        rmsNorm(*context, {x.view, {}, gamma.view, gamma.view},
                {y.view, {}, {}});
      },
      "'beta'");
  expectRejected(
      [&] {
        rmsNorm(*context, {x.view, {}, {}, {}}, {y.view, y.view, {}});
      },
      "rstd");
  EXPECT_THAT(
      [&] {
        moments(*context, x.view, {stats.view, flat.view});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("var")));
  const NormBackwardInputs backward{x.view, x.view, stats.view, stats.view,
                                    gamma.view};
  expectRejected(
      [&] {
        NormBackwardInputs noMean = backward;
        noMean.mean.reset();
        layerNormBackward(*context, noMean, {y.view, {}, {}});
      },
      "'mean' is missing");
  expectRejected(
      [&] {
        rmsNormBackward(*context, backward, {y.view, {}, {}});
      },
      "'mean'");
  expectRejected(
      [&] {
        NormBackwardInputs rms = backward;
        rms.mean.reset();
        rmsNormBackward(*context, rms, {y.view, {}, gamma.view});
      },
      "'dbeta'");
  expectRejected(
      [&] {
        layerNormBackward(*context, backward, {y.view, wrongGamma.view, {}});
      },
      "dgamma");
  expectRejected(
      [&] {
        NormBackwardInputs wrongRstd = backward;
        wrongRstd.rstd = halfStats.view;
        layerNormBackward(*context, wrongRstd, {y.view, {}, {}});
      },
      "rstd");
}

} // namespace
