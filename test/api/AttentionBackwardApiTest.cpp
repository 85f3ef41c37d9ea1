//===- AttentionBackwardApiTest.cpp - rudnn::attentionBackward ------------===//
//
// The gradients through the public API from the API's own forward, against
// the float64 gradient on fresh random inputs: masks, window, softcap, GQA
// and MQA, T ≠ S, odd head dims, rows with no allowed key; the same bits on
// every call; one compile per signature; bad calls named with nothing
// written.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/AttentionReference.h"
#include "test/api/ApiFixture.h"
#include "test/support/KdaProblem.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct BackwardCase {
  DType dtype;
  int B, T, S, H, G, D, E;
  bool causal, lengths, mask;
  int left, right;
  float softcap;
};

void PrintTo(const BackwardCase &, std::ostream *) {}

/// One problem on the device: the forward's inputs and results, d_output,
/// and gradients to write (NaN first).
struct Problem {
  reference::AttentionShape shape;
  reference::AttentionInputs in;
  std::vector<double> dO;
  reference::AttentionOptions ref;
  DeviceTensor q, k, v, lengths, mask, o, lse, dOutput, dq, dk, dv;
  AttentionBackwardInputs inputs;
  AttentionGradients gradients;
  AttentionOptions options;
};

class AttentionBackwardTest : public ApiTest {
protected:
  std::unique_ptr<Problem> problem(const BackwardCase &c) {
    auto p = std::make_unique<Problem>();
    const int64_t B = c.B, T = c.T, S = c.S, H = c.H, G = c.G, D = c.D, E = c.E;
    std::mt19937 random(unsigned(T * 131 + S * 17 + D * 3 + E));
    p->shape = {B, T, S, H, G, D, E};
    p->in.q = normalValues(B * T * H * D, random);
    p->in.k = normalValues(B * S * G * D, random);
    p->in.v = normalValues(B * S * G * E, random);
    p->dO = normalValues(B * T * H * E, random);
    roundTo(c.dtype, {&p->in.q, &p->in.k, &p->in.v, &p->dO});
    if (c.lengths) // down to none (the last entry)
      for (int64_t b = 0; b < B; ++b)
        p->in.keyLengths.push_back(b + 1 == B && B > 1 ? 0 : S - (S / 3) * b);
    if (c.mask) {
      std::uniform_real_distribution<double> unit(0, 1);
      for (int64_t i = 0; i < B * S; ++i)
        p->in.keyMask.push_back(unit(random) < 0.75);
    }
    p->ref.scale = 1.0 / std::sqrt(double(D));
    p->ref.causal = c.causal;
    p->ref.windowLeft = c.left;
    p->ref.windowRight = c.right;
    p->ref.softcap = c.softcap;

    p->q = dense(p->in.q, {B, T, H, D}, c.dtype);
    p->k = dense(p->in.k, {B, S, G, D}, c.dtype);
    p->v = dense(p->in.v, {B, S, G, E}, c.dtype);
    p->o = dense(std::vector<double>(B * T * H * E), {B, T, H, E}, c.dtype);
    p->lse = dense(std::vector<double>(B * H * T), {B, H, T});
    p->dOutput = dense(p->dO, {B, T, H, E}, c.dtype);
    p->dq =
        dense(std::vector<double>(B * T * H * D, NAN), {B, T, H, D}, c.dtype);
    p->dk =
        dense(std::vector<double>(B * S * G * D, NAN), {B, S, G, D}, c.dtype);
    p->dv =
        dense(std::vector<double>(B * S * G * E, NAN), {B, S, G, E}, c.dtype);
    AttentionInputs forward{p->q.view, p->k.view, p->v.view, {}, {}};
    if (c.lengths) {
      p->lengths = upload(bytesOf<int32_t>(p->in.keyLengths), DType::I32);
      p->lengths.view =
          TensorView::contiguous(p->lengths.view.data, DType::I32, {B});
      forward.keyLengths = p->lengths.view;
    }
    if (c.mask) {
      p->mask = upload(bytesOf<uint8_t>(p->in.keyMask), DType::Bool);
      p->mask.view =
          TensorView::contiguous(p->mask.view.data, DType::Bool, {B, S});
      forward.keyMask = p->mask.view;
    }
    p->options.causal = c.causal;
    p->options.windowLeft = c.left;
    p->options.windowRight = c.right;
    p->options.softcap = c.softcap;
    attentionForward(*context, forward, {p->o.view, p->lse.view}, p->options);
    p->inputs = {forward, p->o.view, p->lse.view, p->dOutput.view};
    p->gradients = {p->dq.view, p->dk.view, p->dv.view};
    return p;
  }

  std::vector<double> all(const Problem &p) {
    const reference::AttentionShape &s = p.shape;
    std::vector<double> values =
        read(p.dq, s.batch * s.queries * s.heads * s.headDim);
    for (const DeviceTensor *t : {&p.dk, &p.dv}) {
      std::vector<double> part =
          read(*t, s.batch * s.keys * s.kvHeads *
                       (t == &p.dk ? s.headDim : s.valueDim));
      values.insert(values.end(), part.begin(), part.end());
    }
    return values;
  }
};

class AttentionBackwardNumerics
    : public AttentionBackwardTest,
      public ::testing::WithParamInterface<BackwardCase> {};

