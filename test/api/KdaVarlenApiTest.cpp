//===- KdaVarlenApiTest.cpp - KDA over packed sequences against float64 ---===//
//
// rudnn::kdaForward and rudnn::kdaBackward given cu_seqlens: every sequence
// of a packed batch (one-token sequences, lengths around the chunk, an
// empty one) against the float64 recurrence run on each sequence alone,
// also from the boundaries and tiles the forward saved per chunk slot;
// new lengths compile nothing; bad offsets and states rejected before
// anything is written. Built for the emulation backend and (label gpu) a
// CUDA device.
//
//===----------------------------------------------------------------------===//

#include "test/api/ApiFixture.h"

#include <gmock/gmock.h>

#include <cmath>
#include <numeric>
#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct VarlenCase {
  std::vector<int> lengths;
  int K, V, chunk;
  DType dtype;
  bool initialState;
};

void PrintTo(const VarlenCase &, std::ostream *) {}

/// One packed call's inputs on the device, and room for its results.
struct PackedProblem {
  int64_t T, S, H, K, V;
  std::vector<double> offsets;
  reference::KdaInputs in;
  DeviceTensor q, k, v, g, beta, cu, initial;
  KdaForwardInputs inputs;
};

class KdaVarlen : public ApiTest {
protected:
  PackedProblem problem(const std::vector<int> &lengths, int64_t H, int64_t K,
                        int64_t V, DType dtype, bool initialState,
                        unsigned seed) {
    PackedProblem p;
    p.H = H, p.K = K, p.V = V;
    p.S = static_cast<int64_t>(lengths.size());
    p.offsets = {0};
    for (int length : lengths)
      p.offsets.push_back(p.offsets.back() + length);
    p.T = static_cast<int64_t>(p.offsets.back());
    reference::KdaShape shape{1, p.T, H, K, V};
    p.in = randomKdaInputs(shape, -1.0, false, false, seed);
    roundTo(dtype, {&p.in.q, &p.in.k, &p.in.v, &p.in.beta});
    if (initialState) {
      std::mt19937 random(seed + 7);
      std::normal_distribution<double> normal;
      p.in.initialState.resize(p.S * H * K * V);
      for (double &x : p.in.initialState)
        x = static_cast<float>(0.5 * normal(random));
    }
    p.q = sequence(p.in.q, 1, p.T, H, K, dtype, Layout::BTHD);
    p.k = sequence(p.in.k, 1, p.T, H, K, dtype, Layout::BTHD);
    p.v = sequence(p.in.v, 1, p.T, H, V, dtype, Layout::BTHD);
    p.g = sequence(p.in.g, 1, p.T, H, K, DType::F32, Layout::BTHD);
    p.beta = sequence(p.in.beta, 1, p.T, H, 1, dtype, Layout::BTHD, true);
    p.cu = offsets(p.offsets);
    p.inputs = {p.q.view, p.k.view, p.v.view, p.g.view, p.beta.view, {}};
    p.inputs.cuSeqlens = p.cu.view;
    if (initialState) {
      p.initial = dense(p.in.initialState, {p.S, H, K, V});
      p.inputs.initialState = p.initial.view;
    }
    return p;
  }

  DeviceTensor unset(const PackedProblem &p, int64_t width, DType dtype,
                     bool rank3 = false) {
    return sequence(std::vector<double>(p.T * p.H * width, NAN), 1, p.T, p.H,
                    width, dtype, Layout::BTHD, rank3);
  }
  /// Every gradient `outputs` views (d_initial_state when given) against
  /// `want`.
  void expectGradients(const PackedProblem &p, const KdaBackwardOutputs &out,
                       const reference::KdaGradients &want, double tolerance) {
    const int64_t T = p.T, H = p.H, K = p.K, V = p.V;
    auto rows = [&](const TensorView &view, int64_t width) {
      return readSequence(DeviceTensor{{}, view}, 1, T, H, width);
    };
    EXPECT_LT(relativeError(rows(out.dq, K), want.dq), tolerance);
    EXPECT_LT(relativeError(rows(out.dk, K), want.dk), tolerance);
    EXPECT_LT(relativeError(rows(out.dv, V), want.dv), tolerance);
    EXPECT_LT(relativeError(rows(out.dg, K), want.dg), tolerance);
    EXPECT_LT(relativeError(rows(out.dbeta, 1), want.dbeta), tolerance);
    if (out.dInitialState) {
      EXPECT_LT(relativeError(
                    read(DeviceTensor{{}, *out.dInitialState}, p.S * H * K * V),
                    want.dInitialState),
                tolerance);
    }
  }

