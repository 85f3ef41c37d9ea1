//===- AttentionBackwardApiTest.cpp - rudnn::attentionBackward ------------===//
//
// The gradients through the public API from the API's own forward, against
// the float64 gradient on fresh random inputs: masks, window, softcap, GQA
// and MQA, T ≠ S, odd head dims, rows with no allowed key, packed batches,
// both memory layouts, the Hopper kernels on sm_90; the same bits on every
// call; one compile per signature; bad calls named with nothing written.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/attention/AttentionReference.h"
#include "test/api/ApiFixture.h"
#include "test/api/AttentionInputs.h"
#include "test/support/KdaProblem.h"
#include "test/support/PackedBatch.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <algorithm>
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
  /// The memory order of q, k, v, o, d_output and the gradients.
  Layout layout = Layout::BTHD;
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

class AttentionBackwardTest : public AttentionApiTest {
protected:
  std::unique_ptr<Problem> problem(const BackwardCase &c) {
    auto p = std::make_unique<Problem>();
    const int64_t B = c.B, T = c.T, S = c.S, H = c.H, G = c.G, D = c.D, E = c.E;
    std::mt19937 random(unsigned(T * 131 + S * 17 + D * 3 + E));
    p->shape = {B, T, S, H, G, D, E};
    p->in = randomAttentionInputs(B * T, B * S, H, G, D, E, c.dtype, random);
    p->dO = normalValues(B * T * H * E, random);
    roundTo(c.dtype, {&p->dO});
    if (c.lengths) // down to none (the last entry)
      for (int64_t b = 0; b < B; ++b)
        p->in.keyLengths.push_back(b + 1 == B && B > 1 ? 0 : S - (S / 3) * b);
    if (c.mask) {
      std::uniform_real_distribution<double> unit(0, 1);
      for (int64_t i = 0; i < B * S; ++i)
        p->in.keyMask.push_back(unit(random) < 0.75);
    }
    p->ref = reference::AttentionOptions::forHeadDim(D, c.causal, c.left,
                                                     c.right, c.softcap);

    const Layout l = c.layout;
    p->q = sequence(p->in.q, B, T, H, D, c.dtype, l);
    p->k = sequence(p->in.k, B, S, G, D, c.dtype, l);
    p->v = sequence(p->in.v, B, S, G, E, c.dtype, l);
    p->o = sequence(std::vector<double>(B * T * H * E), B, T, H, E, c.dtype, l);
    p->lse = dense(std::vector<double>(B * H * T), {B, H, T});
    p->dOutput = sequence(p->dO, B, T, H, E, c.dtype, l);
    p->dq = sequence(std::vector<double>(B * T * H * D, NAN), B, T, H, D,
                     c.dtype, l);
    p->dk = sequence(std::vector<double>(B * S * G * D, NAN), B, S, G, D,
                     c.dtype, l);
    p->dv = sequence(std::vector<double>(B * S * G * E, NAN), B, S, G, E,
                     c.dtype, l);
    AttentionInputs forward{p->q.view, p->k.view, p->v.view, {}, {}, {}};
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

  /// Runs `call` (a backward) profiled; on emulation, checks that the
  /// gradient kernels were the Hopper ones (TMA, wgmma) exactly when
  /// `hopper`.
  template <typename Call> void runOnPath(Call call, bool hopper) {
    context->resetProfile();
    context->setProfiling(true);
    call();
    context->setProfiling(false);
    if (testBackend() != BackendKind::Emulation)
      return; // the device decides
    const std::vector<KernelProfile> kernels = context->profile();
    ASSERT_EQ(kernels.size(), 3u);
    for (const KernelProfile &kernel : kernels) {
      if (kernel.kernel.find("_terms_") != std::string::npos ||
          kernel.kernel.find("_dq_") != std::string::npos)
        continue; // the row terms and dq's conversion have one kernel
      EXPECT_EQ(kernel.kernel.find("_wgmma") != std::string::npos, hopper)
          << kernel.kernel;
    }
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

  /// The deterministic mode: every query tile's shares of dq added in
  /// ascending key-tile order on a cooperative grid, so dq too is the same bits
  /// every call.
  void expectDeterministic(Problem &p, bool hopper, double tolerance) {
    p.options.deterministic = true;
    runOnPath(
        [&] { attentionBackward(*context, p.inputs, p.gradients, p.options); },
        hopper);
    if (testBackend() == BackendKind::Emulation) {
      const std::vector<KernelProfile> kernels = context->profile();
      EXPECT_TRUE(std::any_of(
          kernels.begin(), kernels.end(), [](const KernelProfile &kernel) {
            return kernel.kernel.find("_deterministic_") != std::string::npos;
          }));
    }
    const reference::AttentionShape &s = p.shape;
    const reference::AttentionGradients want =
        reference::attentionBackward(s, p.in, p.dO, p.ref);
    EXPECT_LT(relativeError(
                  readSequence(p.dq, s.batch, s.queries, s.heads, s.headDim),
                  want.dq),
              tolerance);
    EXPECT_LT(
        relativeError(readSequence(p.dk, s.batch, s.keys, s.kvHeads, s.headDim),
                      want.dk),
        tolerance);
    // Again, from another thread.
    const std::vector<double> first = all(p);
    std::thread([&] {
      attentionBackward(*context, p.inputs, p.gradients, p.options);
    }).join();
    EXPECT_EQ(all(p), first);
  }
};

class AttentionBackwardNumerics
    : public AttentionBackwardTest,
      public ::testing::WithParamInterface<BackwardCase> {};

TEST_P(AttentionBackwardNumerics, MatchesFloat64AndRepeatsBitForBit) {
  const BackwardCase c = GetParam();
  std::unique_ptr<Problem> p = problem(c);
  // sm_90: 16-bit inputs to head dims of 128 (whose rows here are all
  // 16-byte aligned) on the Hopper kernels.
  const bool hopper = c.dtype != DType::F32 && c.D <= 256 && c.E <= 256;
  runOnPath(
      [&] { attentionBackward(*context, p->inputs, p->gradients, p->options); },
      hopper);
  const reference::AttentionShape &s = p->shape;
  const reference::AttentionGradients want =
      reference::attentionBackward(s, p->in, p->dO, p->ref);
  const double tolerance = c.dtype == DType::F32 ? 1e-4 : 2e-2;
  EXPECT_LT(
      relativeError(readSequence(p->dq, s.batch, s.queries, s.heads, s.headDim),
                    want.dq),
      tolerance);
  EXPECT_LT(
      relativeError(readSequence(p->dk, s.batch, s.keys, s.kvHeads, s.headDim),
                    want.dk),
      tolerance);
  EXPECT_LT(
      relativeError(readSequence(p->dv, s.batch, s.keys, s.kvHeads, s.valueDim),
                    want.dv),
      tolerance);
  // dK and dV take no atomics: a second call, from another thread, gives
  // the same bits (dQ is summed with atomics, in the order the blocks come:
  // within the tolerance again).
  const std::vector<double> first = all(*p);
  std::thread([&] {
    attentionBackward(*context, p->inputs, p->gradients, p->options);
  }).join();
  const std::vector<double> second = all(*p);
  ASSERT_EQ(first.size(), second.size());
  const size_t from = s.batch * s.queries * s.heads * s.headDim;
  EXPECT_EQ(std::memcmp(first.data() + from, second.data() + from,
                        (first.size() - from) * sizeof(double)),
            0);
  EXPECT_LT(
      relativeError(readSequence(p->dq, s.batch, s.queries, s.heads, s.headDim),
                    want.dq),
      tolerance);
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
  if (c.softcap > 0)
    name += "_softcap";
  return c.layout == Layout::BHTD ? name + "_BHTD" : name;
}

constexpr DType f32 = DType::F32, bf16 = DType::BF16, f16 = DType::F16;

INSTANTIATE_TEST_SUITE_P(
    Features, AttentionBackwardNumerics,
    ::testing::Values(
        // Causal over lengths (one entry with none), GQA.
        BackwardCase{f32, 3, 70, 90, 4, 2, 64, 64, true, true, false, -1, -1,
                     0},
        // Mask, window and softcap together, odd dims, E ≠ D.
        BackwardCase{f32, 2, 45, 60, 2, 1, 24, 40, false, false, true, 9, 3, 5,
                     Layout::BHTD},
        // More queries than keys, causal: empty rows; MQA; D = 8.
        BackwardCase{f32, 2, 90, 30, 4, 1, 8, 8, true, false, false, -1, -1, 0},
        // One feature a row: D = E = 1.
        BackwardCase{f32, 2, 19, 23, 2, 1, 1, 1, true, true, false, -1, -1, 0},
        // 16-bit on the Hopper kernel (one pass, dV and dK in registers)
        // with mask, window and softcap; D = 72 (a partial 64-column
        // block); D = E = 128 with three query heads a key head over two
        // key tiles, and lengths.
        BackwardCase{bf16, 2, 45, 60, 2, 1, 24, 40, false, false, true, 9, 3, 5,
                     Layout::BHTD},
        BackwardCase{bf16, 1, 66, 66, 2, 1, 72, 72, true, false, false, -1, -1,
                     0},
        BackwardCase{bf16, 1, 40, 140, 3, 1, 128, 128, true, true, false, -1,
                     -1, 0},
        // Past D = E = 128 the wide Hopper kernel (64 keys a block, each
        // warpgroup half of dK's and dV's columns): D = E = 192 (the
        // second warpgroup one column block), D = 256 with E = 128 (the
        // second none of dV), causal over lengths with a mask; D = E = 256
        // causal with three query heads a key head over a window.
        BackwardCase{bf16, 1, 33, 70, 2, 1, 192, 192, false, false, false, -1,
                     -1, 0},
        BackwardCase{f16, 2, 40, 33, 2, 2, 256, 128, false, true, true, -1, -1,
                     0},
        BackwardCase{bf16, 1, 36, 75, 3, 1, 256, 256, true, false, false, 40, 3,
                     0},
        // f32 at D = 256, E = 200: 16 rows streamed a step.
        BackwardCase{f32, 1, 37, 45, 2, 1, 256, 200, true, false, true, -1, -1,
                     0}),
    caseName);

// The Hopper kernel: GQA (three query heads a key head), each query tile of
// 64 summing three key tiles of 128. (In emulation the rounding of dq to 16
// bits hides most sum-order differences; on a GPU this is the test.)
TEST_F(AttentionBackwardTest, DeterministicHopperKernelRepeatsBitForBit) {
  std::unique_ptr<Problem> p =
      problem({f16, 1, 70, 300, 3, 1, 64, 64, false, false, false, -1, -1, 0});
  expectDeterministic(*p, /*hopper=*/true, 2e-2);
}

// The sm_80 kernel in f32 (dq's sum unrounded, so any change of order
// shows): five key tiles of 64 over lengths and a mask, two query heads a
// key head, D = 40, E = 24.
TEST_F(AttentionBackwardTest, DeterministicSm80KernelRepeatsBitForBit) {
  std::unique_ptr<Problem> p =
      problem({f32, 2, 50, 300, 4, 2, 40, 24, true, true, true, -1, -1, 0});
  expectDeterministic(*p, /*hopper=*/false, 1e-4);
}

TEST_F(AttentionBackwardTest, ChangingSizesCompilesNothing) {
  std::unique_ptr<Problem> p =
      problem({f32, 1, 20, 20, 2, 1, 16, 16, true, false, false, -1, -1, 0});
  attentionBackward(*context, p->inputs, p->gradients, p->options);
  const uint64_t built = kernelsBuilt(context->counters());
  // T past 16 on both: calls of up to 16 queries take the forward's split
  // kernels (compiled once, at the first such call).
  std::unique_ptr<Problem> other =
      problem({f32, 3, 37, 50, 4, 2, 16, 16, true, false, false, -1, -1, 0});
  attentionBackward(*context, other->inputs, other->gradients, other->options);
  // The second forward compiled nothing new either: its signature is the
  // first one's.
  EXPECT_EQ(kernelsBuilt(context->counters()), built);
}

/// A packed batch: per entry its query and key counts.
struct VarlenBackwardCase {
  DType dtype;
  std::vector<int> queries, keys;
  int H, G, D, E;
  bool causal;
  int left, right;
  float softcap;
  bool deterministic = false;
};

void PrintTo(const VarlenBackwardCase &, std::ostream *) {}

class AttentionVarlenBackwardNumerics
    : public AttentionBackwardTest,
      public ::testing::WithParamInterface<VarlenBackwardCase> {};

TEST_P(AttentionVarlenBackwardNumerics, MatchesFloat64AndRepeatsBitForBit) {
  const VarlenBackwardCase c = GetParam();
  PackedAttention p(c.queries, c.keys, c.H, c.G, c.D, c.E, c.dtype, 5);
  const int64_t T = p.batch.T, S = p.batch.S, H = c.H, G = c.G, D = c.D,
                E = c.E;
  std::vector<double> dO = normalValues(T * H * E, p.random);
  roundTo(c.dtype, {&dO});
  const auto ref = reference::AttentionOptions::forHeadDim(D, c.causal, c.left,
                                                           c.right, c.softcap);
  const reference::AttentionGradients want = reference::attentionVarlenBackward(
      H, G, D, E, p.in, dO, p.batch.queryOffsets, p.batch.keyOffsets, ref);

  const PackedAttentionTensors in = uploadPacked(p);
  DeviceTensor o = dense(std::vector<double>(T * H * E), {T, H, E}, c.dtype),
               lse = dense(std::vector<double>(H * T), {H, T}),
               dOutput = dense(dO, {T, H, E}, c.dtype),
               dq = dense(std::vector<double>(T * H * D, NAN), {T, H, D},
                          c.dtype),
               dk = dense(std::vector<double>(S * G * D, NAN), {S, G, D},
                          c.dtype),
               dv = dense(std::vector<double>(S * G * E, NAN), {S, G, E},
                          c.dtype);
  const AttentionOptions options{std::nullopt, c.causal,  c.left,
                                 c.right,      c.softcap, c.deterministic};
  attentionVarlenForward(*context, in.views(), {o.view, lse.view}, options);
  const AttentionVarlenBackwardInputs inputs{in.views(), o.view, lse.view,
                                             dOutput.view};
  const AttentionGradients gradients{dq.view, dk.view, dv.view};
  const bool hopper = c.dtype != DType::F32 && D <= 256 && E <= 256;
  runOnPath(
      [&] { attentionVarlenBackward(*context, inputs, gradients, options); },
      hopper);
  const double tolerance = c.dtype == DType::F32 ? 1e-4 : 2e-2;
  const std::vector<double> dqs = read(dq, T * H * D),
                            dks = read(dk, S * G * D),
                            dvs = read(dv, S * G * E);
  EXPECT_LT(relativeError(dqs, want.dq), tolerance);
  EXPECT_LT(relativeError(dks, want.dk), tolerance);
  EXPECT_LT(relativeError(dvs, want.dv), tolerance);
  // The same bits from another thread (dQ within the tolerance unless
  // deterministic: it is summed with atomics in no set order).
  std::thread([&] {
    attentionVarlenBackward(*context, inputs, gradients, options);
  }).join();
  if (!c.deterministic)
    EXPECT_LT(relativeError(read(dq, T * H * D), want.dq), tolerance);
  else
    EXPECT_EQ(read(dq, T * H * D), dqs);
  EXPECT_EQ(read(dk, S * G * D), dks);
  EXPECT_EQ(read(dv, S * G * E), dvs);
}

INSTANTIATE_TEST_SUITE_P(
    Packed, AttentionVarlenBackwardNumerics,
    ::testing::Values(
        // The edge entries (edgeQueries), past one tile of either; GQA.
        VarlenBackwardCase{f32, edgeQueries(80), edgeKeys(100), 4, 2, 24, 40,
                           true, -1, -1, 0},
        // 16-bit on tensor cores with a window and softcap; MQA.
        VarlenBackwardCase{
            bf16, {17, 64, 65}, {40, 64, 1}, 2, 1, 72, 72, false, 9, 2, 5},
        // The deterministic sm_80 kernel (f32): the edge entries, GQA.
        VarlenBackwardCase{f32, edgeQueries(70), edgeKeys(150), 4, 2, 24, 16,
                           true, -1, -1, 0, true},
        // The deterministic Hopper kernel: entries of no query, one query,
        // past a key tile of 128; causal GQA of three heads a key head. The
        // wide one past two key tiles of 64, two heads a key head, D = 192
        // and E = 160 (the second warpgroup's dV block half past E).
        VarlenBackwardCase{
            bf16, {0, 1, 70}, {3, 1, 200}, 3, 1, 80, 48, true, -1, -1, 0, true},
        VarlenBackwardCase{bf16,
                           {0, 1, 50},
                           {3, 1, 130},
                           2,
                           1,
                           192,
                           160,
                           true,
                           -1,
                           -1,
                           0,
                           true}),
    [](const ::testing::TestParamInfo<VarlenBackwardCase> &info) {
      return std::string(dtypeName(info.param.dtype)) + "_entries" +
             std::to_string(info.param.queries.size()) + "_D" +
             std::to_string(info.param.D) +
             (info.param.deterministic ? "_deterministic" : "");
    });

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

TEST_F(AttentionBackwardBadInput, PackedBackwardWithPaddedLse) {
  // The problem's padded tensors seen as one packed entry: [B·T, H, *].
  const int64_t T = 2 * 5, S = 2 * 6;
  DeviceTensor cuQ = upload(bytesOf<int32_t>({0, 4, T}), DType::I32),
               cuK = upload(bytesOf<int32_t>({0, 7, S}), DType::I32);
  auto packed = [](TensorView view) {
    view.shape = {view.shape[0] * view.shape[1], view.shape[2], view.shape[3]};
    view.strides = {view.strides[1], view.strides[2], view.strides[3]};
    return view;
  };
  const AttentionInputs &f = p->inputs.forward;
  AttentionVarlenBackwardInputs inputs{
      {packed(f.q),
       packed(f.k),
       packed(f.v),
       TensorView::contiguous(cuQ.view.data, DType::I32, {3}),
       TensorView::contiguous(cuK.view.data, DType::I32, {3}),
       {}},
      packed(p->inputs.o),
      p->inputs.lse, // [B, H, T], not [H, B·T]
      packed(p->inputs.dOutput)};
  const AttentionGradients gradients{packed(p->gradients.dq),
                                     packed(p->gradients.dk),
                                     packed(p->gradients.dv)};
  EXPECT_THAT(
      [&] { attentionVarlenBackward(*context, inputs, gradients); },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'lse' must have")));
  for (double value : all(*p))
    ASSERT_TRUE(std::isnan(value));
}
