//===- SpecializeTest.cpp - rudnn-specialize and its chunk policy ---------===//

#include "TestSupport.h"

#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/kda/KdaPolicy.h"

#include "mlir/Pass/PassManager.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

TEST(KdaChunkPolicy, StaticSharedBytesAreTheLargestStaticArrays) {
  // prepare's pairwise matrix, inverse and 16-row panel...
  EXPECT_EQ(kdaChunkSharedBytes(64, 64, 64), 4 * (2 * 64 * 64 + 16 * 64));
  EXPECT_EQ(kdaChunkSharedBytes(16, 1, 1), 4 * (2 * 16 * 16 + 16 * 16));
  // ... or the f32 walks' (K + chunk) x 32 state and update columns.
  EXPECT_EQ(kdaChunkSharedBytes(16, 256, 1), 4 * (256 + 16) * 32);
}

TEST(KdaChunkPolicy, GradientsSharedBytesFollowTheTileLayout) {
  // K = V = 128, chunk 64, bf16: one 64 x 64 matrix in fp32; dO, U and k
  // (later dRu) 64 x 128 bf16 (16 KiB each); the phases' region, the
  // largest of Γ 64 x 128 in fp32 (32 KiB), dU and the inverse (24 KiB)
  // and two stages of 16 rows of S0 and dS_end (4 KiB each) and 16 columns
  // of q and k (2 KiB each) and of g (4 KiB, room for f32) with the step's
  // Γ and dΓ (4 KiB each): 40 KiB; β, eight warps' partial sums by row and
  // by feature, and one value per feature. Two blocks fit an SM of 228 KiB.
  const int64_t bytes = kdaGradientsSharedBytes(64, 128, 128, 2);
  EXPECT_EQ(bytes, 4 * 64 * 64 + 3 * 16384 + 2 * (2 * 4096 + 2 * 2048 + 4096) +
                       2 * 4096 + 256 + 4 * (8 * 64 + 8 * 128 + 128));
  EXPECT_LE(2 * (bytes + 1024), 228 * 1024);
  // f32 at K = 4, V = 12, chunk 16: 16-wide rows (4 chunks, swizzled); the
  // two stages (2 · 5 KiB) and the step's Γ and dΓ pass Γ, dU and the
  // inverse.
  EXPECT_EQ(kdaGradientsSharedBytes(16, 4, 12, 4),
            4 * 16 * 16 + 3 * 1024 + 2 * 5120 + 2 * 1024 + 64 +
                4 * (8 * 16 + 8 * 4 + 4));
}

TEST(KdaChunkPolicy, WalkSharedBytesFollowTheTileLayout) {
  // K = 128, chunk 64, bf16: W and Kd 64 x 128 (16 KiB each), U0's 64 x 16
  // bf16 columns (2 KiB), e^Γlast (512 B), twice; the state 128 x 16 and
  // the updates 64 x 16 in bf16.
  EXPECT_EQ(kdaWalkSharedBytes(64, 128),
            2 * (2 * 16384 + 2048 + 512) + 4096 + 2048);
  // K = 100 rounds up to 128 rows; K = 192 pads its 24 chunks a row to 25.
  EXPECT_EQ(kdaWalkSharedBytes(64, 100), kdaWalkSharedBytes(64, 128));
  EXPECT_EQ(kdaWalkSharedBytes(16, 192),
            2 * (2 * 16 * 25 * 16 + 16 * 32 + 49 * 16) + 192 * 32 + 16 * 32);
}

TEST(KdaChunkPolicy, PrepareSharedBytesFollowTheTileLayout) {
  // q (then v) and k rows of 128 bf16 (16 chunks of 16 bytes) for 64
  // tokens, 64 β and Γ 64 x 128 in fp32; f32 rows are twice as wide.
  EXPECT_EQ(kdaPrepareSharedBytes(64, 128, 128, 2),
            2 * 64 * 256 + 256 + 4 * 64 * 128);
  EXPECT_EQ(kdaPrepareSharedBytes(64, 128, 128, 4),
            2 * 64 * 512 + 256 + 4 * 64 * 128);
  // 16-bit widths round up to 16 columns, then to an odd count of chunks
  // unless a power of two: K = 60 is 8 chunks of bf16 (swizzled), V = 40
  // six, padded to seven; the wider of q and v sets their shared rows.
  EXPECT_EQ(kdaPrepareSharedBytes(16, 60, 40, 2),
            2 * 16 * 8 * 16 + 64 + 4 * 16 * 60);
  EXPECT_EQ(kdaPrepareSharedBytes(16, 40, 60, 2),
            16 * 8 * 16 + 16 * 7 * 16 + 64 + 4 * 16 * 40);
  // f32 rows round to 4 columns: V = 20 is five chunks (odd).
  EXPECT_EQ(kdaPrepareSharedBytes(16, 20, 20, 4),
            2 * 16 * 5 * 16 + 64 + 4 * 16 * 20);
}

