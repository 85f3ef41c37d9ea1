//===- KdaDecodeApiTest.cpp - KDA decoding over a state pool --------------===//
//
// rudnn::kdaDecode against the float64 recurrence run on each entry from
// its pool state: permuted slots, one and several new tokens, f32 and bf16
// pools, grouped value heads; slots untouched by the call keep their bits;
// a shared or outside slot refused on the device (status) or, without a
// status tensor, by a typed error before anything is written; new sizes
// and slots compile nothing. Built for the emulation backend and (label
// gpu) a CUDA device.
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

/// One decoding step's tensors on the device.
struct DecodeProblem {
  int64_t B, T, Q, H, K, V, P;
  reference::KdaInputs in; // q and k per value head
  std::vector<double> q, k, pool, slots;
  DeviceTensor qT, kT, vT, gT, betaT, poolT, slotsT;
  KdaDecodeInputs inputs;
};

class KdaDecode : public ApiTest {
protected:
  DecodeProblem problem(int64_t B, int64_t T, int64_t Q, int64_t H, int64_t P,
                        std::vector<double> slots, DType dtype, DType state,
                        unsigned seed) {
    const int64_t K = 32, V = 16;
    DecodeProblem p{
        B,  T,  Q,  H,  K,  V,  P,  {}, {}, {}, {}, std::move(slots),
        {}, {}, {}, {}, {}, {}, {}, {}};
    reference::KdaInputs keys =
        randomKdaInputs({B, T, Q, K, V}, -1.0, false, false, seed);
    p.q = keys.q, p.k = keys.k;
    roundTo(dtype, {&p.q, &p.k});
    p.in = randomKdaInputs({B, T, H, K, V}, -1.0, false, false, seed + 1);
    roundTo(dtype, {&p.in.v, &p.in.beta});
    p.in.q = reference::repeatHeads(p.q, B * T, Q, H, K);
    p.in.k = reference::repeatHeads(p.k, B * T, Q, H, K);
    std::mt19937 random(seed + 2);
    p.pool = normalValues(P * H * K * V, random);
    for (double &x : p.pool)
      x *= 0.5;
    roundTo(state, {&p.pool});
    p.qT = sequence(p.q, B, T, Q, K, dtype, Layout::BTHD);
    p.kT = sequence(p.k, B, T, Q, K, dtype, Layout::BHTD);
    p.vT = sequence(p.in.v, B, T, H, V, dtype, Layout::BTHD);
    p.gT = sequence(p.in.g, B, T, H, K, DType::F32, Layout::BTHD);
    p.betaT = sequence(p.in.beta, B, T, H, 1, dtype, Layout::BTHD, true);
    p.poolT = dense(p.pool, {P, H, K, V}, state);
    p.slotsT = upload(bytesOf<int32_t>(p.slots), DType::I32);
    p.slotsT.view = TensorView::contiguous(p.slotsT.view.data, DType::I32, {B});
    p.inputs = {p.qT.view,    p.kT.view,    p.vT.view,    p.gT.view,
                p.betaT.view, p.poolT.view, p.slotsT.view};
    return p;
  }

  DeviceTensor unsetOutput(const DecodeProblem &p, DType dtype) {
    return sequence(std::vector<double>(p.B * p.T * p.H * p.V, NAN), p.B, p.T,
                    p.H, p.V, dtype, Layout::BTHD);
  }
  DeviceTensor unsetStatus(const DecodeProblem &p) {
    DeviceTensor status =
        upload(bytesOf<int32_t>(std::vector<double>(p.B, 7)), DType::I32);
    status.view = TensorView::contiguous(status.view.data, DType::I32, {p.B});
    return status;
  }
  std::vector<int32_t> readStatus(const DeviceTensor &status, int64_t B) {
    std::vector<int32_t> values(static_cast<size_t>(B));
    context->copyToHost(values.data(), status.view.data,
                        values.size() * sizeof(int32_t));
    context->synchronize();
    return values;
  }
  std::vector<double> readPool(const DecodeProblem &p) {
    return read(p.poolT, p.P * p.H * p.K * p.V);
  }
};

struct DecodeCase {
  int64_t T, Q, H;
  DType dtype, state;
};

class KdaDecodeNumerics : public KdaDecode,
                          public ::testing::WithParamInterface<DecodeCase> {};

