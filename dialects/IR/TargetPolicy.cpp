//===- TargetPolicy.cpp - Compile-time parameters from a target -----------===//

#include "dialects/IR/TargetPolicy.h"

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

namespace {
/// Bytes of a tile::SharedTile: rows of 16-byte chunks, padded to an odd
/// count unless a power of two (swizzled).
int64_t sharedTileBytes(int64_t rows, int64_t cols, int64_t elementBytes) {
  const int64_t chunks = cols * elementBytes / 16;
  const bool swizzled = (chunks & (chunks - 1)) == 0;
  return rows * (swizzled || chunks % 2 ? chunks : chunks + 1) * 16;
}
} // namespace

int64_t mlir::rudnn::kdaWalkSharedBytes(int64_t chunk, int64_t featureDimK) {
  const int64_t rows = (featureDimK + 63) / 64 * 64,
                columns = kKdaWalkColumns16;
  const int64_t stage = 2 * sharedTileBytes(chunk, rows, 2) +
                        sharedTileBytes(chunk, columns, 2) +
                        sharedTileBytes(1, rows, 4);
  return 2 * stage + sharedTileBytes(rows, columns, 2) +
         sharedTileBytes(chunk, columns, 2);
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
  const int64_t solve = sharedTileBytes(chunk, rowsV, inputBytes) +
                        sharedTileBytes(chunk, chunk, inputBytes);
  const int64_t stage = 2 * sharedTileBytes(kFeatures, rowsV, inputBytes) +
                        sharedTileBytes(chunk, kFeatures, inputBytes);
  const int64_t bytes =
      4 * chunk * featureDimK + 2 * 4 * chunk * chunk +
      sharedTileBytes(chunk, rowsK, inputBytes) +
      3 * sharedTileBytes(chunk, rowsV, inputBytes) +
      std::max(solve, 2 * stage) + 4 * ((chunk + 3) / 4 * 4) +
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
                                                   int64_t inputBytes) {
  // The kernels' arrays are static: however much the target could give a
  // block dynamically, they get at most kStaticSharedBytes.
  const int64_t budget = std::min(smemPerBlock, kStaticSharedBytes);
  for (int64_t chunk : {64, 32, 16})
    if (kdaChunkSharedBytes(chunk, featureDimK, featureDimV) <= budget &&
        kdaLargestBlockSharedBytes(chunk, featureDimK, featureDimV,
                                   inputBytes) <= smemPerBlock)
      return chunk;
  return std::nullopt;
}

int64_t mlir::rudnn::attentionSharedBytes(int64_t blockQ, int64_t blockK,
                                          int64_t headDim, int64_t valueDim,
                                          int64_t inputBytes) {
  const int64_t keys = (headDim + 15) / 16 * 16,
                values = (valueDim + 15) / 16 * 16;
  int64_t bytes = sharedTileBytes(blockQ, keys, inputBytes) +
                  2 * sharedTileBytes(blockK, keys, inputBytes) +
                  2 * sharedTileBytes(blockK, values, inputBytes);
  if (inputBytes == 4)
    bytes += sharedTileBytes(blockQ, blockK, 4);
  return bytes;
}

std::optional<int64_t>
mlir::rudnn::chooseAttentionBlockKeys(int64_t headDim, int64_t valueDim,
                                      int64_t inputBytes,
                                      int64_t smemPerBlock) {
  const int64_t first = std::max(headDim, valueDim) <= 128 ? 64 : 32;
  for (int64_t keys = first; keys >= 16; keys /= 2)
    if (attentionSharedBytes(kAttentionBlockQueries, keys, headDim, valueDim,
                             inputBytes) <= smemPerBlock)
      return keys;
  return std::nullopt;
}

int64_t mlir::rudnn::hopperAttentionBlockKeys(int64_t headDim,
                                              int64_t valueDim) {
  return headDim <= 128 && valueDim <= 128 ? 128 : 64;
}

