//===- AttentionApiTest.cpp - rudnn::attentionForward against float64 -----===//
//
// Tiled attention through the JIT API on fresh random inputs: o and lse
// against the float64 reference for every mask (causal, key lengths, key
// mask, window, softcap, and their combinations), MHA, GQA and MQA, T ≠ S
// both ways, one query or one key, head dims that are no multiple of 8,
// both memory layouts, rows with no allowed key; bad calls rejected with
// nothing written. Built for the emulation backend and (label gpu) a CUDA
// device.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/attention/AttentionReference.h"
#include "test/api/ApiFixture.h"
#include "test/api/AttentionInputs.h"
#include "test/support/PackedBatch.h"

#include <gmock/gmock.h>

#include <cmath>
#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct AttentionCase {
  DType dtype;
  int B, T, S, H, G, D, E;
  bool causal, lengths, mask;
  int left, right;
  float softcap;
  Layout layout;
};

void PrintTo(const AttentionCase &, std::ostream *) {}

/// Attention calls whose kernel is known: on emulation, the Hopper kernel
/// (TMA, wgmma) must run exactly where expected, and the kernel store o
/// without an element-wise path ("_o16") exactly when `alignedOutput` (a
/// 16-bit o whose rows are 16-byte aligned, which the API promises). A
/// decoding-shaped call (`split`: T up to 16) runs the split kernel, then
/// the combination of its parts.
class AttentionTest : public AttentionApiTest {
protected:
  template <typename Call>
  void runOnPath(Call call, bool hopper, bool alignedOutput,
                 bool split = false) {
    context->resetProfile();
    context->setProfiling(true);
    call();
    context->setProfiling(false);
    if (testBackend() != BackendKind::Emulation)
      return; // the device decides
    std::vector<KernelProfile> kernels = context->profile();
    if (split) {
      ASSERT_EQ(kernels.size(), 2u);
      // The profile lists the slowest first: the combination after its
      // parts by name.
      if (kernels[0].kernel.find("attention_combine_") == 0)
        std::swap(kernels[0], kernels[1]);
      EXPECT_NE(kernels[0].kernel.find("_bq64_"), std::string::npos)
          << kernels[0].kernel;
      EXPECT_NE(kernels[0].kernel.find("_split"), std::string::npos)
          << kernels[0].kernel;
      EXPECT_EQ(kernels[1].kernel.find("attention_combine_"), 0u)
          << kernels[1].kernel;
      return;
    }
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].kernel.find("_wgmma") != std::string::npos, hopper)
        << kernels[0].kernel;
    EXPECT_EQ(kernels[0].kernel.find("_o16") != std::string::npos,
              alignedOutput)
        << kernels[0].kernel;
  }

  /// rudnn.attention called with `attributes` on bf16 inputs `in` of
  /// `shape`: on emulation the kernel takes the Hopper path exactly when
  /// `hopper` and `blockQ` query rows a block; o and lse match `want`.
  void matchesWithTiles(const reference::AttentionShape &shape,
                        const reference::AttentionInputs &in,
                        const reference::AttentionOutputs &want,
                        const OperatorAttributes &attributes, int64_t blockQ,
                        bool hopper) {
    const int64_t B = shape.batch, T = shape.queries, S = shape.keys,
                  H = shape.heads, G = shape.kvHeads, D = shape.headDim,
                  E = shape.valueDim;
    DeviceTensor q = dense(in.q, {B, T, H, D}, DType::BF16),
                 k = dense(in.k, {B, S, G, D}, DType::BF16),
                 v = dense(in.v, {B, S, G, E}, DType::BF16),
                 o = dense(std::vector<double>(B * T * H * E, NAN),
                           {B, T, H, E}, DType::BF16),
                 lse = dense(std::vector<double>(B * H * T, NAN), {B, H, T});
    runOnPath(
        [&] {
          callOperator(*context, "rudnn.attention", attributes,
                       {{"q", q.view},
                        {"k", k.view},
                        {"v", v.view},
                        {"o", o.view},
                        {"lse", lse.view}});
        },
        hopper, /*alignedOutput=*/true);
    if (testBackend() == BackendKind::Emulation) {
      EXPECT_NE(context->profile()[0].kernel.find("_bq" +
                                                  std::to_string(blockQ) + "_"),
                std::string::npos)
          << context->profile()[0].kernel;
    }
    EXPECT_LT(relativeError(read(o, B * T * H * E), want.o), 1e-2);
    EXPECT_LT(relativeError(read(lse, B * H * T), want.lse), 1e-2);
  }

  /// A small bf16 problem on fresh inputs and its float64 reference.
  struct Small {
    static constexpr int64_t B = 2, T = 20, S = 27, H = 2, G = 1, D = 24,
                             E = 16;
    reference::AttentionInputs in;
    reference::AttentionOutputs want;
  };
  static Small smallProblem(unsigned seed, bool causal) {
    using P = Small;
    std::mt19937 random(seed);
    Small small;
    small.in = randomAttentionInputs(P::B * P::T, P::B * P::S, P::H, P::G, P::D,
                                     P::E, DType::BF16, random);
    const auto ref = reference::AttentionOptions::forHeadDim(P::D, causal);
    small.want = reference::attentionForward(
        {P::B, P::T, P::S, P::H, P::G, P::D, P::E}, small.in, ref);
    return small;
  }
};

