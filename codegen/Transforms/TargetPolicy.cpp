//===- TargetPolicy.cpp - Compile-time parameters from a target -----------===//

#include "codegen/Transforms/TargetPolicy.h"

using namespace mlir::rudnn;

int64_t mlir::rudnn::kdaChunkSharedBytes(int64_t chunk, int64_t featureDimK,
                                         int64_t featureDimV) {
  constexpr int64_t kBytesPerElement = sizeof(float);
  int64_t tiles = chunk * (3 * featureDimK + featureDimV);
  int64_t pairwise = 2 * chunk * chunk;
  return kBytesPerElement * (tiles + pairwise);
}

std::optional<int64_t> mlir::rudnn::chooseKdaChunk(int64_t featureDimK,
                                                   int64_t featureDimV,
                                                   int64_t smemPerBlock) {
  for (int64_t chunk : {64, 32, 16})
    if (kdaChunkSharedBytes(chunk, featureDimK, featureDimV) <= smemPerBlock)
      return chunk;
  return std::nullopt;
}
