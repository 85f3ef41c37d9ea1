//===- NormPolicy.cpp - The norms' row layout from a target ---------------===//

#include "dialects/IR/norm/NormPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

mlir::rudnn::NormForm mlir::rudnn::chooseNormForm(int64_t features,
                                                  int64_t held) {
  NormForm form;
  const std::string row = "rows of " + std::to_string(features);
  if (features <= 32 * held) {
    form.threads = 32;
    form.rowsPerBlock = 4;
    form.reason = row + ": a warp a row, 4 rows a block, the row in registers";
  } else if (features <= 1024 * held) {
    const int64_t perThread = std::max<int64_t>(1, held / 2);
    form.threads = std::min<int64_t>(
        1024, roundUp((features + perThread - 1) / perThread, 32));
    form.reason = row + ": a block of " + std::to_string(form.threads) +
                  " threads a row, the row in registers";
  } else {
    form.threads = kNormSplitThreads;
    form.chunk = kNormSplitThreads * held;
    form.reason = row + ": split into " +
                  std::to_string((features + form.chunk - 1) / form.chunk) +
                  " chunks of " + std::to_string(form.chunk) +
                  ", a block each; their moments merged by every chunk";
  }
  return form;
}

int64_t mlir::rudnn::normBackwardBlocks(const NormForm &form, int64_t features,
                                        int64_t smCount) {
  if (!form.chunk)
    return 4 * smCount;
  const int64_t splits = (features + form.chunk - 1) / form.chunk;
  return splits * std::max<int64_t>(1, 2 * smCount / splits);
}