TEST(KdaChunkPolicy, OutputSharedBytesFollowTheTileLayout) {
  // The decayed queries: 16-bit, the block's 64 rows of K = 100 rounded to
  // 128 columns (16 chunks, swizzled); f32, the chunk's rows, K = 40 to 64
  // columns.
  EXPECT_EQ(kdaOutputSharedBytes(32, 100, 2), 64 * 16 * 16);
  EXPECT_EQ(kdaOutputSharedBytes(32, 40, 4), 32 * 16 * 16);
}

TEST(KdaChunkPolicy, ChoosesTheLargestChunkThatFits) {
  const int64_t h200 = DefaultTarget::kSmemPerBlock;
  EXPECT_EQ(chooseKdaChunk(64, 64, h200, 2), 64);
  EXPECT_EQ(chooseKdaChunk(128, 128, h200, 2), 64);
  // At K = V = 256 the backward's mma.sync reverse walk is the largest
  // block at chunk 64 (224 KiB, the gradients block 187 KiB at bf16), under
  // 227 KiB; f32's gradients block (315 KiB) takes chunk 32.
  EXPECT_EQ(chooseKdaChunk(256, 256, h200, 2), 64);
  EXPECT_EQ(chooseKdaChunk(256, 256, h200, 4), 32);
  // On sm_90 16-bit inputs take the largest chunk at which both walks run
  // on wgmma: at chunk 64 the forward's (234 KiB with its alignment slack)
  // would not fit, at 32 both do.
  EXPECT_EQ(chooseKdaChunk(256, 256, h200, 2, 90), 32);
  EXPECT_EQ(chooseKdaChunk(128, 128, h200, 2, 90), 64);
  EXPECT_EQ(chooseKdaChunk(256, 256, h200, 4, 90), 32);
  // A100's 163 KiB keep chunk 64 at K = V = 128 (the reverse walk's 123
  // KiB; the gradients block's 111 KiB).
  EXPECT_EQ(chooseKdaChunk(128, 128, 163 * 1024, 2), 64);
  EXPECT_EQ(chooseKdaChunk(256, 256, 100 * 1024, 2), 16);
  EXPECT_EQ(chooseKdaChunk(256, 256, 100 * 1024, 4), std::nullopt);
  EXPECT_EQ(chooseKdaChunk(256, 256, 64 * 1024, 2), std::nullopt);
  EXPECT_EQ(chooseKdaChunk(128, 128, 64 * 1024, 2), 32);
  EXPECT_EQ(chooseKdaChunk(64, 64, 64 * 1024, 2), 32);
  EXPECT_EQ(chooseKdaChunk(64, 64, 41000, 2), 32);
  // Small budgets: the output block's pipeline stages and decayed queries
  // decide at chunk 16 (24576 bytes at K = V = 64).
  EXPECT_EQ(chooseKdaChunk(64, 64, 24576, 2), 16);
  EXPECT_EQ(chooseKdaChunk(64, 64, 24575, 2), std::nullopt);
  EXPECT_EQ(chooseKdaChunk(256, 256, 16 * 1024, 2), std::nullopt);
}

TEST(KdaChunkPolicy, GradientWalkSharedBytesFollowTheTileLayout) {
  // K = 128, chunk 64, bf16: the pairwise matrix 64 x 64 (8 KiB), Kd, Qd
  // and W 64 x 128 (16 KiB each), dO's 16 columns (2 KiB), e^Γlast
  // (512 B), twice; dS 128 x 16 and −dU 64 x 16 in bf16.
  EXPECT_EQ(kdaGradientWalkSharedBytes(64, 128),
            2 * (8192 + 3 * 16384 + 2048 + 512) + 4096 + 2048);
}

TEST(KdaChunkPolicy, WgmmaGradientWalkSharedBytesFollowTheTileLayout) {
  // K = 128, chunk 64, bf16, each tile in 1024-byte atoms: the pairwise
  // matrix 64 x 64 (8 KiB), Kd 64 x 128, Qd and W 64 x 128 (16 KiB each),
  // e^Γlast (512 B) and its mbarrier (the stage rounded up to 57 KiB), twice;
  // dS [16][128] (4 KiB), two of dO and −dU [16][64] (2 KiB each).
  EXPECT_EQ(kdaWgmmaGradientWalkSharedBytes(64, 128),
            2 * 57 * 1024 + 4096 + 3 * 2048);
  // K = 256, chunk 64 fills an H200's block exactly with the alignment
  // slack (each stage's e^Γlast and mbarrier take a 1024-byte atom of
  // their own there); chunk 32 at K = 256 fits too.
  const int64_t h200 = DefaultTarget::kSmemPerBlock;
  EXPECT_EQ(kdaWgmmaGradientWalkSharedBytes(64, 256) + 1024, h200);
  EXPECT_TRUE(chooseKdaWgmmaGradientWalk(90, 2, 64, 256, h200));
  EXPECT_TRUE(chooseKdaWgmmaGradientWalk(90, 2, 32, 256, h200));
  EXPECT_FALSE(chooseKdaWgmmaGradientWalk(90, 2, 64, 256, 200 * 1024));
  EXPECT_FALSE(chooseKdaWgmmaGradientWalk(80, 2, 64, 128, h200));
  EXPECT_FALSE(chooseKdaWgmmaGradientWalk(90, 4, 64, 128, h200));
  EXPECT_FALSE(chooseKdaWgmmaGradientWalk(90, 2, 64, 320, h200));
}