TEST_P(AttentionBackwardNumerics, MatchesFloat64AndRepeatsBitForBit) {
  const BackwardCase c = GetParam();
  std::unique_ptr<Problem> p = problem(c);
  attentionBackward(*context, p->inputs, p->gradients, p->options);
  const reference::AttentionShape &s = p->shape;
  const reference::AttentionGradients want =
      reference::attentionBackward(s, p->in, p->dO, p->ref);
  const double tolerance = c.dtype == DType::F32 ? 1e-4 : 2e-2;
  EXPECT_LT(
      relativeError(read(p->dq, s.batch * s.queries * s.heads * s.headDim),
                    want.dq),
      tolerance);
  EXPECT_LT(relativeError(read(p->dk, s.batch * s.keys * s.kvHeads * s.headDim),
                          want.dk),
            tolerance);
  EXPECT_LT(
      relativeError(read(p->dv, s.batch * s.keys * s.kvHeads * s.valueDim),
                    want.dv),
      tolerance);
  // No atomics: a second call, from another thread, gives the same bits.
  const std::vector<double> first = all(*p);
  std::thread([&] {
    attentionBackward(*context, p->inputs, p->gradients, p->options);
  }).join();
  const std::vector<double> second = all(*p);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(
      std::memcmp(first.data(), second.data(), first.size() * sizeof(double)),
      0);
}

std::string caseName(const ::testing::TestParamInfo<BackwardCase> &info) {
  const BackwardCase &c = info.param;
  std::string name = std::string(dtypeName(c.dtype)) + "_B" +
                     std::to_string(c.B) + "_T" + std::to_string(c.T) + "_S" +
                     std::to_string(c.S) + "_H" + std::to_string(c.H) + "_G" +
                     std::to_string(c.G) + "_D" + std::to_string(c.D) + "_E" +
                     std::to_string(c.E) + (c.causal ? "_causal" : "") +
                     (c.lengths ? "_lengths" : "") + (c.mask ? "_mask" : "");
  if (c.left >= 0 || c.right >= 0)
    name += "_window";
  return c.softcap > 0 ? name + "_softcap" : name;
}

constexpr DType f32 = DType::F32, bf16 = DType::BF16, f16 = DType::F16;

INSTANTIATE_TEST_SUITE_P(
    Features, AttentionBackwardNumerics,
    ::testing::Values(
        // Causal over lengths (one entry with none), GQA.
        BackwardCase{f32, 3, 70, 90, 4, 2, 64, 64, true, true, false, -1, -1,
                     0},
        // Mask, window and softcap together, odd dims, E ≠ D.
        BackwardCase{f32, 2, 45, 60, 2, 1, 24, 40, false, false, true, 9, 3, 5},
        // More queries than keys, causal: empty rows; MQA; D = 8.
        BackwardCase{f32, 2, 90, 30, 4, 1, 8, 8, true, false, false, -1, -1, 0},
        // 16-bit on tensor cores: D = 72, GQA 4.
        BackwardCase{bf16, 1, 66, 66, 4, 1, 72, 72, true, false, false, -1, -1,
                     0},
        BackwardCase{f16, 2, 40, 33, 2, 2, 128, 64, false, true, true, -1, -1,
                     0}),
    caseName);

TEST_F(AttentionBackwardTest, ChangingSizesCompilesNothing) {
  std::unique_ptr<Problem> p =
      problem({f32, 1, 20, 20, 2, 1, 16, 16, true, false, false, -1, -1, 0});
  attentionBackward(*context, p->inputs, p->gradients, p->options);
  const uint64_t compiled = context->counters().kernelsCompiled;
  std::unique_ptr<Problem> other =
      problem({f32, 3, 7, 50, 4, 2, 16, 16, true, false, false, -1, -1, 0});
  attentionBackward(*context, other->inputs, other->gradients, other->options);
  // The second forward compiled nothing new either: its signature is the
  // first one's.
  EXPECT_EQ(context->counters().kernelsCompiled, compiled);
}

/// A small valid call whose parts a test spoils: the fault is named and no
/// gradient is written.
class AttentionBackwardBadInput : public AttentionBackwardTest {
protected:
  void SetUp() override {
    AttentionBackwardTest::SetUp();
    if (IsSkipped())
      return;
    p = problem({f32, 2, 5, 6, 4, 2, 8, 8, false, false, false, -1, -1, 0});
  }
  void expectRejected(const std::string &needle) {
    try {
      attentionBackward(*context, p->inputs, p->gradients, p->options);
      FAIL() << "expected InvalidArgument: " << needle;
    } catch (const InvalidArgument &error) {
      EXPECT_THAT(error.what(), HasSubstr(needle));
    }
    for (double value : all(*p))
      ASSERT_TRUE(std::isnan(value));
  }
  std::unique_ptr<Problem> p;
};

TEST_F(AttentionBackwardBadInput, LseOfTheWrongShape) {
  p->inputs.lse.shape = {2, 5, 4};
  expectRejected("'lse'");
}

TEST_F(AttentionBackwardBadInput, GradientInAnotherType) {
  p->inputs.dOutput.dtype = DType::BF16;
  expectRejected("'d_output' must be f32, got bf16");
}

TEST_F(AttentionBackwardBadInput, KeyGradientOverTheKeys) {
  p->gradients.dk.data = p->inputs.forward.k.data;
  expectRejected("'dk' overlaps 'k'");
}

TEST_F(AttentionBackwardBadInput, ValueGradientWithQueryHeads) {
  p->gradients.dv.shape[2] = 4;
  expectRejected("'dv' must have shape [2, 6, 2, 8]");
}

TEST_F(AttentionBackwardBadInput, NegativeSoftcap) {
  p->options.softcap = -1;
  expectRejected("'softcap' must be 0 (none) or positive");
}

} // namespace
