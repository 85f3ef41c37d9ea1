//===- TargetPolicy.cpp - Compile-time parameters from a target -----------===//

#include "dialects/IR/TargetPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

int64_t mlir::rudnn::kdaChunkSharedBytes(int64_t chunk, int64_t featureDimK,
                                         int64_t featureDimV) {
  (void)featureDimV; // blocks of V columns: the same for every V
  constexpr int64_t kBytesPerElement = sizeof(float);
  const int64_t columns = kKdaColumnsPerBlock;
  const int64_t pairwise = 3 * chunk * chunk;                   // gradients
  const int64_t stateColumns = (featureDimK + chunk) * columns; // propagate
  return kBytesPerElement * std::max(pairwise, stateColumns);
}

std::optional<int64_t> mlir::rudnn::chooseKdaChunk(int64_t featureDimK,
                                                   int64_t featureDimV,
                                                   int64_t smemPerBlock) {
  // The kernels' arrays are static: however much the target could give a
  // block dynamically, they get at most kStaticSharedBytes.
  const int64_t budget = std::min(smemPerBlock, kStaticSharedBytes);
  for (int64_t chunk : {64, 32, 16})
    if (kdaChunkSharedBytes(chunk, featureDimK, featureDimV) <= budget)
      return chunk;
  return std::nullopt;
}