class AttentionNumerics : public AttentionTest,
                          public ::testing::WithParamInterface<AttentionCase> {
protected:
  /// Runs the case against the float64 reference; on emulation, checks
  /// that the Hopper kernel (TMA, wgmma) ran exactly when `hopper`.
  void matchesFloat64(const AttentionCase &c, bool hopper);
};

/// The same cases specialized for sm_80: 16-bit inputs take the cp.async,
/// ldmatrix and mma.sync kernel there.
class AttentionNumericsOnSm80 : public AttentionNumerics {
protected:
  static void SetUpTestSuite() { openContext("sm_80"); }
};

TEST_P(AttentionNumerics, MatchesFloat64) {
  // sm_90: 16-bit inputs (whose rows here are all 16-byte aligned) on the
  // Hopper kernel, f32 on the sm_80 kernel.
  matchesFloat64(GetParam(), GetParam().dtype != DType::F32);
}

TEST_P(AttentionNumericsOnSm80, MatchesFloat64) {
  matchesFloat64(GetParam(), /*hopper=*/false);
}

void AttentionNumerics::matchesFloat64(const AttentionCase &c, bool hopper) {
  const int64_t B = c.B, T = c.T, S = c.S, H = c.H, G = c.G, D = c.D, E = c.E;
  std::mt19937 random(unsigned(T * 131 + S * 17 + D * 3 + E));
  reference::AttentionShape shape{B, T, S, H, G, D, E};
  reference::AttentionInputs in =
      randomAttentionInputs(B * T, B * S, H, G, D, E, c.dtype, random);
  // Lengths from all keys down to none (the last entry).
  if (c.lengths)
    for (int64_t b = 0; b < B; ++b)
      in.keyLengths.push_back(b + 1 == B && B > 1 ? 0 : S - (S / 3) * b);
  if (c.mask) {
    std::uniform_real_distribution<double> unit(0, 1);
    for (int64_t i = 0; i < B * S; ++i)
      in.keyMask.push_back(unit(random) < 0.75);
  }
  const auto ref = reference::AttentionOptions::forHeadDim(D, c.causal, c.left,
                                                           c.right, c.softcap);
  reference::AttentionOutputs want =
      reference::attentionForward(shape, in, ref);

  DeviceTensor q = sequence(in.q, B, T, H, D, c.dtype, c.layout);
  DeviceTensor k = sequence(in.k, B, S, G, D, c.dtype, c.layout);
  DeviceTensor v = sequence(in.v, B, S, G, E, c.dtype, c.layout);
  DeviceTensor o = sequence(std::vector<double>(B * T * H * E, NAN), B, T, H, E,
                            c.dtype, c.layout);
  DeviceTensor lse =
      dense(std::vector<double>(B * H * T, NAN), {B, H, T}, DType::F32);
  DeviceTensor lengths, mask;
  AttentionInputs inputs{q.view, k.view, v.view, {}, {}, {}};
  if (c.lengths) {
    lengths = upload(bytesOf<int32_t>(in.keyLengths), DType::I32);
    lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {B});
    inputs.keyLengths = lengths.view;
  }
  if (c.mask) {
    mask = upload(bytesOf<uint8_t>(in.keyMask), DType::Bool);
    mask.view = TensorView::contiguous(mask.view.data, DType::Bool, {B, S});
    inputs.keyMask = mask.view;
  }
  AttentionOptions options;
  options.causal = c.causal;
  options.windowLeft = c.left;
  options.windowRight = c.right;
  options.softcap = c.softcap;
  // T up to 16 splits the keys across blocks (decode_split's default).
  const bool split = T <= 16;
  runOnPath(
      [&] {
        attentionForward(*context, inputs, {o.view, lse.view}, options);
      },
      hopper && !split, c.dtype != DType::F32 && E % 8 == 0 && !split, split);

  const double tolerance = c.dtype == DType::F32 ? 1e-5 : 1e-2;
  EXPECT_LT(relativeError(readSequence(o, B, T, H, E), want.o), tolerance);
  EXPECT_LT(relativeError(read(lse, B * H * T), want.lse), tolerance);
}

std::string caseName(const ::testing::TestParamInfo<AttentionCase> &info) {
  const AttentionCase &c = info.param;
  std::string name = std::string(dtypeName(c.dtype)) + "_B" +
                     std::to_string(c.B) + "_T" + std::to_string(c.T) + "_S" +
                     std::to_string(c.S) + "_H" + std::to_string(c.H) + "_G" +
                     std::to_string(c.G) + "_D" + std::to_string(c.D) + "_E" +
                     std::to_string(c.E) + (c.causal ? "_causal" : "") +
                     (c.lengths ? "_lengths" : "") + (c.mask ? "_mask" : "");
  if (c.left >= 0 || c.right >= 0)
    name += "_window" + std::to_string(c.left + 1) + "_" +
            std::to_string(c.right + 1);
  if (c.softcap > 0)
    name += "_softcap";
  return name + (c.layout == Layout::BHTD ? "_BHTD" : "_BTHD");
}

