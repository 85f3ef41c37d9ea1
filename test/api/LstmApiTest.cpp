//===- LstmApiTest.cpp - rudnn::lstmForward against float64 ---------------===//
//
// A stacked LSTM through the JIT API on fresh random inputs (weights drawn
// as torch.nn.LSTM initialises them), out, h_n and c_n against the float64
// PyTorch-semantics reference: 1 to 3 layers, one and two directions,
// hidden sizes 1 to 256 with I ≠ H, 1 to 33 steps, batches of 1 and 5,
// with and without h0/c0 and biases, batch first, packed lengths (unsorted,
// including 1), W_hh on chip and read from L2 on the same problem, f32, f16
// and bf16 (tensor cores over several row tiles and batch passes). Sizes and
// lengths never recompile; bad calls are rejected with nothing written.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/Compare.h"
#include "lib/reference/lstm/LstmReference.h"
#include "test/api/LstmFixture.h"

#include <gmock/gmock.h>

#include <cmath>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

class LstmTest : public LstmFixture {
protected:
  /// Runs `c` and returns out, h_n, c_n as read back.
  std::vector<std::vector<double>> run(const LstmCase &c, LstmProblem &p) {
    const int64_t D = c.bidirectional ? 2 : 1, states = c.L * D;
    std::vector<int64_t> outShape = {c.T, c.B, D * c.H};
    if (c.batchFirst)
      std::swap(outShape[0], outShape[1]);
    const size_t outCount = size_t(c.T) * c.B * D * c.H,
                 stateCount = size_t(states) * c.B * c.H;
    DeviceTensor out =
        dense(std::vector<double>(outCount, NAN), outShape, c.dtype);
    DeviceTensor hN = dense(std::vector<double>(stateCount, NAN),
                            {states, c.B, c.H}, c.dtype);
    DeviceTensor cN = dense(std::vector<double>(stateCount, NAN),
                            {states, c.B, c.H}, c.dtype);
    lstmForward(*context, p.inputs, {out.view, hN.view, cN.view, {}},
                options(c));
    return {read(out, outCount), read(hN, stateCount), read(cN, stateCount)};
  }

  /// Returns the largest relative error of the three results.
  double expectMatches(const LstmCase &c, unsigned seed) {
    LstmProblem p = problem(c, seed);
    reference::LstmOutputs want = reference::lstmForward(p.shape, p.in);
    std::vector<std::vector<double>> got = run(c, p);
    // 16-bit: inputs, the layers' outputs between layers and the staged
    // hidden states are rounded to the type.
    // TF32: operands within 2^-11, products within about 1e-3.
    const double tolerance = c.dtype == DType::BF16  ? 1e-2
                             : c.dtype == DType::F16 ? 3e-3
                             : c.tf32                ? 3e-3
                             : c.T > 16              ? 1e-4
                                                     : 1e-5;
    const char *names[] = {"out", "h_n", "c_n"};
    const std::vector<double> *wanted[] = {&want.out, &want.hN, &want.cN};
    double largest = 0;
    for (int i = 0; i < 3; ++i) {
      const double error = reference::relativeError(got[i], *wanted[i]);
      EXPECT_LE(error, tolerance) << names[i];
      largest = std::max(largest, error);
    }
    return largest;
  }
};

const DType f32 = DType::F32, bf16 = DType::BF16;

// The sweeps over layers, directions, sizes and dtypes: numerics, which
// the sanitizer build leaves to the release build.
class LstmNumerics : public LstmTest {};

TEST_F(LstmTest, OneLayerMatchesTorchSemantics) {
  expectMatches({f32, 9, 5, 6, 7, 1}, 1);
}

TEST_F(LstmNumerics, OneStepAndOneHiddenUnit) {
  expectMatches({f32, 1, 1, 3, 1, 1}, 2);
  expectMatches({f32, 2, 5, 4, 1, 2, true}, 3);
}

TEST_F(LstmNumerics, TwoLayersBidirectionalLongSequence) {
  expectMatches({f32, 33, 5, 32, 48, 2, true}, 4);
}

TEST_F(LstmNumerics, ThreeLayersWithoutBiasesOrInitialState) {
  LstmCase c{f32, 9, 5, 7, 16, 3, true};
  c.biases = false;
  c.initial = false;
  expectMatches(c, 5);
}

TEST_F(LstmNumerics, BatchFirst) {
  LstmCase c{f32, 6, 5, 10, 24, 2, true};
  c.batchFirst = true;
  expectMatches(c, 6);
}

