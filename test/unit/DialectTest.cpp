//===- DialectTest.cpp - rudnn ops built through the C++ API --------------===//

#include "TestSupport.h"

#include "dialects/IR/RudnnOps.h"

#include "mlir/Parser/Parser.h"

using namespace mlir;
using namespace mlir::rudnn;
using ::testing::HasSubstr;

namespace {

/// Operands of one KDA call: B = 2, T dynamic, H = 3, K = 16, V = 8.
class KdaOpTest : public ::rudnn::test::IRTest {
protected:
  void SetUp() override {
    Type bf16 = builder.getBF16Type(), f32 = builder.getF32Type();
    q = tensor({2, kDyn, 3, 16}, bf16);
    k = tensor({2, kDyn, 3, 16}, bf16);
    v = tensor({2, kDyn, 3, 8}, bf16);
    g = tensor({2, kDyn, 3, 16}, f32);
    beta = tensor({2, kDyn, 3}, f32);
    initialState = tensor({2, 3, 16, 8}, f32);
  }

  KdaOp forward(Value initial = {}, bool saveBoundaries = false) {
    return builder.create<KdaOp>(builder.getUnknownLoc(), q, k, v, g, beta,
                                 initial, saveBoundaries);
  }

  Value q, k, v, g, beta, initialState;
};

TEST_F(KdaOpTest, BuilderDerivesResultTypes) {
  KdaOp op = forward(initialState, /*saveBoundaries=*/true);
  EXPECT_EQ(verify(op), "");
  EXPECT_EQ(op.getOutput().getType(), v.getType());
  EXPECT_EQ(op.getFinalState().getType(),
            RankedTensorType::get({2, 3, 16, 8}, builder.getF32Type()));
  ASSERT_TRUE(op.getBoundaries());
  EXPECT_EQ(op.getBoundaries().getType(),
            RankedTensorType::get(
                {kDyn, 2, 3, 16, 8},
                cast<RankedTensorType>(q.getType()).getElementType()));
  EXPECT_FALSE(op.getChunk());
  EXPECT_FALSE(op.getScaleAttr());
}

TEST_F(KdaOpTest, BuilderSavingTilesFixesTheChunkAndTheirWidth) {
  KdaOp op = builder.create<KdaOp>(builder.getUnknownLoc(), q, k, v, g, beta,
                                   Value(), /*save_boundaries=*/true,
                                   /*save_tiles_chunk=*/32);
  EXPECT_EQ(verify(op), "");
  EXPECT_EQ(op.getChunk(), 32u);
  ASSERT_TRUE(op.getTiles());
  // bf16, K = 16, V = 8, chunk 32: e^Γlast (16 words), W, Kd, the pairwise
  // matrix and U (32 × (16 + 16 + 32 + 8) bf16), Qd and (I + A)⁻¹
  // (32 × (16 + 32) bf16).
  const int64_t words = 16 + 32 * 72 / 2 + 32 * 48 / 2;
  EXPECT_EQ(op.getTiles().getType(),
            RankedTensorType::get({kDyn, 2, 3, words}, builder.getF32Type()));
  EXPECT_EQ(op.getSaved().size(), 2u);
}

TEST_F(KdaOpTest, MismatchedLengthNamesOperandAndExpectedValue) {
  Value shortK = tensor({2, 7, 3, 16}, builder.getBF16Type());
  Value longV = tensor({2, 9, 3, 8}, builder.getBF16Type());
  KdaOp op =
      builder.create<KdaOp>(builder.getUnknownLoc(), q, shortK, longV, g, beta);
  EXPECT_THAT(verify(op),
              HasSubstr("'v' dim 1 (T) is 9, expected 7 as in 'k'"));
}

TEST_F(KdaOpTest, StatesMustBeF32) {
  Value halfState = tensor({2, 3, 16, 8}, builder.getF16Type());
  EXPECT_THAT(verify(forward(halfState)),
              HasSubstr("'initial_state' element type must be f32, got 'f16'"));
}

TEST_F(KdaOpTest, QueryKeyValueShareOneElementType) {
  Value f32Key = tensor({2, kDyn, 3, 16}, builder.getF32Type());
  KdaOp op =
      builder.create<KdaOp>(builder.getUnknownLoc(), q, f32Key, v, g, beta);
  EXPECT_THAT(verify(op),
              HasSubstr("'k' element type must be 'bf16' as 'q', got 'f32'"));
}

TEST_F(KdaOpTest, ChunkAndScaleAreChecked) {
  KdaOp op = forward();
  op.setChunkAttr(builder.getI64IntegerAttr(64));
  op.setScaleAttr(builder.getF32FloatAttr(0.25f));
  EXPECT_EQ(verify(op), "");

  op.setChunkAttr(builder.getI64IntegerAttr(100));
  EXPECT_THAT(verify(op), HasSubstr("'chunk' must be 16, 32 or 64, got 100"));

  op.setChunkAttr(builder.getI64IntegerAttr(128));
  EXPECT_THAT(verify(op), HasSubstr("'chunk' must be 16, 32 or 64, got 128"));
  op.setChunkAttr(builder.getI64IntegerAttr(64));
  op.setScaleAttr(builder.getF32FloatAttr(-0.5f));
  EXPECT_THAT(verify(op), HasSubstr("'scale' must be positive and finite"));
}

TEST_F(KdaOpTest, FeatureDimsAreBounded) {
  Type bf16 = builder.getBF16Type();
  Value wideQ = tensor({2, kDyn, 3, 512}, bf16);
  Value wideG = tensor({2, kDyn, 3, 512}, builder.getF32Type());
  KdaOp op = builder.create<KdaOp>(builder.getUnknownLoc(), wideQ, wideQ, v,
                                   wideG, beta);
  EXPECT_THAT(verify(op), HasSubstr("feature dim K is 512, expected 1 to 256"));
  for (int64_t chunk : kKdaChunkSizes)
    EXPECT_TRUE(isValidKdaChunk(chunk));
  EXPECT_FALSE(isValidKdaChunk(0));
  EXPECT_FALSE(isValidKdaChunk(256));
}

TEST_F(KdaOpTest, BackwardRequiresInitialStateGradientExactlyWithState) {
  Type f32 = builder.getF32Type();
  Value dOutput = tensor({2, kDyn, 3, 8}, builder.getBF16Type());
  auto backward = [&](Value initial, bool withStateGradient) {
    SmallVector<Type> stateGradient;
    if (withStateGradient)
      stateGradient.push_back(RankedTensorType::get({2, 3, 16, 8}, f32));
    return builder.create<KdaBackwardOp>(
        builder.getUnknownLoc(), q.getType(), k.getType(), v.getType(),
        g.getType(), beta.getType(), stateGradient, q, k, v, g, beta, initial,
        /*boundaries=*/Value(), /*tiles=*/Value(), dOutput,
        /*d_final_state=*/Value(), /*a_log=*/Value(), /*dt_bias=*/Value(),
        /*chunk=*/nullptr, /*scale=*/nullptr, /*grouped_heads=*/nullptr,
        /*qk_l2norm=*/nullptr, /*beta_logits=*/nullptr,
        /*gate_lower_bound=*/nullptr, /*wgmma=*/nullptr);
  };
  EXPECT_EQ(verify(backward(initialState, true)), "");
  EXPECT_EQ(verify(backward(Value(), false)), "");
  EXPECT_THAT(verify(backward(initialState, false)),
              HasSubstr("must produce 'd_initial_state'"));
  EXPECT_THAT(verify(backward(Value(), true)),
              HasSubstr("'d_initial_state' is produced only when"));
}

TEST_F(KdaOpTest, RoundTripsThroughText) {
  KdaOp op = forward(initialState);
  op.setChunkAttr(builder.getI64IntegerAttr(32));
  finishFunction();
  ASSERT_EQ(verify(*module), "");

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_THAT(text, HasSubstr("initial_state %arg5 chunk 32 :"));

  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(reparsed) << diagnostics;
  std::string again;
  llvm::raw_string_ostream os2(again);
  reparsed->print(os2);
  EXPECT_EQ(text, again);
}

class TargetAttrTest : public ::rudnn::test::IRTest {
protected:
  TargetAttr target(StringRef arch, int64_t lanes, int64_t smem, int64_t sms) {
    return TargetAttr::getChecked(
        [&] { return emitError(builder.getUnknownLoc()); }, &context, arch,
        lanes, smem, sms);
  }
};

TEST_F(TargetAttrTest, AcceptsAmpereAndNewer) {
  TargetAttr h200 = target("sm_90a", 32, 232448, 132);
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200.getComputeCapability(), 90);
  EXPECT_EQ(target("sm_86", 32, 101376, 84).getComputeCapability(), 86);
  EXPECT_EQ(diagnostics, "");
}

TEST_F(TargetAttrTest, RejectsWithReason) {
  EXPECT_FALSE(target("sm_9x", 32, 1024, 1));
  EXPECT_THAT(diagnostics, HasSubstr("target arch must look like"));
  EXPECT_FALSE(target("sm_70", 32, 1024, 1));
  EXPECT_THAT(diagnostics, HasSubstr("sm_80 or newer"));
  EXPECT_FALSE(target("sm_90", 32, 1024, -4));
  EXPECT_THAT(diagnostics, HasSubstr("sm_count must be positive, got -4"));
}

} // namespace