constexpr DType f32 = DType::F32, bf16 = DType::BF16, f16 = DType::F16;
constexpr Layout bthd = Layout::BTHD, bhtd = Layout::BHTD;

INSTANTIATE_TEST_SUITE_P(
    Masks, AttentionNumerics,
    ::testing::Values(
        // Each restriction alone, then together; T not a multiple of a tile.
        AttentionCase{f32, 2, 70, 70, 2, 2, 64, 64, false, false, false, -1, -1,
                      0, bthd},
        AttentionCase{f32, 2, 70, 70, 2, 2, 64, 64, true, false, false, -1, -1,
                      0, bhtd},
        AttentionCase{f32, 3, 45, 90, 2, 1, 32, 32, false, true, false, -1, -1,
                      0, bthd},
        AttentionCase{f32, 2, 45, 90, 2, 2, 32, 32, false, false, true, -1, -1,
                      0, bthd},
        AttentionCase{f32, 2, 100, 100, 2, 2, 32, 32, false, false, false, 17,
                      5, 0, bthd},
        AttentionCase{f32, 2, 50, 60, 2, 2, 32, 32, false, false, false, -1, -1,
                      5, bhtd},
        AttentionCase{f32, 3, 66, 80, 4, 2, 40, 24, true, true, true, 30, -1, 3,
                      bthd},
        AttentionCase{bf16, 3, 66, 80, 4, 2, 40, 24, true, true, true, -1, 9, 0,
                      bhtd},
        // The 16-bit production shapes.
        AttentionCase{bf16, 1, 130, 130, 2, 2, 128, 128, true, false, false, -1,
                      -1, 0, bthd},
        AttentionCase{f16, 2, 77, 77, 2, 1, 64, 64, false, true, false, -1, -1,
                      0, bhtd}),
    caseName);

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionNumerics,
    ::testing::Values(
        // GQA groups of 2 and 8, MQA.
        AttentionCase{bf16, 1, 40, 40, 8, 4, 64, 64, true, false, false, -1, -1,
                      0, bthd},
        AttentionCase{f32, 1, 40, 40, 8, 1, 16, 16, false, false, false, -1, -1,
                      0, bhtd},
        AttentionCase{bf16, 2, 33, 50, 16, 2, 32, 32, false, true, false, -1,
                      -1, 0, bthd},
        // More queries than keys, causal: the first rows see nothing.
        AttentionCase{f32, 2, 90, 30, 2, 2, 16, 16, true, false, false, -1, -1,
                      0, bthd},
        AttentionCase{bf16, 2, 90, 30, 2, 2, 16, 16, true, true, false, -1, -1,
                      0, bhtd},
        // One query (decoding) and one key.
        AttentionCase{f32, 2, 1, 70, 4, 2, 64, 64, true, true, false, -1, -1, 0,
                      bthd},
        AttentionCase{bf16, 2, 50, 1, 2, 2, 64, 64, false, false, false, -1, -1,
                      0, bthd},
        // Head dims no multiple of 8, and E ≠ D.
        AttentionCase{f32, 1, 20, 20, 2, 2, 1, 1, false, false, false, -1, -1,
                      0, bthd},
        AttentionCase{bf16, 1, 40, 40, 2, 2, 56, 72, true, false, false, -1, -1,
                      0, bthd},
        AttentionCase{f16, 1, 40, 40, 2, 2, 96, 8, false, false, true, -1, -1,
                      0, bhtd},
        AttentionCase{bf16, 1, 40, 40, 2, 2, 200, 200, true, false, false, -1,
                      -1, 0, bthd},
        AttentionCase{f32, 1, 20, 20, 2, 2, 13, 7, false, true, false, -1, -1,
                      0, bthd},
        AttentionCase{bf16, 1, 70, 70, 2, 1, 256, 256, true, false, false, -1,
                      -1, 0, bhtd}),
    caseName);

// Decoding-shaped calls (T up to 16): each row's keys split into parts
// (ceil(S / 256) of them here: few heads leave the device idle), whole
// 64-key tiles each, merged by their log-sum-exp. Parts of unequal size,
// parts no key of a row reaches (window, causal diagonal, lengths down to
// none), GQA, every mask, odd head dims; T = 17 keeps one kernel.
INSTANTIATE_TEST_SUITE_P(
    Decoding, AttentionNumerics,
    ::testing::Values(AttentionCase{bf16, 1, 1, 700, 4, 1, 64, 64, true, false,
                                    false, -1, -1, 0, bthd},
                      AttentionCase{bf16, 2, 16, 1030, 2, 2, 128, 128, true,
                                    true, false, -1, -1, 0, bthd},
                      AttentionCase{f16, 1, 5, 900, 4, 2, 40, 24, false, false,
                                    true, 100, -1, 0, bhtd},
                      AttentionCase{bf16, 3, 3, 600, 2, 1, 56, 72, true, true,
                                    true, 70, 0, 20, bthd},
                      AttentionCase{f32, 2, 7, 777, 2, 2, 13, 7, false, true,
                                    false, -1, -1, 0, bthd},
                      AttentionCase{f32, 1, 16, 520, 2, 1, 200, 200, true,
                                    false, false, -1, -1, 5, bhtd},
                      AttentionCase{bf16, 1, 17, 600, 2, 2, 64, 64, true, false,
                                    false, -1, -1, 0, bthd}),
    caseName);

