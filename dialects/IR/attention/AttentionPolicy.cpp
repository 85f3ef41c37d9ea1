//===- AttentionPolicy.cpp - Attention's tiles from a target --------------===//

#include "dialects/IR/attention/AttentionPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

int64_t mlir::rudnn::attentionSharedBytes(int64_t blockQ, int64_t blockK,
                                          int64_t headDim, int64_t valueDim,
                                          int64_t inputBytes) {
  const int64_t keys = (headDim + 15) / 16 * 16,
                values = (valueDim + 15) / 16 * 16;
  const int64_t stages = blockQ == kAttentionBlockQueries ? 2 : 1;
  int64_t bytes = sharedTileBytes(blockQ, keys, inputBytes) +
                  stages * sharedTileBytes(blockK, keys, inputBytes) +
                  stages * sharedTileBytes(blockK, values, inputBytes);
  if (inputBytes == 4)
    bytes += sharedTileBytes(blockQ, blockK, 4);
  // 16-bit outputs are staged in the tiles, 64 columns of every row.
  return inputBytes == 2 ? std::max(bytes, blockQ * 64 * 2) : bytes;
}

int64_t mlir::rudnn::attentionWarpRows(int64_t blockQ, int64_t headDim,
                                       int64_t valueDim) {
  return blockQ == kAttentionWideBlockQueries && headDim <= 128 &&
                 valueDim <= 128
             ? 32
             : 16;
}

std::optional<int64_t>
mlir::rudnn::chooseAttentionBlockKeys(int64_t blockQ, int64_t headDim,
                                      int64_t valueDim, int64_t inputBytes,
                                      int64_t smemPerBlock) {
  // A warp of 32 rows holds its 32 x E accumulators and 32 x BK scores in
  // registers: at D = 128, 64 keys spill (16 to 112 bytes at 255
  // registers) where 32 fit.
  const int64_t widest = std::max(headDim, valueDim);
  const int64_t first =
      widest <= 64 || (widest <= 128 &&
                       attentionWarpRows(blockQ, headDim, valueDim) == 16)
          ? 64
          : 32;
  for (int64_t keys = first; keys >= 16; keys /= 2)
    if (attentionSharedBytes(blockQ, keys, headDim, valueDim, inputBytes) <=
        smemPerBlock)
      return keys;
  return std::nullopt;
}

std::optional<int64_t> mlir::rudnn::attentionDecodeBlocks(int64_t headDim,
                                                          int64_t valueDim,
                                                          int64_t inputBytes,
                                                          int64_t smemPerBlock,
                                                          int64_t smCount) {
  const int64_t bytes = attentionSharedBytes(
      kAttentionBlockQueries, attentionDecodeBlockKeys(headDim, valueDim),
      headDim, valueDim, inputBytes);
  if (bytes > smemPerBlock)
    return std::nullopt;
  // An SM's shared memory is about the most one block may take.
  const int64_t resident = std::clamp<int64_t>(smemPerBlock / bytes, 1, 8);
  return kAttentionDecodeWaves * resident * smCount;
}

int64_t mlir::rudnn::hopperAttentionBlockKeys(int64_t headDim, int64_t valueDim,
                                              int64_t blockQueries) {
  return blockQueries == kHopperAttentionBlockQueries && headDim <= 128 &&
                 valueDim <= 128
             ? 128
             : 64;
}

int64_t mlir::rudnn::hopperAttentionStages(int64_t headDim, int64_t valueDim) {
  return headDim <= 64 && valueDim <= 64 ? 3 : 2;
}

int64_t mlir::rudnn::hopperAttentionSharedBytes(int64_t headDim,
                                                int64_t valueDim,
                                                int64_t blockQueries) {
  const int64_t keys =
      hopperAttentionBlockKeys(headDim, valueDim, blockQueries);
  const int64_t headBlocks = (headDim + 63) / 64,
                valueBlocks = (valueDim + 63) / 64;
  // 16-bit elements, rows of 64; each consumer warp stages 16 output rows
  // of 64, in two buffers where rows are wider; the barriers take a
  // 1024-byte line.
  const int64_t tiles = 128 * headBlocks * blockQueries +
                        hopperAttentionStages(headDim, valueDim) * 128 * keys *
                            (headBlocks + valueBlocks);
  const int64_t outputStage =
      blockQueries / 16 * 16 * 64 * 2 * (valueBlocks > 1 ? 2 : 1);
  return tiles + outputStage + 1024 + 1024;
}

int64_t mlir::rudnn::hopperAttentionBackwardSharedBytes(int64_t headDim,
                                                        int64_t valueDim) {
  const int64_t blocks = (headDim + 63) / 64 + (valueDim + 63) / 64;
  const int64_t rows = hopperAttentionBackwardRows(headDim, valueDim);
  // 16-bit elements, rows of 64: the resident keys and two stages of 64
  // queries, and two stages of dSᵀ (keys by queries), and of Pᵀ where the
  // warpgroups share the keys; the barriers take a 1024-byte line.
  const int64_t staged = rows == kHopperAttentionBackwardRows ? 1 : 2;
  const int64_t tiles =
      128 * blocks * (rows + 2 * kHopperAttentionBackwardStep) +
      staged * 2 * 2 * rows * kHopperAttentionBackwardStep;
  return tiles + 1024 + 1024;
}

int64_t mlir::rudnn::attentionGradientStep(int64_t headDim, int64_t valueDim,
                                           int64_t inputBytes) {
  if (headDim <= 64 && valueDim <= 64)
    return 64;
  if (headDim <= 128 && valueDim <= 128)
    return 32;
  return inputBytes == 2 ? 32 : 16;
}

int64_t mlir::rudnn::attentionGradientSharedBytes(int64_t headDim,
                                                  int64_t valueDim,
                                                  int64_t inputBytes,
                                                  int64_t keys) {
  const int64_t d = (headDim + 15) / 16 * 16, e = (valueDim + 15) / 16 * 16;
  const int64_t step = attentionGradientStep(headDim, valueDim, inputBytes);
  return sharedTileBytes(keys, d, inputBytes) +
         sharedTileBytes(keys, e, inputBytes) +
         2 * sharedTileBytes(step, d, inputBytes) +
         2 * sharedTileBytes(step, e, inputBytes) +
         sharedTileBytes(keys, step, inputBytes);
}

int64_t mlir::rudnn::attentionGradientKeys(int64_t headDim, int64_t valueDim,
                                           int64_t inputBytes,
                                           int64_t smemPerBlock) {
  const bool wide =
      attentionGradientWideKeys(headDim, valueDim, inputBytes) &&
      attentionGradientSharedBytes(headDim, valueDim, inputBytes,
                                   kBackwardWideBlockRows) <= smemPerBlock;
  return wide ? kBackwardWideBlockRows : kBackwardBlockRows;
}