void PrintTo(const DecodeCase &, std::ostream *) {}

TEST_P(KdaDecodeNumerics, MatchesEachEntryFromItsSlot) {
  const DecodeCase c = GetParam();
  // Five entries over a pool of eight, slots permuted; slots 1, 4 and 6 are
  // no entry's.
  DecodeProblem p =
      problem(5, c.T, c.Q, c.H, 8, {3, 0, 7, 5, 2}, c.dtype, c.state, 40);
  const double scale = 1.0 / std::sqrt(double(p.K));
  reference::KdaPoolStep want = reference::kdaPoolStep(
      {p.B, p.T, p.H, p.K, p.V}, p.in, p.pool, p.slots, scale);
  DeviceTensor output = unsetOutput(p, c.dtype), status = unsetStatus(p);
  kdaDecode(*context, p.inputs, {output.view, status.view});
  // bf16 storage rounds the state once a step (2^-9 relative).
  const double tolerance =
      c.dtype == DType::F32 && c.state == DType::F32 ? 1e-4 : 2e-2;
  EXPECT_LT(
      relativeError(readSequence(output, p.B, p.T, p.H, p.V), want.output),
      tolerance);
  const std::vector<double> pool = readPool(p);
  EXPECT_LT(relativeError(pool, want.pool), tolerance);
  const int64_t state = p.H * p.K * p.V;
  for (int64_t untouched : {1, 4, 6}) {
    for (int64_t i = 0; i < state; ++i)
      ASSERT_EQ(pool[untouched * state + i], p.pool[untouched * state + i]);
  }
  EXPECT_EQ(readStatus(status, p.B), std::vector<int32_t>(p.B, 0));
}

std::string decodeCaseName(const ::testing::TestParamInfo<DecodeCase> &info) {
  const DecodeCase &c = info.param;
  return "T" + std::to_string(c.T) + "_Q" + std::to_string(c.Q) + "_H" +
         std::to_string(c.H) + "_" + dtypeName(c.dtype) + "_state_" +
         dtypeName(c.state);
}

INSTANTIATE_TEST_SUITE_P(
    Pools, KdaDecodeNumerics,
    ::testing::Values(DecodeCase{1, 2, 2, DType::F32, DType::F32},
                      DecodeCase{3, 1, 2, DType::F32, DType::BF16},
                      DecodeCase{1, 2, 4, DType::BF16, DType::BF16},
                      DecodeCase{2, 3, 3, DType::F16, DType::F32}),
    decodeCaseName);

class KdaDecodeTransformsNumerics : public KdaDecode {};

// Raw inputs as a model's projections give them: q and k normalised, beta
// from logits and the bounded gate from a_log and dt_bias inside the step.
TEST_F(KdaDecodeTransformsNumerics, RawInputsMatchTheTransformedReference) {
  DecodeProblem p =
      problem(3, 2, 1, 2, 4, {2, 0, 3}, DType::F32, DType::F32, 41);
  std::mt19937 random(42);
  std::vector<double> aLog = normalValues(p.H, random);
  std::vector<double> dtBias = normalValues(p.H * p.K, random);
  DeviceTensor aLogT = dense(aLog, {p.H}), dtBiasT = dense(dtBias, {p.H, p.K});
  p.inputs.aLog = aLogT.view;
  p.inputs.dtBias = dtBiasT.view;
  KdaOptions options;
  options.qkL2Norm = true;
  options.betaLogits = true;
  options.gateLowerBound = -3.0f;
  reference::KdaInputTransforms t;
  t.qkL2Norm = t.betaLogits = true;
  t.aLog = aLog;
  t.dtBias = dtBias;
  t.lowerBound = -3.0;
  const reference::KdaShape shape{p.B, p.T, p.H, p.K, p.V};
  const double scale = 1.0 / std::sqrt(double(p.K));
  reference::KdaPoolStep want = reference::kdaPoolStep(
      shape, reference::transformKdaInputs(shape, p.in, t), p.pool, p.slots,
      scale);
  DeviceTensor output = unsetOutput(p, DType::F32);
  kdaDecode(*context, p.inputs, {output.view}, options);
  EXPECT_LT(
      relativeError(readSequence(output, p.B, p.T, p.H, p.V), want.output),
      1e-4);
  EXPECT_LT(relativeError(readPool(p), want.pool), 1e-4);
  // A bound without the gate's parameters is refused.
  KdaDecodeInputs noGate = p.inputs;
  noGate.aLog.reset();
  noGate.dtBias.reset();
  EXPECT_THAT([&] { kdaDecode(*context, noGate, {output.view}, options); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("'gate_lower_bound' needs 'a_log'")));
}