INSTANTIATE_TEST_SUITE_P(
    SixteenBit, AttentionNumericsOnSm80,
    ::testing::Values(
        // Masks, window and softcap; D = 56 and 72; GQA; both layouts.
        AttentionCase{bf16, 3, 66, 80, 4, 2, 40, 24, true, true, true, -1, 9, 0,
                      Layout::BHTD},
        AttentionCase{bf16, 1, 40, 40, 2, 2, 56, 72, true, false, false, -1, -1,
                      30, Layout::BTHD},
        AttentionCase{f16, 2, 77, 77, 2, 1, 64, 64, false, true, false, -1, -1,
                      0, Layout::BTHD},
        AttentionCase{bf16, 1, 70, 70, 2, 1, 256, 256, true, false, false, -1,
                      -1, 0, Layout::BTHD}),
    caseName);

/// Rows that start off a 16-byte boundary cannot be read by a tensor map:
/// on sm_90 such 16-bit views take the sm_80 kernel, and compute the same.
TEST_F(AttentionTest, UnalignedRowsTakeTheSm80Kernel) {
  using P = Small;
  const int64_t B = P::B, T = P::T, S = P::S, H = P::H, G = P::G, D = P::D,
                E = P::E;
  const Small small = smallProblem(11, /*causal=*/true);
  const reference::AttentionInputs &in = small.in;
  const reference::AttentionOutputs &want = small.want;
  // q one element (2 bytes) past its buffer's start.
  std::vector<double> shifted = {0.0};
  shifted.insert(shifted.end(), in.q.begin(), in.q.end());
  DeviceTensor q = dense(shifted, {int64_t(shifted.size())}, DType::BF16);
  q.view = TensorView::contiguous(static_cast<char *>(q.view.data) + 2,
                                  DType::BF16, {B, T, H, D});
  DeviceTensor k = dense(in.k, {B, S, G, D}, DType::BF16),
               v = dense(in.v, {B, S, G, E}, DType::BF16),
               o = dense(std::vector<double>(B * T * H * E, NAN), {B, T, H, E},
                         DType::BF16),
               lse = dense(std::vector<double>(B * H * T, NAN), {B, H, T});
  AttentionOptions options;
  options.causal = true;
  runOnPath(
      [&] {
        attentionForward(*context, {q.view, k.view, v.view, {}, {}, {}},
                         {o.view, lse.view}, options);
      },
      /*hopper=*/false, /*alignedOutput=*/true);
  EXPECT_LT(relativeError(read(o, B * T * H * E), want.o), 1e-2);
  EXPECT_LT(relativeError(read(lse, B * H * T), want.lse), 1e-2);
}

/// The Hopper kernel on a persistent grid of fewer blocks than query tiles:
/// each block takes several (causal ones the heaviest first), and every
/// tile comes out as on a grid of them all; with two consumer warpgroups
/// (128 queries a tile) and three (192, asked for by block_q with wgmma).
TEST_F(AttentionTest, APersistentGridOfThreeBlocksTakesEveryQueryTile) {
  // Two query tiles an entry and head at either tile height, the second a
  // tail: eight units over three blocks (each over a key tile and a tail).
  const reference::AttentionShape shape{2, 200, 70, 2, 1, 64, 48};
  std::mt19937 random(21);
  const reference::AttentionInputs in = randomAttentionInputs(
      shape.batch * shape.queries, shape.batch * shape.keys, shape.heads,
      shape.kvHeads, shape.headDim, shape.valueDim, DType::BF16, random);
  for (int64_t blockQ : {128, 192})
    for (bool causal : {false, true}) {
      SCOPED_TRACE(std::to_string(blockQ) + (causal ? " causal" : " full"));
      const auto ref =
          reference::AttentionOptions::forHeadDim(shape.headDim, causal);
      matchesWithTiles(shape, in, reference::attentionForward(shape, in, ref),
                       {{"causal", causal},
                        {"block_q", blockQ},
                        {"blocks", int64_t(3)},
                        {"wgmma", true}},
                       blockQ, /*hopper=*/true);
    }
}

/// The mma.sync kernel's two organisations, asked for by block_q without
/// wgmma (on sm_90 too): 64 queries a block (four warps of 16, two stages
/// of K and V) and 128 (FlashAttention-2's: four warps of 32 up to D = 128,
/// eight of 16 beyond, one buffer each), over several query tiles with a
/// tail, both match the reference.
TEST_F(AttentionTest, BothMmaSyncBlocksTakeEveryQueryTile) {
  for (int64_t D : {64, 136})
    for (int64_t blockQ : {64, 128})
      for (bool causal : {false, true}) {
        const reference::AttentionShape shape{
            2, 150, 170, 2, 1, D, D == 64 ? 48 : 144};
        SCOPED_TRACE("D = " + std::to_string(D) + ", block_q " +
                     std::to_string(blockQ) + (causal ? " causal" : " full"));
        std::mt19937 random(unsigned(31 + D + blockQ + causal));
        const reference::AttentionInputs in = randomAttentionInputs(
            shape.batch * shape.queries, shape.batch * shape.keys, shape.heads,
            shape.kvHeads, D, shape.valueDim, DType::BF16, random);
        const auto ref = reference::AttentionOptions::forHeadDim(D, causal);
        matchesWithTiles(shape, in, reference::attentionForward(shape, in, ref),
                         {{"causal", causal}, {"block_q", blockQ}}, blockQ,
                         /*hopper=*/false);
      }
}