int64_t mlir::rudnn::hopperAttentionSharedBytes(int64_t headDim,
                                                int64_t valueDim) {
  const int64_t keys = hopperAttentionBlockKeys(headDim, valueDim);
  const int64_t headBlocks = (headDim + 63) / 64,
                valueBlocks = (valueDim + 63) / 64;
  // 16-bit elements, rows of 64; the barriers take a 1024-byte line.
  const int64_t tiles = 128 * headBlocks * kHopperAttentionBlockQueries +
                        2 * 128 * keys * (headBlocks + valueBlocks);
  return tiles + 1024 + 1024;
}

int64_t mlir::rudnn::hopperAttentionBackwardSharedBytes(int64_t headDim,
                                                        int64_t valueDim) {
  const int64_t blocks = (headDim + 63) / 64 + (valueDim + 63) / 64;
  // 16-bit elements, rows of 64: 128 resident rows and two stages of 64;
  // the barriers take a 1024-byte line.
  const int64_t tiles =
      128 * blocks *
      (kHopperAttentionBackwardRows + 2 * kHopperAttentionBackwardStep);
  return tiles + 1024 + 1024;
}

/// attention::kStreamedRows: 64 up to head dims of 64, `resident` up to
/// 128, past that 32 for 16-bit inputs and 16 for f32.
static int64_t backwardStreamedRows(int64_t headDim, int64_t valueDim,
                                    int64_t inputBytes, int64_t resident) {
  if (headDim <= 64 && valueDim <= 64)
    return 64;
  if (headDim <= 128 && valueDim <= 128)
    return resident;
  return inputBytes == 2 ? 32 : 16;
}

int64_t mlir::rudnn::attentionKeyGradientQueries(int64_t headDim,
                                                 int64_t valueDim,
                                                 int64_t inputBytes) {
  return backwardStreamedRows(headDim, valueDim, inputBytes, 32);
}

int64_t mlir::rudnn::attentionQueryGradientKeys(int64_t headDim,
                                                int64_t valueDim,
                                                int64_t inputBytes) {
  return backwardStreamedRows(headDim, valueDim, inputBytes, 64);
}

int64_t mlir::rudnn::attentionKeyGradientSharedBytes(int64_t headDim,
                                                     int64_t valueDim,
                                                     int64_t inputBytes) {
  const int64_t keys = (headDim + 15) / 16 * 16,
                values = (valueDim + 15) / 16 * 16,
                queries =
                    attentionKeyGradientQueries(headDim, valueDim, inputBytes);
  int64_t bytes = sharedTileBytes(64, keys, inputBytes) +
                  sharedTileBytes(64, values, inputBytes) +
                  2 * sharedTileBytes(queries, keys, inputBytes) +
                  2 * sharedTileBytes(queries, values, inputBytes);
  if (inputBytes == 4)
    bytes += sharedTileBytes(64, queries, 4);
  return bytes;
}

int64_t mlir::rudnn::attentionQueryGradientSharedBytes(int64_t headDim,
                                                       int64_t valueDim,
                                                       int64_t inputBytes) {
  const int64_t keys = (headDim + 15) / 16 * 16,
                values = (valueDim + 15) / 16 * 16,
                streamed =
                    attentionQueryGradientKeys(headDim, valueDim, inputBytes);
  int64_t bytes = sharedTileBytes(64, keys, inputBytes) +
                  sharedTileBytes(64, values, inputBytes) +
                  2 * sharedTileBytes(streamed, keys, inputBytes) +
                  2 * sharedTileBytes(streamed, values, inputBytes);
  if (inputBytes == 4)
    bytes += sharedTileBytes(64, streamed, 4);
  return bytes;
}

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

namespace {

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/// Bytes of a tile::SharedTile of 16-bit elements: whole 16-byte chunks a
/// row, a power-of-two count swizzled, any other padded to an odd count.
int64_t sharedTileBytes(int64_t rows, int64_t cols) {
  const int64_t chunks = cols / 8;
  const bool swizzled = (chunks & (chunks - 1)) == 0;
  return rows * (swizzled || chunks % 2 ? chunks : chunks + 1) * 16;
}

} // namespace

