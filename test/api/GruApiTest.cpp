//===- GruApiTest.cpp - rudnn::gruForward and gruBackward against float64 -===//
//
// torch.nn.GRU through the JIT API: the forward (saving what the backward
// takes) against the float64 reference's out, h_n and saved values, then
// the backward on fresh random result gradients, every gradient (x, h0,
// each weight and both biases, whose n rows differ) against the float64
// backpropagation through time: stacked, bidirectional, packed (unsorted
// lengths, one a single step), batch first, without h0 or biases, one
// launch a step, W_hh on chip on tensor cores (odd units, two batch
// passes) and read from L2. Reruns are bit-identical; bad calls are
// rejected with nothing written.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/Compare.h"
#include "lib/reference/gru/GruReference.h"
#include "rudnn/gru.h"
#include "test/api/LstmFixture.h"

#include <gmock/gmock.h>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

/// What one forward and backward wrote, read back time-major.
struct Read {
  std::vector<double> out, hN, hidden, gates, dX, dH0;
  std::map<std::string, std::vector<double>> dWeights;
};

class GruTest : public LstmFixture {
protected:
  static LstmCase gru(LstmCase c) {
    c.gru = true;
    return c;
  }

  static GruInputs inputsOf(const LstmProblem &p) {
    return {p.inputs.x, p.inputs.h0, p.inputs.weights, p.inputs.lengths};
  }

  static int64_t countOf(const std::vector<int64_t> &shape) {
    int64_t count = 1;
    for (int64_t n : shape)
      count *= n;
    return count;
  }

  DeviceTensor fresh(const std::vector<int64_t> &shape, DType dtype) {
    return dense(std::vector<double>(countOf(shape), NAN), shape, dtype);
  }

  /// The forward saving its states, then the backward of `dy` (time-major
  /// out gradient).
  Read run(const LstmCase &c, LstmProblem &p,
           const reference::GruOutputGradients &dy) {
    const int64_t D = c.bidirectional ? 2 : 1, states = c.L * D;
    std::vector<int64_t> outShape = {c.T, c.B, D * c.H},
                         xShape = {c.T, c.B, c.I};
    if (c.batchFirst) {
      std::swap(outShape[0], outShape[1]);
      std::swap(xShape[0], xShape[1]);
    }
    const GruInputs inputs = inputsOf(p);
    DeviceTensor out = fresh(outShape, c.dtype);
    DeviceTensor hN = fresh({states, c.B, c.H}, c.dtype);
    DeviceTensor hidden = fresh({c.L, c.T, c.B, D * c.H}, c.dtype);
    DeviceTensor gates = fresh({states, c.T, c.B, 4 * c.H}, DType::F32);
    const GruSaved saved{hidden.view, gates.view};
    gruForward(*context, inputs, {out.view, hN.view, saved}, options(c));

    DeviceTensor dOut =
        dense(c.batchFirst ? reference::swapLeading(dy.out, c.T, c.B, D * c.H)
                           : dy.out,
              outShape, c.dtype);
    DeviceTensor dHN = dense(dy.hN, {states, c.B, c.H}, c.dtype);
    DeviceTensor dX = fresh(xShape, c.dtype);
    DeviceTensor dH0 = fresh({states, c.B, c.H}, c.dtype);
    GruGradients grads{dX.view, dH0.view, {}};
    std::vector<DeviceTensor> weightGradients;
    weightGradients.reserve(inputs.weights.size());
    for (const auto &[name, weight] : inputs.weights) {
      weightGradients.push_back(fresh(weight.shape, c.dtype));
      grads.dWeights["d_" + name] = weightGradients.back().view;
    }
    GruOptions backward = options(c);
    backward.perStep.reset(); // always one persistent grid
    gruBackward(*context, inputs, saved, {dOut.view, dHN.view}, grads,
                backward);

    const int64_t rows = int64_t(c.T) * c.B;
    Read got{read(out, rows * D * c.H),
             read(hN, states * c.B * c.H),
             read(hidden, c.L * rows * D * c.H),
             read(gates, states * rows * 4 * c.H),
             read(dX, rows * c.I),
             read(dH0, states * c.B * c.H),
             {}};
    if (c.batchFirst) {
      got.out = reference::swapLeading(got.out, c.B, c.T, D * c.H);
      got.dX = reference::swapLeading(got.dX, c.B, c.T, c.I);
    }
    size_t k = 0;
    for (const auto &[name, weight] : inputs.weights)
      got.dWeights[name] = read(weightGradients[k++], countOf(weight.shape));
    return got;
  }

