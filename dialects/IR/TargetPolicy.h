//===- TargetPolicy.h - Compile-time parameters from a target ---*- C++ -*-===//
//
// The choices operators make when `rudnn-specialize` binds a target: plain
// C++, so the JIT API, the emitter and the tests ask the same questions of
// the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_TRANSFORMS_TARGETPOLICY_H
#define RUDNN_CODEGEN_TRANSFORMS_TARGETPOLICY_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::rudnn {

/// The default target: an H200 (sm_90, 132 SMs, 227 KiB opt-in shared memory
/// per block).
struct DefaultTarget {
  static constexpr const char *kArch = "sm_90";
  static constexpr int64_t kLanes = 32;
  static constexpr int64_t kSmemPerBlock = 227 * 1024;
  static constexpr int64_t kSmCount = 132;
};

/// Value columns one block of the KDA state walks (`propagate`,
/// `recurrent`, `state_gradient`) handles.
inline constexpr int64_t kKdaColumnsPerBlock = 32;

/// Static shared memory, in bytes, of the largest block among the KDA
/// kernels at this chunk, all fp32: `prepare`'s pairwise matrix, its
/// inverse and a 16-row panel, or the f32 `propagate` and `state_gradient`'s
/// K x VB state and chunk x VB update for their VB value columns
/// (`recurrent`'s K x VB state is less).
int64_t kdaChunkSharedBytes(int64_t chunk, int64_t featureDimK,
                            int64_t featureDimV);

/// Value columns one block of the 16-bit `propagate` walks
/// (kda::kWalkColumns).
inline constexpr int64_t kKdaWalkColumns16 = 16;

/// Dynamic shared memory, in bytes, of the 16-bit `propagate` at this chunk
/// (sizeof(kda::WalkShared)): two stages of W and Kd ([chunk][K'] 16-bit,
/// K' = K rounded up to 64), U0's 16 columns (16-bit) and e^Γlast (fp32),
/// and the 16-bit state [K'][16] and updates [chunk][16].
int64_t kdaWalkSharedBytes(int64_t chunk, int64_t featureDimK);

/// Dynamic shared memory, in bytes, of the 16-bit `state_gradient` at this
/// chunk (sizeof(kda::GradientWalkShared)): two stages of the pairwise
/// matrix, Kd, Qd and W (16-bit, K rounded up to 64), dO's 16 columns and
/// e^Γlast, and the 16-bit dS [K'][16] and −dU [chunk][16].
int64_t kdaGradientWalkSharedBytes(int64_t chunk, int64_t featureDimK);

/// Dynamic shared memory, in bytes, of the 16-bit `restore` (after
/// `prepare` in its block; sizeof(kda::RestoreShared)): two stages of a
/// 64 x 32 panel of W and a 32 x 64 panel of the state; none for f32.
int64_t kdaRestoreSharedBytes(int64_t inputBytes);

/// Dynamic shared memory, in bytes, of the backward's `gradients` at this
/// chunk (sizeof(kda::GradientsShared)): Γ [chunk][K] and two chunk x chunk
/// matrices in fp32; the chunk's k (K rounded up to 16), dO, U and dRu (V
/// rounded up to 16) in the input type; dU and (I + A)⁻¹, in the same place
/// later two pipeline stages of 16 rows of S0 and dS_end and 16 columns of
/// q; β and the per-warp partial sums (eight warps) in fp32.
int64_t kdaGradientsSharedBytes(int64_t chunk, int64_t featureDimK,
                                int64_t featureDimV, int64_t inputBytes);

/// Dynamic shared memory, in bytes, of `prepare` at this chunk
/// (sizeof(kda::PrepareShared)): the chunk's rows of q, then v in their
/// place, and of k, in the input type of `inputBytes`, each row padded to
/// whole 16-byte chunks (16-bit rows to whole 16 columns; then to an odd
/// count of chunks unless a power of two), β, and Γ [chunk][K] in fp32.
int64_t kdaPrepareSharedBytes(int64_t chunk, int64_t featureDimK,
                              int64_t featureDimV, int64_t inputBytes);

/// Dynamic shared memory, in bytes, of `output` at this chunk
/// (sizeof(kda::OutputShared)): the decayed queries in the input type, K
/// rounded up to 32 columns, 64 rows for 16-bit inputs (the block's) and
/// `chunk` rows for f32.
int64_t kdaOutputSharedBytes(int64_t chunk, int64_t featureDimK,
                             int64_t inputBytes);

/// fp32 words of one chunk's tiles (kda::ChunkTiles::kFloats): e^Γlast in
/// fp32; W, Kd, the pairwise matrix and U in the input type of `inputBytes`,
/// in whole 16-byte chunks.
int64_t kdaChunkTileWords(int64_t chunk, int64_t featureDimK,
                          int64_t featureDimV, int64_t inputBytes);

/// fp32 words a backward keeps of one chunk besides its tiles
/// (kda::BackwardTiles::kFloats): the decayed queries and (I + A)⁻¹ in the
/// input type.
int64_t kdaBackwardTileWords(int64_t chunk, int64_t featureDimK,
                             int64_t inputBytes);