TEST_F(KdaDecode, SharedOrOutsideSlotsAreRefusedOnTheDevice) {
  // Entries 0 and 2 share slot 5; entry 3's slot is past the pool; entry 4's
  // is negative.
  DecodeProblem p =
      problem(5, 1, 2, 2, 6, {5, 1, 5, 6, -1}, DType::F32, DType::F32, 50);
  const double scale = 1.0 / std::sqrt(double(p.K));
  reference::KdaPoolStep want = reference::kdaPoolStep(
      {p.B, p.T, p.H, p.K, p.V}, p.in, p.pool, p.slots, scale);
  DeviceTensor output = unsetOutput(p, DType::F32), status = unsetStatus(p);
  kdaDecode(*context, p.inputs, {output.view, status.view});
  EXPECT_EQ(readStatus(status, p.B), (std::vector<int32_t>{1, 0, 1, 1, 1}));
  EXPECT_EQ(want.status, (std::vector<double>{1, 0, 1, 1, 1}));
  EXPECT_LT(
      relativeError(readSequence(output, p.B, p.T, p.H, p.V), want.output),
      1e-4);
  // Only entry 1's slot changed.
  const std::vector<double> pool = readPool(p);
  const int64_t state = p.H * p.K * p.V;
  for (int64_t slot = 0; slot < p.P; ++slot) {
    if (slot == 1)
      continue;
    for (int64_t i = 0; i < state; ++i)
      ASSERT_EQ(pool[slot * state + i], p.pool[slot * state + i]);
  }
  EXPECT_LT(relativeError(pool, want.pool), 1e-4);
}

TEST_F(KdaDecode, WithoutStatusASharedSlotIsATypedError) {
  DecodeProblem p =
      problem(3, 1, 1, 1, 4, {2, 0, 2}, DType::F32, DType::F32, 60);
  DeviceTensor output = unsetOutput(p, DType::F32);
  EXPECT_THAT([&] { kdaDecode(*context, p.inputs, {output.view}); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("'slots' entries 0 and 2 share slot 2")));
  EXPECT_TRUE(std::isnan(read(output, 1)[0]));
  EXPECT_EQ(readPool(p), p.pool);

  DecodeProblem outside =
      problem(2, 1, 1, 1, 4, {3, 4}, DType::F32, DType::F32, 61);
  DeviceTensor o2 = unsetOutput(outside, DType::F32);
  EXPECT_THAT([&] { kdaDecode(*context, outside.inputs, {o2.view}); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(
                  "'slots' entry 1 is 4, outside the pool's 4 states")));
}

TEST_F(KdaDecode, NewBatchesPoolsAndSlotsCompileNothing) {
  DecodeProblem first =
      problem(2, 1, 2, 2, 4, {1, 3}, DType::BF16, DType::BF16, 70);
  DeviceTensor o = unsetOutput(first, DType::BF16), s = unsetStatus(first);
  kdaDecode(*context, first.inputs, {o.view, s.view});
  const Counters before = context->counters();
  DecodeProblem next =
      problem(6, 1, 2, 2, 9, {8, 0, 4, 2, 6, 1}, DType::BF16, DType::BF16, 71);
  DeviceTensor o2 = unsetOutput(next, DType::BF16), s2 = unsetStatus(next);
  kdaDecode(*context, next.inputs, {o2.view, s2.view});
  const Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(KdaDecode, APoolOfAnotherShapeIsRefused) {
  DecodeProblem p = problem(2, 1, 2, 2, 4, {0, 1}, DType::F32, DType::F32, 80);
  DeviceTensor wrong =
      dense(std::vector<double>(4 * 3 * 32 * 16, 0.0), {4, 3, 32, 16});
  KdaDecodeInputs inputs = p.inputs;
  inputs.statePool = wrong.view;
  DeviceTensor output = unsetOutput(p, DType::F32);
  EXPECT_THAT([&] { kdaDecode(*context, inputs, {output.view}); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("'state_pool' must have shape [4, 2, 32, 16]")));
}

} // namespace