  void expectMatches(LstmCase c, unsigned seed) {
    c = gru(c);
    LstmProblem p = problem(c, seed);
    std::mt19937 random(seed + 100);
    const int64_t D = c.bidirectional ? 2 : 1, states = c.L * D;
    reference::GruOutputGradients dy{
        normalValues(int64_t(c.T) * c.B * D * c.H, random),
        normalValues(states * c.B * c.H, random)};
    roundTo(c.dtype, {&dy.out, &dy.hN});
    reference::LstmShape timeMajor = p.shape;
    timeMajor.batchFirst = false;
    reference::GruInputs in{p.in.x, p.in.h0, p.in.lengths, p.in.weights};
    if (c.batchFirst)
      in.x = reference::swapLeading(p.in.x, c.B, c.T, c.I);
    const reference::GruOutputs want = reference::gruForward(timeMajor, in);
    const reference::GruGradients wantGrads =
        reference::gruBackward(timeMajor, in, dy);
    const Read got = run(c, p, dy);

    // 16-bit: the saved outputs, the gate gradients and every GEMM's
    // operands are rounded to the type.
    // TF32: every product's operands within 2^-11.
    const double tolerance = c.dtype != DType::F32 ? 2e-2
                             : c.tf32              ? 5e-3
                                                   : 2e-5;
    EXPECT_LE(reference::relativeError(got.out, want.out), tolerance) << "out";
    EXPECT_LE(reference::relativeError(got.hN, want.hN), tolerance) << "h_n";
    EXPECT_LE(reference::relativeError(got.hidden, want.hidden), tolerance);
    EXPECT_LE(reference::relativeError(got.gates, want.gates), tolerance);
    EXPECT_LE(reference::relativeError(got.dX, wantGrads.x), tolerance)
        << "d_x";
    EXPECT_LE(reference::relativeError(got.dH0, wantGrads.h0), tolerance)
        << "d_h0";
    for (int64_t layer = 0; layer < c.L; ++layer)
      for (int64_t d = 0; d < D; ++d) {
        const std::string suffix =
            "_l" + std::to_string(layer) + (d ? "_reverse" : "");
        const reference::LstmWeights &w = wantGrads.weights[layer * D + d];
        const std::pair<const char *, const std::vector<double> *> each[] = {
            {"weight_ih", &w.weightIh},
            {"weight_hh", &w.weightHh},
            {"bias_ih", &w.biasIh},
            {"bias_hh", &w.biasHh}};
        for (auto [name, values] : each) {
          if (values->empty())
            continue;
          EXPECT_LE(
              reference::relativeError(got.dWeights.at(name + suffix), *values),
              tolerance)
              << name << suffix;
        }
      }
  }
};

const DType f32 = DType::F32, bf16 = DType::BF16;

// Numerics, which the sanitizer build leaves to the release build.
class GruNumerics : public GruTest {};

TEST_F(GruTest, TwoLayersBidirectionalPacked) {
  LstmCase c{f32, 7, 3, 5, 6, 2, true};
  c.lengths = true;
  expectMatches(c, 41);
}

TEST_F(GruNumerics, BatchFirstWithoutBiasesOrStatesOneLaunchAStep) {
  LstmCase c{f32, 6, 4, 9, 10, 2, true};
  c.batchFirst = true;
  c.biases = false;
  c.initial = false;
  c.lengths = true;
  c.perStep = true;
  expectMatches(c, 42);
}

// f32 in TF32, the API's default: the projection, W_hh on chip (two
// passes of 16 entries) and the backward's GEMMs on tensor cores (one
// launch a step in TF32 is the LSTM's test: the same kernels).
TEST_F(GruNumerics, F32InTf32) {
  LstmCase c{f32, 6, 17, 9, 12, 2, true};
  c.lengths = true;
  c.tf32 = true;
  expectMatches(c, 48);
}

TEST_F(GruNumerics, OneStepOneHiddenUnit) {
  expectMatches({f32, 1, 2, 3, 1, 1}, 43);
}