/// The last dim W of the `tiles` a forward saves for its backward
/// ([N, B, H, W] f32): both of the above.
inline int64_t kdaSavedTileWords(int64_t chunk, int64_t featureDimK,
                                 int64_t featureDimV, int64_t inputBytes) {
  return kdaChunkTileWords(chunk, featureDimK, featureDimV, inputBytes) +
         kdaBackwardTileWords(chunk, featureDimK, inputBytes);
}

/// Query rows of an attention block: four warps of 16 rows.
inline constexpr int64_t kAttentionBlockQueries = 64;

/// Dynamic shared memory, in bytes, of an attention block
/// (sizeof(attention::ForwardShared)): the block's queries [blockQ][D'] and
/// two stages of keys [blockK][D'] and values [blockK][E'] in the input type
/// (D', E' rounded up to 16), and for f32 inputs the probabilities
/// [blockQ][blockK] in fp32.
int64_t attentionSharedBytes(int64_t blockQ, int64_t blockK, int64_t headDim,
                             int64_t valueDim, int64_t inputBytes);

/// Keys per tile of attention: 64 for head dims up to 128, else 32, or
/// less until the block fits `smemPerBlock`; nullopt when none does.
std::optional<int64_t> chooseAttentionBlockKeys(int64_t headDim,
                                                int64_t valueDim,
                                                int64_t inputBytes,
                                                int64_t smemPerBlock);

/// Queries per tile of the attention key-gradient block: 64 up to head
/// dims of 64, 32 up to 128, past that 32 for 16-bit inputs and 16 for f32
/// (attention::kKeyGradientQueries).
int64_t attentionKeyGradientQueries(int64_t headDim, int64_t valueDim,
                                    int64_t inputBytes);

/// Keys per tile of the query-gradient block: 64 up to head dims of 128,
/// past that as for the key-gradient block (attention::kQueryGradientKeys).
int64_t attentionQueryGradientKeys(int64_t headDim, int64_t valueDim,
                                   int64_t inputBytes);

/// Dynamic shared memory, in bytes, of the attention key-gradient block
/// (attention::KeyGradientShared): 64 keys' K and V rows, two stages of the
/// queries' Q and dO rows (D', E' rounded up to 16), and for f32 a [64][BQ]
/// staging tile.
int64_t attentionKeyGradientSharedBytes(int64_t headDim, int64_t valueDim,
                                        int64_t inputBytes);

/// The same for the query-gradient block (attention::QueryGradientShared):
/// 64 queries' Q and dO rows, two stages of BK keys' K and V rows, and for
/// f32 a [64][BK] staging tile.
int64_t attentionQueryGradientSharedBytes(int64_t headDim, int64_t valueDim,
                                          int64_t inputBytes);

/// Query rows of a Hopper attention block (two consumer warpgroups of 64):
/// the tile size by which rudnn-specialize picks the TMA/wgmma kernel, for
/// sm_90 targets and 16-bit inputs.
inline constexpr int64_t kHopperAttentionBlockQueries = 128;

/// Keys per tile of the Hopper kernel: 128 for head dims up to 128, else 64
/// (attention::HopperTiles).
int64_t hopperAttentionBlockKeys(int64_t headDim, int64_t valueDim);

/// Dynamic shared memory of a Hopper attention block
/// (sizeof(attention::HopperShared) and 1024 bytes to align it): the
/// queries and two stages of keys and values in 64-column blocks.
int64_t hopperAttentionSharedBytes(int64_t headDim, int64_t valueDim);

/// Rows of a Hopper attention-backward block (two consumer warpgroups of
/// 64) and rows it streams a step (attention::kHopperBackwardRows, Step).
inline constexpr int64_t kHopperAttentionBackwardRows = 128;
/// Rows of the sm_80 attention-backward blocks (attention::kBackwardRows).
inline constexpr int64_t kBackwardBlockRows = 64;
inline constexpr int64_t kHopperAttentionBackwardStep = 64;

/// Dynamic shared memory of a Hopper attention-backward block
/// (sizeof(attention::HopperBackwardShared) and 1024 bytes to align it).
int64_t hopperAttentionBackwardSharedBytes(int64_t headDim, int64_t valueDim);

/// Static shared memory a CUDA block may declare (dynamic shared memory can
/// go beyond it; the KDA kernels do not use any).
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// The largest of 64, 32 and 16 whose kernels fit `smemPerBlock` (the
/// static arrays the static limit too) for inputs of `inputBytes` (2 or
/// 4), or nullopt when none does.
std::optional<int64_t> chooseKdaChunk(int64_t featureDimK, int64_t featureDimV,
                                      int64_t smemPerBlock, int64_t inputBytes);

/// The shared memory the KDA kernels at this chunk need of a block at most,
/// static and dynamic together, for inputs of `inputBytes`.
int64_t kdaLargestBlockSharedBytes(int64_t chunk, int64_t featureDimK,
                                   int64_t featureDimV, int64_t inputBytes);

