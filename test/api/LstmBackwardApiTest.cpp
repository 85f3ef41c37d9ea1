//===- LstmBackwardApiTest.cpp - rudnn::lstmBackward against float64 ------===//
//
// The forward through the JIT API saving what the backward takes, then the
// backward on fresh random result gradients, every gradient (x, h0, c0,
// each weight and bias) against the float64 backpropagation through time:
// one and two layers and directions, packed lengths (unsorted, one of a
// single step), batch first, with and without h0/c0 and biases, the gates
// saved or recomputed, W_hh's columns on chip (16-bit: tensor cores, odd
// units padded) and read from L2, a single step and a single hidden unit.
// Reruns are bit-identical; bad calls are rejected with nothing written.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/Compare.h"
#include "test/api/LstmFixture.h"

#include <gmock/gmock.h>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

/// Gradients read back: x, h0, c0, then each weight's by its key.
struct ReadGradients {
  std::vector<double> dX, dH0, dC0;
  std::map<std::string, std::vector<double>> dWeights;
};

class LstmBackwardTest : public LstmFixture {
protected:
  /// The results' gradients, drawn fresh and rounded to the dtype.
  reference::LstmOutputGradients resultGradients(const LstmCase &c,
                                                 unsigned seed) {
    std::mt19937 random(seed);
    const int64_t D = c.bidirectional ? 2 : 1, states = c.L * D;
    reference::LstmOutputGradients dy{
        normalValues(int64_t(c.T) * c.B * D * c.H, random),
        normalValues(states * c.B * c.H, random),
        normalValues(states * c.B * c.H, random)};
    roundTo(c.dtype, {&dy.out, &dy.hN, &dy.cN});
    return dy;
  }

  /// The forward saving its states (and gates with `saveGates`), then the
  /// backward of `dy`.
  ReadGradients run(const LstmCase &c, LstmProblem &p, bool saveGates,
                    const reference::LstmOutputGradients &dy) {
    const int64_t D = c.bidirectional ? 2 : 1, states = c.L * D;
    const int64_t rows = int64_t(c.T) * c.B;
    std::vector<int64_t> outShape = {c.T, c.B, D * c.H},
                         xShape = {c.T, c.B, c.I};
    if (c.batchFirst) {
      std::swap(outShape[0], outShape[1]);
      std::swap(xShape[0], xShape[1]);
    }
    auto fresh = [&](std::vector<int64_t> shape, DType dtype) {
      int64_t count = 1;
      for (int64_t n : shape)
        count *= n;
      return dense(std::vector<double>(count, NAN), std::move(shape), dtype);
    };
    DeviceTensor out = fresh(outShape, c.dtype);
    DeviceTensor hidden = fresh({c.L, c.T, c.B, D * c.H}, c.dtype);
    DeviceTensor cells = fresh({states, c.T, c.B, c.H}, DType::F32);
    DeviceTensor gates = fresh({states, c.T, c.B, 4 * c.H}, DType::F32);
    LstmSaved saved{hidden.view, cells.view, {}};
    if (saveGates)
      saved.gates = gates.view;
    lstmForward(*context, p.inputs, {out.view, {}, {}, saved}, options(c));

    DeviceTensor dOut = dense(dy.out, outShape, c.dtype);
    DeviceTensor dHN = dense(dy.hN, {states, c.B, c.H}, c.dtype);
    DeviceTensor dCN = dense(dy.cN, {states, c.B, c.H}, c.dtype);
    if (c.batchFirst) // dy.out is time-major, as the reference reads it
      dOut =
          dense(transposeLeading(dy.out, c.T, c.B, D * c.H), outShape, c.dtype);
    DeviceTensor dX = fresh(xShape, c.dtype);
    DeviceTensor dH0 = fresh({states, c.B, c.H}, c.dtype);
    DeviceTensor dC0 = fresh({states, c.B, c.H}, c.dtype);
    LstmGradients grads{dX.view, dH0.view, dC0.view, {}};
    std::vector<DeviceTensor> weightGradients;
    weightGradients.reserve(p.inputs.weights.size());
    for (const auto &[name, weight] : p.inputs.weights) {
      weightGradients.push_back(fresh(weight.shape, c.dtype));
      grads.dWeights["d_" + name] = weightGradients.back().view;
    }
    lstmBackward(*context, p.inputs, saved, {dOut.view, dHN.view, dCN.view},
                 grads, options(c));

    ReadGradients got{read(dX, rows * c.I),
                      read(dH0, states * c.B * c.H),
                      read(dC0, states * c.B * c.H),
                      {}};
    if (c.batchFirst)
      got.dX = transposeLeading(got.dX, c.B, c.T, c.I);
    size_t k = 0;
    for (const auto &[name, weight] : p.inputs.weights) {
      int64_t count = 1;
      for (int64_t n : weight.shape)
        count *= n;
      got.dWeights[name] = read(weightGradients[k++], count);
    }
    return got;
  }