TEST_F(GruNumerics, Bf16TensorCoresOddUnitsAndTwoBatchPasses) {
  // 7 units a block: 21 W_hh rows padded to 32 forwards, W_hh's 7 columns
  // (3H = 72 deep) to a 16-row tile backwards; 17 entries, two passes.
  LstmCase c{bf16, 9, 17, 12, 24, 1, true};
  c.units = 7;
  c.weightsOnChip = true;
  c.lengths = true;
  expectMatches(c, 44);
}

TEST_F(GruNumerics, Bf16ProjectionOnWgmmaWithAnOddGateCount) {
  // 3H = 21 gate columns: rows of the gates not 16-byte multiples, each
  // run of four stored element by element, the last run of one.
  LstmCase c{bf16, 6, 5, 24, 7, 1, true};
  expectProjections([&] { expectMatches(c, 47); }, /*wgmma=*/true);
}

TEST_F(GruNumerics, F16BidirectionalPackedOnTensorCores) {
  LstmCase c{DType::F16, 7, 6, 10, 16, 2, true};
  c.lengths = true;
  expectMatches(c, 49);
}

TEST_F(GruNumerics, Bf16WeightsFromL2) {
  LstmCase c{bf16, 8, 5, 16, 20, 2};
  c.weightsOnChip = false;
  expectMatches(c, 45);
}

TEST_F(GruNumerics, RerunsAreBitIdentical) {
  LstmCase c = gru({bf16, 6, 5, 8, 12, 2, true});
  c.lengths = true;
  LstmProblem p = problem(c, 46);
  std::mt19937 random(47);
  reference::GruOutputGradients dy{normalValues(6 * 5 * 2 * 12, random),
                                   normalValues(4 * 5 * 12, random)};
  roundTo(c.dtype, {&dy.out, &dy.hN});
  const Read first = run(c, p, dy);
  const Read second = run(c, p, dy);
  EXPECT_EQ(first.out, second.out);
  EXPECT_EQ(first.dX, second.dX);
  EXPECT_EQ(first.dH0, second.dH0);
  EXPECT_EQ(first.dWeights, second.dWeights);
}

TEST_F(GruTest, BadCallsWriteNothing) {
  const LstmCase c = gru({f32, 4, 2, 3, 5, 1});
  LstmProblem p = problem(c, 48);
  const GruInputs inputs = inputsOf(p);
  const std::vector<double> sentinel(4 * 2 * 5, 7.0);
  DeviceTensor out = dense(sentinel, {4, 2, 5});
  auto expectRejected = [&](const GruInputs &in, const GruOutputs &o,
                            const std::string &message) {
    EXPECT_THAT([&] { gruForward(*context, in, o, options(c)); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
    EXPECT_EQ(read(out, sentinel.size()), sentinel);
  };
  // An LSTM's W_hh (4H rows) is not a GRU's.
  GruInputs lstmWeights = inputs;
  DeviceTensor wide = dense(std::vector<double>(20 * 5), {20, 5});
  lstmWeights.weights["weight_hh_l0"] = wide.view;
  expectRejected(lstmWeights, {out.view, {}, {}},
                 "'weight_hh_l0' must have shape [15, 5], got [20, 5]");

  GruInputs missing = inputs;
  missing.weights.erase("weight_hh_l0");
  expectRejected(missing, {out.view, {}, {}},
                 "'weight_hh_l0' is missing: a 1-layer GRU");

  // The saved gates hold four values a unit.
  DeviceTensor hidden = dense(std::vector<double>(4 * 2 * 5), {1, 4, 2, 5});
  DeviceTensor gates = dense(std::vector<double>(4 * 2 * 15), {1, 4, 2, 15});
  expectRejected(inputs, {out.view, {}, GruSaved{hidden.view, gates.view}},
                 "saved values V = 15 must be 4 × the hidden size H = 5");

  DeviceTensor dOut = dense(std::vector<double>(4 * 2 * 5), {4, 2, 5});
  DeviceTensor dX = dense(std::vector<double>(4 * 2 * 3, 7.0), {4, 2, 3});
  GruOptions perStep = options(c);
  perStep.perStep = true;
  EXPECT_THAT(
      [&] {
        gruBackward(*context, inputs, {hidden.view, gates.view},
                    {dOut.view, {}}, {dX.view, {}, {}}, perStep);
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'perStep'")));
  EXPECT_EQ(read(dX, 24), std::vector<double>(24, 7.0));
}

} // namespace
