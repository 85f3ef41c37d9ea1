//===- KdaPolicy.cpp - KDA's sizes from a target --------------------------===//

#include "dialects/IR/kda/KdaPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

int64_t mlir::rudnn::kdaChunkSharedBytes(int64_t chunk, int64_t featureDimK,
                                         int64_t featureDimV) {
  (void)featureDimV; // blocks of V columns: the same for every V
  constexpr int64_t kBytesPerElement = sizeof(float);
  const int64_t columns = kKdaColumnsPerBlock;
  const int64_t prepare = 2 * chunk * chunk + 16 * chunk; // A, inverse, panel
  const int64_t stateColumns = (featureDimK + chunk) * columns; // the walks
  return kBytesPerElement * std::max(prepare, stateColumns);
}

namespace {
/// fp32 words holding `elements` of `inputBytes` each, in whole 16-byte
/// chunks.
int64_t operandWords(int64_t elements, int64_t inputBytes) {
  return (elements * inputBytes + 15) / 16 * 4;
}
} // namespace

int64_t mlir::rudnn::kdaChunkTileWords(int64_t chunk, int64_t featureDimK,
                                       int64_t featureDimV,
                                       int64_t inputBytes) {
  return (featureDimK + 3) / 4 * 4 +
         operandWords(chunk * (2 * featureDimK + chunk + featureDimV),
                      inputBytes);
}

int64_t mlir::rudnn::kdaBackwardTileWords(int64_t chunk, int64_t featureDimK,
                                          int64_t inputBytes) {
  return operandWords(chunk * (featureDimK + chunk), inputBytes);
}

int64_t mlir::rudnn::kdaWalkSharedBytes(int64_t chunk, int64_t featureDimK) {
  const int64_t rows = (featureDimK + 63) / 64 * 64,
                columns = kKdaWalkColumns16;
  const int64_t stage = 2 * sharedTileBytes(chunk, rows, 2) +
                        sharedTileBytes(chunk, columns, 2) +
                        sharedTileBytes(1, rows, 4);
  return 2 * stage + sharedTileBytes(rows, columns, 2) +
         sharedTileBytes(chunk, columns, 2);
}

int64_t mlir::rudnn::kdaWgmmaWalkSharedBytes(int64_t chunk,
                                             int64_t featureDimK) {
  auto alignedTo = [](int64_t bytes, int64_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
  };
  const int64_t rows = (featureDimK + 63) / 64 * 64,
                columns = kKdaWalkColumns16;
  // W with 64 rows and Kd, in column blocks of 64 (1024-byte aligned).
  const int64_t blocks = 64 * rows * 2 + chunk * rows * 2;
  // The stage's mbarrier (8 bytes) after e^Γlast.
  const int64_t stage = alignedTo(blocks + sharedTileBytes(chunk, columns, 2) +
                                      sharedTileBytes(1, rows, 4) + 8,
                                  1024);
  return alignedTo(2 * stage + columns * rows * 2 + columns * 64 * 2, 1024);
}

bool mlir::rudnn::kdaWorkspaceRowsFit(int64_t chunk, int64_t featureDimK,
                                      int64_t featureDimV, int64_t inputBytes) {
  const int64_t rowBytes = featureDimK * inputBytes;
  return inputBytes == 2 && featureDimK >= 64 && featureDimK % 8 == 0 &&
         kdaChunkTileWords(chunk, featureDimK, featureDimV, inputBytes) * 4 %
                 rowBytes ==
             0 &&
         kdaBackwardTileWords(chunk, featureDimK, inputBytes) * 4 % rowBytes ==
             0;
}

int64_t mlir::rudnn::kdaWorkspaceRows(int64_t featureDimK) {
  return std::min<int64_t>((int64_t(1) << 31) - 1,
                           (int64_t(1) << 39) / (2 * featureDimK));
}

int64_t mlir::rudnn::kdaWgmmaWalkOutputSharedBytes(int64_t chunk,
                                                   int64_t featureDimK) {
  const int64_t rows = (featureDimK + 63) / 64 * 64;
  // Two stages of Qd [64][K'] and the pairwise matrix [64][64], and a
  // second staged state [16][K'].
  return kdaWgmmaWalkSharedBytes(chunk, featureDimK) +
         2 * (64 * rows * 2 + 64 * 64 * 2) + 16 * rows * 2;
}

namespace {
/// Whether a wgmma walk of `sharedBytes` (without its 1024 bytes of
/// alignment slack) runs: 16-bit inputs on sm_90a, a chunk of 16, 32 or
/// 64 (one m64 of tokens), K at most kKdaWgmmaWalkMaxK.
bool wgmmaWalkFits(int64_t computeCapability, int64_t inputBytes, int64_t chunk,
                   int64_t featureDimK, int64_t sharedBytes,
                   int64_t smemPerBlock) {
  return computeCapability == 90 && inputBytes == 2 && chunk % 16 == 0 &&
         chunk <= 64 && featureDimK <= kKdaWgmmaWalkMaxK &&
         sharedBytes + 1024 <= smemPerBlock;
}
} // namespace