  /// [first, second, width] -> [second, first, width].
  static std::vector<double> transposeLeading(const std::vector<double> &x,
                                              int64_t first, int64_t second,
                                              int64_t width) {
    std::vector<double> y(x.size());
    for (int64_t i = 0; i < first; ++i)
      for (int64_t j = 0; j < second; ++j)
        for (int64_t k = 0; k < width; ++k)
          y[(j * first + i) * width + k] = x[(i * second + j) * width + k];
    return y;
  }

  /// Returns d_x's relative error.
  double expectMatches(const LstmCase &c, unsigned seed, bool saveGates) {
    LstmProblem p = problem(c, seed);
    const reference::LstmOutputGradients dy = resultGradients(c, seed + 100);
    reference::LstmShape timeMajor = p.shape;
    timeMajor.batchFirst = false;
    reference::LstmInputs in = p.in;
    if (c.batchFirst)
      in.x = transposeLeading(p.in.x, c.B, c.T, c.I);
    const reference::LstmGradients want =
        reference::lstmBackward(timeMajor, in, dy);
    const ReadGradients got = run(c, p, saveGates, dy);
    // 16-bit: the saved states, the gate gradients and every GEMM's
    // operands are rounded to the type.
    // TF32: the GEMMs' operands within 2^-11.
    const double tolerance = c.dtype != DType::F32 ? 2e-2
                             : c.tf32              ? 5e-3
                                                   : 2e-5;
    const double dXError = reference::relativeError(got.dX, want.x);
    EXPECT_LE(dXError, tolerance) << "d_x";
    if (c.initial) {
      EXPECT_LE(reference::relativeError(got.dH0, want.h0), tolerance);
      EXPECT_LE(reference::relativeError(got.dC0, want.c0), tolerance);
    }
    const int64_t D = c.bidirectional ? 2 : 1;
    for (int64_t layer = 0; layer < c.L; ++layer)
      for (int64_t d = 0; d < D; ++d) {
        const std::string suffix =
            "_l" + std::to_string(layer) + (d ? "_reverse" : "");
        const reference::LstmWeights &w = want.weights[layer * D + d];
        EXPECT_LE(reference::relativeError(
                      got.dWeights.at("weight_ih" + suffix), w.weightIh),
                  tolerance)
            << "weight_ih" << suffix;
        EXPECT_LE(reference::relativeError(
                      got.dWeights.at("weight_hh" + suffix), w.weightHh),
                  tolerance)
            << "weight_hh" << suffix;
        for (const char *bias : {"bias_ih", "bias_hh"}) {
          if (!c.biases)
            break;
          EXPECT_LE(reference::relativeError(got.dWeights.at(bias + suffix),
                                             w.biasIh),
                    tolerance)
              << bias << suffix;
        }
      }
    return dXError;
  }
};

const DType f32 = DType::F32, bf16 = DType::BF16;

// Numerics, which the sanitizer build leaves to the release build.
class LstmBackwardNumerics : public LstmBackwardTest {};

TEST_F(LstmBackwardTest, TwoLayersBidirectionalPackedSavedGates) {
  LstmCase c{f32, 7, 3, 5, 6, 2, true};
  c.lengths = true;
  expectMatches(c, 31, true);
}

TEST_F(LstmBackwardNumerics, GatesRecomputedBatchFirstWithoutBiasesOrStates) {
  LstmCase c{f32, 6, 4, 9, 10, 2, true};
  c.batchFirst = true;
  c.biases = false;
  c.initial = false;
  c.lengths = true;
  expectMatches(c, 32, false);
}