int64_t mlir::rudnn::lstmRecurrenceSharedBytes(int64_t hidden, int64_t units,
                                               int64_t elementBytes,
                                               bool weightsOnChip) {
  const int64_t rows = 4 * units, rowsPadded = roundUp(rows, 16),
                depth = roundUp(hidden, 16),
                warps = kLstmRecurrenceThreads / 32;
  const bool tensor = elementBytes == 2 && weightsOnChip;
  const int64_t rowTiles = rowsPadded / 16;
  const int64_t slices = tensor && rowTiles < warps ? warps / rowTiles : 1;
  const int64_t weights = tensor ? sharedTileBytes(rowsPadded, depth)
                          : weightsOnChip
                              ? roundUp(rows * hidden * elementBytes, 16)
                              : 0;
  const int64_t batch =
      tensor ? kLstmRecurrenceTensorBatch : kLstmRecurrenceFmaBatch;
  const int64_t staged =
      tensor ? sharedTileBytes(batch, depth) : 4 * batch * hidden;
  return weights + roundUp(staged, 16) + 4 * slices * rowsPadded * batch;
}

std::optional<LstmRecurrencePolicy> mlir::rudnn::chooseLstmRecurrence(
    int64_t hidden, int64_t directions, int64_t elementBytes,
    int64_t smemPerBlock, int64_t smCount, std::optional<int64_t> units,
    std::optional<bool> weightsOnChip, std::optional<bool> perStep) {
  LstmRecurrencePolicy policy;
  auto blocksFor = [&](int64_t u) {
    return directions * ((hidden + u - 1) / u);
  };
  auto sharedBytes = [&](int64_t u, bool onChip) {
    return lstmRecurrenceSharedBytes(hidden, u, elementBytes, onChip);
  };
  const int64_t fewest = std::min(hidden, kLstmMinUnits);
  int64_t persistentUnits = units.value_or(0);
  if (!units) {
    persistentUnits =
        std::max<int64_t>(fewest, (directions * hidden + smCount - 1) /
                                      std::max<int64_t>(smCount, 1));
    while (persistentUnits < hidden && blocksFor(persistentUnits) > smCount)
      ++persistentUnits;
  }
  const int64_t onChipBytes = sharedBytes(persistentUnits, true);
  const bool fitsOnChip = onChipBytes <= smemPerBlock;
  policy.perStep =
      perStep ? *perStep : !weightsOnChip.has_value() && !fitsOnChip;
  if (policy.perStep && weightsOnChip.value_or(false))
    return std::nullopt; // each launch would load W_hh anew
  policy.weightsOnChip =
      !policy.perStep && (weightsOnChip ? *weightsOnChip : fitsOnChip);
  policy.units = policy.perStep ? units.value_or(fewest) : persistentUnits;
  policy.blocks = blocksFor(policy.units);
  const int64_t bytes = sharedBytes(policy.units, policy.weightsOnChip);
  if (bytes > smemPerBlock || (!policy.perStep && policy.blocks > smCount))
    return std::nullopt;

  const std::string layer = std::to_string(directions) + " x " +
                            std::to_string(hidden) + " hidden units over " +
                            std::to_string(policy.blocks) + " blocks of " +
                            std::to_string(policy.units);
  const std::string onChip = std::to_string(onChipBytes) + " of " +
                             std::to_string(smemPerBlock) + " bytes";
  if (policy.perStep)
    policy.reason =
        layer +
        ", one launch a step (recorded in a CUDA graph); "
        "W_hh rows read from L2 each step (" +
        (fitsOnChip ? "on request"
                    : "on chip they would take " + onChip + " a block") +
        ")";
  else
    policy.reason =
        layer + " (one an SM, " + std::to_string(smCount) +
        " SMs); W_hh rows " +
        (policy.weightsOnChip ? "kept in shared memory (" + onChip + ")"
                              : "read from L2 each step (on chip they would "
                                "take " +
                                    onChip + ")");
  return policy;
}

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
