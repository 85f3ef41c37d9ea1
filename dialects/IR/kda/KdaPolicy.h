//===- KdaPolicy.h - KDA's sizes from a target ------------------*- C++ -*-===//
//
// What `rudnn-specialize` chooses for this family on a target (the chunk and
// the KDA kernels' shared memory and saved tiles): plain C++, so the JIT API,
// the emitter and the tests ask the same questions of the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_KDA_KDAPOLICY_H
#define RUDNN_DIALECTS_IR_KDA_KDAPOLICY_H

#include "dialects/IR/TargetPolicy.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::rudnn {

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

/// The largest K the wgmma walk takes: four 64-row tiles of the state.
inline constexpr int64_t kKdaWgmmaWalkMaxK = 256;

/// Dynamic shared memory, in bytes, of the wgmma walk at this chunk
/// (sizeof(kda::WgmmaWalkShared), without the 1024 bytes of slack that
/// align it): two stages of W ([64][K'] 16-bit in column blocks of 64), Kd
/// ([chunk][K']), U0's 16 columns and e^Γlast (fp32), and the 16-bit state
/// and updates transposed ([16][K'], [16][64]).
int64_t kdaWgmmaWalkSharedBytes(int64_t chunk, int64_t featureDimK);

/// Whether the wgmma walks take a chunk's W, Kd and Qd by TMA, the
/// workspace seen as rows of K 16-bit elements (kda::WorkspaceRows): K at
/// least 64 and a multiple of 8, and a chunk's tiles and the backward's
/// tiles whole rows, so each operand starts on a row.
bool kdaWorkspaceRowsFit(int64_t chunk, int64_t featureDimK,
                         int64_t featureDimV, int64_t inputBytes);

/// The rows that map spans: as many as an int coordinate reaches while the
/// map's outer stride stays under 2^39 bytes (256 GiB of workspace at
/// K = 64, more above).
int64_t kdaWorkspaceRows(int64_t featureDimK);

/// The same with the chunks' outputs fused in
/// (sizeof(kda::WgmmaWalkOutputShared)): two stages of Qd ([64][K']) and
/// the pairwise matrix ([64][64]) besides, and a second staged state.
int64_t kdaWgmmaWalkOutputSharedBytes(int64_t chunk, int64_t featureDimK);

/// Whether the forward's state walk runs on wgmma with the state in its
/// accumulators and the chunks' outputs fused in: 16-bit inputs on sm_90a
/// (compute capability 90), a chunk of 16, 32 or 64, K ≤
/// kKdaWgmmaWalkMaxK, and the fused walk's shared memory (with the
/// alignment slack) within `smemPerBlock`.
bool chooseKdaWgmmaWalk(int64_t computeCapability, int64_t inputBytes,
                        int64_t chunk, int64_t featureDimK,
                        int64_t smemPerBlock);

/// Dynamic shared memory, in bytes, of the 16-bit `state_gradient` at this
/// chunk (sizeof(kda::GradientWalkShared)): two stages of the pairwise
/// matrix, Kd, Qd and W (16-bit, K rounded up to 64), dO's 16 columns and
/// e^Γlast, and the 16-bit dS [K'][16] and −dU [chunk][16].
int64_t kdaGradientWalkSharedBytes(int64_t chunk, int64_t featureDimK);

/// Dynamic shared memory, in bytes, of the reverse wgmma walk at this chunk
/// (sizeof(kda::WgmmaGradientWalkShared), without the 1024 bytes of slack
/// that align it): two stages of the pairwise matrix ([chunk][64]), Kd
/// ([64][K']), Qd and W ([chunk][K']) in column blocks of 64 and e^Γlast
/// (fp32), and the 16-bit dS, dO (two) and −dU transposed ([16][K'],
/// [16][64]).
int64_t kdaWgmmaGradientWalkSharedBytes(int64_t chunk, int64_t featureDimK);

/// Whether the backward's reverse walk runs on wgmma with dS in its
/// accumulators: 16-bit inputs on sm_90a (compute capability 90), a chunk
/// of 16, 32 or 64, K ≤ kKdaWgmmaWalkMaxK, and its shared memory (with the
/// alignment slack) within `smemPerBlock`.
bool chooseKdaWgmmaGradientWalk(int64_t computeCapability, int64_t inputBytes,
                                int64_t chunk, int64_t featureDimK,
                                int64_t smemPerBlock);

/// Dynamic shared memory, in bytes, of the 16-bit `restore` (after
/// `prepare` in its block; sizeof(kda::RestoreShared)): two stages of a
/// 64 x 32 panel of W and a 32 x 64 panel of the state; none for f32.
int64_t kdaRestoreSharedBytes(int64_t inputBytes);

/// Dynamic shared memory, in bytes, of the backward's `gradients` at this
/// chunk (sizeof(kda::GradientsShared)): one chunk x chunk matrix in fp32
/// (dBm below the diagonal, kk then β ⊙ dA above it); the chunk's dO and U
/// (V rounded up to 16) and k, later dRu, in the input type; Γ [chunk][K]
/// in fp32, in its place later dU and (I + A)⁻¹, then two pipeline stages
/// of 16 rows of S0 and dS_end and 16 columns of q, k and g, and the
/// step's Γ and dΓ; β, the per-warp partial sums (eight warps) and one
/// fp32 value per feature.
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

/// The largest of 64, 32 and 16 whose kernels fit `smemPerBlock` (the
/// static arrays the static limit too) for inputs of `inputBytes` (2 or
/// 4), or nullopt when none does. On a target of `computeCapability` 90
/// the largest at which both walks run on wgmma comes first (K = V = 256,
/// 16-bit: chunk 32, where at 64 the forward's wgmma walk would not fit).
std::optional<int64_t> chooseKdaChunk(int64_t featureDimK, int64_t featureDimV,
                                      int64_t smemPerBlock, int64_t inputBytes,
                                      int64_t computeCapability = 0);

/// The shared memory the KDA kernels at this chunk need of a block at most,
/// static and dynamic together, for inputs of `inputBytes`.
int64_t kdaLargestBlockSharedBytes(int64_t chunk, int64_t featureDimK,
                                   int64_t featureDimV, int64_t inputBytes);

/// What a KDA operator's chunk and walks were chosen for, for the plan's
/// readers (the `policy` attribute `rudnn-specialize` sets): the shared
/// memory that bounds the chunk, why its decay factors stay finite at any
/// gate, the tensor-core shape the chunk fills, and the walks' parallelism.
/// `chunkGiven`: the op named its chunk; `wgmma`: its walk on wgmma;
/// `forward`: a forward (else a backward).
std::string kdaPolicyReason(int64_t chunk, bool chunkGiven, int64_t featureDimK,
                            int64_t featureDimV, int64_t inputBytes,
                            int64_t smemPerBlock, bool wgmma, bool forward);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_KDA_KDAPOLICY_H
