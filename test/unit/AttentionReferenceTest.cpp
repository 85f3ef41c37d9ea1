//===- AttentionReferenceTest.cpp - The float64 attention gradient checked ===//
//
// The analytic backward of the reference against central finite
// differences of its forward, for every element of q, k and v, with every
// restriction of the keys at once, GQA, T ≠ S and rows with no allowed key;
// packed batches likewise, entry by entry.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/attention/AttentionReference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace rudnn::reference;

namespace {

std::vector<double> draw(size_t n, std::mt19937 &random) {
  std::normal_distribution<double> normal;
  std::vector<double> values(n);
  for (double &value : values)
    value = normal(random);
  return values;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i)
    total += a[i] * b[i];
  return total;
}

/// Checks `analytic` against central differences of `loss` in each element
/// of `x` (changed in place and restored).
void expectFiniteDifferences(std::vector<double> &x,
                             const std::vector<double> &analytic,
                             const std::function<double()> &loss,
                             const char *what) {
  ASSERT_EQ(x.size(), analytic.size());
  const double step = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + step;
    const double up = loss();
    x[i] = saved - step;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2 * step);
    EXPECT_NEAR(analytic[i], numeric, 1e-6 * (1 + std::fabs(numeric)))
        << what << "[" << i << "]";
  }
}

struct GradientCase {
  const char *name;
  AttentionShape shape;
  AttentionOptions options;
  std::vector<double> keyLengths;
  bool mask;
};

void PrintTo(const GradientCase &c, std::ostream *os) { *os << c.name; }

class AttentionReferenceGradient
    : public ::testing::TestWithParam<GradientCase> {};

TEST_P(AttentionReferenceGradient, MatchesFiniteDifferences) {
  const GradientCase &c = GetParam();
  const AttentionShape &s = c.shape;
  std::mt19937 random(7);
  AttentionInputs in;
  in.q = draw(s.batch * s.queries * s.heads * s.headDim, random);
  in.k = draw(s.batch * s.keys * s.kvHeads * s.headDim, random);
  in.v = draw(s.batch * s.keys * s.kvHeads * s.valueDim, random);
  in.keyLengths = c.keyLengths;
  if (c.mask)
    for (int64_t i = 0; i < s.batch * s.keys; ++i)
      in.keyMask.push_back(i % 3 != 1);
  const std::vector<double> dO =
      draw(s.batch * s.queries * s.heads * s.valueDim, random);
  const AttentionGradients grad = attentionBackward(s, in, dO, c.options);
  auto loss = [&] { return dot(dO, attentionForward(s, in, c.options).o); };
  expectFiniteDifferences(in.q, grad.dq, loss, "dq");
  expectFiniteDifferences(in.k, grad.dk, loss, "dk");
  expectFiniteDifferences(in.v, grad.dv, loss, "dv");
}

AttentionOptions restricted(bool causal, int64_t left, int64_t right,
                            double softcap, double scale = 0.6) {
  return AttentionOptions{scale, softcap, causal, left, right};
}

INSTANTIATE_TEST_SUITE_P(
    Features, AttentionReferenceGradient,
    ::testing::Values(
        GradientCase{"plain",
                     {1, 4, 5, 2, 2, 3, 2},
                     restricted(false, -1, -1, 0),
                     {},
                     false},
        // Everything at once, GQA: lengths (one entry with none), mask,
        // causal, a window and a softcap.
        GradientCase{"everything",
                     {3, 5, 7, 4, 2, 3, 2},
                     restricted(true, 3, 1, 1.5),
                     {7, 4, 0},
                     true},
        // More queries than keys, causal: the first rows see no key; MQA.
        GradientCase{"empty_rows",
                     {1, 6, 3, 3, 1, 2, 3},
                     restricted(true, -1, -1, 0),
                     {},
                     false},
        // A softcap steep enough to matter.
        GradientCase{"softcap",
                     {2, 3, 4, 2, 1, 4, 4},
                     restricted(false, -1, -1, 0.7, 1.4),
                     {},
                     false}),
    [](const ::testing::TestParamInfo<GradientCase> &info) {
      return std::string(info.param.name);
    });

// Rows with no allowed key depend on nothing: an entry of key length 0
// gets zero gradients everywhere, with no NaN.
TEST(AttentionReference, RowsWithNoAllowedKeyContributeNothing) {
  const AttentionShape s{2, 3, 4, 2, 2, 2, 2};
  std::mt19937 random(3);
  AttentionInputs in;
  in.q = draw(2 * 3 * 2 * 2, random);
  in.k = draw(2 * 4 * 2 * 2, random);
  in.v = draw(2 * 4 * 2 * 2, random);
  in.keyLengths = {4, 0};
  const AttentionGradients grad = attentionBackward(
      s, in, draw(2 * 3 * 2 * 2, random), restricted(false, -1, -1, 0));
  for (size_t i = grad.dq.size() / 2; i < grad.dq.size(); ++i)
    EXPECT_EQ(grad.dq[i], 0.0);
  for (size_t i = grad.dk.size() / 2; i < grad.dk.size(); ++i) {
    EXPECT_EQ(grad.dk[i], 0.0);
    EXPECT_EQ(grad.dv[i], 0.0);
  }
  for (double value : grad.dq)
    EXPECT_FALSE(std::isnan(value));
}

// Packed batches: entries of no query, no key and more queries than keys.
TEST(AttentionReference, VarlenGradientMatchesFiniteDifferences) {
  const int64_t H = 2, G = 1, D = 3, E = 2;
  const std::vector<double> queryOffsets = {0, 3, 3, 5, 9},
                            keyOffsets = {0, 4, 6, 6, 8};
  std::mt19937 random(13);
  AttentionInputs in;
  in.q = draw(9 * H * D, random);
  in.k = draw(8 * G * D, random);
  in.v = draw(8 * G * E, random);
  const std::vector<double> dO = draw(9 * H * E, random);
  const AttentionOptions options = restricted(true, -1, -1, 2.0);
  const AttentionGradients grad = attentionVarlenBackward(
      H, G, D, E, in, dO, queryOffsets, keyOffsets, options);
  auto loss = [&] {
    return dot(dO, attentionVarlenForward(H, G, D, E, in, queryOffsets,
                                          keyOffsets, options)
                       .o);
  };
  expectFiniteDifferences(in.q, grad.dq, loss, "dq");
  expectFiniteDifferences(in.k, grad.dk, loss, "dk");
  expectFiniteDifferences(in.v, grad.dv, loss, "dv");
}

} // namespace
