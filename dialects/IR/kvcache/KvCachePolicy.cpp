//===- KvCachePolicy.cpp - Decoding's splits from a target ----------------===//

#include "dialects/IR/kvcache/KvCachePolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

int64_t mlir::rudnn::decodeSharedBytes(int64_t headDim, int64_t valueDim,
                                       int64_t inputBytes, int64_t warps) {
  const int64_t keys = (headDim + 15) / 16 * 16,
                values = (valueDim + 15) / 16 * 16, stage = 16 * warps;
  const int64_t probabilities =
      inputBytes == 4 ? sharedTileBytes(16, stage, 4) : 16;
  return sharedTileBytes(16, keys, inputBytes) +
         2 * sharedTileBytes(stage, keys, inputBytes) +
         2 * sharedTileBytes(stage, values, inputBytes) + probabilities +
         warps * 16 * 4;
}

std::optional<int64_t> mlir::rudnn::chooseDecodeWarps(int64_t headDim,
                                                      int64_t valueDim,
                                                      int64_t inputBytes,
                                                      int64_t smemPerBlock) {
  for (int64_t warps : {4, 2, 1})
    if (decodeSharedBytes(headDim, valueDim, inputBytes, warps) <= smemPerBlock)
      return warps;
  return std::nullopt;
}

int64_t mlir::rudnn::decodeBlocks(int64_t sharedBytes, int64_t smemPerBlock,
                                  int64_t smCount) {
  const int64_t resident = std::clamp<int64_t>(
      smemPerBlock / std::max<int64_t>(sharedBytes, 1), 1, 4);
  return resident * smCount;
}