TEST_F(AttentionTest, AnOutputOffItsChunksIsWrittenElementWise) {
  // Aligned inputs take the Hopper kernel; o two bytes past a 16-byte
  // boundary cannot take its 16-byte epilogue stores.
  using P = Small;
  const int64_t B = P::B, T = P::T, S = P::S, H = P::H, G = P::G, D = P::D,
                E = P::E;
  const Small small = smallProblem(12, /*causal=*/false);
  const reference::AttentionInputs &in = small.in;
  const reference::AttentionOutputs &want = small.want;
  DeviceTensor q = dense(in.q, {B, T, H, D}, DType::BF16),
               k = dense(in.k, {B, S, G, D}, DType::BF16),
               v = dense(in.v, {B, S, G, E}, DType::BF16),
               o = dense(std::vector<double>(B * T * H * E + 1, NAN),
                         {B * T * H * E + 1}, DType::BF16);
  const TensorView whole = o.view;
  o.view = TensorView::contiguous(static_cast<char *>(o.view.data) + 2,
                                  DType::BF16, {B, T, H, E});
  runOnPath(
      [&] {
        attentionForward(*context, {q.view, k.view, v.view, {}, {}, {}},
                         {o.view, {}}, {});
      },
      /*hopper=*/true, /*alignedOutput=*/false);
  o.view = whole;
  std::vector<double> got = read(o, B * T * H * E + 1);
  EXPECT_TRUE(std::isnan(got.front())) << "written before the view";
  got.erase(got.begin());
  EXPECT_LT(relativeError(got, want.o), 1e-2);
}

/// A function whose o promises 16-byte rows (`rudnn.align` on the result):
/// the Hopper kernel stores it by TMA alone, and a call whose o breaks the
/// promise is refused before anything runs.
TEST_F(AttentionTest, AnOutputPromisingAlignedRowsIsStoredByTmaOrRefused) {
  using P = Small;
  const int64_t B = P::B, T = P::T, S = P::S, H = P::H, G = P::G, D = P::D,
                E = P::E;
  const Small small = smallProblem(13, /*causal=*/true);
  const std::string text = R"mlir(
func.func @main(%q: tensor<?x?x?x24xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x24xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x16xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x16xbf16> {rudnn.align = 16 : i64}, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x24xbf16>, tensor<?x?x?x24xbf16>, tensor<?x?x?x16xbf16>)
      -> (tensor<?x?x?x16xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x16xbf16>, tensor<?x?x?xf32>
}
)mlir";
  Function main = Module::parse(*context, text).function("main");
  EXPECT_EQ(main.results()[0].align, 16);
  DeviceTensor q = dense(small.in.q, {B, T, H, D}, DType::BF16),
               k = dense(small.in.k, {B, S, G, D}, DType::BF16),
               v = dense(small.in.v, {B, S, G, E}, DType::BF16),
               o = dense(std::vector<double>(B * T * H * E + 8, NAN),
                         {B * T * H * E + 8}, DType::BF16),
               lse = dense(std::vector<double>(B * H * T, NAN), {B, H, T});
  TensorView out =
      TensorView::contiguous(o.view.data, DType::BF16, {B, T, H, E});
  runOnPath(
      [&] {
        main.call({q.view, k.view, v.view}, {out, lse.view});
      },
      /*hopper=*/true, /*alignedOutput=*/true);
  EXPECT_LT(relativeError(read(o, B * T * H * E), small.want.o), 1e-2);
  EXPECT_LT(relativeError(read(lse, B * H * T), small.want.lse), 1e-2);
  const std::vector<double> written = read(o, B * T * H * E + 8);
  for (int64_t i = B * T * H * E; i < B * T * H * E + 8; ++i)
    ASSERT_TRUE(std::isnan(written[i])) << "written past the view at " << i;

  // Two bytes further on, o breaks its promise: refused, nothing written.
  o = dense(std::vector<double>(B * T * H * E + 8, NAN), {B * T * H * E + 8},
            DType::BF16);
  out = TensorView::contiguous(static_cast<char *>(o.view.data) + 2,
                               DType::BF16, {B, T, H, E});
  EXPECT_THAT(
      [&] {
        main.call({q.view, k.view, v.view}, {out, lse.view});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("'o' promises 16-byte aligned rows")));
  for (double x : read(o, B * T * H * E + 8))
    ASSERT_TRUE(std::isnan(x)) << "o written by a refused call";
}

