//===- KdaGroupedHeadsApiTest.cpp - KDA with grouped value heads ----------===//
//
// Grouped value heads (GVA): q and k with Q heads, each shared by H / Q
// value heads. rudnn::kdaForward and kdaBackward against the float64
// recurrence run with q and k repeated per value head (and dq, dk summed
// back over each group), for H / Q in {1, 2, 4}, batches and packed
// sequences; the summed gradients bit-identical from run to run; H not a
// multiple of Q refused. Built for the emulation backend and (label gpu) a
// CUDA device.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include <gmock/gmock.h>

#include <cmath>
#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct GroupedCase {
  int keyHeads, group, T, K, V;
  DType dtype;
};

void PrintTo(const GroupedCase &, std::ostream *) {}

/// One grouped call: inputs drawn per value head for v, g, beta and per
/// key head for q, k; the reference sees q and k repeated per value head.
struct GroupedProblem {
  int64_t B, T, Q, H, K, V;
  reference::KdaInputs perValueHead;
  std::vector<double> q, k; // [B, T, Q, K]
  DeviceTensor dq, dk, qT, kT, vT, gT, betaT, initial;
  KdaForwardInputs inputs;
};

class KdaGroupedHeads : public ApiTest {
protected:
  GroupedProblem problem(const GroupedCase &c, unsigned seed) {
    GroupedProblem p{2,   c.T, c.keyHeads, c.keyHeads * c.group,
                     c.K, c.V, {},         {},
                     {},  {},  {},         {},
                     {},  {},  {},         {},
                     {},  {}};
    reference::KdaShape keys{p.B, p.T, p.Q, p.K, p.V};
    reference::KdaInputs drawn =
        randomKdaInputs(keys, -1.0, false, false, seed);
    p.q = drawn.q, p.k = drawn.k;
    roundTo(c.dtype, {&p.q, &p.k});
    reference::KdaShape values{p.B, p.T, p.H, p.K, p.V};
    p.perValueHead = randomKdaInputs(values, -1.0, true, false, seed + 1);
    roundTo(c.dtype, {&p.perValueHead.v, &p.perValueHead.beta});
    p.perValueHead.q = reference::repeatHeads(p.q, p.B * p.T, p.Q, p.H, p.K);
    p.perValueHead.k = reference::repeatHeads(p.k, p.B * p.T, p.Q, p.H, p.K);
    p.qT = sequence(p.q, p.B, p.T, p.Q, p.K, c.dtype, Layout::BTHD);
    p.kT = sequence(p.k, p.B, p.T, p.Q, p.K, c.dtype, Layout::BHTD);
    p.vT =
        sequence(p.perValueHead.v, p.B, p.T, p.H, p.V, c.dtype, Layout::BTHD);
    p.gT = sequence(p.perValueHead.g, p.B, p.T, p.H, p.K, DType::F32,
                    Layout::BTHD);
    p.betaT = sequence(p.perValueHead.beta, p.B, p.T, p.H, 1, c.dtype,
                       Layout::BTHD, true);
    p.initial = dense(p.perValueHead.initialState, {p.B, p.H, p.K, p.V});
    p.inputs = {p.qT.view, p.kT.view,    p.vT.view,
                p.gT.view, p.betaT.view, p.initial.view};
    return p;
  }

  DeviceTensor unset(const GroupedProblem &p, int64_t heads, int64_t width,
                     DType dtype, bool rank3 = false) {
    return sequence(std::vector<double>(p.B * p.T * heads * width, NAN), p.B,
                    p.T, heads, width, dtype, Layout::BTHD, rank3);
  }
};

class KdaGroupedHeadsNumerics
    : public KdaGroupedHeads,
      public ::testing::WithParamInterface<GroupedCase> {};
using KdaGroupedHeadsPackedNumerics = KdaGroupedHeads;

double toleranceOf(DType dtype) {
  return dtype == DType::BF16 ? 2e-2 : dtype == DType::F16 ? 1e-2 : 1e-4;
}

