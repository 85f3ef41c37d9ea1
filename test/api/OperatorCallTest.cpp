//===- OperatorCallTest.cpp - Any operator through callOperator -----------===//
//
// callOperator builds each operator's function from its contract: its
// results match the typed entry points' bit for bit (the same kernels run;
// the typed entry points are checked against float64 in their own suites),
// and bad names and values are refused naming them.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"
#include "rudnn/kda.h"
#include "rudnn/kv_cache.h"
#include "rudnn/lstm.h"
#include "rudnn/norm.h"
#include "rudnn/operator.h"

#include <gmock/gmock.h>

#include <random>

namespace rudnn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class OperatorCall : public ApiTest {
protected:
  std::vector<double> random(size_t count, double spread = 1.0) {
    std::normal_distribution<double> normal(0.0, spread);
    std::vector<double> values(count);
    for (double &x : values)
      x = normal(engine);
    return values;
  }
  DeviceTensor zeros(std::vector<int64_t> shape, DType dtype = DType::F32) {
    size_t count = 1;
    for (int64_t d : shape)
      count *= d;
    return dense(std::vector<double>(count, 0.0), shape, dtype);
  }
  DeviceTensor ints(const std::vector<double> &values) {
    DeviceTensor tensor = upload(bytesOf<int32_t>(values), DType::I32);
    tensor.view = TensorView::contiguous(tensor.view.data, DType::I32,
                                         {static_cast<int64_t>(values.size())});
    return tensor;
  }
  std::vector<int32_t> readInts(const DeviceTensor &tensor) {
    std::vector<int32_t> values(static_cast<size_t>(tensor.view.numel()));
    context->copyToHost(values.data(), tensor.view.data,
                        values.size() * sizeof(int32_t));
    context->synchronize();
    return values;
  }
  /// Every element of both, equal bit for bit (as doubles of the values).
  void expectSame(const DeviceTensor &a, const DeviceTensor &b,
                  const std::string &what) {
    const size_t count = static_cast<size_t>(a.view.numel());
    ASSERT_EQ(count, static_cast<size_t>(b.view.numel())) << what;
    const std::vector<double> x = read(a, count), y = read(b, count);
    for (size_t i = 0; i < count; ++i)
      ASSERT_TRUE(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))
          << what << "[" << i << "]: " << x[i] << " vs " << y[i];
  }
  std::mt19937 engine{2026};
};

TEST_F(OperatorCall, LayerNormOfOuterRowsMatchesTheTypedEntry) {
  const int64_t M = 2, N = 37, C = 96;
  DeviceTensor x = dense(random(M * N * C, 3.0), {M, N, C}),
               residual = dense(random(M * N * C), {M, N, C}),
               gamma = dense(random(C), {C}), beta = dense(random(C), {C});
  DeviceTensor y1 = zeros({M, N, C}), y2 = zeros({M, N, C}),
               mean1 = zeros({M, N}), mean2 = zeros({M, N}),
               rstd1 = zeros({M, N}), rstd2 = zeros({M, N}),
               h1 = zeros({M, N, C}), h2 = zeros({M, N, C});
  layerNorm(*context, {x.view, residual.view, gamma.view, beta.view},
            {y1.view, mean1.view, rstd1.view, h1.view}, 1e-3f);
  callOperator(*context, "rudnn.layer_norm", {{"eps", 1e-3}},
               {{"x", x.view},
                {"residual", residual.view},
                {"gamma", gamma.view},
                {"beta", beta.view},
                {"y", y2.view},
                {"mean", mean2.view},
                {"rstd", rstd2.view},
                {"h", h2.view}});
  expectSame(y1, y2, "y");
  expectSame(mean1, mean2, "mean");
  expectSame(rstd1, rstd2, "rstd");
  expectSame(h1, h2, "h");
  // Rows alone, the results asked for only: y.
  DeviceTensor x2 = dense(random(N * C), {N, C}, DType::BF16);
  DeviceTensor y3 = zeros({N, C}, DType::BF16), y4 = zeros({N, C}, DType::BF16);
  NormInputs rows;
  rows.x = x2.view;
  RmsNormOutputs normalised;
  normalised.y = y3.view;
  rmsNorm(*context, rows, normalised);
  callOperator(*context, "rudnn.rms_norm", {{"eps", 1e-6}},
               {{"x", x2.view}, {"y", y4.view}});
  expectSame(y3, y4, "rms_norm y");
}