/// Parts a decoding step may split an entry's keys into
/// (attention::kDecodeMaxSplits: o_partial's slots).
inline constexpr int64_t kDecodeMaxSplits = 64;
/// The workspace a decoding step's partial results may take when the
/// device chooses the split: the slots a query row gets are as many as
/// this holds for the call's rows (B·T·H), 1 to kDecodeMaxSplits, so a
/// step of many new tokens splits less instead of asking for 64 × its
/// output.
inline constexpr int64_t kDecodePartialBudgetBytes = int64_t(256) << 20;

/// Dynamic shared memory, in bytes, of a decoding-step block of `warps`
/// warps (sizeof(attention::DecodeShared)): 16 query rows, two stages of
/// 16·warps key and value rows (head dims rounded up to 16), f32's 16 x
/// 16·warps probabilities, and 16 row log-sum-exps a warp.
int64_t decodeSharedBytes(int64_t headDim, int64_t valueDim, int64_t inputBytes,
                          int64_t warps);

/// Warps of a decoding-step block: 4 where their stages fit the target's
/// shared memory, else 2 or 1; none if even one does not fit.
std::optional<int64_t> chooseDecodeWarps(int64_t headDim, int64_t valueDim,
                                         int64_t inputBytes,
                                         int64_t smemPerBlock);

/// The decoding step's persistent grid: every SM holding as many blocks
/// as its shared memory allows, at most 4.
int64_t decodeBlocks(int64_t sharedBytes, int64_t smemPerBlock,
                     int64_t smCount);

/// Batch entries the LSTM recurrence stages a pass (16 on tensor cores, 8
/// on FMA), and its block's threads (lstm::kRecurrenceTensorBatch,
/// kRecurrenceFmaBatch, kRecurrenceThreads).
inline constexpr int64_t kLstmRecurrenceTensorBatch = 16;
inline constexpr int64_t kLstmRecurrenceFmaBatch = 8;
inline constexpr int64_t kLstmRecurrenceThreads = 256;

/// Dynamic shared memory, in bytes, of an LSTM recurrence block owning
/// `units` hidden units (lstm::RecurrenceShared::kBytes): its 4·units W_hh
/// rows when `weightsOnChip`, the staged hidden states and the gate sums.
/// 16-bit weights on chip take swizzled tiles padded to whole 16 x 16 steps
/// (the tensor-core path, 16 entries a pass) and the warps' partial sums;
/// otherwise plain rows and the fp32 states of 8 entries.
int64_t lstmRecurrenceSharedBytes(int64_t hidden, int64_t units,
                                  int64_t elementBytes, bool weightsOnChip);

/// Hidden units a recurrence block owns at least (where H has them): 32
/// gate rows, four for each warp.
inline constexpr int64_t kLstmMinUnits = 8;

/// How an LSTM layer's recurrence runs on a target.
struct LstmRecurrencePolicy {
  int64_t units = 1;          // hidden units a block owns
  bool weightsOnChip = false; // W_hh rows kept in shared memory
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
/// many blocks an SM to overlap those reads, so the per-step form is
/// chosen. `units`, `weightsOnChip` and `perStep`, when given, are used as
/// they are (weights kept off chip by request stay persistent unless
/// `perStep`). None when not even the staged states fit, or a persistent
/// grid would exceed the SMs.
std::optional<LstmRecurrencePolicy>
chooseLstmRecurrence(int64_t hidden, int64_t directions, int64_t elementBytes,
                     int64_t smemPerBlock, int64_t smCount,
                     std::optional<int64_t> units = std::nullopt,
                     std::optional<bool> weightsOnChip = std::nullopt,
                     std::optional<bool> perStep = std::nullopt);

/// Elements of a row each thread of a normalisation holds in registers, at
/// most.
inline constexpr int64_t kNormMaxHeld = 32;
/// Threads of a normalisation's split-row block, and the longest row a warp
/// holds (32 lanes × kNormMaxHeld).
inline constexpr int64_t kNormSplitThreads = 256;
inline constexpr int64_t kNormWarpRowMax = 32 * kNormMaxHeld;

/// How a normalisation lays rows of C elements over threads.
struct NormForm {
  int64_t threads = 32;     // threads sharing a row (or a chunk)
  int64_t rowsPerBlock = 0; // a warp a row: rows a block; else 0
  int64_t chunk = 0;        // split rows: elements a block takes; else 0
  std::string reason;
};

/// A warp a row (4 a block) while 32 lanes hold it, `held` elements each;
/// a block a row, about held / 2 elements a thread, while 1024 threads hold
/// it; beyond, rows split into chunks of kNormSplitThreads × `held`
/// elements, a block each. (A backward holds three values an element and
/// asks for half.)
NormForm chooseNormForm(int64_t features, int64_t held = kNormMaxHeld);

/// The blocks that walk a normalisation backward's rows, each leaving one
/// partial row of column sums: four an SM for rows held whole (enough warps
/// to keep the memory busy, few partial rows); for split rows, a multiple
/// of the chunks, about two blocks an SM.
int64_t normBackwardBlocks(const NormForm &form, int64_t features,
                           int64_t smCount);

} // namespace mlir::rudnn

#endif // RUDNN_CODEGEN_TRANSFORMS_TARGETPOLICY_H