/// A small valid call whose parts a test spoils: the fault is named and o
/// is not written.
class AttentionBadInput : public ApiTest {
protected:
  static constexpr int64_t B = 2, T = 5, S = 6, H = 4, G = 2, D = 8, E = 8;
  void SetUp() override {
    ApiTest::SetUp();
    if (IsSkipped()) // no device for the backend under test
      return;
    std::mt19937 random(3);
    q = dense(normalValues(B * T * H * D, random), {B, T, H, D});
    k = dense(normalValues(B * S * G * D, random), {B, S, G, D});
    v = dense(normalValues(B * S * G * E, random), {B, S, G, E});
    o = dense(std::vector<double>(B * T * H * E, 7.0), {B, T, H, E});
    lse = dense(std::vector<double>(B * H * T, 7.0), {B, H, T});
    lengths = upload(bytesOf<int32_t>({3, 6}), DType::I32);
    lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {B});
    inputs = {q.view, k.view, v.view, lengths.view, {}, {}};
    outputs = {o.view, lse.view};
  }
  void expectRejected(const std::string &needle,
                      const AttentionOptions &options = {}) {
    try {
      attentionForward(*context, inputs, outputs, options);
      FAIL() << "expected InvalidArgument: " << needle;
    } catch (const InvalidArgument &error) {
      EXPECT_THAT(error.what(), HasSubstr(needle));
    }
    EXPECT_EQ(read(o, B * T * H * E), std::vector<double>(B * T * H * E, 7.0));
    EXPECT_EQ(read(lse, B * H * T), std::vector<double>(B * H * T, 7.0));
  }
  DeviceTensor q, k, v, o, lse, lengths;
  AttentionInputs inputs;
  AttentionOutputs outputs;
};

TEST_F(AttentionBadInput, QueryHeadsNotAMultipleOfKeyHeads) {
  inputs.q.shape[2] = 3;
  outputs.o.shape[2] = 3;
  outputs.lse.reset();
  expectRejected("query heads H = 3 must be a multiple of the key heads G = 2");
}

TEST_F(AttentionBadInput, HeadsPastTheGridsLimitAreRefusedBeforeAnyLaunch) {
  // B·H blocks in the grid's second dimension: 65536 is one past the
  // device's limit, which the plan checks before its first launch.
  constexpr int64_t heads = 65536;
  DeviceTensor bigQ =
      dense(std::vector<double>(heads * D, 0.5), {1, 1, heads, D});
  DeviceTensor bigK = dense(std::vector<double>(D, 0.5), {1, 1, 1, D});
  DeviceTensor bigV = dense(std::vector<double>(E, 0.5), {1, 1, 1, E});
  DeviceTensor bigO =
      dense(std::vector<double>(heads * E, 7.0), {1, 1, heads, E});
  DeviceTensor bigLse = dense(std::vector<double>(heads, 7.0), {1, heads, 1});
  try {
    attentionForward(*context, {bigQ.view, bigK.view, bigV.view, {}, {}, {}},
                     {bigO.view, bigLse.view});
    FAIL() << "expected the grid to be refused";
  } catch (const Error &error) {
    EXPECT_THAT(error.what(), HasSubstr("65535"));
  }
  EXPECT_EQ(read(bigO, heads * E), std::vector<double>(heads * E, 7.0));
  EXPECT_EQ(read(bigLse, heads), std::vector<double>(heads, 7.0));
}

TEST_F(AttentionBadInput, HeadDimMismatch) {
  inputs.k.shape[3] = 4;
  expectRejected("'k' must have shape [2, 6, 2, 8]");
}

TEST_F(AttentionBadInput, ValuesOfAnotherLength) {
  inputs.v.shape[1] = 5;
  expectRejected("'v' must have shape [2, 6, 2, 8]");
}

TEST_F(AttentionBadInput, KeysInAnotherType) {
  inputs.k.dtype = DType::BF16;
  expectRejected("'k' must be f32, got bf16");
}

TEST_F(AttentionBadInput, LengthsAsFloats) {
  inputs.keyLengths->dtype = DType::F32;
  expectRejected("'key_lengths' must be i32, got f32");
}

TEST_F(AttentionBadInput, LengthsOfAnotherBatch) {
  inputs.keyLengths->shape[0] = 3;
  expectRejected("'key_lengths' must have shape [2]");
}

TEST_F(AttentionBadInput, MaskOfTheWrongShape) {
  inputs.keyMask =
      TensorView::contiguous(lengths.view.data, DType::Bool, {B, S - 1});
  expectRejected("'key_mask' must have shape [2, 6]");
}

TEST_F(AttentionBadInput, MaskOfFloats) {
  inputs.keyMask =
      TensorView::contiguous(lengths.view.data, DType::F32, {B, S});
  expectRejected("'key_mask' must be bool, got f32");
}

TEST_F(AttentionBadInput, LseNotDense) {
  outputs.lse->strides[0] += 1;
  expectRejected("'lse' must be dense");
}

TEST_F(AttentionBadInput, OutputOverTheQueries) {
  outputs.o.data = inputs.q.data;
  expectRejected("'o' overlaps 'q'");
}

TEST_F(AttentionBadInput, HeadDimPast256) {
  inputs.q.shape[3] = inputs.k.shape[3] = 300;
  expectRejected("head dim D is 300, expected 1 to 256");
}

TEST_F(AttentionBadInput, NegativeWindow) {
  AttentionOptions options;
  options.windowLeft = -2;
  expectRejected("window bounds must be -1 (unbounded) or 0 to 1073741824",
                 options);
  options.windowLeft = 0;
  options.windowRight = 2147483647;
  expectRejected("window bounds must be -1 (unbounded) or 0 to 1073741824",
                 options);
}