TEST_P(KdaGroupedHeadsNumerics, ForwardMatchesFloat64) {
  const GroupedCase c = GetParam();
  GroupedProblem p = problem(c, 100 + c.group);
  const double scale = 1.0 / std::sqrt(double(c.K));
  reference::KdaOutputs want = reference::kdaForward({p.B, p.T, p.H, p.K, p.V},
                                                     p.perValueHead, scale, 64);
  DeviceTensor output = unset(p, p.H, p.V, c.dtype);
  DeviceTensor final = dense(std::vector<double>(p.B * p.H * p.K * p.V, NAN),
                             {p.B, p.H, p.K, p.V});
  kdaForward(*context, p.inputs, {output.view, final.view, {}, {}});
  EXPECT_LT(
      relativeError(readSequence(output, p.B, p.T, p.H, p.V), want.output),
      toleranceOf(c.dtype));
  EXPECT_LT(relativeError(read(final, p.B * p.H * p.K * p.V), want.finalState),
            toleranceOf(c.dtype));
}

TEST_P(KdaGroupedHeadsNumerics, BackwardSumsEachGroupsGradients) {
  const GroupedCase c = GetParam();
  GroupedProblem p = problem(c, 200 + c.group);
  const double scale = 1.0 / std::sqrt(double(c.K));
  std::mt19937 random(5);
  std::vector<double> dOutput = normalValues(p.B * p.T * p.H * p.V, random);
  roundTo(c.dtype, {&dOutput});
  reference::KdaGradients want = reference::kdaBackward(
      {p.B, p.T, p.H, p.K, p.V}, p.perValueHead, scale, dOutput, {});
  DeviceTensor dO =
      sequence(dOutput, p.B, p.T, p.H, p.V, c.dtype, Layout::BTHD);
  auto run = [&] {
    std::vector<DeviceTensor> g;
    g.push_back(unset(p, p.Q, p.K, c.dtype));
    g.push_back(unset(p, p.Q, p.K, c.dtype));
    g.push_back(unset(p, p.H, p.V, c.dtype));
    g.push_back(unset(p, p.H, p.K, DType::F32));
    g.push_back(unset(p, p.H, 1, c.dtype, true));
    g.push_back(dense(std::vector<double>(p.B * p.H * p.K * p.V, NAN),
                      {p.B, p.H, p.K, p.V}));
    kdaBackward(
        *context, {p.inputs, dO.view, {}, {}, {}},
        {g[0].view, g[1].view, g[2].view, g[3].view, g[4].view, g[5].view});
    return g;
  };
  std::vector<DeviceTensor> got = run();
  const int64_t rows = p.B * p.T;
  const double tolerance = toleranceOf(c.dtype);
  EXPECT_LT(
      relativeError(readSequence(got[0], p.B, p.T, p.Q, p.K),
                    reference::sumHeadGroups(want.dq, rows, p.Q, p.H, p.K)),
      tolerance);
  EXPECT_LT(
      relativeError(readSequence(got[1], p.B, p.T, p.Q, p.K),
                    reference::sumHeadGroups(want.dk, rows, p.Q, p.H, p.K)),
      tolerance);
  EXPECT_LT(relativeError(readSequence(got[2], p.B, p.T, p.H, p.V), want.dv),
            tolerance);
  EXPECT_LT(relativeError(readSequence(got[3], p.B, p.T, p.H, p.K), want.dg),
            tolerance);
  EXPECT_LT(relativeError(readSequence(got[4], p.B, p.T, p.H, 1), want.dbeta),
            tolerance);
  EXPECT_LT(
      relativeError(read(got[5], p.B * p.H * p.K * p.V), want.dInitialState),
      tolerance);
  // The groups' sums in a fixed order: the same bits on every run.
  std::vector<DeviceTensor> again = run();
  for (int i : {0, 1})
    EXPECT_EQ(readSequence(again[i], p.B, p.T, p.Q, p.K),
              readSequence(got[i], p.B, p.T, p.Q, p.K));
}