TEST(KdaChunkPolicy, SavedTilesOfTheProductionShape) {
  // bf16, K = V = 128, chunk 64: 904 + 384 bytes of tiles per token and
  // head.
  EXPECT_EQ(kdaSavedTileWords(64, 128, 128, 2), 20608);
  EXPECT_EQ(kdaSavedTileWords(64, 128, 128, 2) * 4 / 64, 904 + 384);
}

TEST(KdaChunkPolicy, ChoiceFitsAndIsMaximalForEveryFeatureDim) {
  for (int64_t inputBytes : {2, 4})
    for (int64_t smem : {16 * 1024, 48 * 1024, 100 * 1024, 227 * 1024})
      for (int64_t featureDimK = 1; featureDimK <= 256; featureDimK += 17)
        for (int64_t featureDimV = 1; featureDimV <= 256; featureDimV += 23) {
          std::optional<int64_t> chunk =
              chooseKdaChunk(featureDimK, featureDimV, smem, inputBytes);
          auto fits = [&](int64_t c) {
            return kdaChunkSharedBytes(c, featureDimK, featureDimV) <=
                       std::min(smem, kStaticSharedBytes) &&
                   kdaLargestBlockSharedBytes(c, featureDimK, featureDimV,
                                              inputBytes) <= smem;
          };
          if (!chunk) {
            EXPECT_FALSE(fits(16));
            continue;
          }
          EXPECT_TRUE(isValidKdaChunk(*chunk));
          EXPECT_TRUE(fits(*chunk));
          if (*chunk < 64) {
            EXPECT_FALSE(fits(*chunk * 2));
          }
        }
}

class SpecializePassTest : public ::rudnn::test::IRTest {
protected:
  LogicalResult run(const RudnnSpecializeOptions &options) {
    PassManager pm(&context);
    pm.addPass(createRudnnSpecialize(options));
    return pm.run(*module);
  }
};

TEST_F(SpecializePassTest, AttachesTargetAndFillsOpenParameters) {
  Type f16 = builder.getF16Type();
  Value q = tensor({kDyn, kDyn, kDyn, 128}, f16);
  Value v = tensor({kDyn, kDyn, kDyn, 128}, f16);
  Value g = tensor({kDyn, kDyn, kDyn, 128}, builder.getF32Type());
  Value beta = tensor({kDyn, kDyn, kDyn}, f16);
  auto op = builder.create<KdaOp>(builder.getUnknownLoc(), q, q, v, g, beta);
  Type outputType = op.getOutput().getType();
  finishFunction();

  RudnnSpecializeOptions options;
  options.arch = "sm_89";
  options.smemPerBlock = 101376;
  options.smCount = 128;
  ASSERT_TRUE(succeeded(run(options))) << diagnostics;

  auto target =
      (*module)->getAttrOfType<TargetAttr>(RudnnDialect::kTargetAttrName);
  ASSERT_TRUE(target);
  EXPECT_EQ(target.getArch(), "sm_89");
  EXPECT_EQ(target.getSmemPerBlock(), 101376);
  EXPECT_EQ(target.getSmCount(), 128);
  EXPECT_EQ(op.getChunk(), chooseKdaChunk(128, 128, 101376, /*inputBytes=*/2));
  ASSERT_TRUE(op.getScaleAttr());
  EXPECT_FLOAT_EQ(op.getScaleAttr().getValueAsDouble(), 1.0 / std::sqrt(128.0));
  // Batch, heads and length stay dynamic.
  EXPECT_EQ(op.getOutput().getType(), outputType);
}

TEST_F(SpecializePassTest, FailsWithDiagnosticWhenNothingFits) {
  Value q = tensor({1, 4, 1, 256}, builder.getF32Type());
  Value beta = tensor({1, 4, 1}, builder.getF32Type());
  builder.create<KdaOp>(builder.getUnknownLoc(), q, q, q, q, beta);
  finishFunction();
  RudnnSpecializeOptions options;
  options.smemPerBlock = 4096;
  EXPECT_TRUE(failed(run(options)));
  EXPECT_THAT(diagnostics, ::testing::HasSubstr("no chunk size fits K = 256"));
}

} // namespace