bool mlir::rudnn::chooseKdaWgmmaWalk(int64_t computeCapability,
                                     int64_t inputBytes, int64_t chunk,
                                     int64_t featureDimK,
                                     int64_t smemPerBlock) {
  return wgmmaWalkFits(computeCapability, inputBytes, chunk, featureDimK,
                       kdaWgmmaWalkOutputSharedBytes(chunk, featureDimK),
                       smemPerBlock);
}

int64_t mlir::rudnn::kdaWgmmaGradientWalkSharedBytes(int64_t chunk,
                                                     int64_t featureDimK) {
  const int64_t rows = (featureDimK + 63) / 64 * 64,
                columns = kKdaWalkColumns16;
  // Each of the stage's tiles is a whole number of 1024-byte atoms but
  // e^Γlast, which the stage's alignment rounds up.
  const int64_t tiles = chunk * 64 * 2 + 64 * rows * 2 + 2 * chunk * rows * 2;
  // e^Γlast and the stage's mbarrier (8 bytes).
  const int64_t stage =
      (tiles + sharedTileBytes(1, rows, 4) + 8 + 1023) / 1024 * 1024;
  return 2 * stage + columns * rows * 2 + 3 * columns * 64 * 2;
}

bool mlir::rudnn::chooseKdaWgmmaGradientWalk(int64_t computeCapability,
                                             int64_t inputBytes, int64_t chunk,
                                             int64_t featureDimK,
                                             int64_t smemPerBlock) {
  return wgmmaWalkFits(computeCapability, inputBytes, chunk, featureDimK,
                       kdaWgmmaGradientWalkSharedBytes(chunk, featureDimK),
                       smemPerBlock);
}

int64_t mlir::rudnn::kdaGradientWalkSharedBytes(int64_t chunk,
                                                int64_t featureDimK) {
  const int64_t rows = (featureDimK + 63) / 64 * 64,
                columns = kKdaWalkColumns16;
  const int64_t stage =
      sharedTileBytes(chunk, chunk, 2) + 3 * sharedTileBytes(chunk, rows, 2) +
      sharedTileBytes(chunk, columns, 2) + sharedTileBytes(1, rows, 4);
  return 2 * stage + sharedTileBytes(rows, columns, 2) +
         sharedTileBytes(chunk, columns, 2);
}

int64_t mlir::rudnn::kdaPrepareSharedBytes(int64_t chunk, int64_t featureDimK,
                                           int64_t featureDimV,
                                           int64_t inputBytes) {
  // Whole 16-byte chunks; 16-bit rows whole 16-column mma steps.
  const int64_t multiple = inputBytes == 2 ? 16 : 4;
  auto rows = [&](int64_t width) {
    return sharedTileBytes(chunk, (width + multiple - 1) / multiple * multiple,
                           inputBytes);
  };
  // q's rows, then v's in their place; k's; β; Γ.
  return std::max(rows(featureDimK), rows(featureDimV)) + rows(featureDimK) +
         4 * ((chunk + 3) / 4 * 4) + 4 * chunk * featureDimK;
}

int64_t mlir::rudnn::kdaOutputSharedBytes(int64_t chunk, int64_t featureDimK,
                                          int64_t inputBytes) {
  return sharedTileBytes(inputBytes == 2 ? 64 : chunk,
                         (featureDimK + 31) / 32 * 32, inputBytes);
}

int64_t mlir::rudnn::kdaRestoreSharedBytes(int64_t inputBytes) {
  return inputBytes == 2
             ? 2 * (sharedTileBytes(64, 32, 2) + sharedTileBytes(32, 64, 2))
             : 0;
}

int64_t mlir::rudnn::kdaGradientsSharedBytes(int64_t chunk, int64_t featureDimK,
                                             int64_t featureDimV,
                                             int64_t inputBytes) {
  constexpr int64_t kWarps = 8, kFeatures = 16;
  const int64_t rowsK = (featureDimK + 15) / 16 * 16,
                rowsV = (featureDimV + 15) / 16 * 16;
  const int64_t keys = std::max(sharedTileBytes(chunk, rowsK, inputBytes),
                                sharedTileBytes(chunk, rowsV, inputBytes));
  // The phases' region: Γ, then dU and M, then the feature steps' two
  // stages (S0's and dS_end's rows; q's, k's and g's columns, g's with
  // room for f32) and the step's Γ and dΓ.
  const int64_t gamma = 4 * chunk * featureDimK;
  const int64_t solve = sharedTileBytes(chunk, rowsV, inputBytes) +
                        sharedTileBytes(chunk, chunk, inputBytes);
  const int64_t stage = 2 * sharedTileBytes(kFeatures, rowsV, inputBytes) +
                        2 * sharedTileBytes(chunk, kFeatures, inputBytes) +
                        sharedTileBytes(chunk, kFeatures, 4);
  const int64_t steps = 2 * stage + 2 * 4 * chunk * kFeatures;
  const int64_t bytes =
      4 * chunk * chunk + 2 * sharedTileBytes(chunk, rowsV, inputBytes) + keys +
      std::max({gamma, solve, steps}) + 4 * ((chunk + 3) / 4 * 4) +
      4 * (kWarps * chunk + kWarps * featureDimK + featureDimK);
  return (bytes + 15) / 16 * 16;
}