  DeviceTensor unsetStates(const PackedProblem &p) {
    return dense(std::vector<double>(p.S * p.H * p.K * p.V, NAN),
                 {p.S, p.H, p.K, p.V});
  }
};

class KdaVarlenNumerics : public KdaVarlen,
                          public ::testing::WithParamInterface<VarlenCase> {};

double toleranceOf(DType dtype) {
  return dtype == DType::BF16 ? 2e-2 : dtype == DType::F16 ? 1e-2 : 1e-4;
}

TEST_P(KdaVarlenNumerics, ForwardMatchesEachSequenceAlone) {
  const VarlenCase c = GetParam();
  PackedProblem p =
      problem(c.lengths, 2, c.K, c.V, c.dtype, c.initialState, 2026);
  const double scale = 1.0 / std::sqrt(double(c.K));
  reference::KdaOutputs want = reference::kdaVarlenForward(
      {1, p.T, p.H, p.K, p.V}, p.in, p.offsets, scale);
  DeviceTensor output = unset(p, c.V, c.dtype), final = unsetStates(p);
  KdaOptions options;
  options.chunk = c.chunk;
  kdaForward(*context, p.inputs, {output.view, final.view, {}, {}}, options);
  const double tolerance = toleranceOf(c.dtype);
  EXPECT_LT(relativeError(readSequence(output, 1, p.T, p.H, c.V), want.output),
            tolerance);
  EXPECT_LT(relativeError(read(final, p.S * p.H * p.K * p.V), want.finalState),
            tolerance);
}

TEST_P(KdaVarlenNumerics, BackwardMatchesEachSequenceAlone) {
  const VarlenCase c = GetParam();
  PackedProblem p =
      problem(c.lengths, 2, c.K, c.V, c.dtype, c.initialState, 2027);
  const double scale = 1.0 / std::sqrt(double(c.K));
  std::mt19937 random(11);
  std::vector<double> dOutput = normalValues(p.T * p.H * p.V, random);
  std::vector<double> dFinal = normalValues(p.S * p.H * p.K * p.V, random);
  roundTo(c.dtype, {&dOutput});
  reference::KdaGradients want = reference::kdaVarlenBackward(
      {1, p.T, p.H, p.K, p.V}, p.in, p.offsets, scale, dOutput, dFinal);
  DeviceTensor dO = sequence(dOutput, 1, p.T, p.H, p.V, c.dtype, Layout::BTHD);
  DeviceTensor dST = dense(dFinal, {p.S, p.H, p.K, p.V});
  DeviceTensor dq = unset(p, c.K, c.dtype), dk = unset(p, c.K, c.dtype),
               dv = unset(p, c.V, c.dtype), dg = unset(p, c.K, DType::F32),
               dbeta = unset(p, 1, c.dtype, true), dS0 = unsetStates(p);
  KdaBackwardInputs inputs{p.inputs, dO.view, dST.view, {}, {}};
  KdaBackwardOutputs outputs{dq.view, dk.view,    dv.view,
                             dg.view, dbeta.view, {}};
  if (c.initialState)
    outputs.dInitialState = dS0.view;
  KdaOptions options;
  options.chunk = c.chunk;
  kdaBackward(*context, inputs, outputs, options);
  expectGradients(p, outputs, want, toleranceOf(c.dtype));
}

std::string varlenCaseName(const ::testing::TestParamInfo<VarlenCase> &info) {
  const VarlenCase &c = info.param;
  std::string lengths;
  for (int length : c.lengths)
    lengths += "_" + std::to_string(length);
  return shapeName(0, c.K, c.V, c.chunk, c.dtype).substr(3) + lengths +
         (c.initialState ? "_S0" : "");
}

// Lengths one token, one under, at and over the chunk, several chunks, and
// an empty sequence; odd feature dims. At bf16, K = V = 64 `prepare` takes
// its rows by TMA: boxes of a chunk's 64 tokens reach into the next
// sequence, whose rows it must not use.
INSTANTIATE_TEST_SUITE_P(
    MixedLengths, KdaVarlenNumerics,
    ::testing::Values(
        VarlenCase{{1, 63, 64, 65, 200}, 32, 32, 64, DType::F32, true},
        VarlenCase{{65, 1, 0, 63}, 24, 40, 64, DType::BF16, true},
        VarlenCase{{70, 1, 0, 37, 100}, 64, 64, 64, DType::BF16, true},
        VarlenCase{{5, 17, 16, 1}, 17, 9, 16, DType::F32, false},
        VarlenCase{{40, 1, 33}, 32, 16, 32, DType::F16, true}),
    varlenCaseName);