std::string groupedCaseName(const ::testing::TestParamInfo<GroupedCase> &info) {
  const GroupedCase &c = info.param;
  return "Q" + std::to_string(c.keyHeads) + "_G" + std::to_string(c.group) +
         "_" + shapeName(c.T, c.K, c.V, 64, c.dtype);
}

INSTANTIATE_TEST_SUITE_P(
    ValueHeadsPerKeyHead, KdaGroupedHeadsNumerics,
    ::testing::Values(GroupedCase{2, 1, 70, 32, 16, DType::F32},
                      GroupedCase{2, 2, 70, 32, 16, DType::F32},
                      GroupedCase{1, 4, 37, 24, 40, DType::BF16},
                      GroupedCase{3, 2, 1, 16, 16, DType::F32}),
    groupedCaseName);

TEST_F(KdaGroupedHeads, ValueHeadsNotAMultipleOfKeyHeadsAreRefused) {
  // Three value heads; q and k with two.
  GroupedProblem p = problem({3, 1, 8, 16, 16, DType::F32}, 9);
  DeviceTensor q2 = unset(p, 2, p.K, DType::F32),
               k2 = unset(p, 2, p.K, DType::F32);
  KdaForwardInputs inputs = p.inputs;
  inputs.q = q2.view;
  inputs.k = k2.view;
  DeviceTensor output = unset(p, 3, p.V, DType::F32);
  EXPECT_THAT(
      [&] {
        kdaForward(*context, inputs, {output.view, {}, {}, {}});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("must be a multiple of the key heads Q = 2")));
  EXPECT_TRUE(std::isnan(read(output, 1)[0]));
}

TEST_F(KdaGroupedHeadsPackedNumerics, PackedSequencesShareKeyHeadsToo) {
  // 2 key heads, 4 value heads, three sequences packed along T.
  const int64_t T = 90, Q = 2, H = 4, K = 16, V = 16, S = 3;
  const std::vector<double> offsets = {0, 1, 66, 90};
  reference::KdaInputs keys =
      randomKdaInputs({1, T, Q, K, V}, -1.0, false, false, 31);
  reference::KdaInputs in =
      randomKdaInputs({1, T, H, K, V}, -1.0, false, false, 32);
  in.q = reference::repeatHeads(keys.q, T, Q, H, K);
  in.k = reference::repeatHeads(keys.k, T, Q, H, K);
  reference::KdaOutputs want = reference::kdaVarlenForward(
      {1, T, H, K, V}, in, offsets, 1.0 / std::sqrt(double(K)));
  DeviceTensor q = sequence(keys.q, 1, T, Q, K, DType::F32, Layout::BTHD);
  DeviceTensor k = sequence(keys.k, 1, T, Q, K, DType::F32, Layout::BTHD);
  DeviceTensor v = sequence(in.v, 1, T, H, V, DType::F32, Layout::BTHD);
  DeviceTensor g = sequence(in.g, 1, T, H, K, DType::F32, Layout::BTHD);
  DeviceTensor beta =
      sequence(in.beta, 1, T, H, 1, DType::F32, Layout::BTHD, true);
  DeviceTensor cu = this->offsets(offsets);
  KdaForwardInputs inputs{q.view, k.view, v.view, g.view, beta.view, {}};
  inputs.cuSeqlens = cu.view;
  DeviceTensor output = sequence(std::vector<double>(T * H * V, NAN), 1, T, H,
                                 V, DType::F32, Layout::BTHD);
  DeviceTensor final =
      dense(std::vector<double>(S * H * K * V, NAN), {S, H, K, V});
  kdaForward(*context, inputs, {output.view, final.view, {}, {}});
  EXPECT_LT(relativeError(readSequence(output, 1, T, H, V), want.output), 1e-4);
  EXPECT_LT(relativeError(read(final, S * H * K * V), want.finalState), 1e-4);
}

} // namespace