TEST_F(LstmNumerics, PackedLengthsUnsortedWithSingleSteps) {
  LstmCase c{f32, 12, 5, 8, 20, 2, true};
  c.lengths = true;
  expectMatches(c, 7);
  c.batchFirst = true;
  c.initial = false;
  expectMatches(c, 8);
}

TEST_F(LstmNumerics, HiddenSize64And256) {
  expectMatches({f32, 5, 5, 40, 64, 1, true}, 9);
  LstmCase wide{f32, 3, 1, 100, 256, 1};
  wide.units = 64;
  expectMatches(wide, 10);
}

// The four recurrences on one problem: persistent with W_hh on chip,
// persistent reading it from L2 (another split of the units), and one
// launch a step, loading the rows on chip once a launch (the default) or
// reading them from L2 each pass of 8 entries (9 entries: two passes).
TEST_F(LstmNumerics, PersistentAndPerStepRecurrencesAgreeOnOneProblem) {
  LstmCase c{f32, 8, 9, 12, 40, 2, true};
  c.lengths = true;
  c.weightsOnChip = true;
  LstmProblem onChip = problem(c, 11);
  const std::vector<std::vector<double>> first = run(c, onChip);
  c.weightsOnChip = false;
  c.units = 3;
  LstmProblem streamed = problem(c, 11);
  const std::vector<std::vector<double>> second = run(c, streamed);
  c.units = 0;
  c.weightsOnChip.reset();
  c.perStep = true;
  LstmProblem perStep = problem(c, 11);
  const std::vector<std::vector<double>> third = run(c, perStep);
  c.weightsOnChip = false;
  LstmProblem perStepStreamed = problem(c, 11);
  const std::vector<std::vector<double>> fourth = run(c, perStepStreamed);
  for (int i = 0; i < 3; ++i) {
    EXPECT_LE(reference::relativeError(second[i], first[i]), 1e-6);
    EXPECT_LE(reference::relativeError(third[i], first[i]), 1e-6);
    EXPECT_LE(reference::relativeError(fourth[i], first[i]), 1e-6);
  }
  c.weightsOnChip.reset();
  expectMatches(c, 12);
}

// f32 on TF32 tensor cores (the API's default): the projection on wgmma
// (sm_90) and W_hh on chip, persistent and one launch a step, two passes
// of 16 entries, odd sizes (H = 20: rows padded to whole 16 x 16 steps;
// 13 features: rows off 16 bytes); checked against float64 within TF32's
// tolerance, and off by more than exact fp32's (about 1e-7 here), so the
// operands were rounded.
TEST_F(LstmNumerics, F32ProductsInTf32) {
  LstmCase c{f32, 7, 17, 13, 20, 2, true};
  c.lengths = true;
  c.tf32 = true;
  expectProjections([&] { EXPECT_GT(expectMatches(c, 23), 1e-5); },
                    /*wgmma=*/true);
  c.perStep = true;
  EXPECT_GT(expectMatches(c, 24), 1e-5);
}

// One launch a step on tensor cores: the rows loaded once for two passes
// of 16 entries.
TEST_F(LstmNumerics, PerStepBf16AndSingleStep) {
  LstmCase c{bf16, 9, 17, 16, 24, 1, true};
  c.perStep = true;
  c.lengths = true;
  expectMatches(c, 19);
  LstmCase single{f32, 1, 2, 5, 7, 2};
  single.perStep = true;
  single.batchFirst = true;
  expectMatches(single, 20);
}

TEST_F(LstmNumerics, Bf16WithinItsTolerance) {
  LstmCase c{bf16, 17, 5, 24, 32, 2, true};
  c.lengths = true;
  expectMatches(c, 13);
}

TEST_F(LstmNumerics, F16WithinItsTolerance) {
  LstmCase c{DType::F16, 7, 5, 12, 24, 2, true};
  c.lengths = true;
  expectMatches(c, 18);
}

TEST_F(LstmNumerics, Bf16TensorCoresOverSeveralRowTilesAndBatchPasses) {
  // 256 gate rows a block (16 row tiles over 8 warps), 17 entries (two
  // passes of 16); and 7 units a block (28 rows padded to 32, the depth
  // split over 4 warps).
  LstmCase wide{bf16, 5, 17, 48, 256, 1};
  wide.units = 64;
  wide.lengths = true;
  expectMatches(wide, 15);
  LstmCase odd{bf16, 6, 3, 20, 72, 1, true};
  odd.units = 7;
  expectMatches(odd, 16);
}