/// A packed forward that saves its boundaries (and tiles) for its
/// backward: the boundaries slot by slot and the gradients from them.
struct SavedCase {
  std::vector<int> lengths;
  int K, V, chunk;
  DType dtype;
  bool tiles;
};

class KdaVarlenSavedNumerics : public KdaVarlen,
                               public ::testing::WithParamInterface<SavedCase> {
};

void PrintTo(const SavedCase &, std::ostream *) {}

TEST_P(KdaVarlenSavedNumerics, BackwardReadsTheSavedSlots) {
  const SavedCase c = GetParam();
  PackedProblem p = problem(c.lengths, 2, c.K, c.V, c.dtype, true, 2028);
  const double scale = 1.0 / std::sqrt(double(c.K));
  const reference::KdaShape shape{1, p.T, p.H, p.K, p.V};
  KdaOptions options;
  options.chunk = c.chunk;
  const KdaSavedShapes saved = kdaSavedShapes(*context, p.inputs, options);
  ASSERT_EQ(saved.boundaries[0], (p.T + c.chunk - 1) / c.chunk + p.S + 1);
  DeviceTensor output = unset(p, c.V, c.dtype), final = unsetStates(p);
  auto unsetDense = [this](const std::vector<int64_t> &shape, DType dtype) {
    const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1},
                                      std::multiplies<int64_t>());
    return dense(std::vector<double>(n, NAN), shape, dtype);
  };
  DeviceTensor boundaries = unsetDense(saved.boundaries, c.dtype);
  DeviceTensor tiles = unsetDense(saved.tiles, DType::F32);
  KdaForwardOutputs forward{output.view, final.view, boundaries.view, {}};
  if (c.tiles)
    forward.tiles = tiles.view;
  kdaForward(*context, p.inputs, forward, options);
  const double tolerance = toleranceOf(c.dtype);
  // Sequence n's chunk j in slot Σ_{i<n} ceil(len_i / chunk) + j; the spare
  // slots zero (no stale memory).
  reference::KdaOutputs want =
      reference::kdaVarlenForward(shape, p.in, p.offsets, scale, c.chunk);
  const std::vector<double> got =
      read(boundaries, static_cast<int64_t>(want.boundaries.size()));
  EXPECT_LT(relativeError(got, want.boundaries), tolerance);
  int64_t used = 0;
  for (int length : c.lengths)
    used += (length + c.chunk - 1) / c.chunk;
  const int64_t slot = p.H * p.K * p.V;
  for (int64_t i = used * slot; i < static_cast<int64_t>(got.size()); ++i)
    ASSERT_EQ(got[i], 0.0) << "spare slot " << i / slot;
  EXPECT_LT(relativeError(readSequence(output, 1, p.T, p.H, c.V), want.output),
            tolerance);

  std::mt19937 random(12);
  std::vector<double> dOutput = normalValues(p.T * p.H * p.V, random);
  roundTo(c.dtype, {&dOutput});
  reference::KdaGradients grad =
      reference::kdaVarlenBackward(shape, p.in, p.offsets, scale, dOutput, {});
  DeviceTensor dO = sequence(dOutput, 1, p.T, p.H, p.V, c.dtype, Layout::BTHD);
  DeviceTensor dq = unset(p, c.K, c.dtype), dk = unset(p, c.K, c.dtype),
               dv = unset(p, c.V, c.dtype), dg = unset(p, c.K, DType::F32),
               dbeta = unset(p, 1, c.dtype, true), dS0 = unsetStates(p);
  KdaBackwardInputs inputs{p.inputs, dO.view, {}, boundaries.view, {}};
  if (c.tiles)
    inputs.tiles = tiles.view;
  const KdaBackwardOutputs outputs{dq.view, dk.view,    dv.view,
                                   dg.view, dbeta.view, dS0.view};
  kdaBackward(*context, inputs, outputs, options);
  expectGradients(p, outputs, grad, tolerance);
}