int64_t mlir::rudnn::kdaLargestBlockSharedBytes(int64_t chunk,
                                                int64_t featureDimK,
                                                int64_t featureDimV,
                                                int64_t inputBytes) {
  // prepare: its static pairwise, inverse and panel arrays and its rows.
  const int64_t prepare =
      4 * (2 * chunk * chunk + 16 * chunk) +
      std::max(
          kdaPrepareSharedBytes(chunk, featureDimK, featureDimV, inputBytes),
          kdaRestoreSharedBytes(inputBytes));
  // output: its static pipeline stages (16-bit) and its decayed queries.
  const int64_t output =
      (inputBytes == 2 ? 2 * (sharedTileBytes(64, 32, inputBytes) +
                              sharedTileBytes(32, 64, inputBytes))
                       : 0) +
      kdaOutputSharedBytes(chunk, featureDimK, inputBytes);
  return std::max(
      {kdaChunkSharedBytes(chunk, featureDimK, featureDimV),
       kdaWalkSharedBytes(chunk, featureDimK),
       kdaGradientWalkSharedBytes(chunk, featureDimK),
       kdaGradientsSharedBytes(chunk, featureDimK, featureDimV, inputBytes),
       prepare, output});
}

std::optional<int64_t> mlir::rudnn::chooseKdaChunk(int64_t featureDimK,
                                                   int64_t featureDimV,
                                                   int64_t smemPerBlock,
                                                   int64_t inputBytes,
                                                   int64_t computeCapability) {
  // The kernels' arrays are static: however much the target could give a
  // block dynamically, they get at most kStaticSharedBytes.
  const int64_t budget = std::min(smemPerBlock, kStaticSharedBytes);
  auto fits = [&](int64_t chunk) {
    return kdaChunkSharedBytes(chunk, featureDimK, featureDimV) <= budget &&
           kdaLargestBlockSharedBytes(chunk, featureDimK, featureDimV,
                                      inputBytes) <= smemPerBlock;
  };
  // The state in wgmma accumulators outweighs a larger chunk.
  for (int64_t chunk : {64, 32, 16})
    if (fits(chunk) &&
        chooseKdaWgmmaWalk(computeCapability, inputBytes, chunk, featureDimK,
                           smemPerBlock) &&
        chooseKdaWgmmaGradientWalk(computeCapability, inputBytes, chunk,
                                   featureDimK, smemPerBlock))
      return chunk;
  for (int64_t chunk : {64, 32, 16})
    if (fits(chunk))
      return chunk;
  return std::nullopt;
}

std::string mlir::rudnn::kdaPolicyReason(
    int64_t chunk, bool chunkGiven, int64_t featureDimK, int64_t featureDimV,
    int64_t inputBytes, int64_t smemPerBlock, bool wgmma, bool forward) {
  const std::string C = std::to_string(chunk);
  // The wgmma walk's block (with its alignment slack) may be the largest.
  int64_t largest =
      kdaLargestBlockSharedBytes(chunk, featureDimK, featureDimV, inputBytes);
  if (wgmma)
    largest = std::max(
        largest,
        (forward ? kdaWgmmaWalkOutputSharedBytes(chunk, featureDimK)
                 : kdaWgmmaGradientWalkSharedBytes(chunk, featureDimK)) +
            1024);
  std::string reason =
      "chunk " + C +
      (chunkGiven ? " as given" : ": the largest of 64, 32 and 16 that fits") +
      " (its largest block takes " + std::to_string(largest) + " of " +
      std::to_string(smemPerBlock) + " bytes)";
  // Every decayed product splits its decay at a token between its two
  // ends, so each factor is e^(Γ_i − Γ_r) with r before i: at most 1.
  reason += "; every decay factor exp(G_i - G_r) with r <= i, at most 1: "
            "finite at any gate";
  const std::string walk = forward ? "the state walk" : "the reverse walk";
  const std::string state = forward ? "the state" : "dS";
  if (wgmma)
    reason += "; " + walk + " on wgmma, " + state +
              " in fp32 accumulators, a chunk's " + C +
              " tokens the rows of its m64n16 products" +
              (chunk < 64 ? " (the rest zeros)" : "");
  else if (inputBytes == 2)
    reason += "; the walks on mma.sync (m16n8k16), 16-token steps";
  else
    reason += "; products on FMA (f32 inputs)";
  const int64_t columns =
      inputBytes == 2 ? kKdaWalkColumns16 : kKdaColumnsPerBlock;
  reason += "; the walks a block per sequence and head for each " +
            std::to_string(columns) + " value columns (" +
            std::to_string((featureDimV + columns - 1) / columns) +
            " a head), the other kernels a block per chunk and head";
  return reason;
}
