//===- LstmPolicy.cpp - The LSTM's recurrence from a target ---------------===//

#include "dialects/IR/lstm/LstmPolicy.h"

#include <algorithm>

using namespace mlir::rudnn;

namespace {

/// Whether rows kept on chip meet the staged vectors on tensor cores
/// (lstm::RowProducts::kTensor): 16-bit, or f32 rounded to TF32.
bool onTensorCores(int64_t elementBytes, bool weightsOnChip, bool tf32) {
  return weightsOnChip && (elementBytes == 2 || (elementBytes == 4 && tf32));
}

/// Shared memory of `rows` weight rows of `depth` elements times the staged
/// vectors, and the sums (lstm::RowProducts::kBytes).
int64_t rowProductsBytes(int64_t rows, int64_t depth, int64_t elementBytes,
                         bool weightsOnChip, bool tf32) {
  const int64_t rowsPadded = roundUp(rows, 16), padded = roundUp(depth, 16),
                warps = kLstmRecurrenceThreads / 32;
  const bool tensor = onTensorCores(elementBytes, weightsOnChip, tf32);
  const int64_t batch = lstmRecurrenceBatch(elementBytes, weightsOnChip, tf32);
  const int64_t rowTiles = rowsPadded / 16;
  const int64_t slices = tensor && rowTiles < warps ? warps / rowTiles : 1;
  const int64_t weights =
      tensor          ? sharedTileBytes(rowsPadded, padded, elementBytes)
      : weightsOnChip ? roundUp(rows * depth * elementBytes, 16)
                      : 0;
  const int64_t staged =
      tensor ? sharedTileBytes(batch, padded, elementBytes) : 4 * batch * depth;
  return weights + roundUp(staged, 16) + 4 * slices * rowsPadded * batch;
}

/// The smallest units a persistent grid of `directions` x `hidden` units
/// may take on `smCount` SMs (one block an SM), at least kLstmMinUnits.
int64_t persistentUnits(int64_t hidden, int64_t directions, int64_t smCount) {
  const int64_t fewest = std::min(hidden, kLstmMinUnits);
  int64_t units =
      std::max<int64_t>(fewest, (directions * hidden + smCount - 1) /
                                    std::max<int64_t>(smCount, 1));
  while (units < hidden &&
         directions * ((hidden + units - 1) / units) > smCount)
    ++units;
  return units;
}

} // namespace

std::optional<LstmProjectionPolicy> mlir::rudnn::chooseLstmProjection(
    int64_t elementBytes, int64_t computeCapability, int64_t smemPerBlock,
    std::optional<bool> wgmma, bool tf32) {
  // TF32 puts f32 on tensor cores too.
  const bool tensorCores = elementBytes == 2 || tf32;
  const bool possible = tensorCores && computeCapability == 90 &&
                        smemPerBlock >= kLstmWgmmaProjectionSharedBytes;
  if (wgmma && *wgmma && !possible)
    return std::nullopt;
  LstmProjectionPolicy policy;
  policy.wgmma = wgmma.value_or(possible);
  policy.reason = std::string("input projection on ") +
                  (policy.wgmma  ? "wgmma"
                   : tensorCores ? "mma.sync"
                                 : "FMA") +
                  (elementBytes == 4 && tensorCores ? " in TF32" : "") +
                  (policy.wgmma ? ", 128 x 128 tiles" : ", 64 x 64 tiles");
  return policy;
}

int64_t mlir::rudnn::lstmRecurrenceBatch(int64_t elementBytes,
                                         bool weightsOnChip, bool tf32) {
  return onTensorCores(elementBytes, weightsOnChip, tf32)
             ? kLstmRecurrenceTensorBatch
             : kLstmRecurrenceFmaBatch;
}

int64_t mlir::rudnn::lstmRecurrenceSharedBytes(int64_t hidden, int64_t units,
                                               int64_t elementBytes,
                                               bool weightsOnChip,
                                               int64_t gates, bool tf32) {
  return rowProductsBytes(gates * units, hidden, elementBytes, weightsOnChip,
                          tf32);
}

int64_t mlir::rudnn::lstmBackwardSharedBytes(int64_t hidden, int64_t units,
                                             int64_t elementBytes,
                                             bool weightsOnChip,
                                             int64_t gates) {
  return rowProductsBytes(units, gates * hidden, elementBytes, weightsOnChip,
                          false) +
         16 * units +
         16 * units * lstmRecurrenceBatch(elementBytes, weightsOnChip);
}

int64_t mlir::rudnn::lstmGradientSplits(int64_t hidden, int64_t inputs,
                                        int64_t directions, int64_t smCount,
                                        int64_t gates) {
  auto tiles = [](int64_t n) { return (n + 63) / 64; };
  const int64_t blocks =
      tiles(gates * hidden) * (tiles(inputs) + tiles(hidden)) * directions;
  const int64_t wanted = 2 * std::max<int64_t>(smCount, 1);
  if (blocks >= wanted)
    return 1;
  return std::min(kLstmMaxGradientSplits, (wanted + blocks - 1) / blocks);
}