TEST_F(LstmNumerics, Bf16ProjectionOnWgmmaAtOddSizes) {
  // 133 rows (a second row tile of 5), 72 features (a second stage 8
  // deep), 160 gate columns (a second column tile of 32); batch first.
  LstmCase c{bf16, 7, 19, 72, 40, 1, true};
  c.batchFirst = true;
  expectProjections([&] { expectMatches(c, 21); }, /*wgmma=*/true);
  // 13 features: rows off 16 bytes, copied element by element.
  LstmCase unaligned{DType::F16, 5, 3, 13, 16, 1};
  expectProjections([&] { expectMatches(unaligned, 22); }, /*wgmma=*/true);
}

TEST_F(LstmNumerics, F32ProjectionOnWgmmaInTf32AtOddSizes) {
  // As above in f32: 72 features are stages 32, 32 and 8 deep
  // (m64n128k8 reading TF32 from 128-byte fp32 rows).
  LstmCase c{f32, 7, 19, 72, 40, 1, true};
  c.batchFirst = true;
  c.tf32 = true;
  expectProjections([&] { EXPECT_GT(expectMatches(c, 25), 1e-5); },
                    /*wgmma=*/true);
}

/// The same GEMM on sm_80, which has no wgmma: 64 x 64 tiles on mma.sync.
class LstmSm80Numerics : public LstmTest {
protected:
  static void SetUpTestSuite() { openContext("sm_80"); }
};

TEST_F(LstmSm80Numerics, Bf16ProjectionOnMmaSync) {
  LstmCase c{bf16, 7, 19, 72, 40, 1, true};
  expectProjections([&] { expectMatches(c, 23); }, /*wgmma=*/false);
}

TEST_F(LstmTest, ChangingStepsBatchOrLengthsCompilesNothing) {
  auto call = [&](int T, int B, bool lengths) {
    LstmCase c{f32, T, B, 6, 12, 2, true};
    c.lengths = lengths;
    LstmProblem p = problem(c, unsigned(T * 10 + B));
    run(c, p);
  };
  call(4, 3, true);
  const Counters before = context->counters();
  call(9, 1, true);
  call(2, 7, true);
  const Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(LstmTest, BadCallsWriteNothing) {
  const LstmCase c{f32, 4, 2, 3, 5, 2, true};
  LstmProblem p = problem(c, 14);
  const std::vector<double> sentinel(4 * 2 * 10, 7.0);
  DeviceTensor out = dense(sentinel, {4, 2, 10});
  auto expectRejected = [&](const LstmInputs &inputs, const LstmOptions &o,
                            const std::string &message) {
    EXPECT_THAT(
        [&] {
          lstmForward(*context, inputs, {out.view, {}, {}, {}}, o);
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
    EXPECT_EQ(read(out, sentinel.size()), sentinel);
  };
  const LstmOptions good = options(c);

  LstmInputs missing = p.inputs;
  missing.weights.erase("weight_hh_l1_reverse");
  expectRejected(missing, good, "'weight_hh_l1_reverse' is missing");

  LstmInputs unknown = p.inputs;
  unknown.weights["weight_ih_l2"] = p.inputs.weights.at("weight_ih_l1");
  expectRejected(unknown, good, "unknown weight 'weight_ih_l2'");

  LstmInputs wrongShape = p.inputs;
  wrongShape.weights["weight_hh_l0"].shape = {20, 4};
  wrongShape.weights["weight_hh_l0"].strides = {4, 1};
  expectRejected(wrongShape, good, "weight_hh_l0");

  LstmInputs wrongGates = p.inputs;
  wrongGates.weights["bias_ih_l1"].shape = {16};
  expectRejected(wrongGates, good, "bias_ih_l1");

  LstmOptions oneLayer = good;
  oneLayer.numLayers = 1;
  expectRejected(p.inputs, oneLayer, "unknown weight");
  LstmOptions noLayers = good;
  noLayers.numLayers = 0;
  expectRejected(p.inputs, noLayers, "'numLayers' must be 1 to 64");

  LstmCase withLengths = c;
  withLengths.lengths = true;
  LstmProblem lengths = problem(withLengths, 17);
  const std::vector<double> tooLong = {2, 5};
  context->copyToDevice(lengths.inputs.lengths->data,
                        bytesOf<int32_t>(tooLong).data(), 8);
  expectRejected(lengths.inputs, good,
                 "'lengths'[1] is 5, expected 0 to T = 4");
}

} // namespace
