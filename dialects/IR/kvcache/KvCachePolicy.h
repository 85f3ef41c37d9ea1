//===- KvCachePolicy.h - Decoding's splits from a target --------*- C++ -*-===//
//
// What `rudnn-specialize` chooses for this family on a target (a decoding
// step's warps, splits and blocks): plain C++, so the JIT API, the emitter and
// the tests ask the same questions of the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_KVCACHE_KVCACHEPOLICY_H
#define RUDNN_DIALECTS_IR_KVCACHE_KVCACHEPOLICY_H

#include "dialects/IR/TargetPolicy.h"

#include <cstdint>
#include <optional>

namespace mlir::rudnn {

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

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_KVCACHE_KVCACHEPOLICY_H
