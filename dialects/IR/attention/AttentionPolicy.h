//===- AttentionPolicy.h - Attention's tiles from a target ------*- C++ -*-===//
//
// What `rudnn-specialize` chooses for this family on a target (attention's
// block shapes and shared memory, forward and backward): plain C++, so the JIT
// API, the emitter and the tests ask the same questions of the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONPOLICY_H
#define RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONPOLICY_H

#include "dialects/IR/TargetPolicy.h"

#include <cstdint>
#include <optional>

namespace mlir::rudnn {

/// Query rows of an attention block (the mma.sync kernel): 64 for f32
/// inputs (four warps of 16 rows, two stages of K and V), 128 for 16-bit
/// ones, FlashAttention-2's block (attention::ForwardTiles): four warps of
/// 32 rows up to D, E = 128 (eight of 16 beyond) and one buffer each of K
/// and V, so that a K/V tile serves twice the queries while two blocks
/// still fit an SM at D = 128 (64 KiB of shared memory each).
inline constexpr int64_t kAttentionBlockQueries = 64,
                         kAttentionWideBlockQueries = 128;

/// The default query rows of an attention block for `inputBytes` inputs.
inline int64_t attentionBlockQueries(int64_t inputBytes) {
  return inputBytes == 2 ? kAttentionWideBlockQueries : kAttentionBlockQueries;
}

/// Query rows a warp of an attention block takes: 32 in 128-row blocks up
/// to head dims of 128, else 16 (attention::ForwardTiles::kWarpRows).
int64_t attentionWarpRows(int64_t blockQ, int64_t headDim, int64_t valueDim);

/// Threads of an attention block: a warp per attentionWarpRows.
inline int64_t attentionThreads(int64_t blockQ, int64_t headDim,
                                int64_t valueDim) {
  return 32 * blockQ / attentionWarpRows(blockQ, headDim, valueDim);
}

/// Dynamic shared memory, in bytes, of an attention block
/// (sizeof(attention::ForwardShared)): the block's queries [blockQ][D'] and
/// keys [blockK][D'] and values [blockK][E'] in the input type (D', E'
/// rounded up to 16; two stages of them in 64-row blocks, one in 128-row
/// ones), and for f32 inputs the probabilities [blockQ][blockK] in fp32; at
/// least the 16-bit output stages, [blockQ][64].
int64_t attentionSharedBytes(int64_t blockQ, int64_t blockK, int64_t headDim,
                             int64_t valueDim, int64_t inputBytes);

/// Keys per tile of a `blockQ`-row attention block: 64 for head dims up to
/// 128 (to 64 where a warp takes 32 rows), else 32, or less until the block
/// fits `smemPerBlock`; nullopt when none does.
std::optional<int64_t> chooseAttentionBlockKeys(int64_t blockQ, int64_t headDim,
                                                int64_t valueDim,
                                                int64_t inputBytes,
                                                int64_t smemPerBlock);

/// Decoding-shaped calls (at most kAttentionDecodeQueries queries, the
/// default `decode_split`) run one 64-row block a head, which leaves most
/// SMs idle: their keys are split into parts of at least
/// kAttentionDecodePartKeys, taken by different blocks, over about
/// kAttentionDecodeWaves waves of the device (a wave: every SM holding as
/// many 64-row blocks as its shared memory allows), then combined.
inline constexpr int64_t kAttentionDecodeQueries = 16,
                         kAttentionDecodePartKeys = 256,
                         kAttentionDecodeWaves = 4;

/// Keys per tile of the split (decoding-shaped) kernel's 64-row blocks: 64
/// to head dims of 128, else 32.
inline int64_t attentionDecodeBlockKeys(int64_t headDim, int64_t valueDim) {
  return headDim <= 128 && valueDim <= 128 ? 64 : 32;
}

/// The blocks a decoding-shaped call's split aims its grid at on a target
/// of `smCount` SMs: kAttentionDecodeWaves waves of 64-row blocks; nullopt
/// where no such block fits `smemPerBlock`.
std::optional<int64_t> attentionDecodeBlocks(int64_t headDim, int64_t valueDim,
                                             int64_t inputBytes,
                                             int64_t smemPerBlock,
                                             int64_t smCount);

/// Queries a step of the sm_80 attention-backward block: 64 up to head
/// dims of 64, 32 up to 128, past that 32 for 16-bit inputs and 16 for f32
/// (attention::kGradientStep).
int64_t attentionGradientStep(int64_t headDim, int64_t valueDim,
                              int64_t inputBytes);

/// Dynamic shared memory, in bytes, of the sm_80 attention-backward block
/// of `keys` keys (attention::GradientShared): their K and V rows, two
/// stages of a step's Q and dO rows (D', E' rounded up to 16), and the
/// staged dSᵀ ([keys][step]).
int64_t attentionGradientSharedBytes(int64_t headDim, int64_t valueDim,
                                     int64_t inputBytes, int64_t keys);

/// Whether the sm_80 attention-backward block may take 128 keys (eight
/// warps): 16-bit inputs with head dims to 128, whose dK and dV a warp's
/// registers hold beside 32-query steps.
inline bool attentionGradientWideKeys(int64_t headDim, int64_t valueDim,
                                      int64_t inputBytes) {
  return inputBytes == 2 && headDim <= 128 && valueDim <= 128;
}

/// Whether the sm_80 attention-backward block takes dV, then dK and dq, in
/// two passes over the queries (S formed twice): past 256 columns of dK
/// and dV together (attention::kSplitKeyGradients).
inline bool attentionGradientSplit(int64_t headDim, int64_t valueDim) {
  return (headDim + 15) / 16 * 16 + (valueDim + 15) / 16 * 16 > 256;
}

/// Keys of the sm_80 attention-backward block the policy chooses:
/// FlashAttention-2's 128 (eight warps of 16) for 16-bit inputs with head
/// dims to 128 where its shared memory fits `smemPerBlock`, else 64.
int64_t attentionGradientKeys(int64_t headDim, int64_t valueDim,
                              int64_t inputBytes, int64_t smemPerBlock);

/// Query rows of a Hopper attention block (`wgmma`, which rudnn-specialize
/// sets for sm_90 targets and 16-bit inputs), 64 a consumer warpgroup: two
/// warpgroups (128 rows), or three (192 rows, head dims to 64).
inline constexpr int64_t kHopperAttentionBlockQueries = 128,
                         kHopperAttentionThreeGroupQueries = 192;

/// The Hopper block the policy chooses: three consumer warpgroups for
/// padded batches at head dims to 64, FlashAttention-3's tile there (a key
/// tile serves half as many queries again, and the exponentials, as long
/// as the products at these dims, run under two other warpgroups'
/// products; not yet measured here), two elsewhere. Packed batches keep two:
/// finding a tile's entry costs the three-group causal consumer 8 bytes of
/// spill.
inline int64_t hopperAttentionBlockQueries(int64_t headDim, int64_t valueDim,
                                           bool packed) {
  return !packed && headDim <= 64 && valueDim <= 64
             ? kHopperAttentionThreeGroupQueries
             : kHopperAttentionBlockQueries;
}

/// Whether `blockQ` query rows make a Hopper kernel's block (two or three
/// consumer warpgroups).
inline bool isHopperAttentionBlock(int64_t blockQ) {
  return blockQ == kHopperAttentionBlockQueries ||
         blockQ == kHopperAttentionThreeGroupQueries;
}

/// Keys per tile of the Hopper kernel (attention::HopperTiles): 128 for two
/// consumer warpgroups to head dims of 128, else 64 — three warpgroups'
/// masked forms spill 28 to 68 bytes at 160 registers a consumer with 128
/// keys, none with 64.
int64_t hopperAttentionBlockKeys(int64_t headDim, int64_t valueDim,
                                 int64_t blockQueries);

/// Stages of the Hopper kernel's K/V ring: three where they fit the shared
/// memory (head dims to 64), else two (attention::HopperTiles).
int64_t hopperAttentionStages(int64_t headDim, int64_t valueDim);

/// Dynamic shared memory of a Hopper attention block
/// (sizeof(attention::HopperShared) and 1024 bytes to align it): the
/// queries, two stages of keys and values (three to head dims of 64) in
/// 64-column blocks, and each consumer warp's output stage.
int64_t hopperAttentionSharedBytes(int64_t headDim, int64_t valueDim,
                                   int64_t blockQueries);

/// Keys of a Hopper attention-backward block (two consumer warpgroups of
/// 64 up to D = E = 128, both over the block's 64 past that) and rows it
/// streams a step (attention::kHopperBackwardRows, kHopperWideBackwardRows,
/// kHopperBackwardStep); the largest head dims it takes.
inline constexpr int64_t kHopperAttentionBackwardRows = 128;
inline constexpr int64_t kHopperAttentionWideBackwardRows = 64;
inline constexpr int64_t kHopperAttentionBackwardStep = 64;
inline constexpr int64_t kHopperAttentionBackwardMaxDim = 256;
/// Keys of the sm_80 attention-backward blocks (attention::gradients).
inline constexpr int64_t kBackwardBlockRows = 64, kBackwardWideBlockRows = 128;

/// The keys of a Hopper attention-backward block at these head dims.
inline int64_t hopperAttentionBackwardRows(int64_t headDim, int64_t valueDim) {
  return headDim > 128 || valueDim > 128 ? kHopperAttentionWideBackwardRows
                                         : kHopperAttentionBackwardRows;
}

/// Dynamic shared memory of a Hopper attention-backward block
/// (sizeof(attention::HopperBackwardShared) and 1024 bytes to align it).
int64_t hopperAttentionBackwardSharedBytes(int64_t headDim, int64_t valueDim);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_ATTENTION_ATTENTIONPOLICY_H