TEST_F(OperatorCall, AttentionWithEveryOptionMatchesTheTypedEntry) {
  const int64_t B = 2, T = 33, S = 45, H = 4, G = 2, D = 32;
  DeviceTensor q = dense(random(B * T * H * D), {B, T, H, D}, DType::F16),
               k = dense(random(B * S * G * D), {B, S, G, D}, DType::F16),
               v = dense(random(B * S * G * D), {B, S, G, D}, DType::F16),
               lengths = ints({45, 30});
  DeviceTensor o1 = zeros({B, T, H, D}, DType::F16),
               o2 = zeros({B, T, H, D}, DType::F16), lse1 = zeros({B, H, T}),
               lse2 = zeros({B, H, T});
  AttentionOptions options;
  options.causal = true;
  options.scale = 0.2f;
  options.softcap = 30.0f;
  options.windowLeft = 9;
  options.windowRight = 0;
  AttentionInputs in;
  in.q = q.view, in.k = k.view, in.v = v.view, in.keyLengths = lengths.view;
  AttentionOutputs out;
  out.o = o1.view, out.lse = lse1.view;
  attentionForward(*context, in, out, options);
  callOperator(*context, "rudnn.attention",
               {{"causal", true},
                {"scale", 0.2},
                {"softcap", 30.0},
                {"window_left", int64_t(9)},
                {"window_right", int64_t(0)}},
               {{"q", q.view},
                {"k", k.view},
                {"v", v.view},
                {"key_lengths", lengths.view},
                {"o", o2.view},
                {"lse", lse2.view}});
  expectSame(o1, o2, "o");
  expectSame(lse1, lse2, "lse");
}

TEST_F(OperatorCall, KvCacheUpdatedInPlaceUnderOneName) {
  const int64_t B = 2, T = 1, H = 4, G = 2, D = 32, S = 16;
  const std::vector<double> cacheK = random(B * S * G * D),
                            cacheV = random(B * S * G * D);
  DeviceTensor q = dense(random(B * T * H * D), {B, T, H, D}),
               k = dense(random(B * T * G * D), {B, T, G, D}),
               v = dense(random(B * T * G * D), {B, T, G, D}),
               lengths = ints({3, 9});
  DeviceTensor k1 = dense(cacheK, {B, S, G, D}),
               v1 = dense(cacheV, {B, S, G, D}),
               k2 = dense(cacheK, {B, S, G, D}),
               v2 = dense(cacheV, {B, S, G, D});
  DeviceTensor o1 = zeros({B, T, H, D}), o2 = zeros({B, T, H, D}),
               status = ints({7, 7});
  KvCacheInputs in;
  in.q = q.view, in.k = k.view, in.v = v.view, in.kCache = k1.view;
  in.vCache = v1.view, in.cacheLengths = lengths.view;
  KvCacheOutputs out;
  out.o = o1.view;
  kvCacheAttention(*context, in, out);
  callOperator(*context, "rudnn.kv_cache_attention", {},
               {{"q", q.view},
                {"k", k.view},
                {"v", v.view},
                {"k_cache", k2.view},
                {"v_cache", v2.view},
                {"cache_lengths", lengths.view},
                {"o", o2.view},
                {"status", status.view}});
  expectSame(o1, o2, "o");
  expectSame(k1, k2, "k_cache");
  expectSame(v1, v2, "v_cache");
  EXPECT_EQ(readInts(status), (std::vector<int32_t>{0, 0}));
}