TEST_F(AttentionBadInput, NegativeSoftcap) {
  AttentionOptions options;
  options.softcap = -1;
  expectRejected("'softcap' must be 0 (none) or positive", options);
}

TEST_F(AttentionBadInput, ZeroScale) {
  AttentionOptions options;
  options.scale = 0;
  expectRejected("'scale' must be positive and finite", options);
}

TEST_F(AttentionBadInput, NullKeys) {
  inputs.k.data = nullptr;
  expectRejected("'k' has no data pointer");
}

/// A packed batch: per entry its query and key counts.
struct VarlenCase {
  DType dtype;
  std::vector<int> queries, keys;
  int H, G, D, E;
  bool causal;
  int left, right;
};

void PrintTo(const VarlenCase &, std::ostream *) {}

class AttentionVarlenNumerics
    : public AttentionTest,
      public ::testing::WithParamInterface<VarlenCase> {};

TEST_P(AttentionVarlenNumerics, MatchesFloat64) {
  const VarlenCase c = GetParam();
  const PackedAttention p(c.queries, c.keys, c.H, c.G, c.D, c.E, c.dtype, 7);
  const int64_t T = p.batch.T, H = c.H, E = c.E;
  const auto ref =
      reference::AttentionOptions::forHeadDim(c.D, c.causal, c.left, c.right);
  reference::AttentionOutputs want = reference::attentionVarlenForward(
      H, c.G, c.D, E, p.in, p.batch.queryOffsets, p.batch.keyOffsets, ref);

  const PackedAttentionTensors in = uploadPacked(p);
  DeviceTensor o = dense(std::vector<double>(T * H * E, NAN), {T, H, E},
                         c.dtype),
               lse = dense(std::vector<double>(H * T, NAN), {H, T});
  AttentionOptions options;
  options.causal = c.causal;
  options.windowLeft = c.left;
  options.windowRight = c.right;
  // sm_90: 16-bit packed batches on the Hopper kernel too.
  runOnPath(
      [&] {
        attentionVarlenForward(*context, in.views(), {o.view, lse.view},
                               options);
      },
      c.dtype != DType::F32, c.dtype != DType::F32 && E % 8 == 0);
  const double tolerance = c.dtype == DType::F32 ? 1e-5 : 1e-2;
  EXPECT_LT(relativeError(read(o, T * H * E), want.o), tolerance);
  EXPECT_LT(relativeError(read(lse, H * T), want.lse), tolerance);
}

std::string varlenName(const ::testing::TestParamInfo<VarlenCase> &info) {
  const VarlenCase &c = info.param;
  std::string name = std::string(dtypeName(c.dtype)) + "_entries" +
                     std::to_string(c.queries.size()) + "_H" +
                     std::to_string(c.H) + "_G" + std::to_string(c.G) + "_D" +
                     std::to_string(c.D) + "_E" + std::to_string(c.E);
  if (c.causal)
    name += "_causal";
  if (c.left >= 0 || c.right >= 0)
    name += "_window";
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Packed, AttentionVarlenNumerics,
    ::testing::Values(
        // The edge entries (edgeQueries), past one tile of queries.
        VarlenCase{f32, edgeQueries(130), edgeKeys(129), 2, 1, 32, 16, true, -1,
                   -1},
        VarlenCase{bf16, edgeQueries(130), edgeKeys(129), 4, 2, 64, 64, true,
                   -1, -1},
        VarlenCase{f32, {17, 64, 65}, {40, 64, 1}, 2, 2, 24, 40, false, 9, 2},
        VarlenCase{
            f16, {100, 1, 29}, {100, 50, 29}, 8, 1, 128, 128, false, -1, -1}),
    varlenName);

/// Packed batches on the Hopper kernel claim their query tiles at run
/// time: on a grid of three blocks each takes tiles from a counter until
/// none is left (causal entries' heaviest first), entries of no query or
/// no key among them; a second call, its counter zeroed again, computes
/// the same.
TEST_F(AttentionTest, PackedTilesAreClaimedByAGridOfThreeBlocks) {
  const PackedBatch batch({150, 0, 1, 129, 40}, {90, 5, 1, 70, 0});
  const int64_t T = batch.T, S = batch.S, H = 2, G = 1, D = 64, E = 48;
  std::mt19937 random(41);
  const reference::AttentionInputs in =
      randomAttentionInputs(T, S, H, G, D, E, DType::BF16, random);
  DeviceTensor q = dense(in.q, {T, H, D}, DType::BF16),
               k = dense(in.k, {S, G, D}, DType::BF16),
               v = dense(in.v, {S, G, E}, DType::BF16);
  DeviceTensor cuQ = offsets(batch.queryOffsets),
               cuK = offsets(batch.keyOffsets);
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const reference::AttentionOutputs want = reference::attentionVarlenForward(
        H, G, D, E, in, batch.queryOffsets, batch.keyOffsets,
        reference::AttentionOptions::forHeadDim(D, causal));
    for (int call = 0; call < 2; ++call) {
      DeviceTensor o = dense(std::vector<double>(T * H * E, NAN), {T, H, E},
                             DType::BF16),
                   lse = dense(std::vector<double>(H * T, NAN), {H, T});
      runOnPath(
          [&] {
            callOperator(*context, "rudnn.attention_varlen",
                         {{"causal", causal},
                          {"block_q", int64_t(128)},
                          {"blocks", int64_t(3)},
                          {"wgmma", true}},
                         {{"q", q.view},
                          {"k", k.view},
                          {"v", v.view},
                          {"cu_seqlens_q", cuQ.view},
                          {"cu_seqlens_k", cuK.view},
                          {"o", o.view},
                          {"lse", lse.view}});
          },
          /*hopper=*/true, /*alignedOutput=*/true);
      EXPECT_LT(relativeError(read(o, T * H * E), want.o), 1e-2);
      EXPECT_LT(relativeError(read(lse, H * T), want.lse), 1e-2);
    }
  }
}

