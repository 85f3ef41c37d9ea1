//===- LstmPolicy.h - The LSTM's recurrence from a target -------*- C++ -*-===//
//
// What `rudnn-specialize` chooses for this family on a target (how the LSTM
// recurrence spreads hidden units over blocks): plain C++, so the JIT API, the
// emitter and the tests ask the same questions of the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_LSTM_LSTMPOLICY_H
#define RUDNN_DIALECTS_IR_LSTM_LSTMPOLICY_H

#include "dialects/IR/TargetPolicy.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::rudnn {

/// Batch entries the LSTM recurrence stages a pass (16 on tensor cores, 8
/// on FMA), and its block's threads (lstm::kRecurrenceTensorBatch,
/// kRecurrenceFmaBatch, kRecurrenceThreads).
inline constexpr int64_t kLstmRecurrenceTensorBatch = 16;
inline constexpr int64_t kLstmRecurrenceFmaBatch = 8;
inline constexpr int64_t kLstmRecurrenceThreads = 256;

/// Dynamic shared memory, in bytes, of an LSTM recurrence block owning
/// `units` hidden units (lstm::RecurrenceShared::kBytes): its G·units W_hh
/// rows when `weightsOnChip`, the staged hidden states and the gate sums.
/// 16-bit weights on chip take swizzled tiles padded to whole 16 x 16 steps
/// (the tensor-core path, 16 entries a pass) and the warps' partial sums;
/// otherwise plain rows and the fp32 states of 8 entries. f32 rows kept on
/// chip with `tf32` take the tensor-core path, in tiles of 4-byte elements.
/// G = `gates`: 4 for the LSTM, 3 for the GRU.
int64_t lstmRecurrenceSharedBytes(int64_t hidden, int64_t units,
                                  int64_t elementBytes, bool weightsOnChip,
                                  int64_t gates = 4, bool tf32 = false);

/// Entries a recurrence stages a pass: 16 where weights kept on chip meet
/// them on tensor cores (16-bit, or f32 with `tf32`), else 8.
int64_t lstmRecurrenceBatch(int64_t elementBytes, bool weightsOnChip,
                            bool tf32 = false);

/// Dynamic shared memory, in bytes, of a backward recurrence block owning
/// `units` hidden units (lstm::BackwardShared::kBytes): its units' W_hh
/// columns (G·H deep) when `weightsOnChip`, the staged gate gradients, the
/// sums, and its bias gradients.
int64_t lstmBackwardSharedBytes(int64_t hidden, int64_t units,
                                int64_t elementBytes, bool weightsOnChip,
                                int64_t gates = 4);

/// Hidden units a recurrence block owns at least (where H has them): 32
/// gate rows, four for each warp.
inline constexpr int64_t kLstmMinUnits = 8;

/// How an LSTM layer's recurrence runs on a target.
struct LstmRecurrencePolicy {
  int64_t units = 1;          // hidden units a block owns
  bool weightsOnChip = false; // W_hh rows kept in shared memory
  bool tf32 = false;          // f32 rows on chip meet the states in TF32
  /// One launch a step (recorded in a CUDA graph) instead of one persistent
  /// cooperative grid.
  bool perStep = false;
  int64_t blocks = 1; // D · ceil(H / units)
  std::string reason; // why, for the plan's readers
};

/// The persistent recurrence spreads the D·H units over the target's SMs,
/// at least kLstmMinUnits a block and one block an SM (every block of a
/// cooperative grid resident at once), and keeps W_hh on chip where each
/// block's rows fit its shared memory. Where they do not, each step reads
/// W_hh from L2 or memory anyway: then one launch a step costs little more
/// than a grid barrier and frees the grid to take kLstmMinUnits a block,
/// so the per-step form is chosen; its blocks load their rows into shared
/// memory once a launch where they fit (W_hh read once a step whatever the
/// batch, not once a pass of entries). With `tf32`, f32 rows on chip take
/// TF32's tiles, unless exact fp32 rows would keep them on chip or the grid
/// persistent where TF32's would not. `units`, `weightsOnChip` and `perStep`,
/// when given, are used as they are (weights kept off chip by request stay
/// persistent unless `perStep`). None when not even the staged states fit,
/// or a persistent grid would exceed the SMs.
std::optional<LstmRecurrencePolicy>
chooseLstmRecurrence(int64_t hidden, int64_t directions, int64_t elementBytes,
                     int64_t smemPerBlock, int64_t smCount,
                     std::optional<int64_t> units = std::nullopt,
                     std::optional<bool> weightsOnChip = std::nullopt,
                     std::optional<bool> perStep = std::nullopt,
                     int64_t gates = 4, bool tf32 = false);

/// Whether a recurrence of `units` a block, as chooseLstmRecurrence chose
/// it, runs its products in TF32: allowed, f32, rows on chip, and TF32's
/// tiles fitting `smemPerBlock`.
bool lstmRecurrenceTf32(int64_t hidden, int64_t units, int64_t elementBytes,
                        bool weightsOnChip, int64_t gates, bool allowTf32,
                        int64_t smemPerBlock);

/// Dynamic shared memory of the input projection on wgmma
/// (tile::WarpgroupGemm::kSharedBytes): five stages of two tiles of 128
/// rows of 128 bytes (64 16-bit or 32 fp32 elements) and the 1024 bytes
/// that align them.
inline constexpr int64_t kLstmWgmmaProjectionSharedBytes =
    5 * 2 * 128 * 64 * 2 + 1024;

/// How a layer's input projection runs: on wgmma in 128 x 128 tiles, or on
/// mma.sync (f32: FMA, or with `tf32` TF32 tensor cores) in 64 x 64 ones.
struct LstmProjectionPolicy {
  bool wgmma = false;
  std::string reason;
};

/// wgmma where the target has it (compute capability 90, the kernel built
/// for sm_90a) and the inputs are 16-bit, or f32 allowed TF32 (`tf32`),
/// unless `wgmma` says otherwise; none when `wgmma` asks for it where it
/// cannot run.
std::optional<LstmProjectionPolicy> chooseLstmProjection(
    int64_t elementBytes, int64_t computeCapability, int64_t smemPerBlock,
    std::optional<bool> wgmma = std::nullopt, bool tf32 = false);

/// Most splits of an LSTM's weight-gradient rows.
inline constexpr int64_t kLstmMaxGradientSplits = 8;

/// How many fixed ranges the weight gradients of a layer split its T·B
/// rows in: enough that the blocks (one a 64 x 64 tile of dW_ih and dW_hh
/// per direction and range) make two waves of `smCount` SMs, at most
/// kLstmMaxGradientSplits; 1 where the tiles alone do.
int64_t lstmGradientSplits(int64_t hidden, int64_t inputs, int64_t directions,
                           int64_t smCount, int64_t gates = 4);

/// The backward recurrence: always one persistent grid (a launch a step
/// would have to carry the cell gradients through memory anyway, and the
/// backward has no smaller units to gain), units as the forward's
/// persistent grid takes them, W_hh's columns on chip where they fit.
/// `units` and `weightsOnChip`, when given, are used as they are. None
/// when the grid would exceed the SMs or the block its shared memory.
std::optional<LstmRecurrencePolicy> chooseLstmBackwardRecurrence(
    int64_t hidden, int64_t directions, int64_t elementBytes,
    int64_t smemPerBlock, int64_t smCount,
    std::optional<int64_t> units = std::nullopt,
    std::optional<bool> weightsOnChip = std::nullopt, int64_t gates = 4);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_LSTM_LSTMPOLICY_H