TEST_F(OperatorCall, BidirectionalLstmWithNamedWeightsMatchesTheTypedEntry) {
  const int64_t T = 7, B = 3, I = 12, Hd = 16, L = 2;
  DeviceTensor x = dense(random(T * B * I), {T, B, I});
  std::vector<DeviceTensor> weights;
  LstmInputs in{x.view, std::nullopt, std::nullopt, {}, std::nullopt};
  NamedTensors named = {{"x", x.view}};
  for (int64_t layer = 0; layer < L; ++layer)
    for (int64_t direction = 0; direction < 2; ++direction) {
      const int64_t inputs = layer == 0 ? I : 2 * Hd;
      const std::vector<std::vector<int64_t>> shapes = {
          {4 * Hd, inputs}, {4 * Hd, Hd}, {4 * Hd}, {4 * Hd}};
      const char *kinds[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
      for (int which = 0; which < 4; ++which) {
        int64_t count = 1;
        for (int64_t d : shapes[which])
          count *= d;
        weights.push_back(dense(random(count, 0.3), shapes[which]));
        const std::string name = std::string(kinds[which]) + "_l" +
                                 std::to_string(layer) +
                                 (direction ? "_reverse" : "");
        in.weights[name] = weights.back().view;
        named.emplace_back(name, weights.back().view);
      }
    }
  DeviceTensor out1 = zeros({T, B, 2 * Hd}), out2 = zeros({T, B, 2 * Hd}),
               hN1 = zeros({2 * L, B, Hd}), hN2 = zeros({2 * L, B, Hd});
  LstmOptions options;
  options.numLayers = L;
  options.bidirectional = true;
  LstmOutputs out;
  out.out = out1.view, out.hN = hN1.view;
  lstmForward(*context, in, out, options);
  named.emplace_back("out", out2.view);
  named.emplace_back("h_n", hN2.view);
  callOperator(*context, "rudnn.lstm",
               {{"num_layers", int64_t(L)}, {"bidirectional", true}}, named);
  expectSame(out1, out2, "out");
  expectSame(hN1, hN2, "h_n");
}

TEST_F(OperatorCall, KdaForwardFromAnInitialStateMatchesTheTypedEntry) {
  const int64_t B = 1, T = 37, H = 2, K = 16, V = 24;
  DeviceTensor q = dense(random(B * T * H * K), {B, T, H, K}),
               k = dense(random(B * T * H * K), {B, T, H, K}),
               v = dense(random(B * T * H * V), {B, T, H, V});
  std::vector<double> decay = random(B * T * H * K);
  for (double &x : decay)
    x = -std::abs(x) * 0.1;
  std::vector<double> gates = random(B * T * H);
  for (double &x : gates)
    x = 1.0 / (1.0 + std::exp(-x));
  DeviceTensor g = dense(decay, {B, T, H, K}), beta = dense(gates, {B, T, H}),
               s0 = dense(random(B * H * K * V, 0.5), {B, H, K, V});
  DeviceTensor o1 = zeros({B, T, H, V}), o2 = zeros({B, T, H, V}),
               s1 = zeros({B, H, K, V}), s2 = zeros({B, H, K, V});
  KdaForwardInputs in{q.view, k.view, v.view, g.view, beta.view, s0.view};
  KdaForwardOutputs out;
  out.output = o1.view, out.finalState = s1.view;
  kdaForward(*context, in, out);
  callOperator(*context, "rudnn.kda", {},
               {{"q", q.view},
                {"k", k.view},
                {"v", v.view},
                {"g", g.view},
                {"beta", beta.view},
                {"initial_state", s0.view},
                {"output", o2.view},
                {"final_state", s2.view}});
  expectSame(o1, o2, "output");
  expectSame(s1, s2, "final_state");
}

TEST_F(OperatorCall, AFunctionOfTheOperatorSizesItsResultsBeforeTheCall) {
  const int64_t N = 19, C = 40;
  DeviceTensor x = dense(random(N * C), {N, C}), gamma = dense(random(C), {C});
  Function norm =
      operatorFunction(*context, "rudnn.rms_norm", {{"eps", 1e-4}},
                       {{"x", x.view}, {"gamma", gamma.view}}, {"rstd", "y"});
  ASSERT_EQ(norm.results().size(), 2u);
  EXPECT_EQ(norm.results()[0].name, "y"); // the contract's order
  EXPECT_EQ(norm.resultShapes({x.view, gamma.view}),
            (std::vector<std::vector<int64_t>>{{N, C}, {N}}));
  DeviceTensor y1 = zeros({N, C}), rstd1 = zeros({N}), y2 = zeros({N, C}),
               rstd2 = zeros({N});
  norm.call({x.view, gamma.view}, {y1.view, rstd1.view});
  callOperator(*context, "rudnn.rms_norm", {{"eps", 1e-4}},
               {{"x", x.view},
                {"gamma", gamma.view},
                {"y", y2.view},
                {"rstd", rstd2.view}});
  expectSame(y1, y2, "y");
  expectSame(rstd1, rstd2, "rstd");
  EXPECT_THAT(
      [&] {
        operatorFunction(*context, "rudnn.rms_norm", {}, {{"x", x.view}},
                         {"gamma"});
      },
      ThrowsMessage<InvalidArgument>(
          HasSubstr("'gamma' is not a result of rudnn.rms_norm")));
}

TEST_F(OperatorCall, BadNamesAndValuesAreNamed) {
  DeviceTensor x = dense(random(4 * 8), {4, 8}), y = zeros({4, 8});
  const NamedTensors rows = {{"x", x.view}, {"y", y.view}};
  EXPECT_THAT([&] { callOperator(*context, "rudnn.layer_nrom", {}, rows); },
              ThrowsMessage<Unsupported>(
                  HasSubstr("no operator 'rudnn.layer_nrom' (it has")));
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm", {{"epsilon", 1.0}}, rows);
      },
      ThrowsMessage<InvalidArgument>(HasSubstr(
          "'epsilon' is not an attribute of rudnn.layer_norm (its attributes "
          "are")));
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm", {{"eps", std::string("1")}},
                     rows);
      },
      ThrowsMessage<InvalidArgument>(
          HasSubstr("attribute 'eps' of rudnn.layer_norm cannot be the string "
                    "'1'")));
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm", {},
                     {{"x", x.view}, {"y", y.view}, {"z", y.view}});
      },
      ThrowsMessage<InvalidArgument>(
          HasSubstr("'z' is not a tensor of rudnn.layer_norm")));
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm", {},
                     {{"x", x.view}, {"x", x.view}, {"y", y.view}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'x' is given twice")));
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm",
                     {{"eps", 1e-3}, {"eps", 1e-4}}, rows);
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'eps' is given twice")));
  // Attributes that choose the contract are bounded before they size it.
  EXPECT_THROW(callOperator(*context, "rudnn.lstm",
                            {{"num_layers", int64_t(1) << 40}},
                            {{"x", x.view}, {"out", y.view}}),
               InvalidArgument);
  // The operator's own rules: a negative eps, named by its verifier.
  EXPECT_THROW(
      callOperator(*context, "rudnn.layer_norm", {{"eps", -1.0}}, rows),
      InvalidArgument);
  // The contract's checks on the views, as for the typed entry points.
  DeviceTensor wrong = zeros({4, 9});
  EXPECT_THAT(
      [&] {
        callOperator(*context, "rudnn.layer_norm", {},
                     {{"x", x.view}, {"y", wrong.view}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'y'")));
}

TEST_F(OperatorCall, EveryOperatorOpIsReachable) {
  const std::vector<std::string> names = operatorNames();
  for (const char *op :
       {"rudnn.attention", "rudnn.attention_backward", "rudnn.attention_varlen",
        "rudnn.attention_varlen_backward", "rudnn.kda", "rudnn.kda_backward",
        "rudnn.kda_decode", "rudnn.kda_varlen", "rudnn.kda_varlen_backward",
        "rudnn.kv_cache_attention", "rudnn.kv_cache_attention_paged",
        "rudnn.layer_norm", "rudnn.layer_norm_backward", "rudnn.lstm",
        "rudnn.moments", "rudnn.rms_norm", "rudnn.rms_norm_backward"})
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op;
  // Primitives are not operators.
  EXPECT_EQ(std::find(names.begin(), names.end(), "rudnn.norm_rows"),
            names.end());
}

} // namespace
} // namespace rudnn::test