TEST_F(AttentionBadInput, PackedOffsetsOfDifferentCounts) {
  DeviceTensor q3 = dense(std::vector<double>(10 * H * D, 0.0), {10, H, D});
  DeviceTensor k3 = dense(std::vector<double>(12 * G * D, 0.0), {12, G, D});
  DeviceTensor v3 = dense(std::vector<double>(12 * G * E, 0.0), {12, G, E});
  DeviceTensor o3 = dense(std::vector<double>(10 * H * E, 7.0), {10, H, E});
  DeviceTensor cuQ = upload(bytesOf<int32_t>({0, 4, 10}), DType::I32);
  DeviceTensor cuK = upload(bytesOf<int32_t>({0, 12}), DType::I32);
  AttentionVarlenInputs packed{
      q3.view,
      k3.view,
      v3.view,
      TensorView::contiguous(cuQ.view.data, DType::I32, {3}),
      TensorView::contiguous(cuK.view.data, DType::I32, {2}),
      {}};
  EXPECT_THAT(
      [&] {
        attentionVarlenForward(*context, packed, {o3.view, {}});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("'cu_seqlens_k' must have shape [3]")));
  packed.cuSeqlensK = TensorView::contiguous(cuK.view.data, DType::F32, {3});
  EXPECT_THAT(
      [&] {
        attentionVarlenForward(*context, packed, {o3.view, {}});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("'cu_seqlens_k' must be i32, got f32")));
  packed.q = inputs.q; // padded queries
  EXPECT_THAT(
      [&] {
        attentionVarlenForward(*context, packed, {o3.view, {}});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("'q' must have rank 3 [T, H, D]")));
  EXPECT_EQ(read(o3, 10 * H * E), std::vector<double>(10 * H * E, 7.0));
}

class AttentionContract : public ApiTest {};

TEST_F(AttentionContract, ChangingSizesHeadsOrLayoutCompilesNothing) {
  auto call = [&](int64_t B, int64_t T, int64_t S, int64_t H, int64_t G,
                  Layout layout) {
    std::mt19937 random(unsigned(B + T + S));
    DeviceTensor q = sequence(normalValues(B * T * H * 16, random), B, T, H, 16,
                              DType::BF16, layout);
    DeviceTensor k = sequence(normalValues(B * S * G * 16, random), B, S, G, 16,
                              DType::BF16, layout);
    DeviceTensor v = sequence(normalValues(B * S * G * 16, random), B, S, G, 16,
                              DType::BF16, layout);
    DeviceTensor o = sequence(std::vector<double>(B * T * H * 16, 0.0), B, T, H,
                              16, DType::BF16, layout);
    AttentionOptions options;
    options.causal = true;
    attentionForward(*context, {q.view, k.view, v.view, {}, {}, {}},
                     {o.view, {}}, options);
  };
  // One plan serves every size: once its decoding-shaped case (T up to
  // 16, compiled when first needed) and its plain case have run, nothing
  // compiles again.
  call(1, 10, 10, 2, 2, Layout::BTHD);
  call(1, 20, 10, 2, 2, Layout::BTHD);
  const Counters before = context->counters();
  call(3, 70, 33, 4, 1, Layout::BHTD);
  call(2, 1, 100, 8, 2, Layout::BTHD);
  const Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(AttentionContract, RowsWithNoAllowedKeyGiveZerosAndMinusInfinity) {
  const int64_t B = 1, T = 3, S = 4, H = 1, D = 8;
  std::mt19937 random(5);
  DeviceTensor q = dense(normalValues(T * D, random), {B, T, H, D});
  DeviceTensor k = dense(normalValues(S * D, random), {B, S, H, D});
  DeviceTensor v = dense(normalValues(S * D, random), {B, S, H, D});
  DeviceTensor o = dense(std::vector<double>(T * D, NAN), {B, T, H, D});
  DeviceTensor lse = dense(std::vector<double>(T, NAN), {B, H, T});
  // Every key masked out.
  DeviceTensor mask = upload(bytesOf<uint8_t>({0, 0, 0, 0}), DType::Bool);
  mask.view = TensorView::contiguous(mask.view.data, DType::Bool, {B, S});
  attentionForward(*context, {q.view, k.view, v.view, {}, mask.view, {}},
                   {o.view, lse.view});
  for (double x : read(o, T * D))
    EXPECT_EQ(x, 0.0);
  for (double x : read(lse, T))
    EXPECT_EQ(x, -INFINITY);
}

} // namespace