// An empty sequence and one-token ones among multi-chunk ones; f32 on FMA
// and bf16 on the tile layer (with tiles).
INSTANTIATE_TEST_SUITE_P(
    SavedSlots, KdaVarlenSavedNumerics,
    ::testing::Values(SavedCase{{1, 40, 0, 17}, 17, 9, 16, DType::F32, false},
                      SavedCase{{33, 1, 70}, 32, 24, 32, DType::BF16, true}),
    [](const ::testing::TestParamInfo<SavedCase> &info) {
      const SavedCase &c = info.param;
      return shapeName(0, c.K, c.V, c.chunk, c.dtype).substr(3) +
             (c.tiles ? "_tiles" : "_boundaries");
    });

TEST_F(KdaVarlen, NewLengthsCompileNothing) {
  PackedProblem first = problem({3, 70}, 2, 16, 16, DType::F32, true, 1);
  DeviceTensor output = unset(first, 16, DType::F32);
  DeviceTensor final = unsetStates(first);
  kdaForward(*context, first.inputs, {output.view, final.view, {}, {}});
  const Counters before = context->counters();
  for (const std::vector<int> &lengths :
       {std::vector<int>{1, 1, 1}, std::vector<int>{100}, {64, 0, 9, 30}}) {
    PackedProblem next = problem(lengths, 2, 16, 16, DType::F32, true, 2);
    DeviceTensor o = unset(next, 16, DType::F32), s = unsetStates(next);
    kdaForward(*context, next.inputs, {o.view, s.view, {}, {}});
  }
  const Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(KdaVarlen, BadCallsAreRejectedBeforeAnythingRuns) {
  PackedProblem p = problem({3, 5}, 2, 16, 16, DType::F32, true, 3);
  DeviceTensor output = unset(p, 16, DType::F32), final = unsetStates(p);
  const KdaForwardOutputs outputs{output.view, final.view, {}, {}};
  auto rejects = [&](KdaForwardInputs inputs, KdaForwardOutputs out,
                     const char *message) {
    EXPECT_THAT([&] { kdaForward(*context, inputs, out); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  // Offsets must count one more than the states.
  KdaForwardInputs shortOffsets = p.inputs;
  shortOffsets.cuSeqlens->shape = {2};
  rejects(shortOffsets, outputs, "must be 1 × the dim S = 2 + 1");
  // Offsets are int32.
  KdaForwardInputs floatOffsets = p.inputs;
  floatOffsets.cuSeqlens->dtype = DType::F32;
  rejects(floatOffsets, outputs, "cu_seqlens");
  // Offset values keep the contract: from 0, never down, to T = 8.
  for (const auto &[values, message] :
       std::vector<std::pair<std::vector<double>, const char *>>{
           {{0, 3, 9}, "entry 2 is 9, past T"},
           {{0, 5, 3}, "entry 2 is 3, less than entry 1"},
           {{0, -2, 8}, "entry 1 is -2, less than entry 0"},
           {{0, 3, 6}, "entry 2 is 6, not T"},
           {{2, 3, 8}, "entry 0 is 2, not 0"}}) {
    DeviceTensor offsets = upload(bytesOf<int32_t>(values), DType::I32);
    offsets.view = TensorView::contiguous(offsets.view.data, DType::I32, {3});
    KdaForwardInputs badOffsets = p.inputs;
    badOffsets.cuSeqlens = offsets.view;
    rejects(badOffsets, outputs, message);
  }
  // Packed sequences are one batch entry.
  KdaForwardInputs twoEntries = p.inputs;
  for (TensorView *view : {&twoEntries.q, &twoEntries.k, &twoEntries.v,
                           &twoEntries.g, &twoEntries.beta})
    view->shape[0] = 2, view->shape[1] = 4;
  rejects(twoEntries, outputs, "'q' dim 0 (B)");
  // Saved boundaries hold the chunk slots, not a batch's chunks: T = 8 at
  // chunk 16 is 1 + S + 1 = 4 slots.
  KdaOptions chunk16;
  chunk16.chunk = 16;
  DeviceTensor batchCount = dense(std::vector<double>(16 * 16 * 2, 0.0),
                                  {1, 1, 2, 16, 16}, DType::F32);
  EXPECT_THAT(
      [&] {
        kdaForward(*context, p.inputs,
                   {output.view, final.view, batchCount.view, {}}, chunk16);
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'boundaries'")));
  EXPECT_TRUE(std::isnan(read(output, 1)[0]));
}

} // namespace