std::optional<LstmRecurrencePolicy> mlir::rudnn::chooseLstmBackwardRecurrence(
    int64_t hidden, int64_t directions, int64_t elementBytes,
    int64_t smemPerBlock, int64_t smCount, std::optional<int64_t> units,
    std::optional<bool> weightsOnChip, int64_t gates) {
  LstmRecurrencePolicy policy;
  policy.units = units.value_or(persistentUnits(hidden, directions, smCount));
  policy.blocks = directions * ((hidden + policy.units - 1) / policy.units);
  const int64_t onChipBytes =
      lstmBackwardSharedBytes(hidden, policy.units, elementBytes, true, gates);
  policy.weightsOnChip = weightsOnChip.value_or(onChipBytes <= smemPerBlock);
  if (lstmBackwardSharedBytes(hidden, policy.units, elementBytes,
                              policy.weightsOnChip, gates) > smemPerBlock ||
      policy.blocks > smCount)
    return std::nullopt;
  policy.reason = std::to_string(directions) + " x " + std::to_string(hidden) +
                  " hidden units over " + std::to_string(policy.blocks) +
                  " blocks of " + std::to_string(policy.units) +
                  " (one an SM, " + std::to_string(smCount) +
                  " SMs), backwards; W_hh columns " +
                  (policy.weightsOnChip ? "kept in shared memory ("
                                        : "read from L2 each step (on chip "
                                          "they would take ") +
                  std::to_string(onChipBytes) + " of " +
                  std::to_string(smemPerBlock) + " bytes)";
  return policy;
}

namespace {

/// chooseLstmRecurrence for one arithmetic: f32 rows on chip in TF32's
/// tiles (`tf32`) or in plain fp32 rows.
std::optional<LstmRecurrencePolicy>
recurrencePolicy(int64_t hidden, int64_t directions, int64_t elementBytes,
                 int64_t smemPerBlock, int64_t smCount,
                 std::optional<int64_t> units,
                 std::optional<bool> weightsOnChip, std::optional<bool> perStep,
                 int64_t gates, bool tf32) {
  LstmRecurrencePolicy policy;
  auto blocksFor = [&](int64_t u) {
    return directions * ((hidden + u - 1) / u);
  };
  auto sharedBytes = [&](int64_t u, bool onChip) {
    return lstmRecurrenceSharedBytes(hidden, u, elementBytes, onChip, gates,
                                     tf32);
  };
  const int64_t fewest = std::min(hidden, kLstmMinUnits);
  const int64_t persistent =
      units.value_or(persistentUnits(hidden, directions, smCount));
  const int64_t onChipBytes = sharedBytes(persistent, true);
  const bool fitsOnChip = onChipBytes <= smemPerBlock;
  policy.perStep =
      perStep ? *perStep : weightsOnChip.value_or(true) && !fitsOnChip;
  policy.units = policy.perStep ? units.value_or(fewest) : persistent;
  // One launch a step loads its rows once for all the batch's passes.
  const int64_t stepOnChipBytes = sharedBytes(policy.units, true);
  policy.weightsOnChip =
      weightsOnChip
          ? *weightsOnChip
          : (policy.perStep ? stepOnChipBytes : onChipBytes) <= smemPerBlock;
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
        layer + ", one launch a step (recorded in a CUDA graph; " +
        (fitsOnChip ? "on request"
                    : "a persistent grid's W_hh rows would take " + onChip +
                          " a block") +
        "); " +
        (policy.weightsOnChip
             ? "each launch loads its W_hh rows into shared memory once "
               "for every batch entry (" +
                   std::to_string(stepOnChipBytes) + " of " +
                   std::to_string(smemPerBlock) + " bytes)"
             : "W_hh rows read from L2 each pass of " +
                   std::to_string(lstmRecurrenceBatch(elementBytes, false)) +
                   " entries");
  else
    policy.reason =
        layer + " (one an SM, " + std::to_string(smCount) +
        " SMs); W_hh rows " +
        (policy.weightsOnChip ? "kept in shared memory (" + onChip + ")"
                              : "read from L2 each step (on chip they would "
                                "take " +
                                    onChip + ")");
  policy.tf32 = elementBytes == 4 &&
                onTensorCores(elementBytes, policy.weightsOnChip, tf32);
  if (policy.tf32)
    policy.reason += ", products on tensor cores in TF32";
  return policy;
}

} // namespace

std::optional<LstmRecurrencePolicy> mlir::rudnn::chooseLstmRecurrence(
    int64_t hidden, int64_t directions, int64_t elementBytes,
    int64_t smemPerBlock, int64_t smCount, std::optional<int64_t> units,
    std::optional<bool> weightsOnChip, std::optional<bool> perStep,
    int64_t gates, bool tf32) {
  auto plan = [&](bool inTf32) {
    return recurrencePolicy(hidden, directions, elementBytes, smemPerBlock,
                            smCount, units, weightsOnChip, perStep, gates,
                            inTf32);
  };
  std::optional<LstmRecurrencePolicy> chosen = plan(tf32);
  if (!tf32 || elementBytes != 4)
    return chosen;
  // TF32's tiles take more shared memory than plain fp32 rows: where they
  // would push the rows off chip or the grid to a launch a step, exact
  // fp32 rows that stay keep the better plan (the projection stays TF32).
  auto rank = [](const std::optional<LstmRecurrencePolicy> &p) {
    return !p ? 3 : !p->weightsOnChip ? 2 : p->perStep ? 1 : 0;
  };
  std::optional<LstmRecurrencePolicy> exact = plan(false);
  if (rank(exact) < rank(chosen)) {
    exact->reason += ", products exact fp32 (TF32's tiles would not fit)";
    return exact;
  }
  return chosen;
}

bool mlir::rudnn::lstmRecurrenceTf32(int64_t hidden, int64_t units,
                                     int64_t elementBytes, bool weightsOnChip,
                                     int64_t gates, bool allowTf32,
                                     int64_t smemPerBlock) {
  return allowTf32 && elementBytes == 4 && weightsOnChip &&
         lstmRecurrenceSharedBytes(hidden, units, elementBytes, true, gates,
                                   true) <= smemPerBlock;
}
