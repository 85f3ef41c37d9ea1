//===- TargetPolicy.cpp - Compile-time parameters from a target -----------===//

#include "dialects/IR/TargetPolicy.h"

using namespace mlir::rudnn;

int64_t mlir::rudnn::sharedTileBytes(int64_t rows, int64_t cols,
                                     int64_t elementBytes) {
  const int64_t chunks = cols * elementBytes / 16;
  const bool swizzled = (chunks & (chunks - 1)) == 0;
  return rows * (swizzled || chunks % 2 ? chunks : chunks + 1) * 16;
}