// The GEMMs in TF32 (the API's default for f32): the gates recomputed, the
// weight and input gradients, two layers both ways; the recurrence's
// products stay exact. Within TF32's tolerance of float64, and off it by
// more than exact fp32's gradients are (about 1e-7 here), so the operands
// were rounded.
TEST_F(LstmBackwardNumerics, F32GemmsInTf32) {
  LstmCase c{f32, 6, 5, 9, 20, 2, true};
  c.lengths = true;
  c.tf32 = true;
  EXPECT_GT(expectMatches(c, 37, false), 1e-5);
}

TEST_F(LstmBackwardNumerics, OneStepOneHiddenUnit) {
  expectMatches({f32, 1, 2, 3, 1, 1}, 33, true);
  expectMatches({f32, 2, 1, 4, 1, 2, true}, 34, false);
}

TEST_F(LstmBackwardNumerics, Bf16TensorCoresOddUnitsAndTwoBatchPasses) {
  // 7 units a block: W_hh's 7 columns padded to a 16-row tile, 4H = 96
  // deep split over the warps; 17 entries, two passes of 16.
  LstmCase c{bf16, 9, 17, 12, 24, 1, true};
  c.units = 7;
  c.weightsOnChip = true;
  c.lengths = true;
  expectMatches(c, 35, true);
}

TEST_F(LstmBackwardNumerics, Bf16ColumnsFromL2GatesRecomputed) {
  LstmCase c{bf16, 8, 5, 16, 20, 2, true};
  c.weightsOnChip = false;
  c.lengths = true;
  expectMatches(c, 36, false);
}

TEST_F(LstmBackwardNumerics, RerunsAreBitIdentical) {
  LstmCase c{bf16, 6, 5, 8, 12, 2, true};
  c.lengths = true;
  LstmProblem p = problem(c, 37);
  const reference::LstmOutputGradients dy = resultGradients(c, 38);
  const ReadGradients first = run(c, p, true, dy);
  const ReadGradients second = run(c, p, true, dy);
  EXPECT_EQ(first.dX, second.dX);
  EXPECT_EQ(first.dH0, second.dH0);
  EXPECT_EQ(first.dC0, second.dC0);
  EXPECT_EQ(first.dWeights, second.dWeights);
}

TEST_F(LstmBackwardTest, BadCallsWriteNothing) {
  const LstmCase c{f32, 4, 2, 3, 5, 1};
  LstmProblem p = problem(c, 39);
  const std::vector<double> sentinel(4 * 2 * 3, 7.0);
  DeviceTensor dX = dense(sentinel, {4, 2, 3});
  DeviceTensor hidden = dense(std::vector<double>(4 * 2 * 5), {1, 4, 2, 5});
  DeviceTensor cells = dense(std::vector<double>(4 * 2 * 5), {1, 4, 2, 5});
  DeviceTensor dOut = dense(std::vector<double>(4 * 2 * 5), {4, 2, 5});
  const LstmSaved saved{hidden.view, cells.view, {}};
  auto expectRejected = [&](const LstmSaved &s, const LstmGradients &g,
                            const LstmOptions &o, const std::string &message) {
    EXPECT_THAT(
        [&] {
          lstmBackward(*context, p.inputs, s, {dOut.view, {}, {}}, g, o);
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
    EXPECT_EQ(read(dX, sentinel.size()), sentinel);
  };
  const LstmGradients grads{dX.view, {}, {}, {}};
  LstmOptions perStep = options(c);
  perStep.perStep = true;
  expectRejected(saved, grads, perStep, "'perStep'");

  LstmSaved shortCells = saved;
  shortCells.cells.shape = {1, 3, 2, 5};
  expectRejected(shortCells, grads, options(c), "cells");

  LstmSaved shortGates = saved;
  DeviceTensor gates = dense(std::vector<double>(3 * 2 * 20), {1, 3, 2, 20});
  shortGates.gates = gates.view;
  expectRejected(shortGates, grads, options(c), "gates");

  LstmGradients unknown = grads;
  unknown.dWeights["weight_ih_l0"] = dX.view;
  expectRejected(saved, unknown, options(c), "unknown gradient 'weight_ih_l0'");

  LstmGradients wrongShape = grads;
  DeviceTensor small = dense(std::vector<double>(3), {3});
  wrongShape.dWeights["d_bias_ih_l0"] = small.view;
  expectRejected(saved, wrongShape, options(c), "d_bias_ih_l0");
}

} // namespace
