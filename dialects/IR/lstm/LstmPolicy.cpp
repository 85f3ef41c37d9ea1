//===- LstmPolicy.cpp - The LSTM's recurrence from a target ---------------===//

#include "dialects/IR/lstm/LstmPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

int64_t mlir::rudnn::lstmRecurrenceSharedBytes(int64_t hidden, int64_t units,
                                               int64_t elementBytes,
                                               bool weightsOnChip) {
  const int64_t rows = 4 * units, rowsPadded = roundUp(rows, 16),
                depth = roundUp(hidden, 16),
                warps = kLstmRecurrenceThreads / 32;
  const bool tensor = elementBytes == 2 && weightsOnChip;
  const int64_t rowTiles = rowsPadded / 16;
  const int64_t slices = tensor && rowTiles < warps ? warps / rowTiles : 1;
  const int64_t weights = tensor ? sharedTileBytes(rowsPadded, depth, 2)
                          : weightsOnChip
                              ? roundUp(rows * hidden * elementBytes, 16)
                              : 0;
  const int64_t batch =
      tensor ? kLstmRecurrenceTensorBatch : kLstmRecurrenceFmaBatch;
  const int64_t staged =
      tensor ? sharedTileBytes(batch, depth, 2) : 4 * batch * hidden;
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
